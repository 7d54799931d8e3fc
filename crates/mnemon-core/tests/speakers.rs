//! A question about one speaker of a conversation: what they said leads
//! the fragments, through the whole engine (retrieval, the speaker cue,
//! the allocator).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine, qa_context};
use mnemon_core::engine::Engine;
use mnemon_core::importance::Role;
use mnemon_core::memory::NewMessage;

fn chat(turns: &[(&str, &str)]) -> Engine<InMemoryStore> {
    let e = engine(
        InMemoryStore::new(),
        1_000_000,
        SteppingClock::starting(T0),
        "speakers",
    );
    for (i, (who, text)) in turns.iter().enumerate() {
        e.message(NewMessage {
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            content: format!("{who}: {text}"),
            agent: None,
            tokens: None,
        })
        .unwrap();
    }
    e
}

fn context(e: &Engine<InMemoryStore>, query: &str) -> String {
    qa_context(e, query, 2_000).text
}

const KATE: &str = "I finally got the job at the animal clinic";
const BEN: &str = "Kate, my job at the bank is dull";

fn turns() -> Vec<(&'static str, &'static str)> {
    let mut t = vec![("Kate", KATE), ("Ben", BEN)];
    for _ in 0..20 {
        t.push(("Kate", "Sounds good, see you then"));
        t.push(("Ben", "Sure, talk soon"));
    }
    t
}

/// Whether Kate's turn comes before Ben's in the context for `query`;
/// both must be sent.
fn kate_first(query: &str) -> bool {
    let text = context(&chat(&turns()), query);
    let kate = text.find(KATE).expect("Kate's turn is sent");
    let ben = text.find(BEN).expect("Ben's turn is sent");
    kate < ben
}

#[test]
fn a_question_about_one_speaker_leads_with_what_they_said() {
    assert!(kate_first("What job did Kate get?"));
}

#[test]
fn a_question_about_both_keeps_the_words_order() {
    assert!(!kate_first("What jobs do Kate and Ben have?"));
}
