//! A question about one speaker of a conversation: what they said leads
//! the fragments, through the whole engine (retrieval, the speaker cue,
//! the allocator).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine, qa_context, say};
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
        say(&e, i, who, text);
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

const MINE: &str = "I want the backup job to run nightly";
const ANSWER: &str = "A backup job can run nightly, weekly or hourly: a nightly backup job suits \
                      most teams, and each backup job writes its own log";

/// An agent's conversation as it is stored: roles, and no label in the
/// text. Whether the user's turn comes before the assistant's answer in
/// the context for `query`; both must be sent.
fn mine_first(query: &str) -> bool {
    let e = engine(
        InMemoryStore::new(),
        1_000_000,
        SteppingClock::starting(T0),
        "own words",
    );
    let mut turns = vec![(Role::User, MINE), (Role::Assistant, ANSWER)];
    for _ in 0..20 {
        turns.push((Role::User, "Thanks, that helps"));
        turns.push((Role::Assistant, "Glad to help"));
    }
    for (role, text) in turns {
        e.message(NewMessage {
            role,
            content: text.into(),
            agent: None,
            tokens: None,
        })
        .unwrap();
    }
    let text = context(&e, query);
    let mine = text.find(MINE).expect("the user's turn is sent");
    let answer = text.find(ANSWER).expect("the answer is sent");
    mine < answer
}

#[test]
fn asking_what_i_brought_up_leads_with_my_own_turns() {
    assert!(mine_first(
        "What did I mention about the backup job in our conversations?"
    ));
}

#[test]
fn a_question_about_the_topic_keeps_the_words_order() {
    assert!(!mine_first("How often can a backup job run?"));
}
