//! Numbered, append-only migrations with a version table, each batch in
//! one transaction: PostgreSQL's DDL is transactional, so a failed
//! migration leaves the schema as it was.

use mnemon_core::memory::{StoreError, StoreResult};
use mnemon_core::store::sql;

use crate::client::{Db, Tx, block};
use crate::error::map_err;

const MIGRATIONS: &[(i64, &str, &str)] =
    &[(1, "init", include_str!("../migrations/0001_init.sql"))];

/// The schema version this build writes.
pub const LATEST_SCHEMA: i64 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// Servers opening a new database together queue on this lock; the first
/// migrates and the others find its work done.
const MIGRATION_LOCK: i64 = 0x6d6e_656d_6f6e_0001;

/// Creates `schema` unless it exists (on a connection of its own: the
/// pool's connections set it as their search path).
pub(crate) fn create_schema(
    config: &tokio_postgres::Config,
    schema: &str,
    shown: &str,
) -> StoreResult<()> {
    block(async {
        let (client, conn) = config.connect(tokio_postgres::NoTls).await?;
        let task = tokio::spawn(conn);
        // Servers creating it at once queue on the lock, which is held
        // until the statements' one transaction commits: the next one then
        // finds the schema instead of failing on the catalog's unique
        // index. (A session lock released by the last statement would be
        // free before the commit.)
        let out = client
            .batch_execute(&format!(
                "SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); CREATE SCHEMA IF NOT EXISTS {schema};"
            ))
            .await;
        drop(client);
        let _ = task.await;
        out
    })?
    .map_err(|e| map_err(shown, e))
}

fn tables(db: &Db) -> StoreResult<Vec<String>> {
    let rows = db.query(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
        &[],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

fn current_version(db: &Db) -> StoreResult<i64> {
    Ok(db
        .one(
            "SELECT coalesce(max(version), 0) FROM schema_migrations",
            &[],
        )?
        .get(0))
}

/// Reads only: refuses a schema of another program or of a newer mnemon.
fn check_ours(db: &Db, shown: &str) -> StoreResult<bool> {
    let schema: Option<String> = db.one("SELECT current_schema()::text", &[])?.get(0);
    if schema.is_none() {
        return Err(StoreError::Invalid(format!(
            "{shown}: the connection's search_path names no existing schema; create it or fix the URL's options"
        )));
    }
    let tables = tables(db)?;
    let advice = "; give mnemon a schema or database of its own";
    if sql::tables_are_ours(&tables, shown, "its schema holds", advice)? {
        let current = current_version(db)?;
        sql::not_newer(current, LATEST_SCHEMA, shown)?;
        return Ok(current == LATEST_SCHEMA);
    }
    Ok(false)
}

fn project_id(db: &Db) -> StoreResult<String> {
    Ok(db
        .one("SELECT value FROM meta WHERE key = 'project_id'", &[])?
        .get(0))
}

/// Brings the schema to [`LATEST_SCHEMA`] and returns its project id.
pub(crate) fn migrate(db: &Db, shown: &str) -> StoreResult<String> {
    if check_ours(db, shown)? {
        return project_id(db);
    }
    let tx = Tx::begin(db, Some(MIGRATION_LOCK))?;
    // Another server may have migrated while this one waited.
    check_ours(db, shown)?;
    db.batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    )?;
    let current = current_version(db)?;
    for (version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > current) {
        db.batch(sql)?;
        db.exec(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
            &[version, name],
        )?;
        if *version == 1 {
            db.exec(
                "INSERT INTO meta (key, value) VALUES ('project_id', $1)",
                &[&crate::new_id()],
            )?;
        }
    }
    let id = project_id(db)?;
    tx.commit()?;
    Ok(id)
}
