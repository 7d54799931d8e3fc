//! Units of work: a row and the operation that records it commit together,
//! a failed or panicking unit leaves nothing behind, and other threads never
//! read half of one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::engine::Engine;
use mnemon_core::memory::{
    Atomically, EntityKind, EntityQuery, EntityStore, HotKind, NewEntity, NewOperation,
    OperationLog, OperationQuery, StoreError,
};
use mnemon_sqlite::SqliteStore;

fn fresh(path: &std::path::Path) -> Engine<SqliteStore> {
    engine(
        SqliteStore::open(path).unwrap(),
        1_000_000,
        SteppingClock::starting(T0),
        "units",
    )
}

fn task(title: &str) -> NewEntity {
    NewEntity {
        kind: EntityKind::Task,
        title: title.into(),
        description: None,
        priority: None,
        parent: None,
    }
}

fn logged(e: &Engine<SqliteStore>, kind: &str) -> usize {
    e.memory()
        .store()
        .operations(&OperationQuery {
            kind: Some(kind.into()),
            ..OperationQuery::default()
        })
        .unwrap()
        .len()
}

fn tasks(e: &Engine<SqliteStore>) -> usize {
    e.memory()
        .store()
        .entities(&EntityQuery::default())
        .unwrap()
        .len()
}

#[test]
fn a_unit_that_fails_leaves_no_row_and_no_operation() {
    let dir = tempfile::tempdir().unwrap();
    let e = fresh(&dir.path().join("mnemon.db"));
    let m = e.memory();
    let err = m
        .store()
        .atomically(|| {
            m.create_entity(&task("first"))?;
            m.add_hot(HotKind::Constraint, "stay under budget", None, None, None)?;
            // Refused by the memory layer after two writes went through.
            m.record(NewOperation {
                kind: " ".into(),
                ..NewOperation::default()
            })
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    assert_eq!(tasks(&e), 0);
    assert_eq!(logged(&e, "entity_created"), 0);
    assert!(m.hot().unwrap().items.is_empty());
    // The next write starts clean and takes the number the unit gave back.
    assert_eq!(m.create_entity(&task("second")).unwrap().number, 1);
    assert_eq!(logged(&e, "entity_created"), 1);
}

#[test]
fn a_unit_that_panics_is_rolled_back_and_the_store_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let e = fresh(&dir.path().join("mnemon.db"));
    let m = e.memory();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        m.store()
            .atomically(|| -> Result<(), StoreError> {
                m.create_entity(&task("lost"))?;
                panic!("the caller's code failed mid-unit");
            })
            .ok();
    }));
    assert!(caught.is_err());
    assert_eq!(tasks(&e), 0);
    assert_eq!(logged(&e, "entity_created"), 0);
    m.create_entity(&task("kept")).unwrap();
    // Committed for good: a second connection sees it.
    let other = fresh(&dir.path().join("mnemon.db"));
    assert_eq!(tasks(&other), 1);
}

#[test]
fn a_committed_unit_is_visible_to_another_connection_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let e = fresh(&path);
    let m = e.memory();
    m.store()
        .atomically(|| {
            for t in ["login", "signup", "MFA"] {
                m.create_entity(&task(t))?;
            }
            Ok(())
        })
        .unwrap();
    let other = fresh(&path);
    assert_eq!(tasks(&other), 3);
    assert_eq!(logged(&other, "entity_created"), 3);
}

#[test]
fn other_threads_wait_for_a_unit_and_never_read_half_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = Arc::new(fresh(&dir.path().join("mnemon.db")));
    let finished = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Barrier::new(2));
    let reader = {
        let (e, finished, started) = (e.clone(), finished.clone(), started.clone());
        std::thread::spawn(move || {
            started.wait();
            // Asked while the unit holds its first entity uncommitted.
            let seen = tasks(&e);
            (seen, finished.load(Ordering::SeqCst))
        })
    };
    let m = e.memory();
    m.store()
        .atomically(|| {
            m.create_entity(&task("one"))?;
            started.wait();
            std::thread::sleep(std::time::Duration::from_millis(50));
            m.create_entity(&task("two"))?;
            finished.store(true, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    let (seen, after) = reader.join().unwrap();
    assert!(after, "the reader ran inside the unit");
    assert_eq!(seen, 2);
}
