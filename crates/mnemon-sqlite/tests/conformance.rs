//! The storage conformance suite, on SQLite files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_sqlite::SqliteStore;

#[test]
fn sqlite_file_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let counter = std::cell::Cell::new(0);
    let fresh = || {
        counter.set(counter.get() + 1);
        SqliteStore::open(&dir.path().join(format!("store-{}.db", counter.get()))).unwrap()
    };
    mnemon_conformance::run_all(&fresh);
}

#[test]
fn in_memory_sqlite_passes_the_conformance_suite() {
    mnemon_conformance::run_all(&|| SqliteStore::in_memory().unwrap());
}

/// SQLite files: a second handle is a second connection, as another
/// process would open.
struct Files {
    dir: tempfile::TempDir,
    n: std::sync::atomic::AtomicUsize,
}

impl mnemon_conformance::Backend for Files {
    type Store = SqliteStore;
    fn fresh(&self) -> SqliteStore {
        let n = self.n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        SqliteStore::open(&self.dir.path().join(format!("full-{n}.db"))).unwrap()
    }
    fn reopen(&self, store: &SqliteStore) -> SqliteStore {
        SqliteStore::open(std::path::Path::new(store.path())).unwrap()
    }
}

/// In memory: a second handle shares the one connection.
struct InMemory;

impl mnemon_conformance::Backend for InMemory {
    type Store = SqliteStore;
    fn fresh(&self) -> SqliteStore {
        SqliteStore::in_memory().unwrap()
    }
    fn reopen(&self, store: &SqliteStore) -> SqliteStore {
        store.clone()
    }
}

#[test]
fn sqlite_file_passes_the_full_suite() {
    mnemon_conformance::run_full(&Files {
        dir: tempfile::tempdir().unwrap(),
        n: Default::default(),
    });
}

#[test]
fn in_memory_sqlite_passes_the_full_suite() {
    mnemon_conformance::run_full(&InMemory);
}
