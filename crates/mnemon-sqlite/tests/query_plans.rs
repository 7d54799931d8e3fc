//! Reads that run on every turn must not sort the whole log, nor a delete
//! read a whole table: SQLite's own query plans, checked on a real file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_sqlite::SqliteStore;

fn plan(conn: &rusqlite::Connection, sql: &str, args: usize) -> String {
    let params: Vec<&dyn rusqlite::ToSql> =
        (0..args).map(|_| &"x" as &dyn rusqlite::ToSql).collect();
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows: Vec<String> = stmt
        .query_map(params.as_slice(), |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows.join("; ")
}

#[test]
fn the_newest_operations_are_read_from_an_index_without_sorting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    for (sql, args) in [
        // `mnemon recent` and the chat's reference resolution.
        (
            "SELECT seq FROM operations WHERE project_id = ? ORDER BY seq DESC LIMIT 400",
            1,
        ),
        (
            "SELECT seq FROM operations WHERE project_id = ? AND session_id = ? ORDER BY seq DESC LIMIT 400",
            2,
        ),
        (
            "SELECT seq FROM operations WHERE project_id = ? AND kind = ? ORDER BY seq DESC LIMIT 400",
            2,
        ),
    ] {
        let p = plan(&conn, sql, args);
        assert!(!p.contains("TEMP B-TREE"), "{sql}: {p}");
        assert!(p.contains("INDEX"), "{sql}: {p}");
    }
}

/// A session's rows are read through a session index, not by walking the
/// project's (which also orders by position, so SQLite preferred it and
/// read every row of the project to keep one session's).
#[test]
fn a_sessions_rows_are_read_through_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    for table in ["operations", "messages"] {
        let sql = format!(
            "SELECT seq FROM {table} WHERE +project_id = ? AND session_id = ? ORDER BY seq DESC LIMIT -1"
        );
        let p = plan(&conn, &sql, 2);
        assert!(p.contains("(session_id=?)"), "{sql}: {p}");
        assert!(!p.contains("TEMP B-TREE"), "{sql}: {p}");
    }
}

/// Forgetting a record deletes its vectors by the record (a trigger, and
/// core's delete): through an index, not by reading every vector.
#[test]
fn a_records_vectors_are_found_through_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    drop(SqliteStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    for (sql, args) in [
        // Migration 0012's trigger.
        (
            "DELETE FROM vectors WHERE source = 'operation' AND record = ?",
            1,
        ),
        // Core's delete (`ForgetWrites::delete_operation` over SQL), which
        // checks the record's project by its key, not by listing the
        // project's records.
        (
            "DELETE FROM vectors WHERE source = 'operation' AND record = ?2 AND EXISTS (SELECT 1 FROM operations WHERE project_id = ?1 AND seq = ?2)",
            2,
        ),
    ] {
        let p = plan(&conn, sql, args);
        assert!(p.contains("vectors_by_record"), "{sql}: {p}");
        assert!(!p.contains("SCAN"), "{sql}: {p}");
    }
}
