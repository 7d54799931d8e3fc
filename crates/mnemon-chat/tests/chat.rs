//! The chat over a store: the seeds' scenario, references that ask instead
//! of guessing, references that survive a refresh and a restart (a new
//! engine over the same project), questions about memory, and lines that
//! change nothing. On the in-memory store: what the chat keeps, it keeps in
//! the store, whichever backend that is.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_chat::{Chat, ReplyKind};
use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::engine::Engine;
use mnemon_core::memory::{
    EntityKind, EntityQuery, EntityStatus, EntityStore, OperationLog, OperationQuery,
};

/// An engine over `store`'s project: a second call is a restart, a new
/// engine reading what the first one stored.
fn open(store: &InMemoryStore) -> Engine<InMemoryStore> {
    engine(
        store.reopen(),
        128_000,
        SteppingClock::starting(T0),
        "orchestrator",
    )
}

fn say(chat: &mut Chat<'_, InMemoryStore>, line: &str) -> mnemon_chat::Reply {
    chat.handle(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn entities(e: &Engine<InMemoryStore>, kind: EntityKind) -> Vec<mnemon_core::memory::Entity> {
    e.memory()
        .store()
        .entities(&EntityQuery {
            kind: Some(kind),
            ..EntityQuery::default()
        })
        .unwrap()
}

fn op_count(e: &Engine<InMemoryStore>) -> usize {
    e.memory()
        .store()
        .operations(&OperationQuery::default())
        .unwrap()
        .len()
}

#[test]
fn the_seed_scenario_resolves_it_to_the_epic_just_created() {
    let store = InMemoryStore::new();
    let e = open(&store);
    let mut chat = Chat::new(&e);
    // Four entities first, so the epic is #5 as in the design document.
    say(&mut chat, "create a milestone called v1");
    say(&mut chat, "create epics: Onboarding, Billing and Search");
    let r = say(&mut chat, "Create an epic for user authentication");
    assert_eq!(r.kind, ReplyKind::Done);
    assert_eq!(r.entities[0].number, 5);
    let r = say(&mut chat, "Add 3 stories to it: login, signup, and MFA");
    assert_eq!(r.kind, ReplyKind::Done, "{}", r.text);
    let stories = entities(&e, EntityKind::Story);
    assert_eq!(
        stories
            .iter()
            .map(|s| (s.title.as_str(), s.parent))
            .collect::<Vec<_>>(),
        [("login", Some(5)), ("signup", Some(5)), ("MFA", Some(5))]
    );
    let recorded = r.recorded.expect("the command is recorded");
    assert_eq!(recorded.kind, "nl_command");
    assert!(recorded.tokens > 0);
    let r = say(&mut chat, "What did we just do?");
    assert!(
        r.text.starts_with("We just created Story #6 \"login\", Story #7 \"signup\" and Story #8 \"MFA\" under Epic #5"),
        "{}",
        r.text
    );
    let r = say(&mut chat, "what's the status of epic 5?");
    assert!(r.text.contains("3 stories: 3 pending"), "{}", r.text);
}

#[test]
fn equally_likely_readings_ask_and_the_answer_finishes_the_command() {
    let store = InMemoryStore::new();
    let e = open(&store);
    let mut chat = Chat::new(&e);
    say(&mut chat, "create an epic for auth");
    say(&mut chat, "add 3 stories to it: login, signup, MFA");
    let before = op_count(&e);
    let r = say(&mut chat, "start it");
    assert_eq!(r.kind, ReplyKind::Clarify);
    assert!(
        r.text
            .contains("Story #2 \"login\", Story #3 \"signup\" or Story #4 \"MFA\""),
        "{}",
        r.text
    );
    assert_eq!(op_count(&e), before, "asking records and changes nothing");
    assert!(chat.awaiting_answer());
    let r = say(&mut chat, "signup");
    assert_eq!(r.kind, ReplyKind::Done);
    assert_eq!(
        e.memory().store().entity(3).unwrap().status,
        EntityStatus::InProgress
    );
    assert_eq!(
        e.memory().store().entity(2).unwrap().status,
        EntityStatus::Pending
    );

    // "them" takes the whole group; "cancel" drops the question.
    say(
        &mut chat,
        "add 2 tasks to the first story: form, validation",
    );
    let r = say(&mut chat, "start the task");
    assert_eq!(r.kind, ReplyKind::Clarify, "{}", r.text);
    let r = say(&mut chat, "cancel");
    assert!(r.text.contains("nothing changed"));
    assert!(!chat.awaiting_answer());
    let r = say(&mut chat, "mark them done");
    assert_eq!(r.kind, ReplyKind::Done, "{}", r.text);
    assert_eq!(r.entities.len(), 2);

    // Two epics made by one command: "the epic" is ambiguous.
    say(&mut chat, "create epics: Payments and Reporting");
    let r = say(&mut chat, "add a story to the epic: invoices");
    assert_eq!(r.kind, ReplyKind::Clarify);
    let r = say(&mut chat, "#7");
    assert_eq!(r.kind, ReplyKind::Done, "{}", r.text);
    let inv = entities(&e, EntityKind::Story)
        .into_iter()
        .find(|s| s.title == "invoices")
        .unwrap();
    assert_eq!(inv.parent, Some(7));
}

#[test]
fn references_survive_a_refresh_and_a_restart() {
    let store = InMemoryStore::new();
    {
        let e = open(&store);
        let mut chat = Chat::new(&e);
        say(&mut chat, "create an epic for user authentication");
        e.refresh("manual").unwrap();
        assert_eq!(
            e.working_memory().unwrap().len(),
            0,
            "the refresh emptied working memory"
        );
        let r = say(&mut chat, "add a story to it: login");
        assert_eq!(r.kind, ReplyKind::Done, "{}", r.text);
        assert_eq!(r.entities[0].parent, Some(1));
    }
    let e = open(&store);
    let mut chat = Chat::new(&e);
    let r = say(&mut chat, "start it");
    assert_eq!(r.kind, ReplyKind::Done, "{}", r.text);
    assert_eq!(r.entities[0].title, "login");
    let r = say(&mut chat, "add a task to the epic: audit log");
    assert_eq!(r.entities[0].parent, Some(1), "{}", r.text);
}

#[test]
fn lines_that_are_not_understood_or_invalid_change_nothing() {
    let store = InMemoryStore::new();
    let e = open(&store);
    let mut chat = Chat::new(&e);
    say(&mut chat, "create an epic for auth");
    let before = op_count(&e);
    for line in [
        "frobnicate the widget",
        "add 3 stories to it: a, b",
        "start task 99",
        "add a story to task 1: x",
        "/frob",
        "/complete_goal nothing",
    ] {
        let r = say(&mut chat, line);
        assert!(
            matches!(
                r.kind,
                ReplyKind::NotUnderstood | ReplyKind::Incomplete | ReplyKind::Error
            ),
            "{line}: {:?} {}",
            r.kind,
            r.text
        );
        assert!(r.recorded.is_none(), "{line}");
    }
    assert_eq!(op_count(&e), before);
    assert_eq!(entities(&e, EntityKind::Story).len(), 0);
}

#[test]
fn a_deleted_number_is_never_given_out_again() {
    let store = InMemoryStore::new();
    let e = open(&store);
    let mut chat = Chat::new(&e);
    say(&mut chat, "create an epic for auth");
    say(&mut chat, "add a story to it: login");
    let r = say(&mut chat, "delete epic 1");
    assert_eq!(r.kind, ReplyKind::Error);
    assert!(r.text.contains("still holds Story #2"), "{}", r.text);
    let r = say(&mut chat, "delete story 2");
    assert_eq!(r.kind, ReplyKind::Done);
    let r = say(&mut chat, "add a story to epic 1: signup");
    assert_eq!(r.entities[0].number, 3);
    let r = say(&mut chat, "show #2");
    assert_eq!(r.kind, ReplyKind::Error);
    assert!(r.text.contains("was deleted"), "{}", r.text);
    assert!(
        e.search("login", 10)
            .unwrap()
            .iter()
            .all(|h| h.hit.id != "#2"),
        "a deleted entity leaves the search index"
    );
}

#[test]
fn questions_are_answered_from_memory() {
    let store = InMemoryStore::new();
    let e = open(&store);
    let mut chat = Chat::new(&e);
    say(&mut chat, "create an epic for auth");
    say(&mut chat, "add 2 stories to it: login, signup");
    say(&mut chat, "block story 3 until the API exists");
    say(&mut chat, "start story 2");
    say(
        &mut chat,
        "/log_decision Use argon2id for passwords | memory-hard and reviewed",
    );
    let r = say(&mut chat, "what's blocked?");
    assert!(
        r.text
            .starts_with("1 item is blocked:\n  #3    Story \"signup\""),
        "{}",
        r.text
    );
    let r = say(&mut chat, "what's next?");
    assert!(
        r.text.contains("1. Continue Story #2 \"login\""),
        "{}",
        r.text
    );
    assert!(r.text.contains("Unblock Story #3"), "{}", r.text);
    let r = say(&mut chat, "what did we decide about passwords?");
    assert!(
        r.text.contains("argon2id") && r.text.contains("memory-hard"),
        "{}",
        r.text
    );
    let r = say(&mut chat, "what did we do today?");
    assert!(
        r.text
            .starts_with("Today: 5 actions (1 block, 2 create, 1 start commands), 3 questions."),
        "{}",
        r.text
    );
    assert_eq!(
        r.text.matches("argon2id").count(),
        1,
        "the decision is told once: {}",
        r.text
    );
    let r = say(&mut chat, "what did we do this session?");
    assert!(r.text.contains("Blocked Story #3"), "{}", r.text);
    let r = say(&mut chat, "/context summary");
    assert!(r.text.contains("## Session Summary"), "{}", r.text);
    // Counted before the status line, which is recorded after its reply.
    let typed = e
        .memory()
        .store()
        .operations(&OperationQuery::default())
        .unwrap()
        .iter()
        .filter(|o| o.kind == "nl_command" || o.kind == "slash_command")
        .count();
    assert!(typed >= 5, "{typed}");
    let r = say(&mut chat, "memory:status");
    assert!(
        r.text.contains(&format!("({typed} turns typed here)")),
        "{typed}: {}",
        r.text
    );
}

#[test]
fn ending_the_session_summarizes_and_archives_it() {
    let store = InMemoryStore::new();
    let e = open(&store);
    let mut chat = Chat::new(&e);
    say(&mut chat, "create an epic for auth");
    let r = chat.end().unwrap();
    assert_eq!(r.kind, ReplyKind::Ended);
    assert!(r.text.contains("summarized and archived"), "{}", r.text);
    assert!(r.checkpoints.iter().any(|c| c.trigger == "session_end"));
    let r = say(&mut chat, "memory:clear");
    assert!(r.text.contains("no session was active"), "{}", r.text);
}
