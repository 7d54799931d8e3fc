//! A question whose words match few turns: the room they leave is filled
//! with the turns around those that matched (the same exchanges), below
//! everything retrieval found, and never past what the room asks for.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine, qa_context};
use mnemon_core::assemble::neighbours::filled_with_exchanges;
use mnemon_core::assemble::retrieve::{HitSource, Ranked, SearchStore};
use mnemon_core::engine::Engine;
use mnemon_core::importance::Role;
use mnemon_core::memory::NewMessage;

const BUDGET: u64 = 1_000;

const MATCHED: &str = "That swim was freezing";
/// Three turns after the one that matches, sharing none of its words.
const ANSWER: &str = "We went to Bled, in Slovenia";

/// Small talk, the exchange about the swim, small talk again: more than a
/// context of `BUDGET` tokens holds, so recent turns do not bring the
/// exchange. Rows are 1-based: the matched turn is row 201.
fn chat() -> Engine<InMemoryStore> {
    let e = engine(
        InMemoryStore::new(),
        1_000_000,
        SteppingClock::starting(T0),
        "fill",
    );
    let mut turns: Vec<String> = (0..200).map(|i| format!("Small talk number {i}")).collect();
    turns.extend([
        MATCHED.to_string(),
        "Brr, I believe you".into(),
        "The water was green and clear".into(),
        ANSWER.into(),
    ]);
    turns.extend((200..400).map(|i| format!("Small talk number {i}")));
    for (i, text) in turns.iter().enumerate() {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        e.message(NewMessage::new(role, text.as_str())).unwrap();
    }
    e
}

#[test]
fn the_turns_around_a_lone_match_fill_the_room_after_it() {
    let e = chat();
    let text = qa_context(&e, "Where was the freezing swim?", BUDGET).text;
    let matched = text.find(MATCHED).expect("the matching turn is sent");
    // Beyond the two rings of neighbours every best hit brings.
    let answer = text.find(ANSWER).expect("the turn three away is sent");
    assert!(matched < answer, "fillers follow what was found:\n{text}");
}

#[test]
fn fillers_come_ring_by_ring_below_every_found_record_and_stop_when_the_room_is_offered() {
    let e = chat();
    let store = e.memory().store();
    let hub = |row: i64, score: f64| Ranked {
        hit: store
            .records(HitSource::Message, &[row])
            .unwrap()
            .pop()
            .unwrap(),
        score,
    };
    let found = vec![hub(201, 2.0), hub(210, 0.5)];

    // A room the found records already offer: nothing is read or added.
    let same = filled_with_exchanges(store, found.clone(), 1).unwrap();
    assert_eq!(same, found);

    // A room for a few more turns: the first ring around both, in the
    // found records' order, then the second.
    let filled = filled_with_exchanges(store, found.clone(), 60).unwrap();
    let rows: Vec<i64> = filled.iter().map(|r| r.hit.row).collect();
    assert_eq!(&rows[..2], &[201, 210]);
    assert_eq!(&rows[2..6], &[200, 202, 209, 211], "{rows:?}");
    assert!(rows.len() > 6, "a room of 60 tokens asks past one ring");
    assert!(
        filled[2..].iter().all(|r| r.score < 0.5 && r.score > 0.0),
        "{filled:?}"
    );
    assert!(
        filled[2..].windows(2).all(|w| w[0].score >= w[1].score),
        "an outer ring never scores above an inner one"
    );

    // A large room: five rings around each, and no record twice.
    let all = filled_with_exchanges(store, found, 100_000).unwrap();
    let mut rows: Vec<i64> = all.iter().map(|r| r.hit.row).collect();
    // Rings 4 and 5 of row 201 are rings 5 and 4 of row 210 (205, 206).
    assert_eq!(rows.len(), 2 + 10 + 10 - 2, "{rows:?}");
    rows.sort_unstable();
    rows.dedup();
    assert_eq!(rows.len(), 20);
    assert_eq!((rows[0], rows[19]), (196, 215));
}

/// A clock the test moves: a second per reading, and jumps on demand.
#[derive(Debug)]
struct Jumping(std::sync::atomic::AtomicI64);

impl mnemon_core::memory::Clock for Jumping {
    fn now(&self) -> mnemon_core::memory::Timestamp {
        mnemon_core::memory::Timestamp(self.0.fetch_add(1_000, std::sync::atomic::Ordering::SeqCst))
    }
}

#[test]
fn a_turn_between_two_exchanges_joins_the_one_it_belongs_to() {
    let clock = std::sync::Arc::new(Jumping(std::sync::atomic::AtomicI64::new(T0.0)));
    let e = engine(InMemoryStore::new(), 1_000_000, clock.clone(), "fill");
    let say = |text: &str| {
        e.message(NewMessage::new(Role::User, text)).unwrap();
    };
    say("Monday's turn before"); // row 1
    say("First exchange"); // row 2
    clock
        .0
        .fetch_add(7 * 3_600_000, std::sync::atomic::Ordering::SeqCst);
    say("Tuesday's turn between"); // row 3
    say("Second exchange"); // row 4
    let store = e.memory().store();
    let found: Vec<Ranked> = store
        .records(HitSource::Message, &[2, 4])
        .unwrap()
        .into_iter()
        .map(|hit| Ranked { hit, score: 1.0 })
        .collect();
    assert_eq!(found[0].hit.row, 2, "the first exchange leads");
    let filled = filled_with_exchanges(store, found, 1_000).unwrap();
    let mut rows: Vec<i64> = filled[2..].iter().map(|r| r.hit.row).collect();
    rows.sort_unstable();
    // Row 3 is seven hours from row 2 and a second from row 4: it is
    // brought by row 4, once. Row 1 is row 2's.
    assert_eq!(rows, vec![1, 3]);
}
