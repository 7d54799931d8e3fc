//! The rest of the storage seam: the engine's store (state compare-and-set,
//! one-transaction commits, positional reads, checkpoints), search, units
//! of work and numbering under concurrency. Generic over a [`Backend`], so
//! a second backend proves itself by running [`run_full`] unchanged.

use std::sync::{Arc, Barrier};

use mnemon_core::assemble::retrieve::{HitSource, SearchStore};
use mnemon_core::engine::{EngineCommit, EngineState, EngineStore, StoredCheckpoint};
use mnemon_core::importance::Role;
use mnemon_core::memory::{
    Atomically, EntityDraft, EntityKind, EntityQuery, EntityStatus, EntityStore, NewEntity,
    NewOperation, OperationDraft, OperationLog, OperationQuery, Page, StoreError, StoreResult,
};
use serde_json::json;

use crate::{Backend, SteppingClock, T0, engine, memory};

/// Every check of this module, in order.
pub fn run_full<B: Backend>(b: &B) {
    state_is_compare_and_set(b);
    a_conflicting_commit_writes_nothing(b);
    a_taken_checkpoint_id_is_a_conflict(b);
    agents_checkpointing_in_one_second_get_distinct_ids(b);
    concurrent_state_updates_lose_none(b);
    positional_reads_follow_the_log(b);
    checkpoints_round_trip(b);
    search_finds_every_tier(b);
    units_of_work_are_all_or_nothing(b);
    concurrent_numbering_has_no_gaps_or_duplicates(b);
    the_engine_runs_on_the_backend(b);
    crate::forget::forgetting_leaves_no_trace(b);
}

fn state(agent: &str, version: u64, epoch: u64) -> EngineState {
    EngineState {
        version,
        epoch,
        ..EngineState::new(agent, T0)
    }
}

fn op(kind: &str) -> OperationDraft {
    OperationDraft {
        session_id: None,
        agent: "conformance".into(),
        kind: kind.into(),
        data: json!({"k": kind}),
        tokens: 3,
        phase: None,
        status: None,
        importance: 0.5,
        pinned: false,
        created_at: T0,
    }
}

fn count<S: EngineStore>(s: &S, kind: &str) -> u64 {
    s.count_operations(&OperationQuery {
        kind: Some(kind.into()),
        ..OperationQuery::default()
    })
    .unwrap()
}

/// A commit names the state version it read; a stale one is refused with
/// the typed conflict, never a string to parse.
pub fn state_is_compare_and_set<B: Backend>(b: &B) {
    let s = b.fresh();
    assert_eq!(
        s.engine_state("a").unwrap(),
        None,
        "no state before a commit"
    );
    let first = EngineCommit {
        state: Some((None, state("a", 1, 1))),
        ..EngineCommit::default()
    };
    s.commit(&first).unwrap();
    assert_eq!(s.engine_state("a").unwrap().unwrap().epoch, 1);
    match s.commit(&first) {
        Err(StoreError::StateConflict { agent }) => assert_eq!(agent, "a"),
        other => panic!("a second first commit must conflict, got {other:?}"),
    }
    let next = EngineCommit {
        state: Some((Some(1), state("a", 2, 2))),
        ..EngineCommit::default()
    };
    s.commit(&next).unwrap();
    assert!(matches!(
        s.commit(&next),
        Err(StoreError::StateConflict { .. })
    ));
    let st = s.engine_state("a").unwrap().unwrap();
    assert_eq!((st.version, st.epoch), (2, 2));
    assert_eq!(s.engine_state("b").unwrap(), None, "agents are separate");
}

