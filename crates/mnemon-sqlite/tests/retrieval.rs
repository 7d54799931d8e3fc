//! mnemon's BM25, scored from postings, agreeing with SQLite's FTS5
//! `bm25()` where both can run. The rest of retrieval's checks run on the
//! in-memory store, in `mnemon-core/tests/retrieval.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::{SteppingClock, T0, engine, record_note};
use mnemon_core::assemble::postings::{Word, last_rows, read_word, score_log};
use mnemon_core::assemble::retrieve::{HitSource, SearchStore};
use mnemon_core::engine::Engine;
use mnemon_sqlite::SqliteStore;

fn fresh() -> Engine<SqliteStore> {
    engine(
        SqliteStore::in_memory().unwrap(),
        1_000_000,
        SteppingClock::starting(T0),
        "retrieval",
    )
}

fn note(e: &Engine<SqliteStore>, kind: &str, text: &str) -> i64 {
    record_note(e.memory(), kind, text)
}

/// A deterministic stream of words from a 400-word vocabulary, skewed so
/// some words are everywhere and most are rare.
fn words(seed: &mut u64, n: usize) -> String {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = (*seed >> 33) as f64 / (1u64 << 31) as f64;
            let rank = (400f64.powf(x * x) as usize).min(399);
            format!("w{rank}x")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn mnemon_bm25_agrees_with_sqlite_where_both_run() {
    let e = fresh();
    let mut seed = 7;
    for _ in 0..600 {
        let n = 4 + (seed % 20) as usize;
        let text = words(&mut seed, n);
        note(&e, "note", &text);
    }
    let store = e.memory().store();
    let mut overlap = 0;
    let mut firsts = 0;
    let queries = 40;
    for _ in 0..queries {
        let q = words(&mut seed, 3);
        // SQLite's bm25() over every match, against mnemon's from postings
        // (under 800 matches, so every match is read and scored).
        let sqlite: Vec<String> = store
            .search(&q, 10, &[HitSource::Operation])
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        let last = last_rows(store).unwrap();
        let words: Vec<Word> = q
            .split(' ')
            .map(|w| read_word(store, w, last).unwrap())
            .collect();
        let ours: Vec<String> = score_log(store, HitSource::Operation, &words, last, 10, None)
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        overlap += ours.iter().filter(|id| sqlite.contains(id)).count();
        firsts += usize::from(ours.first() == sqlite.first());
    }
    eprintln!(
        "top-10 overlap {overlap}/{}, same best {firsts}/{queries}",
        queries * 10
    );
    // The average length is taken over the records read, not the whole
    // index, and ties fall to the newer record: close, not identical.
    assert!(overlap >= queries * 10 * 9 / 10, "top-10 overlap {overlap}");
    assert!(
        firsts >= queries * 8 / 10,
        "same best match {firsts}/{queries}"
    );
}
