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
    DocKind, DocumentStore, EntityKind, EntityStatus, EntityStore, HotItemChange, HotKind,
    HotStore, NewEntity, NewOperation, OperationLog, OperationQuery, Phase, SessionStatus,
    SessionStore, Timestamp,
};
use mnemon_core::window::Zone;
use mnemon_sqlite::SqliteStore;
use serde_json::json;

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
    let mut ops = store.operations_after(&session.id, 0, usize::MAX).unwrap();
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

#[test]
fn checkpoint_file_has_exactly_the_adr_keys() {
    let e = fresh(16_384);
    run(&e, 10, 20);
    let cp = e.checkpoint("manual").unwrap();
    let v: serde_json::Value = serde_json::from_str(&cp.to_json()).unwrap();
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&v), ["checkpoint"]);
    let c = &v["checkpoint"];
    assert_eq!(
        keys(c),
        [
            "context_snapshot",
            "id",
            "metadata",
            "resume_instructions",
            "timestamp",
            "trigger"
        ]
    );
    assert_eq!(
        keys(&c["context_snapshot"]),
        [
            "artifacts_registry_path",
            "configured_max",
            "decision_records_path",
            "effective_max",
            "percentage",
            "phase_summary_path",
            "plan_manifest_path",
            "tokens_used",
            "utilization_limit",
            "working_memory_snapshot"
        ]
    );
    assert_eq!(
        keys(&c["resume_instructions"]),
        [
            "blockers",
            "context_to_load",
            "next_task",
            "phase",
            "warnings"
        ]
    );
    assert_eq!(
        keys(&c["metadata"]),
        [
            "context_window",
            "model",
            "optimization_profile",
            "session_duration_seconds"
        ]
    );
    assert!(cp.id.starts_with("CP-20250115-"));
    assert_eq!(cp.metadata.optimization_profile, "aggressive");
    assert_eq!(Checkpoint::from_json(&cp.to_json(), "x").unwrap(), cp);
}

#[test]
fn damaged_checkpoints_are_refused_and_nothing_is_applied() {
    let e = fresh(16_384);
    run(&e, 10, 20);
    let cp = e.checkpoint("manual").unwrap();
    let json = cp.to_json();
    let truncated = &json[..json.len() / 2];
    assert!(matches!(
        Checkpoint::from_json(truncated, "cp"),
        Err(CheckpointError::Malformed { .. })
    ));
    assert!(matches!(
        Checkpoint::from_json("not json", "cp"),
        Err(CheckpointError::Malformed { .. })
    ));
    let edited = json.replacen("\"manual\"", "\"threshold_85pct\"", 1);
    assert!(matches!(
        Checkpoint::from_json(&edited, "cp"),
        Err(CheckpointError::Tampered { .. })
    ));
    let future = json.replacen("\"format\": 1", "\"format\": 9", 1);
    assert!(matches!(
        Checkpoint::from_json(&future, "cp"),
        Err(CheckpointError::UnknownFormat { .. })
    ));
    let extra = json.replacen("\"trigger\"", "\"surprise\": 1,\n    \"trigger\"", 1);
    assert!(matches!(
        Checkpoint::from_json(&extra, "cp"),
        Err(CheckpointError::Malformed { .. })
    ));
    // Reformatting is not an edit.
    let compact =
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(&json).unwrap()).unwrap();
    assert_eq!(Checkpoint::from_json(&compact, "cp").unwrap(), cp);
    // A checkpoint whose references are not in this store changes nothing.
    let other = fresh(16_384);
    other.record(mixed(0, &mut Lcg(1), 5).0).unwrap();
    let before = other.status().unwrap();
    assert!(matches!(other.resume(&cp), Err(EngineError::Invalid(_))));
    assert_eq!(other.status().unwrap(), before);
}

#[test]
fn failed_refresh_rolls_back_to_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("mnemon.db")).unwrap();
    let e = engine(store, 16_384, SteppingClock::starting(T0), "orchestrator");
    run(&e, 30, 40);
    let before = e.status().unwrap();
    let session = e.memory().current_session().unwrap();
    let checkpoints = e.memory().store().checkpoints(100).unwrap().len();
    let pages: i64 = {
        let conn = rusqlite::Connection::open(dir.path().join("mnemon.db")).unwrap();
        conn.query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap()
    };
    e.memory().store().limit_pages(pages as u64).unwrap();
    let err = e.refresh("manual").unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Store(mnemon_core::memory::StoreError::DiskFull)
        ),
        "{err}"
    );
    assert_eq!(e.status().unwrap(), before);
    assert_eq!(
        e.memory().store().session(&session.id).unwrap().summary,
        session.summary
    );
    assert_eq!(
        e.memory().store().checkpoints(100).unwrap().len(),
        checkpoints
    );
    // With space again, the same refresh succeeds.
    e.memory().store().limit_pages(1 << 30).unwrap();
    let out = e.refresh("manual").unwrap();
    assert_eq!(refreshes(&out.events), 1);
}

