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

use super::seam::{Budget, Hit, HitSource, LOG_SOURCES, SearchStore};
use crate::memory::StoreResult;

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
pub fn last_rows<S: SearchStore + ?Sized>(store: &S) -> StoreResult<[u64; 2]> {
    store.last_rows()
}

/// `word`'s postings in both log indexes: [`read_words`] of one word.
pub fn read_word<S: SearchStore + ?Sized>(
    store: &S,
    word: &str,
    last: [u64; 2],
) -> StoreResult<Word> {
    let mut words = read_words(store, &[word.to_string()], last)?;
    Ok(words.remove(0))
}

/// Each of `words`' postings in both log indexes, in their order, asked of
/// the store in at most two calls. Counting a word's records is left to its
/// postings: asking the index how many records hold a word reads its whole
/// posting list, which on a large log cost more than the search itself,
/// for a figure that only weighs the word.
///
/// A prefix (`word*`) is first read as its whole word: the index must merge
/// every posting of every word under a prefix before it can hand out the
/// newest (7 ms for a prefix in 140,000 of 1,000,000 records), while a
/// whole word's newest postings come straight off its list. Only where the
/// whole word does not fill [`POSTINGS`] is the prefix read.
pub fn read_words<S: SearchStore + ?Sized>(
    store: &S,
    words: &[String],
    last: [u64; 2],
) -> StoreResult<Vec<Word>> {
    let logs = LOG_SOURCES.len();
    // An index that has never held a record is not asked.
    let open: Vec<usize> = (0..logs).filter(|l| last[*l] > 0).collect();
    let mut found: Vec<Vec<i64>> = vec![Vec::new(); words.len() * logs];
    let wholes: Vec<(usize, (HitSource, &str))> = words
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            let whole = w.strip_suffix('*').unwrap_or(w);
            open.iter()
                .map(move |&l| (i * logs + l, (LOG_SOURCES[l], whole)))
        })
        .collect();
    ask(store, &wholes, &mut found)?;
    let prefixes: Vec<(usize, (HitSource, &str))> = words
        .iter()
        .enumerate()
        .filter(|(_, w)| w.ends_with('*'))
        .flat_map(|(i, w)| {
            open.iter()
                .map(move |&l| (i * logs + l, (LOG_SOURCES[l], w.as_str())))
        })
        .filter(|(at, _)| found[*at].len() < POSTINGS)
        .collect();
    ask(store, &prefixes, &mut found)?;
    let mut found = found.into_iter();
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        let mut in_logs: [Posted; 2] = Default::default();
        for (l, p) in in_logs.iter_mut().enumerate() {
            *p = posted(found.next().unwrap_or_default(), last[l]);
        }
        out.push(Word {
            word: w.clone(),
            logs: in_logs,
        });
    }
    Ok(out)
}

/// Each ask's postings into `found` at the place it names, in one call.
fn ask<S: SearchStore + ?Sized>(
    store: &S,
    asks: &[(usize, (HitSource, &str))],
    found: &mut [Vec<i64>],
) -> StoreResult<()> {
    if asks.is_empty() {
        return Ok(());
    }
    let terms: Vec<(HitSource, &str)> = asks.iter().map(|(_, a)| *a).collect();
    for ((at, _), rows) in asks.iter().zip(store.postings_many(&terms, POSTINGS)?) {
        found[*at] = rows;
    }
    Ok(())
}

