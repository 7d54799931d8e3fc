//! Durable `record` latency with 100,000 operations, against a baseline
//! measured in the same run: a bare SQLite insert with the same durability
//! (WAL, synchronous = FULL) but no token counting, importance, session
//! counters or full-text index, the shape of openai-agents' SQLiteSession.
//!
//! Run: `cargo bench -p mnemon-sqlite --bench record [-- N]` (N defaults to 100000).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::time::Instant;

#[path = "support.rs"]
mod support;
use support::report;

use mnemon_core::memory::NewOperation;
use mnemon_sqlite::SqliteStore;
use serde_json::json;

fn payload(i: usize) -> serde_json::Value {
    json!({
        "intent": "CREATE",
        "entity_type": if i.is_multiple_of(7) { "epic" } else { "task" },
        "input": format!("Implement step {i} of the authentication flow: validate the JWT, refresh tokens, update docs"),
        "result": format!("Created Task #{i} under Epic #5"),
    })
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    println!("durable record, {n} operations (WAL, synchronous = FULL)");

    let db = dir.path().join("mnemon.db");
    let m = mnemon_conformance::memory(SqliteStore::open(&db).unwrap(), "bench");
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let op = NewOperation {
            kind: "nl_command".into(),
            data: payload(i),
            ..NewOperation::default()
        };
        let t = Instant::now();
        m.record(op).unwrap();
        times.push(t.elapsed());
    }
    let ours = report("mnemon record", times);
    let size: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|md| md.len())
        .sum();
    println!(
        "store size after {n} operations: {:.1} MiB (db + wal), {:.0} bytes per operation",
        size as f64 / 1048576.0,
        size as f64 / n as f64
    );

    let base = dir.path().join("baseline.db");
    let conn = rusqlite::Connection::open(&base).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE items (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP);",
    )
    .unwrap();
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let data = payload(i).to_string();
        let t = Instant::now();
        let tx = conn.unchecked_transaction().unwrap();
        tx.prepare_cached("INSERT INTO items (session_id, message_data) VALUES ('s', ?1)")
            .unwrap()
            .execute([data])
            .unwrap();
        tx.commit().unwrap();
        times.push(t.elapsed());
    }
    let baseline = report("baseline bare insert", times);
    println!(
        "p95 ratio mnemon / baseline: {:.2}",
        ours.as_secs_f64() / baseline.as_secs_f64()
    );
}