/// Everything in a commit lands together or not at all.
pub fn a_conflicting_commit_writes_nothing<B: Backend>(b: &B) {
    let s = b.fresh();
    s.commit(&EngineCommit {
        state: Some((None, state("a", 1, 1))),
        ..EngineCommit::default()
    })
    .unwrap();
    let stale = EngineCommit {
        state: Some((None, state("a", 1, 9))),
        operation: Some(op("context_action")),
        checkpoint: Some(StoredCheckpoint {
            id: "CP-20250115-143000".into(),
            agent: "a".into(),
            session_id: None,
            trigger: "manual".into(),
            created_at: T0,
            json: "{}".into(),
        }),
        ..EngineCommit::default()
    };
    assert!(matches!(
        s.commit(&stale),
        Err(StoreError::StateConflict { .. })
    ));
    assert_eq!(
        count(&s, "context_action"),
        0,
        "no operation from a refused commit"
    );
    assert!(
        s.checkpoints(10).unwrap().is_empty(),
        "no checkpoint either"
    );
    assert_eq!(s.engine_state("a").unwrap().unwrap().epoch, 1);

    let good = EngineCommit {
        state: Some((Some(1), state("a", 2, 2))),
        ..stale
    };
    let stored = s.commit(&good).unwrap().expect("the commit's operation");
    assert_eq!(stored.kind, "context_action");
    assert_eq!(s.checkpoints(10).unwrap().len(), 1);
}

fn stored_checkpoint(id: &str, agent: &str) -> StoredCheckpoint {
    StoredCheckpoint {
        id: id.into(),
        agent: agent.into(),
        session_id: None,
        trigger: "manual".into(),
        created_at: T0,
        json: format!("{{\"agent\": \"{agent}\"}}"),
    }
}

/// Two agents' engines may pick the same second's checkpoint id; the
/// second commit is a conflict (re-evaluated by the engine), not a storage
/// failure, and writes nothing.
pub fn a_taken_checkpoint_id_is_a_conflict<B: Backend>(b: &B) {
    let s = b.fresh();
    let other = b.reopen(&s);
    s.commit(&EngineCommit {
        state: Some((None, state("a", 1, 1))),
        checkpoint: Some(stored_checkpoint("CP-20250115-143000", "a")),
        ..EngineCommit::default()
    })
    .unwrap();
    let late = other.commit(&EngineCommit {
        state: Some((None, state("b", 1, 1))),
        checkpoint: Some(stored_checkpoint("CP-20250115-143000", "b")),
        operation: Some(op("late")),
        ..EngineCommit::default()
    });
    assert!(
        matches!(late, Err(StoreError::StateConflict { .. })),
        "{late:?}"
    );
    assert_eq!(
        other.engine_state("b").unwrap(),
        None,
        "nothing of it written"
    );
    assert_eq!(count(&other, "late"), 0);
    assert_eq!(s.checkpoint("CP-20250115-143000").unwrap().agent, "a");
}

/// Engines of several agents on separate handles, at one clock second,
/// checkpoint at once: every checkpoint is stored, each under its own id.
pub fn agents_checkpointing_in_one_second_get_distinct_ids<B: Backend>(b: &B) {
    let s = b.fresh();
    let agents = 4;
    let barrier = Arc::new(Barrier::new(agents));
    let handles: Vec<_> = (0..agents)
        .map(|a| {
            let h = b.reopen(&s);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let clock: Arc<dyn mnemon_core::memory::Clock> = Arc::new(Fixed);
                let e = engine(h, 128_000, clock, &format!("agent-{a}"));
                barrier.wait();
                (0..3)
                    .map(|_| e.checkpoint("manual").unwrap().id)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), agents * 3, "distinct ids: {ids:?}");
    assert_eq!(s.checkpoints(100).unwrap().len(), agents * 3);
}

/// Always the same instant, so checkpoints share a second.
#[derive(Debug)]
struct Fixed;

impl mnemon_core::memory::Clock for Fixed {
    fn now(&self) -> mnemon_core::memory::Timestamp {
        T0
    }
}

