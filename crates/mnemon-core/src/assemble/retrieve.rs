//! Retrieval across every tier: BM25 from the store's full-text index,
//! combined with recency and importance, plus one round of query expansion
//! for questions whose answer spans two records.

use serde::Serialize;

use crate::compress::sentences::terms;
use crate::memory::{StoreError, Timestamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    Operation,
    Message,
    Decision,
    Document,
    Hot,
    Entity,
}

/// One full-text match, as the store found it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub source: HitSource,
    /// `o12`, `m7`, `DR-…`, `doc:project_state`, `hot:<id>`, `#15`.
    pub id: String,
    pub text: String,
    /// SQLite's `bm25()`: lower (more negative) is a better match.
    pub bm25: f64,
    pub at: Timestamp,
    pub importance: f64,
}

/// A hit with mnemon's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    #[serde(flatten)]
    pub hit: Hit,
    pub score: f64,
}

/// Full-text search over every tier. Any word may match (the ranking
/// rewards matching more of them).
pub trait SearchStore {
    /// The best `limit` matches per index by BM25. With `scan`, only the
    /// newest `scan` matches of each index are scored: the cost of a query
    /// whose words are everywhere stays bounded.
    fn search(
        &self,
        query: &str,
        limit: usize,
        scan: Option<usize>,
    ) -> Result<Vec<Hit>, StoreError>;
    /// How many operations and messages contain `term` (a trailing `*`
    /// makes it a prefix).
    fn term_docs(&self, term: &str) -> Result<u64, StoreError>;
    /// About how many operations and messages there are.
    fn searchable_rows(&self) -> Result<u64, StoreError>;
}

/// BM25 costs about a microsecond per matching record, so a query whose
/// words match more records than this is not scored whole…
const FULL_SCORE: u64 = 4_000;
/// …but split: words in at most this many records are searched over the
/// whole history…
const RARE_DOCS: u64 = 1_000;
/// …and all the query's words over the newest this many matches per index.
const NEWEST_SCAN: usize = 2_000;

/// Words in more than this share of records say little about relevance and
/// make the index score nearly every row; retrieval leaves them out…
const COMMON: f64 = 0.15;
/// …once there are enough records for a share to mean something.
const COMMON_FROM: u64 = 1_000;

/// The words worth searching for.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in terms(query) {
        let t = t.trim_start_matches('#').to_string();
        if t.len() > 1 && !out.contains(&t) && !QUESTION_WORDS.contains(&t.as_str()) {
            out.push(t);
        }
    }
    out
}

const QUESTION_WORDS: &[&str] = &[
    "what", "when", "where", "who", "whom", "which", "why", "how", "does", "did", "do", "is",
    "are", "was", "were", "can", "could", "would", "should", "now", "about", "there", "their",
    "they", "them", "he", "she", "his", "her", "my", "me", "your",
];

/// BM25 relevance (normalized to the best hit) × (0.7 + 0.2 recency + 0.1
/// importance): relevance decides, and among similar matches the later and
/// more important record wins, which is what a knowledge update needs.
pub fn rank(hits: Vec<Hit>) -> Vec<Ranked> {
    if hits.is_empty() {
        return Vec::new();
    }
    // BM25 is not comparable across indexes of different sizes (one hot
    // item scores near zero), so relevance is normalized per source.
    let best = |src: HitSource| {
        hits.iter()
            .filter(|h| h.source == src)
            .map(|h| -h.bm25)
            .fold(f64::MIN_POSITIVE, f64::max)
    };
    let bests: Vec<(HitSource, f64)> = [
        HitSource::Operation,
        HitSource::Message,
        HitSource::Decision,
        HitSource::Document,
        HitSource::Hot,
        HitSource::Entity,
    ]
    .into_iter()
    .map(|s| (s, best(s)))
    .collect();
    let (oldest, newest) = hits.iter().fold((i64::MAX, i64::MIN), |(a, b), h| {
        (a.min(h.at.0), b.max(h.at.0))
    });
    let span = (newest - oldest).max(1) as f64;
    let mut out: Vec<Ranked> = hits
        .into_iter()
        .map(|h| {
            let best = bests
                .iter()
                .find(|(s, _)| *s == h.source)
                .map_or(1.0, |(_, b)| *b);
            let rel = ((-h.bm25).max(0.0) / best).min(1.0);
            let recency = (h.at.0 - oldest) as f64 / span;
            let score = rel * (0.7 + 0.2 * recency + 0.1 * h.importance.clamp(0.0, 1.0));
            Ranked { hit: h, score }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.hit.at.cmp(&a.hit.at)));
    out
}

/// How many records contain each word, remembered while the store grows
/// by less than a tenth: a share decides only whether a word is common or
/// rare, and reading it from the index costs more than the search itself
/// on a large store.
#[derive(Debug)]
pub struct TermCache(crate::cache::Bounded<(u64, u64)>);

/// The cache starts over past this many words.
const TERM_CACHE_MAX: usize = 20_000;

impl Default for TermCache {
    fn default() -> Self {
        TermCache(crate::cache::Bounded::new(TERM_CACHE_MAX))
    }
}

impl TermCache {
    fn docs<S: SearchStore + ?Sized>(
        &self,
        store: &S,
        term: &str,
        rows: u64,
    ) -> Result<u64, StoreError> {
        if let Some((docs, at)) = self.0.get(term)
            && rows <= at + at / 10
        {
            return Ok(docs);
        }
        let docs = store.term_docs(term)?;
        self.0.insert(term, (docs, rows));
        Ok(docs)
    }
}

/// How many names from the best hits the expansion round searches for.
const EXPANSION_NAMES: usize = 6;

