//! What PostgreSQL-specific opening must refuse or survive: a schema of
//! another program, a schema written by a newer mnemon, and servers
//! opening a new database together.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod support;

use mnemon_core::memory::{Store, StoreError};
use mnemon_postgres::{LATEST_SCHEMA, PgStore, Target};
use support::Database;

#[test]
fn foreign_and_newer_schemas_are_refused_unchanged_and_openers_agree() {
    let Some(db) = Database::get() else { return };
    let admin = PgStore::connect(db.target()).unwrap();
    let sql = admin.db().unwrap();

    // Another program's tables.
    let foreign = db.schema();
    sql.batch(&format!(
        "CREATE SCHEMA {foreign}; CREATE TABLE {foreign}.invoices (id int)"
    ))
    .unwrap();
    let err = PgStore::connect(Target::parse(&db.url).unwrap().schema(&foreign)).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err}");
    assert!(err.to_string().contains("invoices"), "{err}");
    let tables: i64 = sql
        .one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            &[&foreign],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing was created beside them");

    // A newer mnemon's schema.
    let newer = PgStore::connect(db.target()).unwrap();
    let schema = newer.schema().unwrap().to_string();
    newer
        .db()
        .unwrap()
        .exec(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future', 0)",
            &[&(LATEST_SCHEMA + 1)],
        )
        .unwrap();
    let err = PgStore::connect(Target::parse(&db.url).unwrap().schema(&schema)).unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found, .. } if found == LATEST_SCHEMA + 1),
        "{err}"
    );

    // Eight openers of one new schema at once: one migrates, all agree.
    let shared = db.schema();
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let target = Target::parse(&db.url).unwrap().schema(&shared);
                s.spawn(move || PgStore::connect(target).unwrap().project_id().to_string())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "{ids:?}");

    // A bad URL says what is wrong without echoing a password.
    let err = PgStore::open("postgres://me:hunter2@127.0.0.1:1/x").unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}
