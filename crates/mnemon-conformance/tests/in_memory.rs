//! The in-memory store is held to the same checks as every backend.

use mnemon_conformance::{Backend, InMemoryStore};

#[test]
fn in_memory_store_passes_the_conformance_suite() {
    mnemon_conformance::run_all(&InMemoryStore::new);
}

/// A second handle shares the first one's project, as a second connection
/// to one database does.
struct InMemory;

impl Backend for InMemory {
    type Store = InMemoryStore;

    fn fresh(&self) -> InMemoryStore {
        InMemoryStore::new()
    }

    fn reopen(&self, store: &InMemoryStore) -> InMemoryStore {
        store.reopen()
    }
}

#[test]
fn in_memory_store_passes_the_full_suite() {
    mnemon_conformance::run_full(&InMemory);
}
