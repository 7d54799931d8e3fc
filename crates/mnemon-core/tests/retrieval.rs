//! Retrieval from the large indexes: postings read newest first and capped,
//! and records read back without the engine's own. mnemon's BM25 against
//! SQLite's own is checked in `mnemon-sqlite/tests/retrieval.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine, record_note};
use mnemon_core::assemble::postings::{POSTINGS, last_rows, read_word, score_log};
use mnemon_core::assemble::retrieve::{HitSource, SearchStore};
use mnemon_core::engine::Engine;

fn fresh() -> Engine<InMemoryStore> {
    engine(
        InMemoryStore::new(),
        1_000_000,
        SteppingClock::starting(T0),
        "retrieval",
    )
}

fn note(e: &Engine<InMemoryStore>, kind: &str, text: &str) -> i64 {
    record_note(e.memory(), kind, text)
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
fn past_read_all_records_stop_once_they_hold_the_budgets_text() {
    use mnemon_core::assemble::retrieve::Budget;
    use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
    let e = fresh();
    // More matches than are ever all read, each about 20 tokens.
    for i in 0..POSTINGS {
        note(
            &e,
            "note",
            &format!("deploy {i} rolled the cache back after the quota alarm fired twice"),
        );
    }
    let store = e.memory().store();
    let last = last_rows(store).unwrap();
    let words = vec![read_word(store, "deploy", last).unwrap()];
    assert_eq!(words[0].docs(), POSTINGS as u64);
    let unbounded = score_log(store, HitSource::Operation, &words, last, 400, None).unwrap();
    assert_eq!(unbounded.len(), 400);
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let bounded = |tokens| {
        let budget = Budget {
            tokens,
            counter: &counter,
            fill: None,
        };
        score_log(store, HitSource::Operation, &words, last, 400, Some(budget)).unwrap()
    };
    // Records are read in batches of 64 until they hold a quarter more
    // text than the budget shows.
    let each = counter.count(&unbounded[0].text) as u64;
    let read_for = |tokens: u64| {
        let records = (tokens * 5 / 4).div_ceil(each) as usize;
        records.div_ceil(64) * 64
    };
    let small = bounded(1_000);
    assert_eq!(small.len(), read_for(1_000), "{each} tokens a record");
    let larger = bounded(4_000);
    assert_eq!(larger.len(), read_for(4_000).min(400));
    assert!(small.len() < larger.len() && larger.len() < unbounded.len());
    // What is read is still the best: the bounded list is the unbounded
    // one's head, as every record has the same words.
    let ids = |h: &[mnemon_core::assemble::retrieve::Hit]| {
        h.iter().map(|h| h.id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ids(&small)[..10], ids(&unbounded)[..10]);
}

#[test]
fn a_common_words_count_is_estimated_from_its_newest_postings() {
    let e = fresh();
    // "cache" in every fourth of 8,000 records: 2,000, past the cap.
    for i in 0..8_000 {
        let text = if i % 4 == 0 {
            format!("cache entry {i} expired")
        } else {
            format!("entry {i} written")
        };
        note(&e, "note", &text);
    }
    let store = e.memory().store();
    let last = last_rows(store).unwrap();
    let w = read_word(store, "cache", last).unwrap();
    assert_eq!(w.logs[0].rows.len(), POSTINGS);
    assert!(
        (1_900..=2_100).contains(&w.docs()),
        "estimated {} for 2,000",
        w.docs()
    );
    // A prefix whose whole word fills the postings is read as that word.
    let p = read_word(store, "cach*", last).unwrap();
    assert_eq!(p.logs[0].rows, w.logs[0].rows);
}
