//! A question that names a month or a day: what was said then leads the
//! fragments, through the whole engine (retrieval, the date cue, the
//! allocator).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{HandClock, engine, qa_context, say};
use mnemon_core::engine::Engine;
use mnemon_core::memory::Timestamp;

fn at(date: &str) -> Timestamp {
    Timestamp::parse(&format!("{date}T18:00:00Z")).unwrap()
}

const MAY: &str = "We went camping in the mountains and saw a bear";
const JUNE: &str = "We went camping by the lake and swam every morning";

/// Kate tells of two camping trips, in May and in June 2023, among
/// small talk; the history's present is July 2023.
fn chat() -> Engine<InMemoryStore> {
    let clock = HandClock::at(at("2023-05-20"));
    let e = engine(InMemoryStore::new(), 1_000_000, clock.clone(), "dates");
    for (date, trip) in [("2023-05-20", MAY), ("2023-06-24", JUNE)] {
        clock.set(at(date));
        say(&e, 0, "Kate", trip);
        for i in 1..20 {
            let who = if i % 2 == 0 { "Kate" } else { "Ben" };
            say(&e, i, who, "Sounds good, talk soon");
        }
    }
    clock.set(at("2023-07-10"));
    say(&e, 1, "Ben", "How was your week?");
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
