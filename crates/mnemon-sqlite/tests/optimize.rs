//! The optimizer through the engine on a real SQLite file: every technique
//! saves tokens on a realistic epoch, usage drops by exactly what it
//! reports, a dry run changes nothing, and the result survives a restart.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::{HandClock, T0, engine};
use mnemon_core::engine::{Engine, EngineStore};
use mnemon_core::memory::{Clock, NewOperation, Phase, Timestamp};
use mnemon_core::optimize::{REGISTRY_PATH, Technique};
use mnemon_sqlite::SqliteStore;
use serde_json::{Value, json};

const HOUR: i64 = 3_600_000;

fn sentence(i: usize) -> String {
    let topics = [
        "login form",
        "signup flow",
        "MFA codes",
        "password hashing",
        "session tokens",
        "rate limits",
    ];
    format!(
        "Step {i} worked on the {} and recorded result {} for story #{}.",
        topics[i % topics.len()],
        i * 7 % 13,
        i % 5 + 1
    )
}

fn rec(e: &Engine<SqliteStore>, kind: &str, data: Value, phase: Option<Phase>) -> i64 {
    e.record(NewOperation {
        kind: kind.into(),
        data,
        phase,
        ..NewOperation::default()
    })
    .expect("record")
    .value
    .seq
}

#[test]
fn every_technique_saves_and_usage_drops_by_exactly_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let clock = HandClock::at(T0);
    let e = engine(
        SqliteStore::open(&path).unwrap(),
        128_000,
        clock.clone(),
        "orchestrator",
    );
    for i in 0..2 {
        rec(
            &e,
            "debug_trace",
            json!(format!("trace {i}: {}", sentence(i))),
            None,
        );
    }
    for i in 0..30 {
        rec(
            &e,
            "task_execution",
            json!(sentence(i)),
            Some(Phase::Planning),
        );
    }
    let base = json!({"epics": {"5": {"status": "pending", "stories": [12, 13, 14]}},
                      "notes": (0..40).map(sentence).collect::<Vec<_>>()});
    rec(&e, "state", base.clone(), Some(Phase::Planning));
    // The phase change takes a `phase_complete_planning` checkpoint: the
    // base of differential state.
    let content: String = (0..150).map(sentence).collect::<Vec<_>>().join(" ");
    let file = rec(
        &e,
        "file_read",
        json!({"path": "src/auth.rs", "content": content}),
        Some(Phase::Execution),
    );
    let mut s1 = base.clone();
    s1["epics"]["5"]["status"] = json!("in_progress");
    let older_state = rec(&e, "state", s1.clone(), Some(Phase::Execution));
    s1["epics"]["6"] = json!({"status": "pending"});
    let newest_state = rec(&e, "state", s1.clone(), Some(Phase::Execution));
    let log: String = (0..260).map(sentence).collect::<Vec<_>>().join(" ");
    let big = rec(&e, "test_output", json!(log), Some(Phase::Execution));
    for i in 0..8 {
        rec(
            &e,
            "validation",
            json!(format!("validation {i} passed")),
            Some(Phase::Execution),
        );
    }
    clock.set(Timestamp(clock.now().0 + 2 * HOUR));
    assert!(e.status().unwrap().last_checkpoint.is_some());

    let before = e.status().unwrap();
    let dry = e.optimize(true).unwrap().value;
    assert!(dry.dry_run);
    assert_eq!(
        e.status().unwrap().window.used,
        before.window.used,
        "a dry run changes nothing"
    );
    assert!(e.memory().store().substitutions(&[big]).unwrap().is_empty());

    let out = e.optimize(false).unwrap();
    let r = out.value;
    assert_eq!(
        r.techniques
            .iter()
            .map(|t| t.tokens_saved)
            .collect::<Vec<_>>(),
        dry.techniques
            .iter()
            .map(|t| t.tokens_saved)
            .collect::<Vec<_>>()
    );
    for t in &r.techniques {
        assert!(t.items > 0 && t.tokens_saved > 0, "{t:?}");
    }
    let saved: u64 = r.techniques.iter().map(|t| t.tokens_saved).sum();
    assert_eq!(r.tokens_saved, saved);
    assert_eq!(
        out.status.window.used,
        before.window.used - saved,
        "usage drops by exactly the savings"
    );
    assert_eq!(r.tokens_after, out.status.window.used);

    let store = e.memory().store();
    let by = |seq| store.substitutions(&[seq]).unwrap().pop().unwrap();
    assert_eq!(by(file).technique, Technique::ArtifactRegistry);
    assert_eq!(by(older_state).technique, Technique::DifferentialState);
    assert!(by(older_state).replacement.is_none());
    assert!(
        by(newest_state)
            .replacement
            .unwrap()
            .text
            .starts_with("changes since checkpoint CP-")
    );
    assert_eq!(by(big).technique, Technique::Externalize);
    let artifacts: Vec<String> = store
        .artifacts()
        .unwrap()
        .into_iter()
        .map(|a| a.path)
        .collect();
    assert!(artifacts.contains(&REGISTRY_PATH.to_string()));
    assert!(artifacts.contains(&format!("artifacts/o{big}.json")));
    assert!(
        artifacts
            .iter()
            .any(|p| p.starts_with("archive/phases/planning-o"))
    );
    let full = store
        .artifact(&format!("artifacts/o{big}.json"))
        .unwrap()
        .unwrap();
    assert_eq!(
        full.content["operation"]["data"],
        json!(log),
        "the externalized item is whole"
    );

    // Working memory shows the replacements, not the originals.
    let wm = e.working_memory().unwrap();
    let kinds: Vec<&str> = wm.recent().map(|o| o.kind.as_str()).collect();
    assert!(!kinds.contains(&"debug_trace"));
    assert_eq!(kinds.iter().filter(|k| **k == "validation").count(), 5);
    let shown = wm.recent().find(|o| o.seq == big).unwrap();
    assert!(shown.tokens < 200, "{}", shown.tokens);

    // Nothing more to do, and the result survives a restart.
    assert!(e.optimize(false).unwrap().value.substitutions.is_empty());
    let used = e.status().unwrap().window.used;
    drop(e);
    let e = engine(
        SqliteStore::open(&path).unwrap(),
        128_000,
        clock,
        "orchestrator",
    );
    assert_eq!(e.status().unwrap().window.used, used);
    assert!(
        e.working_memory()
            .unwrap()
            .recent()
            .any(|o| o.seq == big && o.data.as_str().unwrap().starts_with("externalized to"))
    );
}
