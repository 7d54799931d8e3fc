//! Retrieval by meaning, beside retrieval by words.
//!
//! Words miss a fact said in other words ("my dog" against "the beagle");
//! a sentence-embedding model finds it. The two lists are fused by score
//! ([`fuse`]), each put on a 0-1 scale of its own first: BM25's scores and
//! cosine similarities cannot be compared as they are, and ranks alone
//! lose how much better the best matches are.
//!
//! The model comes in through [`Embedder`] (a model run in-process, or a
//! server's embeddings endpoint); vectors are stored with the records
//! ([`VectorStore`]) and searched in memory ([`VectorIndex`], in
//! `index.rs`): exact up to ten thousand chunks, past that scored exactly
//! among those whose signs agree most with the query's.

use std::collections::HashMap;

pub use super::index::VectorIndex;
use super::seam::{LOG_SOURCES, Ranked, SearchStore};
pub use super::seam::{Quantized, StoredVector, VectorStore};
use crate::memory::{Page, StoreError};

/// A sentence-embedding model.
pub trait Embedder: Send + Sync {
    /// The model's name. Vectors of different models cannot be compared,
    /// so stored vectors are kept per model name.
    fn model(&self) -> &str;
    /// One vector per text, of the model's dimension, for stored records.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// The vector of a question. Models trained with an instruction for
    /// queries (bge) add it here.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(&[query])?
            .pop()
            .ok_or_else(|| EmbedError::Failed {
                model: self.model().to_string(),
                reason: "the model returned no vector for the query".into(),
            })
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model `{model}`: {reason}")]
    Failed { model: String, reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `VectorStore` for a test's store that keeps no vectors: retrieval by
/// words needs the seam, not what it holds.
#[cfg(test)]
macro_rules! keeps_no_vectors {
    ($store:ty) => {
        impl $crate::assemble::semantic::VectorStore for $store {
            fn put_vectors(
                &self,
                _: &str,
                _: &[$crate::assemble::semantic::StoredVector],
            ) -> Result<(), $crate::memory::StoreError> {
                Err($crate::memory::StoreError::Invalid(
                    "this test store keeps no vectors".into(),
                ))
            }
            fn vectors_since(
                &self,
                _: &str,
                _: $crate::memory::Page,
            ) -> $crate::memory::StoreResult<Vec<(i64, $crate::assemble::semantic::StoredVector)>>
            {
                Ok(Vec::new())
            }
            fn unembedded(
                &self,
                _: &str,
                _: $crate::assemble::retrieve::HitSource,
                _: $crate::memory::Page,
            ) -> $crate::memory::StoreResult<Vec<i64>> {
                Ok(Vec::new())
            }
            fn unembedded_count(
                &self,
                _: &str,
                _: $crate::assemble::retrieve::HitSource,
            ) -> Result<u64, $crate::memory::StoreError> {
                Ok(0)
            }
        }
    };
}
#[cfg(test)]
pub(crate) use keeps_no_vectors;

/// The longest chunk of a record embedded as one vector, in bytes. Small
/// sentence models read about 256 word pieces (roughly 1,000 characters of
/// English); a chunk of a few sentences keeps one topic per vector.
pub const CHUNK_BYTES: usize = 700;

/// `text` cut into chunks of whole sentences of at most about
/// [`CHUNK_BYTES`] each (a longer sentence is a chunk of its own, which
/// the model truncates). Never empty for a non-empty text.
pub fn chunks(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.len() <= CHUNK_BYTES {
        return if text.is_empty() {
            Vec::new()
        } else {
            vec![text.to_string()]
        };
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for s in crate::compress::sentences::split(text) {
        let s = s.trim();
        if s.is_empty() {
            continue;
        }
        if !current.is_empty() && current.len() + 1 + s.len() > CHUNK_BYTES {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(s);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Records embedded per call to the model, and committed together: enough
/// for a local model to spread its batches over the cores (a 2-core
/// machine reindexed 2,000 turns in 26.4 s at 32, see BENCHMARKS.md).
const BATCH: usize = 128;

/// Which records [`backfill`] embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backlog {
    /// Every record without a vector (`mnemon reindex`).
    All,
    /// Only among the newest `n` records of each log: cheap enough for
    /// every query, whatever the size of the log.
    Newest(u64),
}

/// Embeds the records of the logs that have no vector of the embedder's
/// model yet, oldest first, and stores their vectors. `progress` hears how
/// many records are done. Returns how many were embedded.
pub fn backfill<S: SearchStore + VectorStore + ?Sized>(
    store: &S,
    embedder: &dyn Embedder,
    backlog: Backlog,
    progress: &mut dyn FnMut(u64),
) -> Result<u64, EmbedError> {
    let model = embedder.model().to_string();
    let mut done = 0u64;
    for source in LOG_SOURCES {
        let after = match backlog {
            Backlog::All => 0,
            Backlog::Newest(n) => store.last_row(source)?.saturating_sub(n) as i64,
        };
        loop {
            let page = Page {
                after,
                limit: BATCH,
            };
            let rows = store.unembedded(&model, source, page)?;
            if rows.is_empty() {
                break;
            }
            let mut hits = store.records(source, &rows)?;
            hits.sort_by_key(|h| h.row);
            let mut texts: Vec<String> = Vec::new();
            let mut owners: Vec<(i64, u32)> = Vec::new();
            for h in &hits {
                let parts = chunks(&h.text);
                // A record with no text still gets a vector (of nothing),
                // so it is not offered for embedding again.
                let parts = if parts.is_empty() {
                    vec![String::new()]
                } else {
                    parts
                };
                for (i, p) in parts.into_iter().enumerate() {
                    owners.push((h.row, i as u32));
                    texts.push(p);
                }
            }
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut vectors = Vec::with_capacity(refs.len());
            for part in refs.chunks(BATCH) {
                vectors.extend(embedder.embed(part)?);
            }
            if vectors.len() != owners.len() {
                return Err(EmbedError::Failed {
                    model,
                    reason: format!("asked for {} vectors, got {}", owners.len(), vectors.len()),
                });
            }
            let stored: Vec<StoredVector> = owners
                .iter()
                .zip(vectors)
                .map(|(&(row, chunk), v)| StoredVector {
                    source,
                    row,
                    chunk,
                    vector: Quantized::of(&v),
                })
                .collect();
            // Rows `records` left out (another project's, the engine's own)
            // are never returned by `unembedded`, so every row asked for
            // here is one retrieval can show.
            store.put_vectors(&model, &stored)?;
            done += hits.len() as u64;
            progress(done);
            if hits.len() < rows.len() {
                break;
            }
        }
    }
    Ok(done)
}

/// The weight of a record's similarity by meaning against its relevance by
/// words (both on a 0-1 scale, see [`fuse`]). Equal weights measured best
/// on every development set (BENCHMARKS.md, 2026-11-26): the words find
/// names, numbers and rare terms exactly, the model finds the same fact
/// said in other words, and neither is the better judge in general.
const SEMANTIC_WEIGHT: f64 = 1.0;

/// Fusion of the ranking by words (`lexical`, every tier, mnemon's
/// scores) and by meaning (`semantic`, records of the logs, cosine
/// similarities, best first), by their scores rather than their ranks.
///
/// Each list is put on a 0-1 scale of its own: the words' scores as a
/// share of their best, similarities as their place between the least
/// similar record the list holds (0) and the most similar (1). A record
/// scores the sum of its two. Ranks alone (reciprocal-rank fusion) gave a
/// record at rank 30 of one list nearly what the best of it got, so a
/// question whose answer one list found with confidence drowned in the
/// other list's weak matches: short turns such as "Wow, Mel!" near every
/// question by meaning. Scores keep how much better the best matches are.
///
/// Scores are scaled so the best equals the best lexical score, which
/// keeps them on the scale the rest of assembly is used to.
///
/// Then a short record among the words' first [`KEPT_BY_WORDS`] that
/// meaning found too, or among the few the words rank far ahead of the
/// rest (see [`ahead_by_words`]), is placed no later than
/// [`KEPT_WITHIN`] times its place by words (see
/// [`kept_near_their_place`]).
pub fn fuse(lexical: Vec<Ranked>, semantic: Vec<Ranked>) -> Vec<Ranked> {
    let scale = lexical.first().map(|r| r.score).unwrap_or(1.0).max(1e-9);
    let top = semantic.first().map_or(1.0, |r| r.score);
    let floor = semantic.last().map_or(0.0, |r| r.score);
    let span = (top - floor).max(1e-6);
    // A record's place by words is its index here, as long as only the
    // words' records have been pushed.
    let mut fused: Vec<(f64, Ranked)> = Vec::with_capacity(lexical.len() + semantic.len());
    let mut at: HashMap<String, usize> = HashMap::new();
    for r in lexical {
        at.insert(r.hit.id.clone(), fused.len());
        fused.push((r.score / scale, r));
    }
    let mut found_twice = vec![false; fused.len().min(KEPT_BY_WORDS)];
    let head: Vec<f64> = fused.iter().take(AHEAD_AT_MOST + 1).map(|f| f.0).collect();
    let ahead = ahead_by_words(&head);
    for r in semantic {
        let s = SEMANTIC_WEIGHT * ((r.score - floor) / span).clamp(0.0, 1.0);
        match at.get(&r.hit.id) {
            Some(&j) => {
                fused[j].0 += s;
                if let Some(both) = found_twice.get_mut(j) {
                    *both = true;
                }
            }
            None => {
                at.insert(r.hit.id.clone(), fused.len());
                fused.push((s, r));
            }
        }
    }
    let best = fused.iter().map(|f| f.0).fold(0.0, f64::max).max(1e-12);
    let mut out: Vec<(Option<usize>, Ranked)> = fused
        .into_iter()
        .enumerate()
        .map(|(j, (s, mut r))| {
            r.score = s / best * scale;
            let kept = (j < ahead || found_twice.get(j).copied().unwrap_or(false))
                && r.hit.text.len() <= KEPT_BYTES;
            // Places count from 1: the words' first may be 1st or 2nd.
            let latest = kept.then(|| (KEPT_WITHIN * (j + 1) as f64).ceil() as usize);
            (latest, r)
        })
        .collect();
    out.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    kept_near_their_place(out)
}

/// How many of the words' first records (`scores`, best first) stand far
/// ahead of the rest: those before the first fall to less than
/// 1/[`AHEAD_BY`] of the score before it, among the first
/// [`AHEAD_AT_MOST`]; none where the scores fall gently.
///
/// They are kept near their place even where meaning did not find them.
/// On a two-step question ("the city of the headquarters of the company
/// Esther joined") the turn naming the headquarters was second by words,
/// nearly level with the first and twice the third, and so far from the
/// question by meaning that fusion put it 31st to 44th, out of a 1K
/// context, behind turns about Esther's jobs that both lists found
/// weakly. Words alone had it. On the development sets only the
/// synthetic ones moved (BENCHMARKS.md, 2026-12-02).
pub fn ahead_by_words(scores: &[f64]) -> usize {
    let most = AHEAD_AT_MOST.min(scores.len().saturating_sub(1));
    (0..most)
        .find(|&i| scores[i] > 0.0 && scores[i] >= AHEAD_BY * scores[i + 1])
        .map_or(0, |i| i + 1)
}

/// How far the words' head must stand above the next record (see
/// [`ahead_by_words`]). At 1.3 more records were kept on REALTALK, and
/// one pushed a turn of evidence out at 2K; 1.5 moved nothing on LoCoMo,
/// REALTALK or BEAM.
pub const AHEAD_BY: f64 = 1.5;

/// The most records the words' head holds: a question's clear matches
/// by words are a few (there, the headquarters of two companies); a
/// long head would be a ranking by words, which fusion is there to
/// improve.
pub const AHEAD_AT_MOST: usize = 3;

/// How many of the best records by words may be kept near their place.
/// Deeper, the keeping reached hundreds of records at 4K-16K and lost
/// there on REALTALK and LoCoMo (BENCHMARKS.md, 2026-11-29).
pub const KEPT_BY_WORDS: usize = 20;

/// How far behind its place by words a kept record may fall: the 4th by
/// words is 6th at the latest.
pub const KEPT_WITHIN: f64 = 1.5;

/// The longest record that is kept near its place, in bytes (about 50
/// tokens, a line of chat). A long answer among the words' best is
/// weighed by its length when the budget is shared; kept in place, BEAM's
/// long assistant answers pushed the user's short turns out at 1K-2K.
pub const KEPT_BYTES: usize = 200;

/// `sorted` (by fused score, best first) reordered so that each record
/// with a latest place (counted from 1) is at that place or before it,
/// every other record keeping its order; the scores stay where they were,
/// so the list still falls and the allocator sees each place's worth.
///
/// A record the words rank near the top and meaning finds too is seldom
/// wrong, but fused by score it can sink under records only the model
/// likes: on a two-step question ("the city of the company Esther
/// joined"), the turn naming the company fell from 19th by words to 35th,
/// out of a 1K context, behind turns about Esther and jobs in general.
fn kept_near_their_place(sorted: Vec<(Option<usize>, Ranked)>) -> Vec<Ranked> {
    let mut due: Vec<(usize, usize)> = sorted
        .iter()
        .enumerate()
        .filter_map(|(i, (latest, _))| latest.map(|l| (l, i)))
        .collect();
    if due.iter().all(|&(latest, i)| i < latest) {
        return sorted.into_iter().map(|(_, r)| r).collect();
    }
    due.sort_unstable();
    let mut due = due.into_iter().peekable();
    // Where each record of `sorted` goes, once placed.
    let mut goes: Vec<Option<usize>> = vec![None; sorted.len()];
    let mut next = 0;
    for place in 0..sorted.len() {
        while due.next_if(|&(_, i)| goes[i].is_some()).is_some() {}
        let i = match due.next_if(|&(latest, _)| latest <= place + 1) {
            Some((_, i)) => i,
            None => {
                while goes[next].is_some() {
                    next += 1;
                }
                next
            }
        };
        goes[i] = Some(place);
    }
    let scores: Vec<f64> = sorted.iter().map(|(_, r)| r.score).collect();
    let mut moved: Vec<(Option<usize>, Ranked)> = goes
        .into_iter()
        .zip(sorted)
        .map(|(p, (_, r))| (p, r))
        .collect();
    moved.sort_unstable_by_key(|(p, _)| *p);
    moved
        .into_iter()
        .zip(scores)
        .map(|((_, mut r), score)| {
            r.score = score;
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::index::dot;
    use super::*;

    fn ranked(id: &str, score: f64) -> Ranked {
        Ranked::message(id, score)
    }

    #[test]
    fn quantized_vectors_keep_their_cosine() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 3.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 2.0)
            .collect();
        let exact = {
            let d: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
            let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
            d / na / nb
        };
        let (qa, qb) = (Quantized::of(&a), Quantized::of(&b));
        let approx = dot(&qa.values, &qb.values) as f32 * qa.scale * qb.scale;
        assert!((exact - approx).abs() < 0.01, "{exact} against {approx}");
        let self_sim = dot(&qa.values, &qa.values) as f32 * qa.scale * qa.scale;
        assert!((self_sim - 1.0).abs() < 0.01, "{self_sim}");
        assert_eq!(Quantized::from_bytes(qa.scale, &qa.bytes()), qa);
    }

    #[test]
    fn long_texts_are_cut_between_sentences() {
        assert!(chunks("   ").is_empty());
        assert_eq!(chunks("One short turn."), vec!["One short turn."]);
        let sentence = "The migration moved every table to the new schema in one step. ";
        let long = sentence.repeat(40);
        let parts = chunks(&long);
        assert!(parts.len() > 1);
        for p in &parts {
            assert!(p.len() <= CHUNK_BYTES, "{}", p.len());
            assert!(p.ends_with('.'), "{p}");
        }
        let words = |s: &str| s.split_whitespace().count();
        assert_eq!(parts.iter().map(|p| words(p)).sum::<usize>(), words(&long));
    }

    #[test]
    fn a_record_in_both_lists_beats_one_in_either() {
        let lexical = vec![ranked("m1", 9.0), ranked("m2", 5.0), ranked("m3", 1.0)];
        let semantic = vec![ranked("m4", 0.9), ranked("m2", 0.8), ranked("m5", 0.5)];
        let fused = fuse(lexical, semantic);
        let ids: Vec<&str> = fused.iter().map(|r| r.hit.id.as_str()).collect();
        // m2: 5/9 by words and 3/4 of the way up by meaning.
        assert_eq!(ids, ["m2", "m1", "m4", "m3", "m5"]);
        assert!(
            (fused[0].score - 9.0).abs() < 1e-9,
            "best on the lexical scale"
        );
        // The least similar record the list holds adds nothing.
        assert_eq!(fused[4].score, 0.0);
        // With no vectors, the words' order stands.
        let alone = fuse(vec![ranked("m1", 3.0), ranked("m2", 2.0)], Vec::new());
        let ids: Vec<&str> = alone.iter().map(|r| r.hit.id.as_str()).collect();
        assert_eq!(ids, ["m1", "m2"]);
    }

    #[test]
    fn a_confident_match_by_words_is_not_drowned_by_weak_ones_by_meaning() {
        // One record matches the question's rare words; twenty short turns
        // are vaguely near it by meaning, the match itself a little less.
        let lexical = vec![ranked("m1", 8.0), ranked("m2", 0.5)];
        let mut semantic: Vec<Ranked> = (0..20)
            .map(|i| ranked(&format!("m{}", 100 + i), 0.50 - f64::from(i) * 0.001))
            .collect();
        semantic.push(ranked("m1", 0.45));
        semantic.push(ranked("m200", 0.20));
        let fused = fuse(lexical, semantic);
        assert_eq!(fused[0].hit.id, "m1");
    }

    #[test]
    fn a_short_record_near_the_top_by_words_and_found_by_meaning_keeps_its_place() {
        // The two-step question's bridge: 4th by words, and near the
        // bottom by meaning, where ten turns about the question's topic
        // are close to it. By score alone it would fall to 13th.
        let mut lexical: Vec<Ranked> = (1..=3)
            .map(|i| ranked(&format!("m{i}"), 10.0 - f64::from(i)))
            .collect();
        lexical.push(ranked("bridge", 6.0));
        let mut long = ranked("long", 5.9);
        long.hit.text = "A long answer that goes on. ".repeat(10);
        lexical.push(long);
        let mut semantic: Vec<Ranked> = (0..10)
            .map(|i| ranked(&format!("near{i}"), 0.9 - f64::from(i) * 0.01))
            .collect();
        semantic.extend([
            ranked("bridge", 0.2),
            ranked("long", 0.2),
            ranked("far", 0.1),
        ]);
        let fused = fuse(lexical.clone(), semantic.clone());
        let place = |id: &str| fused.iter().position(|r| r.hit.id == id).unwrap() + 1;
        assert_eq!(place("bridge"), 6, "4th by words, 6th at the latest");
        // A long record is weighed by its length later; it keeps its
        // place by score.
        assert!(place("long") > 6, "{}", place("long"));
        for w in fused.windows(2) {
            assert!(w[0].score >= w[1].score);
        }
        // Not found by meaning: not kept.
        semantic.retain(|r| r.hit.id != "bridge");
        let fused = fuse(lexical, semantic);
        let place = fused.iter().position(|r| r.hit.id == "bridge").unwrap() + 1;
        assert!(place > 6, "{place}");
    }

    #[test]
    fn the_words_head_ends_at_the_first_steep_fall() {
        assert_eq!(ahead_by_words(&[1.0, 0.9, 0.5, 0.45]), 2);
        assert_eq!(ahead_by_words(&[1.0, 0.6, 0.5]), 1);
        // Gentle falls, or a fall too deep in the list: no head.
        assert_eq!(ahead_by_words(&[1.0, 0.9, 0.8, 0.7, 0.3]), 0);
        assert_eq!(ahead_by_words(&[1.0]), 0);
        assert_eq!(ahead_by_words(&[]), 0);
        assert_eq!(ahead_by_words(&[0.0, 0.0]), 0);
    }

    #[test]
    fn a_record_the_words_rank_far_ahead_keeps_its_place_unfound_by_meaning() {
        // The headquarters' turn of a two-step question: second by words,
        // twice the third, and not among the records nearest by meaning,
        // where thirty turns about the person's jobs are, each matched by
        // words too, weakly.
        let mut lexical = vec![ranked("fact", 1.43), ranked("headquarters", 1.26)];
        lexical.extend((0..30).map(|i| ranked(&format!("job{i}"), 0.7 - f64::from(i) * 0.01)));
        let semantic: Vec<Ranked> = (0..30)
            .map(|i| ranked(&format!("job{i}"), 0.52 - f64::from(i) * 0.005))
            .chain([ranked("far", 0.3)])
            .collect();
        let fused = fuse(lexical, semantic);
        let place = fused
            .iter()
            .position(|r| r.hit.id == "headquarters")
            .unwrap()
            + 1;
        assert!(place <= 3, "2nd by words, 3rd at the latest: {place}");
        for w in fused.windows(2) {
            assert!(w[0].score >= w[1].score);
        }
    }

    proptest::proptest! {
        #[test]
        fn every_record_is_kept_once_on_the_lexical_scale_and_near_its_place(
            lex in proptest::collection::vec((0u8..40, 0.01f64..20.0), 0..30),
            sem in proptest::collection::vec((0u8..40, -1.0f64..1.0), 0..30),
            long in proptest::collection::vec(proptest::bool::ANY, 40),
        ) {
            // Some records are longer than a kept record may be.
            let mut lexical: Vec<Ranked> = dedup(&lex)
                .into_iter()
                .map(|(i, s)| {
                    let mut r = ranked(&format!("m{i}"), s);
                    if long[usize::from(i)] {
                        r.hit.text = "A long answer that goes on. ".repeat(10);
                    }
                    r
                })
                .collect();
            lexical.sort_by(|a, b| b.score.total_cmp(&a.score));
            let mut semantic: Vec<Ranked> = dedup(&sem).into_iter().map(|(i, s)| ranked(&format!("m{i}"), s)).collect();
            semantic.sort_by(|a, b| b.score.total_cmp(&a.score));
            let scale = lexical.first().map_or(1.0, |r| r.score);
            let mut want: Vec<String> = lexical.iter().chain(&semantic).map(|r| r.hit.id.clone()).collect();
            want.sort();
            want.dedup();
            let ahead = ahead_by_words(&lexical.iter().map(|r| r.score).collect::<Vec<_>>());
            let bound: Vec<(String, usize)> = lexical
                .iter()
                .take(KEPT_BY_WORDS)
                .enumerate()
                .filter(|(i, r)| {
                    let found = *i < ahead || semantic.iter().any(|m| m.hit.id == r.hit.id);
                    r.hit.text.len() <= KEPT_BYTES && found
                })
                .map(|(i, r)| (r.hit.id.clone(), (KEPT_WITHIN * (i + 1) as f64).ceil() as usize))
                .collect();
            let fused = fuse(lexical, semantic);
            for (id, latest) in &bound {
                let place = fused.iter().position(|r| &r.hit.id == id).unwrap() + 1;
                proptest::prop_assert!(place <= *latest, "{} at {} after {}", id, place, latest);
            }
            let mut got: Vec<String> = fused.iter().map(|r| r.hit.id.clone()).collect();
            got.sort();
            proptest::prop_assert_eq!(got, want);
            for w in fused.windows(2) {
                proptest::prop_assert!(w[0].score >= w[1].score);
            }
            for r in &fused {
                proptest::prop_assert!(r.score >= 0.0 && r.score <= scale + 1e-9, "{} of {}", r.score, scale);
            }
        }
    }

    fn dedup(pairs: &[(u8, f64)]) -> Vec<(u8, f64)> {
        let mut seen = std::collections::HashSet::new();
        pairs
            .iter()
            .copied()
            .filter(|(i, _)| seen.insert(*i))
            .collect()
    }
}