/// Capitalized words of three letters or more that do not open a sentence
/// (or a `speaker:` line), lower-cased: "Fun fact, Foxglove Media has…"
/// gives `foxglove`, `media`.
fn names_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut opens = true;
    for token in text.split_inclusive(|c: char| !c.is_alphanumeric()) {
        let word: &str = token.trim_end_matches(|c: char| !c.is_alphanumeric());
        let end = &token[word.len()..];
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        if capital && !opens && word.chars().count() > 2 {
            let lower = word.to_lowercase();
            if !QUESTION_WORDS.contains(&lower.as_str()) && !out.contains(&lower) {
                out.push(lower);
            }
        }
        if !word.is_empty() || !end.trim().is_empty() {
            opens = end.contains(['.', '!', '?', ':', '\n']);
        }
    }
    out
}

/// Ranked hits for `query`. Names in the best hits that the query did not
/// mention are searched again (at half weight), so "what breed is Alice's
/// dog?" also finds "Rex is a beagle" once "Alice's dog is called Rex" ranks.
pub fn retrieve<S: SearchStore + ?Sized>(
    store: &S,
    terms: &TermCache,
    query: &str,
    limit: usize,
) -> Result<Vec<Ranked>, StoreError> {
    let q = query_terms(query);
    if q.is_empty() {
        return Ok(Vec::new());
    }
    // Ties in BM25 are common (repeated phrasing); fetch deeper than the
    // limit so recency and importance can decide among them.
    let depth = (limit + limit / 2).max(50);
    // Words of four letters or more match as prefixes, a cheap stand-in for
    // stemming ("live" finds "lives", "adopt" finds "adopted").
    let rows = store.searchable_rows()?;
    let docs = |w: &str| -> Result<u64, StoreError> {
        // Small stores are cheap to search whole; no need to ask.
        if rows < COMMON_FROM {
            Ok(0)
        } else {
            terms.docs(store, w, rows)
        }
    };
    let share = |d: u64| {
        if rows == 0 {
            0.0
        } else {
            d as f64 / rows as f64
        }
    };
    let mut words: Vec<(String, u64)> = Vec::new();
    for t in &q {
        let w = if t.chars().count() >= 4 {
            format!("{t}*")
        } else {
            t.clone()
        };
        let d = docs(&w)?;
        words.push((w, d));
    }
    // Keep the selective words; if none is, the rarest one.
    let mut keep: Vec<(String, u64)> = words
        .iter()
        .filter(|(_, d)| share(*d) <= COMMON)
        .cloned()
        .collect();
    if keep.is_empty()
        && let Some(w) = words.iter().min_by_key(|(_, d)| *d)
    {
        keep.push(w.clone());
    }
    let all: Vec<&str> = keep.iter().map(|(w, _)| w.as_str()).collect();
    let matches: u64 = keep.iter().map(|(_, d)| d).sum();
    let mut ranked = if matches <= FULL_SCORE {
        rank(store.search(&all.join(" "), depth, None)?)
    } else {
        // Too many matches to score them all: the rare words over the
        // whole history, and every kept word over the newest matches.
        // Rare words carry nearly all of BM25's weight, so a record they
        // find keeps its place; the newest matches of the others are where
        // recency would rank them anyway.
        let rare: Vec<&str> = keep
            .iter()
            .filter(|(_, d)| *d <= RARE_DOCS)
            .map(|(w, _)| w.as_str())
            .collect();
        let mut ranked = rank(store.search(&all.join(" "), depth, Some(NEWEST_SCAN.max(depth)))?);
        if !rare.is_empty() {
            merge(
                &mut ranked,
                rank(store.search(&rare.join(" "), depth, None)?),
                1.0,
                false,
            );
        }
        ranked
    };
    let mut extra: Vec<String> = Vec::new();
    for r in ranked.iter().take(3) {
        for lower in names_in(&r.hit.text) {
            if !q.contains(&lower) && !extra.contains(&lower) {
                extra.push(lower);
            }
        }
    }
    // A capitalized word found everywhere ("Step 12: …") is no name.
    let mut names = Vec::new();
    for w in extra {
        if names.len() == EXPANSION_NAMES {
            break;
        }
        if share(docs(&w)?) <= COMMON {
            names.push(w);
        }
    }
    if !names.is_empty() {
        merge(
            &mut ranked,
            rank(store.search(&names.join(" "), depth, None)?),
            0.5,
            true,
        );
    }
    ranked.truncate(limit);
    Ok(ranked)
}

/// Adds `more` at `weight` to `ranked`. An id already there keeps the better
/// of its two scores, or with `add` their sum: a record that matches both
/// the question and the names its best answers mention is the bridge a
/// two-step question needs. Re-sorts.
fn merge(ranked: &mut Vec<Ranked>, more: Vec<Ranked>, weight: f64, add: bool) {
    for mut r in more {
        r.score *= weight;
        match ranked.iter_mut().find(|x| x.hit.id == r.hit.id) {
            Some(x) if add => x.score += r.score,
            Some(x) => x.score = x.score.max(r.score),
            None => ranked.push(r),
        }
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.hit.at.cmp(&a.hit.at)));
}

#[cfg(test)]
mod name_tests {
    use super::names_in;

    #[test]
    fn names_are_capitalized_words_that_do_not_open_a_sentence() {
        assert_eq!(
            names_in(
                "Caroline: Fun fact, Foxglove Media has its headquarters in Oslo. Today Nikolai left."
            ),
            vec!["foxglove", "media", "oslo", "nikolai"]
        );
        assert_eq!(names_in("Step 12: fixed it. Ok"), Vec::<String>::new());
    }
}