#[test]
fn provider_usage_calibrates_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let clock: Arc<SteppingClock> = SteppingClock::starting(T0);
    let reported;
    {
        let e = engine(
            SqliteStore::open(&path).unwrap(),
            16_384,
            clock.clone(),
            "orchestrator",
        );
        run(&e, 10, 30);
        let local = e.status().unwrap().local_usage;
        reported = local * 6 / 5;
        let s = e.report_usage(reported).unwrap();
        assert_eq!(s.window.used, reported);
        assert!((s.calibration - 1.2).abs() < 0.01, "{}", s.calibration);
        assert!(e.report_usage(local * 10).is_err());
    }
    let e = engine(
        SqliteStore::open(&path).unwrap(),
        16_384,
        clock,
        "orchestrator",
    );
    let s = e.status().unwrap();
    assert_eq!(s.window.used, reported);
    assert!((s.calibration - 1.2).abs() < 0.01);
    // Later estimates use the factor.
    let out = e
        .record(NewOperation {
            kind: "nl_command".into(),
            data: json!({"text": "one more thing to do"}),
            tokens: Some(100),
            ..NewOperation::default()
        })
        .unwrap();
    assert_eq!(out.status.window.used, reported + 120);
}

#[test]
fn interval_and_phase_checkpoints() {
    let e = fresh(4_096);
    let every = e.config().profile.checkpoint_interval_operations.value;
    let mut triggers = Vec::new();
    for i in 0..(every as usize * 2) {
        let out = e
            .record(NewOperation {
                kind: "nl_command".into(),
                data: json!({"text": format!("short {i}")}),
                phase: Some(if i < 5 {
                    Phase::Planning
                } else {
                    Phase::Execution
                }),
                ..NewOperation::default()
            })
            .unwrap();
        for ev in out.events {
            if let EngineEvent::CheckpointCreated { trigger, .. } = ev {
                triggers.push(trigger);
            }
        }
    }
    assert!(
        triggers.contains(&"phase_complete_planning".to_string()),
        "{triggers:?}"
    );
    assert!(
        triggers.contains(&format!("operations_{every}")),
        "{triggers:?}"
    );
    // Thirty minutes after the last checkpoint (ultra-aggressive's
    // interval) comes a time checkpoint.
    let clock = Arc::new(ManualClock(AtomicI64::new(T0.0)));
    let e = engine(SqliteStore::in_memory().unwrap(), 4_096, clock.clone(), "a");
    let note = |i: i32| NewOperation {
        kind: "nl_command".into(),
        data: json!(format!("n{i}")),
        ..NewOperation::default()
    };
    let mut triggers = Vec::new();
    for i in 0..5 {
        clock.0.fetch_add(11 * 60_000, Ordering::SeqCst);
        for ev in e.record(note(i)).unwrap().events {
            if let EngineEvent::CheckpointCreated { trigger, .. } = ev {
                triggers.push(trigger);
            }
        }
    }
    assert_eq!(triggers, ["time_30min"]);
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
fn hot_context_and_session_are_restored_by_resume() {
    let e = fresh(16_384);
    let m = e.memory();
    let goal = m
        .add_hot(HotKind::Goal, "Ship auth", None, None, None)
        .unwrap();
    run(&e, 12, 20);
    let cp = e.checkpoint("manual").unwrap();
    let before = e.status().unwrap();
    let wm_before: Vec<String> = e
        .working_memory()
        .unwrap()
        .recent()
        .map(|o| o.id.clone())
        .collect();
    let hot_before = m.store().hot_context().unwrap();
    // Change everything.
    m.store()
        .update_hot_item(
            &goal.id,
            goal.version,
            &HotItemChange {
                text: Some("Ship billing".into()),
                ..HotItemChange::default()
            },
            T0,
        )
        .unwrap();
    m.add_hot(HotKind::Constraint, "No new deps", None, None, None)
        .unwrap();
    run(&e, 40, 40);
    e.refresh("manual").unwrap();
    m.start_session(Some("another")).unwrap();
    e.record(mixed(3, &mut Lcg(3), 10).0).unwrap();
    // Resume.
    e.resume(&cp).unwrap();
    let after = e.status().unwrap();
    assert_eq!(after.session_id, before.session_id);
    assert_eq!(
        (after.epoch, after.baseline, after.added, after.window.used),
        (
            before.epoch,
            before.baseline,
            before.added,
            before.window.used
        )
    );
    let wm_after: Vec<String> = e
        .working_memory()
        .unwrap()
        .recent()
        .map(|o| o.id.clone())
        .collect();
    assert_eq!(wm_after, wm_before);
    let hot_after = m.store().hot_context().unwrap();
    let strip = |h: &mnemon_core::memory::HotContext| -> Vec<(String, String)> {
        h.items
            .iter()
            .map(|i| (i.id.clone(), i.text.clone()))
            .collect()
    };
    assert_eq!(strip(&hot_after), strip(&hot_before));
}

/// One step of a random history.
#[derive(Debug, Clone)]
enum Step {
    Record(u8),
    Message(u8),
    AddHot(u8),
    EditHot(u8),
    Refresh,
    NewSession,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        6 => any::<u8>().prop_map(Step::Record),
        2 => any::<u8>().prop_map(Step::Message),
        2 => any::<u8>().prop_map(Step::AddHot),
        2 => any::<u8>().prop_map(Step::EditHot),
        1 => Just(Step::Refresh),
        1 => Just(Step::NewSession),
    ]
}

