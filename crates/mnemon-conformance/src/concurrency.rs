//! Conformance: writers at once, in threads of one process, lose nothing and
//! never conflict where they should not.

use std::sync::Arc;

use serde_json::json;

use mnemon_core::memory::{HotKind, NewOperation, OperationQuery, Store};

use crate::memory;

/// Two agents adding goals at the same moment never conflict.
pub fn agents_adding_goals_never_conflict<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    let m = Arc::new(memory(fresh(), "agent-a"));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                for i in 0..20 {
                    m.add_hot(HotKind::Goal, &format!("goal {t}-{i}"), None, None, None)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let hot = m.hot().unwrap();
    assert_eq!(hot.of_kind(HotKind::Goal).count(), 80);
    assert!(hot.version >= 80, "every add moved the version");
}

/// Eight threads share one store and write at once: every write lands once.
pub fn concurrent_writers_lose_nothing<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    let m = Arc::new(memory(fresh(), "orchestrator"));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                (0..100)
                    .map(|i| {
                        m.record(NewOperation {
                            kind: "write".into(),
                            data: json!({"t": t, "i": i}),
                            tokens: Some(1),
                            ..NewOperation::default()
                        })
                        .unwrap()
                        .id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<String> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let stored = m
        .recent(&OperationQuery {
            kind: Some("write".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(stored.len(), 800);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 800, "no duplicate ids");
}
