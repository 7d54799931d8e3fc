//! Retrieval from the large indexes: postings read newest first and capped,
//! records read back without the engine's own, and mnemon's BM25 agreeing
//! with SQLite's where both can run.

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::postings::{POSTINGS, score_log};
use mnemon_core::assemble::retrieve::{HitSource, SearchStore};
use mnemon_core::engine::Engine;
use mnemon_core::memory::NewOperation;
use mnemon_sqlite::SqliteStore;
use serde_json::json;

fn fresh() -> Engine<SqliteStore> {
    engine(
        SqliteStore::in_memory().unwrap(),
        1_000_000,
        SteppingClock::starting(T0),
        "retrieval",
    )
}

fn note(e: &Engine<SqliteStore>, kind: &str, text: &str) -> i64 {
    e.memory()
        .record(NewOperation {
            kind: kind.into(),
            data: json!({ "text": text }),
            tokens: Some(10),
            ..NewOperation::default()
        })
        .unwrap()
        .seq
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
fn postings_are_newest_first_capped_and_match_prefixes() {
    let e = fresh();
    let mut seqs = Vec::new();
    for i in 0..6 {
        seqs.push(note(
            &e,
            "note",
            &format!("release {i} of the lives module"),
        ));
    }
    note(&e, "note", "nothing in common here");
    let store = e.memory().store();
    let all = store
        .postings(HitSource::Operation, "release", 100)
        .unwrap();
    assert_eq!(all, seqs.iter().rev().copied().collect::<Vec<_>>());
    let capped = store.postings(HitSource::Operation, "release", 2).unwrap();
    assert_eq!(capped, vec![seqs[5], seqs[4]]);
    // A trailing star is a prefix; without it the word must be whole.
    assert_eq!(
        store
            .postings(HitSource::Operation, "live*", 100)
            .unwrap()
            .len(),
        6
    );
    assert!(
        store
            .postings(HitSource::Operation, "live", 100)
            .unwrap()
            .is_empty()
    );
    // Input is never query syntax.
    assert!(
        store
            .postings(HitSource::Operation, "\"unbalanced OR", 100)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn records_come_back_with_text_and_without_the_engines_own() {
    let e = fresh();
    let mine = note(&e, "note", "the parser rejects tabs");
    let engine_own = note(&e, "context_action", "the parser was checkpointed");
    let store = e.memory().store();
    let hits = store
        .records(HitSource::Operation, &[mine, engine_own, 999_999])
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].row, mine);
    assert_eq!(hits[0].id, format!("o{mine}"));
    assert!(hits[0].text.starts_with("note: "), "{}", hits[0].text);
    assert!(hits[0].text.contains("the parser rejects tabs"));
    assert!(store.records(HitSource::Operation, &[]).unwrap().is_empty());
}

#[test]
fn a_rare_word_reaches_the_oldest_record_past_every_cap() {
    let e = fresh();
    let oldest = note(&e, "note", "the zebra migration started in the west");
    // More records with the common word than postings are read for it, and
    // more matches in all than are read back whole.
    for i in 0..POSTINGS + 200 {
        note(&e, "note", &format!("migration step {i} finished"));
    }
    let hits = e.search("zebra migration", 20).unwrap();
    assert_eq!(hits[0].hit.id, format!("o{oldest}"), "{:?}", &hits[..3]);
    // The common word alone ranks its newest matches first.
    let hits = e.search("migration", 5).unwrap();
    let newest = e
        .memory()
        .store()
        .postings(HitSource::Operation, "migration*", 1);
    assert_eq!(hits[0].hit.row, newest.unwrap()[0]);
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
        let words: Vec<(String, u64)> = q.split(' ').map(|w| (w.to_string(), 0)).collect();
        let ours: Vec<String> = score_log(store, HitSource::Operation, &words, 10, 600)
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