fn apply(e: &Engine<SqliteStore>, s: &Step) {
    use mnemon_core::importance::Role;
    use mnemon_core::memory::NewMessage;
    let m = e.memory();
    match s {
        Step::Record(n) => {
            let mut rng = Lcg(*n as u64);
            e.record(mixed(*n as usize, &mut rng, 30).0).unwrap();
        }
        Step::Message(n) => {
            e.message(NewMessage {
                role: Role::User,
                content: format!("message {n} about the login flow"),
                agent: None,
                tokens: None,
            })
            .unwrap();
        }
        Step::AddHot(n) => {
            m.add_hot(
                HotKind::Constraint,
                &format!("constraint {n}"),
                None,
                None,
                None,
            )
            .unwrap();
        }
        Step::EditHot(n) => {
            let hot = m.store().hot_context().unwrap();
            if let Some(item) = hot.items.get(*n as usize % hot.items.len().max(1)) {
                m.store()
                    .update_hot_item(
                        &item.id,
                        item.version,
                        &HotItemChange {
                            text: Some(format!("edited {n}")),
                            ..HotItemChange::default()
                        },
                        T0,
                    )
                    .unwrap();
            }
        }
        Step::Refresh => {
            e.refresh("manual").unwrap();
        }
        Step::NewSession => {
            m.start_session(None).unwrap();
        }
    }
}