/// Writers on separate handles race to move one agent's state: every
/// successful compare-and-set is one step, none is lost or doubled.
pub fn concurrent_state_updates_lose_none<B: Backend>(b: &B) {
    let s = b.fresh();
    s.commit(&EngineCommit {
        state: Some((None, state("shared", 1, 0))),
        ..EngineCommit::default()
    })
    .unwrap();
    let threads = 4;
    let steps = 25;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let h = b.reopen(&s);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut won = 0;
                let mut conflicts = 0;
                while won < steps {
                    let cur = h.engine_state("shared").unwrap().unwrap();
                    let next = EngineState {
                        version: cur.version + 1,
                        epoch: cur.epoch + 1,
                        ..cur.clone()
                    };
                    match h.commit(&EngineCommit {
                        state: Some((Some(cur.version), next)),
                        operation: Some(op("step")),
                        ..EngineCommit::default()
                    }) {
                        Ok(_) => won += 1,
                        Err(StoreError::StateConflict { .. }) => conflicts += 1,
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                    assert!(conflicts < 100_000, "the race never ends");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let st = s.engine_state("shared").unwrap().unwrap();
    let total = (threads * steps) as u64;
    assert_eq!(st.epoch, total, "every step counted once");
    assert_eq!(st.version, total + 1);
    assert_eq!(count(&s, "step"), total, "one operation per winning commit");
}

/// Positions grow with the log; reads by position agree with the log.
pub fn positional_reads_follow_the_log<B: Backend>(b: &B) {
    let m = memory(b.fresh(), "orchestrator");
    let s = m.store();
    assert_eq!(s.log_heads().unwrap(), (0, 0));
    let session = m.current_session().unwrap();
    let ops: Vec<_> = (0..5)
        .map(|i| {
            m.record(NewOperation {
                kind: "step".into(),
                data: json!({"i": i}),
                tokens: Some(10),
                ..NewOperation::default()
            })
            .unwrap()
        })
        .collect();
    assert!(ops.windows(2).all(|w| w[0].seq < w[1].seq));
    let (op_head, _) = s.log_heads().unwrap();
    assert_eq!(op_head, ops[4].seq);
    let after = s
        .operations_after(
            &session.id,
            Page {
                after: ops[1].seq,
                limit: 100,
            },
        )
        .unwrap();
    let seqs: Vec<i64> = after.iter().map(|o| o.seq).collect();
    assert_eq!(
        seqs,
        vec![ops[4].seq, ops[3].seq, ops[2].seq],
        "newest first"
    );
    let at = s.operations_at(&[ops[3].seq, ops[0].seq, 999_999]).unwrap();
    assert_eq!(
        at.iter().map(|o| o.seq).collect::<Vec<_>>(),
        vec![ops[0].seq, ops[3].seq],
        "oldest first, missing positions left out"
    );
    let totals = s.live_totals(&session.id, ops[1].seq, i64::MAX).unwrap();
    assert_eq!((totals.op_count, totals.tokens()), (3, 30));
    // A backend that says through which positions it counted counts the
    // same, and counting on from there finds nothing more.
    if let Some((same, op, msg)) = s
        .live_totals_through(&session.id, ops[1].seq, i64::MAX)
        .unwrap()
    {
        assert_eq!(same, totals);
        let newest = ops.iter().map(|o| o.seq).max().unwrap();
        assert_eq!((op, msg), (newest, i64::MAX), "through the newest counted");
        let rest = s
            .live_totals_through(&session.id, op, msg)
            .unwrap()
            .unwrap();
        assert_eq!(rest.0, mnemon_core::engine::LiveTotals::default());
    }
}

/// Checkpoints come back exactly as stored, newest first.
pub fn checkpoints_round_trip<B: Backend>(b: &B) {
    let e = engine(b.fresh(), 128_000, SteppingClock::starting(T0), "cp");
    e.record(NewOperation {
        kind: "task_execution".into(),
        data: json!({"task": 1}),
        ..NewOperation::default()
    })
    .unwrap();
    let first = e.checkpoint("manual").unwrap();
    let second = e.checkpoint("manual").unwrap();
    let s = e.memory().store();
    let listed = s.checkpoints(10).unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        vec![second.id.as_str(), first.id.as_str()]
    );
    let stored = s.checkpoint(&first.id).unwrap();
    assert_eq!(stored.json, first.to_json(), "the file's bytes, exactly");
    assert!(matches!(
        s.checkpoint("CP-19990101-000000"),
        Err(StoreError::NotFound { .. })
    ));
}

/// Full-text search reaches operations, messages, decisions, the hot
/// context and entities, and postings list the newest records first.
pub fn search_finds_every_tier<B: Backend>(b: &B) {
    let m = memory(b.fresh(), "orchestrator");
    for i in 0..3 {
        m.record(NewOperation {
            kind: "note".into(),
            data: json!({"text": format!("kestrel migration step {i}")}),
            ..NewOperation::default()
        })
        .unwrap();
    }
    m.message(mnemon_core::memory::NewMessage::new(
        Role::User,
        "the kestrel cache must stay warm",
    ))
    .unwrap();
    m.add_hot(
        mnemon_core::memory::HotKind::Constraint,
        "kestrel runs on port 7000",
        None,
        None,
        None,
    )
    .unwrap();
    let task = m
        .create_entity(&NewEntity {
            kind: EntityKind::Task,
            title: "Move kestrel to the new cluster".into(),
            description: None,
            priority: None,
            parent: None,
        })
        .unwrap();
    let s = m.store();
    let hits = s
        .search("kestrel", 10, &mnemon_core::assemble::retrieve::ALL_SOURCES)
        .unwrap();
    for source in [
        HitSource::Operation,
        HitSource::Message,
        HitSource::Hot,
        HitSource::Entity,
    ] {
        assert!(
            hits.iter().any(|h| h.source == source),
            "search reaches {source:?}: {hits:?}"
        );
    }
    // Who said a message travels with it (cues raise what one party
    // said); other records are nobody's turn.
    for h in &hits {
        let role = (h.source == HitSource::Message).then_some(Role::User);
        assert_eq!(h.role, role, "{h:?}");
    }
    let said = s.postings(HitSource::Message, "kestrel", 10).unwrap();
    let read = s.records(HitSource::Message, &said).unwrap();
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(read[0].role, Some(Role::User));
    assert!(
        s.search("zzzyqx", 10, &[HitSource::Operation])
            .unwrap()
            .is_empty()
    );
    let rows = s.postings(HitSource::Operation, "kestrel", 10).unwrap();
    assert!(rows.len() >= 3, "each recorded note is posted: {rows:?}");
    assert!(rows.windows(2).all(|w| w[0] > w[1]), "newest first");
    let capped = s.postings(HitSource::Operation, "kestrel", 2).unwrap();
    assert_eq!(capped, rows[..2].to_vec(), "the cap keeps the newest");
    let records = s.records(HitSource::Operation, &rows).unwrap();
    assert_eq!(records.len(), rows.len());
    assert!(records.iter().all(|r| r.text.contains("kestrel")));
    assert!(s.last_row(HitSource::Operation).unwrap() >= rows[0] as u64);
    let prefix = s.postings(HitSource::Operation, "kestr*", 10).unwrap();
    assert_eq!(prefix, rows, "a trailing * is a prefix");
    // Many words at once answer as each alone, in the order asked; a term
    // with no word in it, or a word nowhere, has no postings.
    let asks = [
        (HitSource::Message, "kestrel"),
        (HitSource::Operation, "kestr*"),
        (HitSource::Operation, "--"),
        (HitSource::Operation, "zzzyqx"),
        (HitSource::Operation, "kestrel"),
    ];
    let many = s.postings_many(&asks, 10).unwrap();
    let each: Vec<Vec<i64>> = asks
        .iter()
        .map(|(source, term)| s.postings(*source, term, 10).unwrap())
        .collect();
    assert_eq!(many, each);
    assert_eq!(many[1], rows);
    assert_eq!(many[0].len(), 1, "the one message: {many:?}");
    assert!(many[2].is_empty() && many[3].is_empty());
    assert!(s.postings_many(&[], 10).unwrap().is_empty());
    assert_eq!(
        s.last_rows().unwrap(),
        [
            s.last_row(HitSource::Operation).unwrap(),
            s.last_row(HitSource::Message).unwrap()
        ]
    );
    // A deleted entity leaves search and retrieval alike: its record is not
    // read back by key, as a stored vector or a posting would ask for it.
    let row = hits
        .iter()
        .find(|h| h.source == HitSource::Entity)
        .map(|h| h.row)
        .unwrap();
    assert_eq!(s.records(HitSource::Entity, &[row]).unwrap().len(), 1);
    m.delete_entity(task.number).unwrap();
    assert!(
        s.records(HitSource::Entity, &[row]).unwrap().is_empty(),
        "a deleted entity is not retrieved"
    );
    assert!(
        s.search("kestrel", 10, &[HitSource::Entity])
            .unwrap()
            .is_empty()
    );
}

fn draft(title: &str) -> EntityDraft {
    EntityDraft {
        kind: EntityKind::Task,
        title: title.into(),
        description: None,
        priority: 3,
        parent: None,
        status: EntityStatus::Pending,
        at: T0,
    }
}

/// A unit commits every write or none; a panic inside rolls it back; a
/// unit inside a unit joins it.
pub fn units_of_work_are_all_or_nothing<B: Backend>(b: &B) {
    let s = b.fresh();
    let failed: StoreResult<()> = s.atomically(|| {
        s.create_entity(&draft("never"))?;
        s.append_operation(&op("entity_created"))?;
        Err(StoreError::Invalid("the caller changed its mind".into()))
    });
    assert!(failed.is_err());
    assert!(s.entities(&EntityQuery::default()).unwrap().is_empty());
    assert_eq!(count(&s, "entity_created"), 0);

    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _: StoreResult<()> = s.atomically(|| {
            s.append_operation(&op("doomed"))?;
            panic!("a bug inside a unit");
        });
    }));
    assert!(panicked.is_err());
    assert_eq!(count(&s, "doomed"), 0, "a panicking unit is rolled back");

    let kept = s
        .atomically(|| {
            let e = s.create_entity(&draft("outer"))?;
            s.atomically(|| s.append_operation(&op("inner")))?;
            Ok(e)
        })
        .unwrap();
    assert_eq!(count(&s, "inner"), 1, "the inner unit joined the outer one");
    assert_eq!(s.entity(kept.number).unwrap().title, "outer");
    let other = b.reopen(&s);
    assert_eq!(
        other.entity(kept.number).unwrap().title,
        "outer",
        "committed for everyone"
    );
}

