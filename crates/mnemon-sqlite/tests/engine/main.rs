//! The engine against the real SQLite store: design v1's acceptance tests
//! 1, 2 and 4, every profile under 5,000 operations, checkpoints and resume.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::compress::parse;
use mnemon_core::engine::{
    Checkpoint, CheckpointError, Engine, EngineError, EngineEvent, EngineStore,
};
use mnemon_core::memory::{
    DocKind, DocumentStore, EntityKind, EntityStatus, EntityStore, HotItemChange, HotItemUpdate,
    HotKind, HotStore, NewEntity, NewOperation, OperationLog, OperationQuery, Page, Phase,
    SessionStatus, SessionStore, Timestamp,
};
use mnemon_core::window::Zone;
use mnemon_sqlite::SqliteStore;
use serde_json::json;

mod checkpoints;
mod concurrency;
mod context;

/// Deterministic pseudo-random numbers (a 64-bit LCG), so runs repeat.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const VOCAB: &[&str] = &[
    "implemented",
    "the",
    "password",
    "hashing",
    "module",
    "with",
    "bcrypt",
    "and",
    "salt",
    "reviewed",
    "login",
    "flow",
    "tests",
    "for",
    "signup",
    "validated",
    "token",
    "refresh",
    "endpoint",
    "updated",
    "schema",
    "migration",
    "cache",
    "layer",
    "latency",
    "improved",
];