/// Everything resume promises to restore.
fn observed(e: &Engine<SqliteStore>) -> impl PartialEq + std::fmt::Debug {
    let s = e.status().unwrap();
    let wm: Vec<String> = e
        .working_memory()
        .unwrap()
        .recent()
        .map(|o| o.id.clone())
        .collect();
    let hot: Vec<(String, String, Option<String>)> = e
        .memory()
        .store()
        .hot_context()
        .unwrap()
        .items
        .into_iter()
        .map(|i| (i.id, i.text, Some(i.status.name().to_string())))
        .collect();
    let active = e
        .memory()
        .store()
        .active_session("orchestrator")
        .unwrap()
        .map(|s| s.id);
    (
        (
            s.session_id,
            s.epoch,
            s.baseline,
            s.added,
            s.window.used,
            s.window.zone,
        ),
        wm,
        hot,
        active,
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    #[test]
    fn checkpoint_then_resume_is_identity(
        before in proptest::collection::vec(step(), 1..25),
        after in proptest::collection::vec(step(), 0..25),
    ) {
        let e = fresh(8_192);
        // A session must exist for the checkpoint to have something to restore.
        e.record(mixed(1, &mut Lcg(1), 10).0).unwrap();
        for s in &before {
            apply(&e, s);
        }
        let cp = e.checkpoint("manual").unwrap();
        let expected = observed(&e);
        // Through the file format, as `mnemon checkpoint resume` reads it.
        let cp = Checkpoint::from_json(&cp.to_json(), "cp").unwrap();
        for s in &after {
            apply(&e, s);
        }
        e.resume(&cp).unwrap();
        proptest::prop_assert_eq!(&observed(&e), &expected);
        // Resuming twice changes nothing more.
        e.resume(&cp).unwrap();
        proptest::prop_assert_eq!(&observed(&e), &expected);
    }
}

#[test]
fn too_large_an_item_is_refused_with_the_room_available() {
    let e = fresh(4_096);
    run(&e, 5, 10);
    let err = e
        .record(NewOperation {
            kind: "nl_command".into(),
            data: json!("x"),
            tokens: Some(5_000),
            ..NewOperation::default()
        })
        .unwrap_err();
    assert!(
        matches!(err, EngineError::TooLarge { tokens: 5_000, .. }),
        "{err}"
    );
    // Nothing was stored for it.
    assert!(
        e.memory()
            .store()
            .operations(&OperationQuery::default())
            .unwrap()
            .iter()
            .all(|o| o.tokens != 5_000)
    );
}

#[test]
fn one_engine_shared_by_threads_and_several_engines_on_one_file() {
    // One engine, four writers and two readers.
    let e = Arc::new(fresh(8_192));
    let emergency = e.config().window.token_thresholds().emergency_from;
    std::thread::scope(|s| {
        for t in 0..4 {
            let e = e.clone();
            s.spawn(move || {
                let mut rng = Lcg(t);
                for i in 0..100 {
                    e.record(mixed(i, &mut rng, 60).0).unwrap();
                }
            });
        }
        for _ in 0..2 {
            let e = e.clone();
            s.spawn(move || {
                for _ in 0..100 {
                    assert!(e.status().unwrap().window.used < emergency);
                }
            });
        }
    });
    let ops = e
        .memory()
        .store()
        .operations(&OperationQuery::default())
        .unwrap();
    assert_eq!(
        ops.iter().filter(|o| o.kind != "context_action").count(),
        400
    );

    // Four engines on one database file, as four processes would be: the
    // compare-and-set on the engine state keeps their accounting whole.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    SqliteStore::open(&path).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let path = path.clone();
            s.spawn(move || {
                let e = engine(
                    SqliteStore::open(&path).unwrap(),
                    8_192,
                    SteppingClock::starting(T0),
                    "shared",
                );
                let mut rng = Lcg(t);
                for i in 0..100 {
                    let out = e.record(mixed(i, &mut rng, 60).0).unwrap();
                    assert!(out.status.window.used < emergency);
                }
            });
        }
    });
    let e = engine(
        SqliteStore::open(&path).unwrap(),
        8_192,
        SteppingClock::starting(T0),
        "shared",
    );
    let s = e.status().unwrap();
    assert!(s.window.used < emergency && s.refreshes >= 1, "{s:?}");
    let ops = e
        .memory()
        .store()
        .operations(&OperationQuery::default())
        .unwrap();
    assert_eq!(
        ops.iter().filter(|o| o.kind != "context_action").count(),
        400
    );
}

/// A slow summarizer (an LLM's stand-in: the real one is tested against
/// llama-server in mnemon-cli) that counts its calls and, during its first
/// one, lets another process's engine write into the same database.
struct SlowSummarizer {
    inner: mnemon_core::compress::Extractive,
    calls: std::sync::atomic::AtomicUsize,
    during: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl mnemon_core::compress::Summarizer for SlowSummarizer {
    fn name(&self) -> &str {
        "slow"
    }

    fn summarize(
        &self,
        items: &[mnemon_core::compress::SourceItem],
        target: u64,
        counter: &dyn mnemon_core::tokens::TokenCounter,
    ) -> Result<mnemon_core::compress::Summary, mnemon_core::compress::CompressError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(f) = self.during.lock().unwrap().take() {
            f();
        }
        let mut s = self.inner.summarize(items, target, counter)?;
        s.audit.stages.push(mnemon_core::compress::Stage {
            stage: "map 1/1".into(),
            by: "slow".into(),
            items: items.len(),
            ..Default::default()
        });
        Ok(s)
    }
}

