//! Limits and sharing: an item too large for the window, one engine shared
//! by threads and several on one file, a slow summarizer outside the lock.

use super::*;

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
    //
    // Each engine checks the line before it writes, but four can pass that
    // check together, and a refresh that keeps losing its race to the
    // others' writes is left to them rather than failing a write that
    // committed. So a write may answer with the window past the line by at
    // most what the other engines wrote beside it (a loaded 2-core
    // machine showed it once); the window left at the end is under it.
    const ENGINES: u64 = 4;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    SqliteStore::open(&path).unwrap();
    let answers: Vec<(u64, u64)> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..ENGINES)
            .map(|t| {
                let path = path.clone();
                s.spawn(move || {
                    let e = engine(
                        SqliteStore::open(&path).unwrap(),
                        8_192,
                        SteppingClock::starting(T0),
                        "shared",
                    );
                    let mut rng = Lcg(t);
                    (0..100)
                        .map(|i| {
                            let out = e.record(mixed(i, &mut rng, 60).0).unwrap();
                            (out.status.window.used, out.value.tokens)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let largest = answers.iter().map(|a| a.1).max().unwrap();
    for (used, _) in &answers {
        assert!(
            *used < emergency + (ENGINES - 1) * largest,
            "{used} tokens answered, the line is {emergency} and no write is over {largest}"
        );
    }
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
