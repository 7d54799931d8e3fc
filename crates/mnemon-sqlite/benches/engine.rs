//! Engine latency with 100,000 stored operations: differential checkpoint
//! creation and a full refresh, each against a baseline measured in the
//! same run, plus the extractive compressor on a 40,000-token session log.
//!
//! - Checkpoint baseline: a full snapshot, the shape of langgraph's
//!   `SqliteSaver.put` (serialize the session's whole history, insert one
//!   row), which mnemon's checkpoint replaces with references.
//! - Refresh baseline: design v1's refresh done naively (read the whole
//!   session, render its log document, write it back).
//!
//! Run: `cargo bench -p mnemon-sqlite --bench engine [-- N]` (N defaults to 100000).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::time::Instant;

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::compress::{Extractive, SourceItem, Summarizer, verbatim_tokens};
use mnemon_core::memory::{NewOperation, OperationLog, OperationQuery};
use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
use mnemon_sqlite::SqliteStore;
use serde_json::json;

#[path = "support.rs"]
mod support;
use support::report;

const TOPICS: &[&str] = &[
    "validated the JWT signature and expiry",
    "refreshed the access token and rotated the refresh token",
    "migrated the users table to add an mfa_secret column",
    "reran the signup tests after fixing the email normaliser",
    "profiled the login endpoint: p95 fell from 180 ms to 95 ms",
    "reviewed the password reset flow for token reuse",
    "updated the API docs for /auth/login and /auth/refresh",
    "fixed a race in the session cache eviction",
];

fn op(i: usize) -> NewOperation {
    let pinned = i.is_multiple_of(25);
    NewOperation {
        kind: if pinned { "decision" } else { "task_execution" }.into(),
        data: json!({
            "task": format!("Task #{}", i % 1000),
            "text": format!("Step {i}: {}. {}.", TOPICS[i % TOPICS.len()], TOPICS[(i / 3) % TOPICS.len()]),
        }),
        status: Some("completed".into()),
        ..NewOperation::default()
    }
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mnemon.db");
    let e = engine(
        SqliteStore::open(&db).unwrap(),
        128_000,
        SteppingClock::starting(T0),
        "bench",
    );
    let m = e.memory();
    // History: earlier sessions of 1,000 operations each.
    let t = Instant::now();
    let history = n.saturating_sub(1_000);
    for i in 0..history {
        if i % 1_000 == 0 {
            m.start_session(None).unwrap();
        }
        m.record(op(i)).unwrap();
    }
    m.start_session(Some("live")).unwrap();
    for i in history..n {
        e.record(op(i)).unwrap();
    }
    println!(
        "stored {n} operations in {:.1?} (128K window, balanced profile)",
        t.elapsed()
    );

    // Differential checkpoint.
    let runs = 200;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        e.record(op(n + i)).unwrap();
        let t = Instant::now();
        e.checkpoint("manual").unwrap();
        times.push(t.elapsed());
    }
    let cp = report("mnemon checkpoint (differential)", times);

    // Baseline: a full snapshot of the session's history per checkpoint.
    let conn = rusqlite::Connection::open(dir.path().join("baseline.db")).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, thread TEXT, checkpoint TEXT);",
    )
    .unwrap();
    let session = m.current_session().unwrap();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let all = m
            .store()
            .operations(&OperationQuery {
                session_id: Some(session.id.clone()),
                ..OperationQuery::default()
            })
            .unwrap();
        let blob = serde_json::to_string(&all).unwrap();
        conn.execute(
            "INSERT INTO checkpoints (thread, checkpoint) VALUES ('t', ?1)",
            [blob],
        )
        .unwrap();
        times.push(t.elapsed());
    }
    let full = report("baseline full snapshot", times);
    println!(
        "checkpoint p95 ratio mnemon / baseline: {:.2} (session of {} operations)",
        cp.as_secs_f64() / full.as_secs_f64(),
        session.operation_count
    );

    // Full refresh: checkpoint, summary, documents, new epoch; 50 new
    // operations (not timed) between refreshes.
    let runs = 60;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        for k in 0..50 {
            e.record(op(n + 1_000 + i * 50 + k)).unwrap();
        }
        let t = Instant::now();
        e.refresh("manual").unwrap();
        times.push(t.elapsed());
    }
    let refresh = report("mnemon full refresh", times);
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let all = m
            .store()
            .operations(&OperationQuery {
                session_id: Some(session.id.clone()),
                ..OperationQuery::default()
            })
            .unwrap();
        let doc: String = all
            .iter()
            .rev()
            .map(|o| format!("### {}\n{}\n\n", o.kind, o.data))
            .collect();
        let _ = counter.count(&doc);
        conn.execute(
            "INSERT INTO checkpoints (thread, checkpoint) VALUES ('doc', ?1)",
            [doc],
        )
        .unwrap();
        times.push(t.elapsed());
    }
    let naive = report("baseline naive refresh (whole log)", times);
    println!(
        "refresh p95 ratio mnemon / baseline: {:.2}",
        refresh.as_secs_f64() / naive.as_secs_f64()
    );

    // Compression of a 40,000-token session log.
    let mut items = Vec::new();
    let mut i = 0;
    while verbatim_tokens(&items, &counter) < 40_000 {
        for _ in 0..50 {
            let o = op(i);
            items.push(SourceItem {
                sources: vec![format!("o{i}")],
                order: i as i64,
                text: format!("{}: {}", o.kind, o.data["text"].as_str().unwrap()),
                pinned: o.kind == "decision",
                importance: 0.5,
            });
            i += 1;
        }
    }
    let input = verbatim_tokens(&items, &counter);
    let runs = 10;
    let mut times = Vec::with_capacity(runs);
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        out = Some(
            Extractive::default()
                .summarize(&items, input / 2, &counter)
                .unwrap(),
        );
        times.push(t.elapsed());
    }
    let out = out.unwrap();
    report("extractive compression, 40K log", times);
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let _ = verbatim_tokens(&items, &counter);
        times.push(t.elapsed());
    }
    report("baseline: count the log once", times);
    println!(
        "compression: {} items, {input} → {} tokens, ratio {:.3}; {} pinned kept verbatim, {} summarized, {} dropped, {} near-duplicates",
        items.len(),
        out.tokens,
        out.ratio(),
        items.iter().filter(|i| i.pinned).count(),
        out.audit.summarized.len(),
        out.audit.dropped.len(),
        out.audit.duplicates_removed
    );
}