#[test]
fn a_slow_summarizer_runs_once_outside_the_lock_and_a_write_during_it_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mnemon.db");
    let clock = SteppingClock::starting(T0);
    let a = engine(
        SqliteStore::open(&db).unwrap(),
        16_384,
        clock.clone(),
        "orchestrator",
    );
    for i in 0..30 {
        a.record(NewOperation::new(
            "task_execution",
            json!({"task": i, "result": format!("moved table t{i} to the new cluster")}),
        ))
        .unwrap();
    }
    let db2 = db.clone();
    let clock2 = clock.clone();
    let slow = SlowSummarizer {
        inner: mnemon_core::compress::Extractive::default(),
        calls: Default::default(),
        during: std::sync::Mutex::new(Some(Box::new(move || {
            // Another process, same agent, writing while the summary is
            // being made: the engine's lock is not held, so it proceeds.
            let b = engine(
                SqliteStore::open(&db2).unwrap(),
                16_384,
                clock2,
                "orchestrator",
            );
            b.record(NewOperation::new(
                "error",
                json!({"error": "replica lag on db-9 during the move"}),
            ))
            .unwrap();
        }))),
    };
    let out = a.refresh_with("manual", &slow).unwrap();
    assert_eq!(
        slow.calls.load(Ordering::SeqCst),
        1,
        "the slow summarizer ran once"
    );
    let refreshed = out
        .events
        .iter()
        .find_map(|e| match e {
            EngineEvent::Refreshed {
                summarized_by,
                fell_back,
                ..
            } => Some((summarized_by.clone(), fell_back.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(refreshed.0, "slow");
    assert!(
        refreshed
            .1
            .iter()
            .any(|r| r.contains("written while the summary was made")),
        "{refreshed:?}"
    );
    // The write that landed during the call is stored and summarized.
    let session = a
        .memory()
        .store()
        .active_session("orchestrator")
        .unwrap()
        .unwrap();
    let summary = session.summary.unwrap();
    assert!(summary.contains("replica lag on db-9"), "{summary}");
    let all = a
        .memory()
        .recent(&OperationQuery {
            limit: Some(1_000),
            ..OperationQuery::default()
        })
        .unwrap();
    assert!(all.iter().any(|o| o.kind == "error"));
}

/// A question about time gets the matching turns under the day they were
/// said, one heading per day, and no date on the lines themselves.
#[test]
fn a_question_about_time_shows_turns_under_their_day() {
    use mnemon_core::assemble::{BudgetPlan, Format};
    use mnemon_core::engine::ContextRequest;
    use mnemon_core::importance::Role;
    use mnemon_core::memory::NewMessage;
    use mnemon_core::tokens::ChatFormat;
    let day = 86_400_000;
    let clock = Arc::new(ManualClock(AtomicI64::new(T0.0)));
    let e = engine(
        SqliteStore::in_memory().unwrap(),
        1_000_000,
        clock.clone(),
        "a",
    );
    for (at, text) in [
        (0, "Nate: I won my first tournament in Tampa!"),
        (60_000, "Joanna: Congrats on the tournament, Nate!"),
        (3 * day, "Nate: The second tournament went well too."),
        (5 * day, "Joanna: My screenplay got rejected again."),
    ] {
        clock.0.store(T0.0 + at, Ordering::SeqCst);
        e.message(NewMessage {
            role: Role::User,
            content: text.into(),
            agent: None,
            tokens: None,
        })
        .unwrap();
    }
    let ask = |query: &str| {
        e.context(&ContextRequest {
            plan: BudgetPlan::preset("qa").unwrap(),
            budget: Some(2_000),
            query: Some(query.into()),
            format: Format::Markdown,
            chat: ChatFormat::OPENAI,
            messages_before: None,
        })
        .unwrap()
    };
    let out = ask("When did Nate win a tournament?");
    // T0 is 2025-01-15 at 14:30 UTC.
    let first = "### 2025-01-15";
    let third = "### 2025-01-18";
    assert_eq!(out.text.matches(first).count(), 1, "{}", out.text);
    assert_eq!(out.text.matches(third).count(), 1, "{}", out.text);
    let at = |s: &str| out.text.find(s).unwrap();
    // Each turn under its own day, whichever day leads.
    assert!(at(first) < at("I won my first tournament"), "{}", out.text);
    assert!(at(first) < at("Congrats on the tournament"), "{}", out.text);
    assert!(at(third) < at("second tournament"), "{}", out.text);
    let (a, b) = (
        at("I won my first tournament"),
        at("Congrats on the tournament"),
    );
    let (c, d) = (at(first), at(third));
    assert!(
        (c < a && c < b && a < d && b < d) || (d < c && c < a && c < b),
        "a day's turns sit together under its heading: {}",
        out.text
    );
    let fragments = out
        .sections
        .iter()
        .find(|s| s.kind == mnemon_core::assemble::SectionKind::Fragments)
        .unwrap();
    assert!(fragments.items.iter().all(|i| !i.text.contains("2025-")));
    assert!(fragments.items.iter().all(|i| i.group.is_some()));
    // A question not about time has no day headings.
    let out = ask("Which tournament did Nate win in Tampa?");
    assert!(!out.text.contains("### 2025"), "{}", out.text);
}