/// Entities created at once on separate handles take numbers 1..=n, each
/// once, and a failed unit does not leave a gap.
pub fn concurrent_numbering_has_no_gaps_or_duplicates<B: Backend>(b: &B) {
    let s = b.fresh();
    let threads = 4;
    let each = 25;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let h = b.reopen(&s);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                (0..each)
                    .map(|i| {
                        if i % 5 == 0 {
                            // A unit that fails gives its number back.
                            let _: StoreResult<()> = h.atomically(|| {
                                h.create_entity(&draft("rolled back"))?;
                                Err(StoreError::Invalid("no".into()))
                            });
                        }
                        h.create_entity(&draft(&format!("{t}-{i}"))).unwrap().number
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut numbers: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    numbers.sort_unstable();
    let n = (threads * each) as u64;
    assert_eq!(numbers, (1..=n).collect::<Vec<_>>());
}

/// The engine's own path on this backend: records, a refresh, a resume,
/// a session end.
pub fn the_engine_runs_on_the_backend<B: Backend>(b: &B) {
    let e = engine(b.fresh(), 8_192, SteppingClock::starting(T0), "engine");
    for i in 0..40 {
        e.record(NewOperation {
            kind: "task_execution".into(),
            data: json!({"task": i, "result": "done with the parser and its tests"}),
            ..NewOperation::default()
        })
        .unwrap();
    }
    let before = e.status().unwrap();
    let cp = e.checkpoint("manual").unwrap();
    e.refresh("manual").unwrap();
    let after = e.status().unwrap();
    assert_eq!(after.epoch, before.epoch + 1);
    assert!(after.window.used <= before.window.used);
    e.resume(&cp).unwrap();
    assert_eq!(e.status().unwrap().window.used, before.window.used);
    let ended = e.end_session().unwrap();
    assert!(
        ended.value.total_operations >= 40,
        "the session report counts every record: {}",
        ended.value.total_operations
    );
    let log = e
        .memory()
        .store()
        .operations(&OperationQuery::default())
        .unwrap();
    assert!(log.len() >= 40, "nothing was deleted by refresh or resume");
}