/// The best `depth` records of `source` for `words`, with `bm25` set as
/// SQLite's would be: lower (more negative) is better. `last` is what
/// [`last_rows`] gave when the words were read. Past `READ_ALL` matches,
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
) -> StoreResult<Vec<Hit>> {
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
    let mut hits = if best.len() <= READ_ALL {
        let keys: Vec<i64> = best.iter().map(|(r, _)| *r).collect();
        store.records(source, &keys)?
    } else {
        // Over-fetched a little for the records the store then leaves out
        // (another project's, the engine's own).
        best.truncate(depth + depth / 8 + 8);
        read_until_full(store, source, &best, budget)?
    };
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

/// The records of `best` (best first) that a budget can use: read
/// [`BATCH`] at a time, stopping after the batch that brings the text read
/// to a quarter more than `budget` could show (all of them without a
/// budget). The first batch shows how many characters this log packs into
/// a token; the batches still wanted are then read together, as many as
/// the text per record so far says are needed, so a store across a network
/// answers in two or three round trips instead of one per batch. What is
/// kept is exactly what reading one batch at a time would keep.
fn read_until_full<S: SearchStore + ?Sized>(
    store: &S,
    source: HitSource,
    best: &[(i64, f64)],
    budget: Option<Budget<'_>>,
) -> StoreResult<Vec<Hit>> {
    let mut hits = Vec::new();
    // Characters still wanted, once the first batch is read.
    let mut wanted: Option<usize> = None;
    let mut next = 0;
    let mut ahead = BATCH;
    let mut chars_read = 0usize;
    while next < best.len() && wanted != Some(0) {
        let end = (next + ahead).min(best.len());
        let keys: Vec<i64> = best[next..end].iter().map(|(r, _)| *r).collect();
        let mut read: HashMap<i64, Hit> = store
            .records(source, &keys)?
            .into_iter()
            .map(|h| (h.row, h))
            .collect();
        for batch in keys.chunks(BATCH) {
            if wanted == Some(0) {
                break;
            }
            let got: Vec<Hit> = batch.iter().filter_map(|k| read.remove(k)).collect();
            let chars: usize = got.iter().map(|h| h.text.len()).sum();
            chars_read += chars;
            if let Some(b) = budget {
                let w = *wanted.get_or_insert_with(|| {
                    let tokens: usize = got.iter().map(|h| b.counter.count(&h.text)).sum();
                    let per_token = chars as f64 / tokens.max(1) as f64;
                    (b.tokens as f64 * per_token * READ_MARGIN) as usize
                });
                wanted = Some(w.saturating_sub(chars));
            }
            hits.extend(got);
            next += batch.len();
        }
        ahead = match wanted {
            // Enough batches for what is still wanted at the text per key
            // read so far, and one more for the records that differ.
            Some(w) => {
                let per_key = (chars_read as f64 / next.max(1) as f64).max(1.0);
                ((w as f64 / per_key).ceil() as usize)
                    .div_ceil(BATCH)
                    .max(1)
                    * BATCH
                    + BATCH
            }
            None => best.len(),
        };
    }
    Ok(hits)
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

#[cfg(test)]
mod reading_tests {
    //! A store in memory that counts its calls: what is tested is how
    //! many times retrieval asks and what it keeps, not a backend (both
    //! backends' answers are in the conformance suite).

    use std::cell::Cell;

    use proptest::prelude::*;

    use super::*;
    use crate::memory::Timestamp;
    use crate::tokens::Heuristic;

    /// Record `k` (from 1) has `texts[k - 1]` as its text, or is left out
    /// (another project's) when `None`. Record `k` holds the word `w{j}`
    /// when `k % (j + 1) == 0`.
    struct Pages {
        texts: Vec<Option<String>>,
        records_calls: Cell<usize>,
        postings_calls: Cell<usize>,
    }

    impl Pages {
        fn new(texts: Vec<Option<String>>) -> Pages {
            Pages {
                texts,
                records_calls: Cell::new(0),
                postings_calls: Cell::new(0),
            }
        }
    }

    crate::assemble::semantic::keeps_no_vectors!(Pages);

    impl SearchStore for Pages {
        fn search(&self, _: &str, _: usize, _: &[HitSource]) -> StoreResult<Vec<Hit>> {
            Ok(Vec::new())
        }
        fn postings(&self, _: HitSource, term: &str, cap: usize) -> StoreResult<Vec<i64>> {
            let (word, prefix) = match term.strip_suffix('*') {
                Some(w) => (w, true),
                None => (term, false),
            };
            // `w1*` also matches `w10`..`w19`, and the whole word `w1`.
            let holds = |k: usize| {
                (0..20).any(|j| {
                    let name = format!("w{j}");
                    let named = if prefix {
                        name.starts_with(word)
                    } else {
                        name == word
                    };
                    named && k.is_multiple_of(j + 1)
                })
            };
            Ok((1..=self.texts.len())
                .rev()
                .filter(|k| holds(*k))
                .take(cap)
                .map(|k| k as i64)
                .collect())
        }
        fn postings_many(
            &self,
            asks: &[(HitSource, &str)],
            cap: usize,
        ) -> StoreResult<Vec<Vec<i64>>> {
            self.postings_calls.set(self.postings_calls.get() + 1);
            asks.iter()
                .map(|(s, t)| self.postings(*s, t, cap))
                .collect()
        }
        fn records(&self, source: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
            self.records_calls.set(self.records_calls.get() + 1);
            // Backwards, as a store may answer in any order.
            Ok(rows
                .iter()
                .rev()
                .filter_map(|r| {
                    let at = usize::try_from(*r).ok()?.checked_sub(1)?;
                    let text = self.texts.get(at)?.clone()?;
                    Some(Hit {
                        source,
                        id: format!("o{r}"),
                        text,
                        bm25: 0.0,
                        at: Timestamp(*r),
                        importance: 0.5,
                        row: *r,
                        role: None,
                    })
                })
                .collect())
        }
        fn last_row(&self, _: HitSource) -> StoreResult<u64> {
            Ok(self.texts.len() as u64)
        }
    }

    /// How records were read before [`read_until_full`]: one batch per call.
    fn one_batch_at_a_time(
        store: &Pages,
        best: &[(i64, f64)],
        budget: Option<Budget<'_>>,
    ) -> Vec<Hit> {
        let mut hits = Vec::new();
        let mut wanted: Option<usize> = None;
        for batch in best.chunks(BATCH) {
            if wanted == Some(0) {
                break;
            }
            let keys: Vec<i64> = batch.iter().map(|(r, _)| *r).collect();
            let read = store
                .records(HitSource::Operation, &keys)
                .unwrap_or_default();
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
        hits
    }

    fn rows_of(hits: &[Hit]) -> Vec<i64> {
        let mut rows: Vec<i64> = hits.iter().map(|h| h.row).collect();
        rows.sort_unstable();
        rows
    }

    proptest! {
        /// Reading the batches still wanted together keeps exactly the
        /// records reading one batch at a time keeps, in fewer calls.
        #[test]
        fn reading_ahead_keeps_what_one_batch_at_a_time_keeps(
            lengths in prop::collection::vec(prop::option::weighted(0.9, 1usize..400), 1..900),
            tokens in prop::option::of(1u64..20_000),
        ) {
            let texts: Vec<Option<String>> =
                lengths.iter().map(|l| l.map(|n| "word ".repeat(n / 5 + 1))).collect();
            let best: Vec<(i64, f64)> = (1..=texts.len() as i64).rev().map(|k| (k, 1.0)).collect();
            let counter = Heuristic::default();
            let budget = tokens.map(|tokens| Budget {
                tokens,
                counter: &counter,
                fill: None,
            });
            let store = Pages::new(texts);
            let old = one_batch_at_a_time(&store, &best, budget);
            let old_calls = store.records_calls.replace(0);
            let new = read_until_full(&store, HitSource::Operation, &best, budget).unwrap();
            prop_assert_eq!(rows_of(&new), rows_of(&old));
            prop_assert!(store.records_calls.get() <= old_calls.max(1));
            // The first batch, then what it says is wanted, then rarely a
            // batch or two more where later records run shorter.
            if budget.is_some() {
                prop_assert!(store.records_calls.get() <= 4, "{} calls", store.records_calls.get());
            }
        }
    }

    #[test]
    fn many_words_are_read_in_one_call_and_prefixes_in_a_second() {
        let store = Pages::new((0..3_000).map(|_| Some("w".to_string())).collect());
        let words: Vec<String> = ["w0", "w19", "w1*", "w4*"].map(String::from).to_vec();
        let last = [3_000, 3_000];
        let read = read_words(&store, &words, last).unwrap();
        // `w0` and `w1` fill their postings as whole words; `w19` and the
        // whole word `w4` do not, so only `w4*` is read as a prefix.
        assert_eq!(store.postings_calls.get(), 2);
        for (w, r) in words.iter().zip(&read) {
            assert_eq!(&r.word, w);
            let alone = read_word(&store, w, last).unwrap();
            assert_eq!(r, &alone, "{w} as if read alone");
        }
        assert_eq!(read[0].logs[0].rows.len(), POSTINGS);
        assert_eq!(read[1].logs[0].rows.len(), 3_000 / 20);
        store.postings_calls.set(0);
        read_words(&store, &words[..2], last).unwrap();
        assert_eq!(store.postings_calls.get(), 1, "no prefix, one call");
        // A log that never held a record is not asked (these pages would
        // answer for any log).
        let read = read_words(&store, &words[2..], [3_000, 0]).unwrap();
        assert!(read.iter().all(|w| w.logs[1].rows.is_empty()));
        assert!(read.iter().all(|w| !w.logs[0].rows.is_empty()));
        store.postings_calls.set(0);
        read_words(&store, &words[..1], [0, 0]).unwrap();
        assert_eq!(store.postings_calls.get(), 0, "nothing to ask");
    }
}
