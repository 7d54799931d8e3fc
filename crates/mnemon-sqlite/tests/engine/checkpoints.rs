//! Checkpoints: their file, damaged ones refused, a failed refresh rolled
//! back, calibration kept, interval and phase triggers, resume.

use super::*;

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
        .update_hot_item(&HotItemUpdate {
            id: &goal.id,
            expected_version: goal.version,
            change: &HotItemChange {
                text: Some("Ship billing".into()),
                ..HotItemChange::default()
            },
            at: T0,
        })
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
                    .update_hot_item(&HotItemUpdate {
                        id: &item.id,
                        expected_version: item.version,
                        change: &HotItemChange {
                            text: Some(format!("edited {n}")),
                            ..HotItemChange::default()
                        },
                        at: T0,
                    })
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
