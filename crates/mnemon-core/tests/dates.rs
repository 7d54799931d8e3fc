//! A question that names a month or a day: what was said then leads the
//! fragments, through the whole engine (retrieval, the date cue, the
//! allocator).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{engine, qa_context};
use mnemon_core::engine::Engine;
use mnemon_core::importance::Role;
use mnemon_core::memory::{Clock, NewMessage, Timestamp};

/// A clock the test moves: each turn is said when the conversation says.
#[derive(Debug)]
struct SetClock(AtomicI64);

impl Clock for SetClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

fn at(date: &str) -> i64 {
    Timestamp::parse(&format!("{date}T18:00:00Z")).unwrap().0
}

const MAY: &str = "We went camping in the mountains and saw a bear";
const JUNE: &str = "We went camping by the lake and swam every morning";

/// Kate tells of two camping trips, in May and in June 2023, among
/// small talk; the history's present is July 2023.
fn chat() -> Engine<InMemoryStore> {
    let clock = Arc::new(SetClock(AtomicI64::new(at("2023-05-20"))));
    let e = engine(InMemoryStore::new(), 1_000_000, clock.clone(), "dates");
    let say = |who: &str, text: &str, i: usize| {
        e.message(NewMessage {
            role: if i.is_multiple_of(2) {
                Role::User
            } else {
                Role::Assistant
            },
            content: format!("{who}: {text}"),
            agent: None,
            tokens: None,
        })
        .unwrap();
    };
    for (date, trip) in [("2023-05-20", MAY), ("2023-06-24", JUNE)] {
        clock.0.store(at(date), Ordering::SeqCst);
        say("Kate", trip, 0);
        for i in 1..20 {
            say(
                if i % 2 == 0 { "Kate" } else { "Ben" },
                "Sounds good, talk soon",
                i,
            );
        }
    }
    clock.0.store(at("2023-07-10"), Ordering::SeqCst);
    say("Ben", "How was your week?", 1);
    e
}

/// Whether the May trip comes before the June trip in the context for
/// `query`; both must be sent.
fn may_first(query: &str) -> bool {
    let text = qa_context(&chat(), query, 2_000).text;
    let may = text.find(MAY).expect("the May trip is sent");
    let june = text.find(JUNE).expect("the June trip is sent");
    may < june
}

#[test]
fn a_question_naming_a_month_leads_with_what_was_said_in_it() {
    assert!(may_first("Where did Kate go camping in May?"));
    assert!(!may_first("Where did Kate go camping in June?"));
}

#[test]
fn a_question_naming_a_day_leads_with_what_was_said_on_it() {
    assert!(may_first("Where did Kate go camping on 20 May 2023?"));
    assert!(may_first("Where did Kate go camping on May 20th?"));
}

#[test]
fn without_a_date_the_newer_trip_leads() {
    assert!(!may_first("Where did Kate go camping?"));
}
