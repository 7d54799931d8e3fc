//! BM25 for the two large indexes (operations and messages), computed by
//! mnemon from postings instead of by SQLite's `bm25()`.
//!
//! `bm25()` reads each matching record's length and term positions, about a
//! microsecond per match, and ranking must score every match before it can
//! keep the best: a word found in ten thousand records cost ten
//! milliseconds. Here the index is asked only which records contain each
//! word (newest first, capped), which it answers from its posting lists at
//! a small fraction of that cost. Candidates are ordered by the summed IDF
//! of the words they contain, and only the best few hundred are read and
//! scored with full BM25 (term frequency and length) from their text.

use std::collections::HashMap;

use super::retrieve::{Budget, Hit, HitSource, LOG_SOURCES, SearchStore};
use crate::memory::StoreError;

/// Postings read per word, newest first. A word in fewer records than this
/// is seen over the whole history; a commoner one over its newest records,
/// where recency would rank its matches anyway, while its rarer companions
/// in the query still reach back to the oldest.
pub const POSTINGS: usize = 1_000;

/// Up to this many matching records are all read and scored. Summed IDF
/// cannot tell a short record from a long one with the same words, and a
/// short one that names only the person asked about is often the first
/// step of a two-step answer; past this, the preselection keeps the cost
/// bounded.
const READ_ALL: usize = 800;

/// Past [`READ_ALL`], records are read in this many at a time, best summed
/// IDF first, until they hold the text the caller can use.
const BATCH: usize = 64;

/// How much more text than the budget holds is read past [`READ_ALL`], so
/// the ranking still has a choice at the budget's edge.
const READ_MARGIN: f64 = 1.25;

/// BM25's usual constants (as in SQLite's `bm25()`).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A word's newest postings in one log index, and how many of the index's
/// records contain it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Posted {
    pub rows: Vec<i64>,
    /// Exact below [`POSTINGS`]; past it, estimated from how far back the
    /// postings read reach.
    pub docs: u64,
}

/// A query word (a trailing `*` makes it a prefix) with its postings in
/// each log index, in the order of [`LOG_SOURCES`].
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub word: String,
    pub logs: [Posted; 2],
}

impl Word {
    /// How many operations and messages contain the word.
    pub fn docs(&self) -> u64 {
        self.logs.iter().map(|p| p.docs).sum()
    }
}

/// The last key of each log index, in the order of [`LOG_SOURCES`]: keys
/// are assigned in order, so it stands for the index's size.
pub fn last_rows<S: SearchStore + ?Sized>(store: &S) -> Result<[u64; 2], StoreError> {
    Ok([
        store.last_row(LOG_SOURCES[0])?,
        store.last_row(LOG_SOURCES[1])?,
    ])
}

/// `word`'s postings in both log indexes. Counting a word's records is
/// left to its postings: asking the index how many records hold a word
/// reads its whole posting list, which on a large log cost more than the
/// search itself, for a figure that only weighs the word.
pub fn read_word<S: SearchStore + ?Sized>(
    store: &S,
    word: &str,
    last: [u64; 2],
) -> Result<Word, StoreError> {
    let mut logs: [Posted; 2] = Default::default();
    for (i, source) in LOG_SOURCES.into_iter().enumerate() {
        logs[i] = read_postings(store, source, word, last[i])?;
    }
    Ok(Word {
        word: word.to_string(),
        logs,
    })
}

/// The best `depth` records of `source` for `words`, with `bm25` set as
/// SQLite's would be: lower (more negative) is better. `last` is what
/// [`last_rows`] gave when the words were read. Past [`READ_ALL`] matches,
/// records stop being read once they hold a quarter more text than
/// `budget` could show.
#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: scored from postings only for a log index"
)]
pub fn score_log<S: SearchStore + ?Sized>(
    store: &S,
    source: HitSource,
    words: &[Word],
    last: [u64; 2],
    depth: usize,
    budget: Option<Budget<'_>>,
) -> Result<Vec<Hit>, StoreError> {
    let log = LOG_SOURCES
        .iter()
        .position(|s| *s == source)
        .expect("scored from postings only for a log index");
    let last = last[log];
    // A record's words are kept as a bit set.
    let words = &words[..words.len().min(64)];
    // Which words each record contains, and their summed IDF.
    let mut seen: HashMap<i64, (f64, u64)> = HashMap::new();
    let mut idfs = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let p = &w.logs[log];
        let idf = idf(last.max(p.docs), p.docs);
        idfs.push(idf);
        for r in &p.rows {
            let e = seen.entry(*r).or_default();
            e.0 += idf;
            e.1 |= 1 << i;
        }
    }
    if seen.is_empty() {
        return Ok(Vec::new());
    }
    // Sorted by value, not by looking each score up while comparing: a
    // common word gives thousands of candidates.
    let mut best: Vec<(i64, f64)> = seen.iter().map(|(r, (s, _))| (*r, *s)).collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    let mut hits = Vec::new();
    if best.len() <= READ_ALL {
        let keys: Vec<i64> = best.iter().map(|(r, _)| *r).collect();
        hits = store.records(source, &keys)?;
    } else {
        // Over-fetched a little for the records the store then leaves out
        // (another project's, the engine's own).
        best.truncate(depth + depth / 8 + 8);
        // Characters still wanted, once the first batch shows how many
        // characters this log packs into a token.
        let mut wanted: Option<usize> = None;
        for batch in best.chunks(BATCH) {
            if wanted == Some(0) {
                break;
            }
            let keys: Vec<i64> = batch.iter().map(|(r, _)| *r).collect();
            let read = store.records(source, &keys)?;
            let chars: usize = read.iter().map(|h| h.text.len()).sum();
            if let Some(b) = budget {
                let w = *wanted.get_or_insert_with(|| {
                    let tokens: usize = read.iter().map(|h| b.counter.count(&h.text)).sum();
                    let per_token = chars as f64 / tokens.max(1) as f64;
                    (b.tokens as f64 * per_token * READ_MARGIN) as usize
                });
                wanted = Some(w.saturating_sub(chars));
            }
            hits.extend(read);
        }
    }
    let lowered: Vec<String> = hits.iter().map(|h| h.text.to_lowercase()).collect();
    let tokens: Vec<Vec<&str>> = lowered.iter().map(|t| words_of(t)).collect();
    let avg =
        (tokens.iter().map(Vec::len).sum::<usize>() as f64 / tokens.len().max(1) as f64).max(1.0);
    for (h, toks) in hits.iter_mut().zip(&tokens) {
        let mask = seen.get(&h.row).map_or(0, |e| e.1);
        let norm = K1 * (1.0 - B + B * toks.len() as f64 / avg);
        let mut score = 0.0;
        for (i, w) in words.iter().enumerate() {
            if mask & (1 << i) == 0 {
                continue;
            }
            // The index matched it, so it is there at least once even when
            // this simpler split does not find it (a phrase, a diacritic).
            let tf = frequency(toks, &w.word).max(1) as f64;
            score += idfs[i] * tf * (K1 + 1.0) / (tf + norm);
        }
        h.bm25 = -score;
    }
    hits.sort_by(|a, b| a.bm25.total_cmp(&b.bm25).then(b.row.cmp(&a.row)));
    hits.truncate(depth);
    Ok(hits)
}

