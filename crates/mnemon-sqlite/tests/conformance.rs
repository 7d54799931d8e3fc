//! The storage conformance suite, on SQLite files.

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
