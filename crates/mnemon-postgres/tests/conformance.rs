//! The storage conformance suite, unchanged, on PostgreSQL.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod support;

use mnemon_postgres::PgStore;
use support::Database;

struct Pg<'a>(&'a Database);

impl mnemon_conformance::Backend for Pg<'_> {
    type Store = PgStore;
    fn fresh(&self) -> PgStore {
        self.0.fresh()
    }
    fn reopen(&self, store: &PgStore) -> PgStore {
        store.reopen().unwrap()
    }
}

#[test]
fn postgres_passes_the_conformance_suite() {
    let Some(db) = Database::get() else { return };
    mnemon_conformance::run_all(&|| db.fresh());
    mnemon_conformance::run_full(&Pg(&db));
}
