//! Units of work on SQLite files: what a second connection sees after a
//! unit commits or panics. The rules every store keeps (a failed unit
//! leaves nothing, a nested unit joins, other threads never read half of
//! one) are conformance checks, run here by `tests/conformance.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::{SteppingClock, T0, engine, entity_count, new_task, operations_of_kind};
use mnemon_core::engine::Engine;
use mnemon_core::memory::{Atomically, StoreResult};
use mnemon_sqlite::SqliteStore;

fn fresh(path: &std::path::Path) -> Engine<SqliteStore> {
    engine(
        SqliteStore::open(path).unwrap(),
        1_000_000,
        SteppingClock::starting(T0),
        "units",
    )
}

#[test]
fn a_unit_that_panics_is_rolled_back_and_the_store_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let e = fresh(&dir.path().join("mnemon.db"));
    let m = e.memory();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        m.store()
            .atomically(|| -> StoreResult<()> {
                m.create_entity(&new_task("lost"))?;
                panic!("the caller's code failed mid-unit");
            })
            .ok();
    }));
    assert!(caught.is_err());
    assert_eq!(entity_count(e.memory()), 0);
    assert_eq!(operations_of_kind(e.memory(), "entity_created"), 0);
    m.create_entity(&new_task("kept")).unwrap();
    // Committed for good: a second connection sees it.
    let other = fresh(&dir.path().join("mnemon.db"));
    assert_eq!(entity_count(other.memory()), 1);
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
                m.create_entity(&new_task(t))?;
            }
            Ok(())
        })
        .unwrap();
    let other = fresh(&path);
    assert_eq!(entity_count(other.memory()), 3);
    assert_eq!(operations_of_kind(other.memory(), "entity_created"), 3);
}