/// The newest postings for `word` in one index. A prefix whose whole word
/// alone fills the postings is read as that word: the index must merge
/// every posting of every word under a prefix before it can hand out the
/// newest (7 ms for a prefix in 140,000 of 1,000,000 records), while a
/// whole word's newest postings come straight off its list.
fn read_postings<S: SearchStore + ?Sized>(
    store: &S,
    source: HitSource,
    word: &str,
    last: u64,
) -> Result<Posted, StoreError> {
    if let Some(whole) = word.strip_suffix('*') {
        let found = store.postings(source, whole, POSTINGS)?;
        if found.len() == POSTINGS {
            return Ok(posted(found, last));
        }
    }
    Ok(posted(store.postings(source, word, POSTINGS)?, last))
}

/// A capped list's count: exact when the list is shorter than the cap,
/// else the share of the index its newest postings cover, carried over the
/// whole index (postings are newest first, keys assigned in order).
fn posted(rows: Vec<i64>, last: u64) -> Posted {
    let docs = match rows.last() {
        Some(&oldest) if rows.len() >= POSTINGS => {
            let span = last.saturating_sub(oldest.max(0) as u64) + 1;
            let n = rows.len() as u64;
            (n.saturating_mul(last.max(1)) / span).max(n)
        }
        _ => rows.len() as u64,
    };
    Posted { rows, docs }
}

/// BM25's IDF as SQLite computes it, so both halves of a result list are
/// on one scale: a word in half the records or more counts next to nothing.
fn idf(n: u64, d: u64) -> f64 {
    let idf = ((n.saturating_sub(d) as f64 + 0.5) / (d as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// Words split as the full-text index splits them (`text` lower-cased
/// already).
fn words_of(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// How often `word` (a trailing `*` makes it a prefix) occurs in `toks`.
fn frequency(toks: &[&str], word: &str) -> usize {
    match word.strip_suffix('*') {
        Some(prefix) => toks.iter().filter(|t| t.starts_with(prefix)).count(),
        None => toks.iter().filter(|t| **t == word).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_words_weigh_more_and_never_below_zero() {
        assert!(idf(100_000, 10) > idf(100_000, 1_000));
        assert!(idf(100, 100) > 0.0);
        assert!(idf(100, 60) > 0.0 && idf(100, 60) < 1e-3);
        assert!(idf(0, 0) > 0.0);
    }

    #[test]
    fn a_full_list_is_carried_over_the_whole_index() {
        let short = posted(vec![9, 5, 2], 1_000);
        assert_eq!(short.docs, 3);
        // The newest thousand postings reach back over the last 4,000 keys
        // of 100,000: about a quarter of the index holds the word.
        let rows: Vec<i64> = (0..POSTINGS as i64).map(|i| 100_000 - 4 * i).collect();
        let full = posted(rows, 100_000);
        assert!((24_000..=26_000).contains(&full.docs), "{}", full.docs);
        // Never below what was read.
        let dense: Vec<i64> = (0..POSTINGS as i64).rev().collect();
        assert_eq!(posted(dense, 999).docs, POSTINGS as u64);
    }

    #[test]
    fn frequency_follows_the_index_split_and_prefixes() {
        let lowered = "Lives, lived: LIVE-live task_execution".to_lowercase();
        let toks = words_of(&lowered);
        assert_eq!(toks.len(), 6);
        assert_eq!(frequency(&toks, "live"), 2);
        assert_eq!(frequency(&toks, "live*"), 4);
        assert_eq!(frequency(&toks, "execution"), 1);
    }
}
