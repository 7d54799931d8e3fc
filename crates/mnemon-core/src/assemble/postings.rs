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

use super::retrieve::{Hit, HitSource, SearchStore};
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

/// BM25's usual constants (as in SQLite's `bm25()`).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A query word and how many operations and messages contain it, as far as
/// the caller knows (0 when it did not ask).
pub type Word = (String, u64);

/// The best `depth` records of `source` for `words`, with `bm25` set as
/// SQLite's would be: lower (more negative) is better.
pub fn score_log<S: SearchStore + ?Sized>(
    store: &S,
    source: HitSource,
    words: &[Word],
    depth: usize,
    rows: u64,
) -> Result<Vec<Hit>, StoreError> {
    // A record's words are kept as a bit set.
    let words = &words[..words.len().min(64)];
    // Which words each record contains, and their summed IDF.
    let mut seen: HashMap<i64, (f64, u64)> = HashMap::new();
    let mut idfs = Vec::new();
    for (i, (word, docs)) in words.iter().enumerate() {
        let found = read_postings(store, source, word, *docs)?;
        // A list shorter than the cap is the exact count for this index.
        let d = if found.len() < POSTINGS {
            found.len() as u64
        } else {
            (*docs).max(found.len() as u64)
        };
        let idf = idf(rows.max(d), d);
        idfs.push(idf);
        for r in found {
            let e = seen.entry(r).or_default();
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
    if best.len() > READ_ALL {
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        // Over-fetched a little for the records the store then leaves out
        // (another project's, the engine's own).
        best.truncate(depth + depth / 8 + 8);
    }
    let keys: Vec<i64> = best.iter().map(|(r, _)| *r).collect();
    let mut hits = store.records(source, &keys)?;
    let lowered: Vec<String> = hits.iter().map(|h| h.text.to_lowercase()).collect();
    let tokens: Vec<Vec<&str>> = lowered.iter().map(|t| words_of(t)).collect();
    let avg =
        (tokens.iter().map(Vec::len).sum::<usize>() as f64 / tokens.len().max(1) as f64).max(1.0);
    for (h, toks) in hits.iter_mut().zip(&tokens) {
        let mask = seen.get(&h.row).map_or(0, |e| e.1);
        let norm = K1 * (1.0 - B + B * toks.len() as f64 / avg);
        let mut score = 0.0;
        for (i, (word, _)) in words.iter().enumerate() {
            if mask & (1 << i) == 0 {
                continue;
            }
            // The index matched it, so it is there at least once even when
            // this simpler split does not find it (a phrase, a diacritic).
            let tf = frequency(toks, word).max(1) as f64;
            score += idfs[i] * tf * (K1 + 1.0) / (tf + norm);
        }
        h.bm25 = -score;
    }
    hits.sort_by(|a, b| a.bm25.total_cmp(&b.bm25).then(b.row.cmp(&a.row)));
    hits.truncate(depth);
    Ok(hits)
}

/// A prefix found in more records than this is read as its whole word
/// when that word alone fills the postings: the index must merge every
/// posting of every word under a prefix before it can hand out the newest
/// (7 ms for a prefix in 140,000 of 1,000,000 records), while a whole word's
/// newest postings come straight off its list.
const PREFIX_MAX: u64 = 5 * POSTINGS as u64;

/// The newest postings for `word`; see [`PREFIX_MAX`].
fn read_postings<S: SearchStore + ?Sized>(
    store: &S,
    source: HitSource,
    word: &str,
    docs: u64,
) -> Result<Vec<i64>, StoreError> {
    if docs > PREFIX_MAX
        && let Some(whole) = word.strip_suffix('*')
    {
        let found = store.postings(source, whole, POSTINGS)?;
        if found.len() == POSTINGS {
            return Ok(found);
        }
    }
    store.postings(source, word, POSTINGS)
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
    fn frequency_follows_the_index_split_and_prefixes() {
        let lowered = "Lives, lived: LIVE-live task_execution".to_lowercase();
        let toks = words_of(&lowered);
        assert_eq!(toks.len(), 6);
        assert_eq!(frequency(&toks, "live"), 2);
        assert_eq!(frequency(&toks, "live*"), 4);
        assert_eq!(frequency(&toks, "execution"), 1);
    }
}
