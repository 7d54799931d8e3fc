//! Numbered, append-only migrations, each applied in its own transaction.

use mnemon_core::memory::StoreResult;
use mnemon_core::store::sql;
use rusqlite::Connection;

use crate::error::map_err;

const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "init", include_str!("../migrations/0001_init.sql")),
    (
        2,
        "decisions",
        include_str!("../migrations/0002_decisions.sql"),
    ),
    (
        3,
        "entities",
        include_str!("../migrations/0003_entities.sql"),
    ),
    (
        4,
        "documents",
        include_str!("../migrations/0004_documents.sql"),
    ),
    (5, "engine", include_str!("../migrations/0005_engine.sql")),
    (6, "search", include_str!("../migrations/0006_search.sql")),
    (7, "vocab", include_str!("../migrations/0007_vocab.sql")),
    (
        8,
        "optimizer",
        include_str!("../migrations/0008_optimizer.sql"),
    ),
    (
        9,
        "entity_delete",
        include_str!("../migrations/0009_entity_delete.sql"),
    ),
    (
        10,
        "recent_index",
        include_str!("../migrations/0010_recent_index.sql"),
    ),
    (
        11,
        "drop_vocab",
        include_str!("../migrations/0011_drop_vocab.sql"),
    ),
    (
        12,
        "vectors",
        include_str!("../migrations/0012_vectors.sql"),
    ),
    (13, "forget", include_str!("../migrations/0013_forget.sql")),
    (
        14,
        "vectors_by_record",
        include_str!("../migrations/0014_vectors_by_record.sql"),
    ),
];

/// The schema version this build writes.
pub const LATEST_SCHEMA: i64 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// Reads only: refuses a database of another program or of a newer mnemon.
pub(crate) fn check_ours(conn: &Connection, path: &str) -> StoreResult<()> {
    let e = |err| map_err(path, err);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(e)?;
    if sql::tables_are_ours(&tables, path, "it holds", "")? {
        let current: i64 = conn
            .query_row(
                "SELECT coalesce(max(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(e)?;
        sql::not_newer(current, LATEST_SCHEMA, path)?;
    }
    Ok(())
}

/// Brings the database to [`LATEST_SCHEMA`] and returns its project id.
///
/// Every pending migration runs in one exclusive transaction that reads the
/// schema version only once it holds the write lock: processes opening a
/// new project together queue on the lock (the busy timeout), and each
/// finds the work of the one before it done instead of creating the same
/// tables again. A migration that fails leaves the file as it was.
/// The `meta` key saying no freed space in the file holds old text: set
/// when a database is made (`secure_delete` is on from its first write) or
/// once a forget has vacuumed a database an earlier mnemon wrote.
pub(crate) const ZEROED: &str = "free_space_zeroed";

pub(crate) fn migrate(conn: &Connection, path: &str) -> StoreResult<String> {
    let e = |err| map_err(path, err);
    check_ours(conn, path)?;
    if let Some(id) = up_to_date(conn).map_err(e)? {
        return Ok(id);
    }
    conn.execute_batch("BEGIN EXCLUSIVE").map_err(e)?;
    let result = (|| -> StoreResult<String> {
        // Another process may have migrated while this one waited.
        check_ours(conn, path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;",
        )
        .map_err(e)?;
        let current: i64 = conn
            .query_row(
                "SELECT coalesce(max(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(e)?;
        for (version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > current) {
            conn.execute_batch(sql).map_err(e)?;
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, unixepoch('subsec') * 1000)",
                rusqlite::params![version, name],
            )
            .map_err(e)?;
            if *version == 1 {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('project_id', ?1)",
                    [crate::new_id()],
                )
                .map_err(e)?;
                // Made with `secure_delete` on: no freed space holds text.
                conn.execute_batch(&format!(
                    "INSERT INTO meta (key, value) VALUES ('{ZEROED}', '1')"
                ))
                .map_err(e)?;
            }
        }
        conn.query_row("SELECT value FROM meta WHERE key = 'project_id'", [], |r| {
            r.get(0)
        })
        .map_err(e)
    })();
    match result {
        Ok(id) => {
            conn.execute_batch("COMMIT").map_err(e)?;
            Ok(id)
        }
        Err(err) => {
            // Nothing of a failed migration stays; the rollback's own
            // failure would only mean the connection already rolled back.
            let _ = conn.execute_batch("ROLLBACK");
            Err(err)
        }
    }
}

/// The project id when the schema is already current, read without a
/// write lock so that opening a migrated project never waits on writers.
fn up_to_date(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let has_table: bool = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if !has_table {
        return Ok(None);
    }
    let current: i64 = conn.query_row(
        "SELECT coalesce(max(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    if current < LATEST_SCHEMA {
        return Ok(None);
    }
    conn.query_row("SELECT value FROM meta WHERE key = 'project_id'", [], |r| {
        r.get(0)
    })
    .map(Some)
}
