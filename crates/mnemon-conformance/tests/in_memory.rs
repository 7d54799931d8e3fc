//! The in-memory store is held to the same checks as every backend.

#[test]
fn in_memory_store_conforms() {
    mnemon_conformance::run_all(&mnemon_conformance::InMemoryStore::new);
}