fn words(rng: &mut Lcg, n: u64) -> String {
    (0..n)
        .map(|_| VOCAB[rng.below(VOCAB.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// The i-th operation of a mixed workload; pinned ones carry `pin<i>`.
fn mixed(i: usize, rng: &mut Lcg, max_words: u64) -> (NewOperation, bool) {
    let n = 5 + rng.below(max_words);
    let body = words(rng, n);
    let (kind, status, pinned) = match i % 20 {
        8 => ("decision", None, true),
        9 => ("error", Some("failed"), true),
        0..=9 => ("nl_command", None, false),
        10..=13 => ("task_execution", Some("completed"), false),
        14..=16 => ("validation", Some("passed"), false),
        _ => ("debug_trace", None, false),
    };
    let text = if pinned {
        format!("pin{i} {body}")
    } else {
        body
    };
    let phase = Some(match (i / 500) % 3 {
        0 => Phase::Planning,
        1 => Phase::Execution,
        _ => Phase::Validation,
    });
    (
        NewOperation {
            kind: kind.into(),
            data: json!({ "text": text }),
            status: status.map(str::to_string),
            phase,
            ..NewOperation::default()
        },
        pinned,
    )
}

fn fresh(window: u64) -> Engine<SqliteStore> {
    engine(
        SqliteStore::in_memory().unwrap(),
        window,
        SteppingClock::starting(T0),
        "orchestrator",
    )
}

fn refreshes(events: &[EngineEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, EngineEvent::Refreshed { .. }))
        .count()
}

/// Runs `n` mixed operations and checks the window after every one.
fn run(
    e: &Engine<SqliteStore>,
    n: usize,
    max_words: u64,
) -> (Vec<(String, String)>, Vec<EngineEvent>) {
    let mut rng = Lcg(42);
    let mut pinned = Vec::new();
    let mut events = Vec::new();
    let emergency = e.config().window.token_thresholds().emergency_from;
    for i in 0..n {
        let (op, is_pinned) = mixed(i, &mut rng, max_words);
        let out = e.record(op).unwrap();
        assert!(
            out.status.window.used < emergency,
            "operation {i}: usage {} reached the emergency line {emergency}",
            out.status.window.used
        );
        if is_pinned {
            pinned.push((out.value.id.clone(), format!("pin{i}")));
        }
        events.extend(out.events);
    }
    (pinned, events)
}

fn assert_retrievable(e: &Engine<SqliteStore>, pinned: &[(String, String)]) {
    let store = e.memory().store();
    for (id, marker) in pinned {
        let op = store.operation(id).unwrap();
        assert!(op.pinned, "{marker} lost its pin");
        let found = store
            .operations(&OperationQuery {
                keywords: Some(marker.clone()),
                ..OperationQuery::default()
            })
            .unwrap();
        assert!(
            found.iter().any(|o| o.id == *id),
            "{marker} is not found by search"
        );
    }
}

/// A clock the test moves by hand.
#[derive(Debug)]
struct ManualClock(AtomicI64);

impl mnemon_core::memory::Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

#[test]
fn acceptance_1_long_session_refreshes_without_data_loss() {
    let e = fresh(8_192);
    let first = e.memory().current_session().unwrap();
    let (pinned, events) = run(&e, 150, 150);
    assert!(refreshes(&events) >= 1, "150 operations in 8K must refresh");
    let ops = e
        .memory()
        .store()
        .operations(&OperationQuery {
            session_id: Some(first.id.clone()),
            ..OperationQuery::default()
        })
        .unwrap();
    // Every operation is still in the log; the session carried on.
    assert_eq!(
        ops.iter().filter(|o| o.kind != "context_action").count(),
        150
    );
    assert_eq!(e.memory().current_session().unwrap().id, first.id);
    assert_retrievable(&e, &pinned);
    // After a refresh the epoch starts at the compacted memory, not zero.
    let s = e.status().unwrap();
    assert!(s.epoch >= 2 && s.baseline > 0);
    let summary = e
        .memory()
        .store()
        .session(&first.id)
        .unwrap()
        .summary
        .unwrap();
    assert!(!parse(&summary).is_empty());
}

#[test]
fn zone_actions_checkpoint_at_70_and_refresh_at_85() {
    let e = fresh(8_192);
    let (_, events) = run(&e, 120, 150);
    let triggers: Vec<&str> = events
        .iter()
        .filter_map(|ev| match ev {
            EngineEvent::CheckpointCreated { trigger, .. } => Some(trigger.as_str()),
            _ => None,
        })
        .collect();
    assert!(triggers.contains(&"threshold_70pct"), "{triggers:?}");
    assert!(triggers.contains(&"threshold_85pct"), "{triggers:?}");
    assert!(events.iter().any(|ev| matches!(
        ev,
        EngineEvent::ZoneChanged {
            to: Zone::Orange,
            ..
        }
    )));
    // Each action is recorded as an operation.
    let actions = e
        .memory()
        .store()
        .operations(&OperationQuery {
            kind: Some("context_action".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert!(actions.iter().any(|o| o.data["action"] == "refresh"));
    assert!(actions.iter().any(|o| o.data["action"] == "checkpoint"));
}

#[test]
fn every_profile_stays_below_the_emergency_line_and_keeps_pinned_items() {
    // One thread per window: each has its own store.
    std::thread::scope(|scope| {
        for window in [4_096u64, 16_384, 128_000, 1_000_000] {
            scope.spawn(move || {
                let e = fresh(window);
                let max_words = if window <= 4_096 { 40 } else { 150 };
                let (pinned, events) = run(&e, 5_000, max_words);
                assert_eq!(pinned.len(), 500, "window {window}");
                assert_retrievable(&e, &pinned);
                if window <= 16_384 {
                    assert!(refreshes(&events) > 0, "window {window} never refreshed");
                }
                let checkpoints = events
                    .iter()
                    .filter(|ev| matches!(ev, EngineEvent::CheckpointCreated { .. }))
                    .count();
                let s = e.status().unwrap();
                eprintln!(
                    "window {window}: {} refreshes, {checkpoints} checkpoints, final usage {} ({:.1} %), epoch {}",
                    refreshes(&events),
                    s.window.used,
                    s.window.fraction * 100.0,
                    s.epoch
                );
            });
        }
    });
}

#[test]
fn acceptance_2_next_day_session_knows_epic_and_stories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let epic;
    {
        let e = engine(
            SqliteStore::open(&path).unwrap(),
            128_000,
            SteppingClock::starting(T0),
            "orchestrator",
        );
        let m = e.memory();
        e.record(NewOperation {
            kind: "nl_command".into(),
            data: json!({"input": "Create an epic for user authentication"}),
            ..NewOperation::default()
        })
        .unwrap();
        epic = m
            .create_entity(&NewEntity {
                kind: EntityKind::Epic,
                title: "User Authentication".into(),
                description: None,
                priority: Some(2),
                parent: None,
            })
            .unwrap();
        for title in ["Login", "Signup", "MFA"] {
            m.create_entity(&NewEntity {
                kind: EntityKind::Story,
                title: title.into(),
                description: None,
                priority: None,
                parent: Some(epic.number),
            })
            .unwrap();
        }
        m.add_hot(HotKind::Goal, "Ship authentication", None, None, None)
            .unwrap();
        let end = e.end_session().unwrap();
        assert!(
            end.value
                .accomplishments
                .iter()
                .any(|a| a.contains("Epic #1")),
            "{:?}",
            end.value
        );
        assert!(end.checkpoints.iter().any(|c| c.trigger == "session_end"));
    }
    // The next day, a new process.
    let e = engine(
        SqliteStore::open(&path).unwrap(),
        128_000,
        SteppingClock::starting(Timestamp(T0.0 + 86_400_000)),
        "orchestrator",
    );
    let out = e
        .record(NewOperation {
            kind: "nl_command".into(),
            data: json!({"input": "What's the status of epic 1?"}),
            ..NewOperation::default()
        })
        .unwrap();
    assert!(
        out.events
            .iter()
            .any(|ev| matches!(ev, EngineEvent::SessionStarted { .. }))
    );
    let store = e.memory().store();
    let state = store.document(DocKind::ProjectState, None).unwrap().content;
    assert!(state.contains("Epic #1"), "{state}");
    let plan = store.document(DocKind::WorkPlan, None).unwrap().content;
    assert!(plan.contains("Login") || state.contains("Login"), "{plan}");
    assert_eq!(
        store.entity(epic.number).unwrap().status,
        EntityStatus::Pending
    );
    // Working memory starts fresh; hot context is kept.
    assert_eq!(e.working_memory().unwrap().len(), 1);
    assert_eq!(store.hot_context().unwrap().items.len(), 1);
    let sessions = store.sessions(10).unwrap();
    assert_eq!(
        sessions
            .iter()
            .filter(|s| s.status == SessionStatus::Archived)
            .count(),
        1
    );
    // The epoch's baseline is the loaded memory (project state and hot context).
    assert!(out.status.baseline > 0);
}

#[test]
fn acceptance_4_session_log_compressed_at_its_threshold() {
    let e = fresh(128_000);
    let threshold = e
        .config()
        .profile
        .session_compression_threshold_tokens
        .value;
    assert_eq!(threshold, 40_000);
    let mut rng = Lcg(7);
    let mut pinned_texts = Vec::new();
    let mut compacted = None;
    let mut i = 0;
    while compacted.is_none() {
        let (op, pinned) = mixed(i, &mut rng, 250);
        if pinned {
            pinned_texts.push(op.data["text"].as_str().unwrap().to_string());
        }
        let out = e.record(op).unwrap();
        compacted = out.events.into_iter().find_map(|ev| match ev {
            EngineEvent::SessionLogCompacted {
                input_tokens,
                output_tokens,
            } => Some((input_tokens, output_tokens)),
            _ => None,
        });
        i += 1;
        assert!(i < 2_000, "never compacted");
    }
    let (input, output) = compacted.unwrap();
    assert!(input >= threshold, "{input}");
    assert!(output * 10 <= input * 7, "{output} / {input} is above 0.7");
    let record = &e.memory().store().compactions(1).unwrap()[0];
    assert_eq!(record.kind, "session_log");
    for text in &pinned_texts {
        assert!(
            record.summary.contains(text.as_str()),
            "critical operation not verbatim: {text}"
        );
    }
    // The session document itself: the compacted history replaces the
    // operations it covers.
    use mnemon_core::memory::session_log::{SessionLogContext, render};
    use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
    let store = e.memory().store();
    let session = e.memory().current_session().unwrap();
    let mut ops = store
        .operations_after(&session.id, Page::all_after(0))
        .unwrap();
    ops.reverse();
    let ops: Vec<_> = ops
        .into_iter()
        .filter(|o| o.seq <= record.through_op_seq)
        .collect();
    let c = OpenAiBpe::new(Encoding::Cl100kBase);
    let full = c.count(&render(&session, &ops, &SessionLogContext::default()));
    let compacted = c.count(&render(
        &session,
        &ops,
        &SessionLogContext {
            compacted: Some((&record.summary, record.through_op_seq)),
            ..SessionLogContext::default()
        },
    ));
    assert!(full >= 40_000, "{full}");
    assert!(
        compacted * 10 <= full * 7,
        "session document {compacted} of {full} tokens"
    );
}
