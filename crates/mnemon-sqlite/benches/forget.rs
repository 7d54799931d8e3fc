//! Forgetting at 100,000 stored operations: one record by position, and a
//! phrase held by a few records (`--matching`, which reads every record),
//! against the durable `record` of one operation measured in the same run.
//! The store has 100 sessions, their compactions and 50 checkpoints, which
//! forgetting reads and cleans, and a vector per operation, which goes with
//! a forgotten one.
//!
//! Run: `cargo bench -p mnemon-sqlite --bench forget [-- N]` (N defaults to 100000).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::time::Instant;

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::retrieve::HitSource;
use mnemon_core::assemble::semantic::{Quantized, StoredVector, VectorStore};
use mnemon_core::engine::forget::ForgetTarget;
use mnemon_core::memory::NewOperation;
use mnemon_sqlite::SqliteStore;
use serde_json::json;

#[path = "support.rs"]
mod support;
use support::report;

fn op(i: usize) -> NewOperation {
    let text = if i % 10_000 == 7 {
        format!("step {i}: the courier code for the loading dock is 5531")
    } else {
        format!("step {i}: reran the billing tests after fixing the retry queue")
    };
    NewOperation {
        kind: "task_execution".into(),
        data: json!({ "text": text }),
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
    let e = engine(
        SqliteStore::open(&dir.path().join("mnemon.db")).unwrap(),
        128_000,
        SteppingClock::starting(T0),
        "bench",
    );
    let m = e.memory();
    let t = Instant::now();
    let mut checkpoints = 0;
    for i in 0..n {
        if i % 1_000 == 0 {
            if i > 0 {
                e.compact(false).unwrap();
                if checkpoints < 50 {
                    e.checkpoint("manual").unwrap();
                    checkpoints += 1;
                }
            }
            m.start_session(None).unwrap();
        }
        m.record(op(i)).unwrap();
    }
    // A vector per operation, as a project with embeddings on keeps: a
    // forgotten record's vectors go with it.
    let mut vectors = Vec::with_capacity(1_000);
    for seq in 1..=n as i64 {
        let values: Vec<f32> = (0..384)
            .map(|d| ((seq * 31 + d) % 97) as f32 - 48.0)
            .collect();
        vectors.push(StoredVector {
            source: HitSource::Operation,
            row: seq,
            chunk: 0,
            vector: Quantized::of(&values),
        });
        if vectors.len() == 1_000 {
            m.store().put_vectors("bench-model", &vectors).unwrap();
            vectors.clear();
        }
    }
    m.store().put_vectors("bench-model", &vectors).unwrap();
    println!(
        "stored {n} operations with a 384-dimension vector each, {} compacted sessions and {checkpoints} checkpoints in {:.1?}",
        n / 1_000,
        t.elapsed()
    );

    let runs = 30;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let t = Instant::now();
        m.record(op(n + i)).unwrap();
        times.push(t.elapsed());
    }
    let record = report("record one operation (baseline)", times);

    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        // Spread over the history, each a different record.
        let seq = 1 + (i as i64 * 3_331) % n as i64;
        let t = Instant::now();
        let f = e.forget(&[ForgetTarget::OperationAt(seq)], false).unwrap();
        times.push(t.elapsed());
        assert_eq!(f.operations, vec![seq]);
    }
    let one = report("forget one operation", times);

    let mut times = Vec::with_capacity(5);
    for _ in 0..5 {
        let t = Instant::now();
        e.forget(
            &[ForgetTarget::matching("reran the billing tests for the loading dock").unwrap()],
            true,
        )
        .unwrap();
        times.push(t.elapsed());
    }
    let scan = report("find a phrase (--matching, dry run)", times);
    let t = Instant::now();
    let f = e
        .forget(
            &[ForgetTarget::matching("courier code for the loading dock").unwrap()],
            false,
        )
        .unwrap();
    println!(
        "forget a phrase held by {} operations: {:.1?}",
        f.operations.len(),
        t.elapsed()
    );
    println!(
        "p95 ratios to one record: forget one {:.1}, find a phrase {:.1}",
        one.as_secs_f64() / record.as_secs_f64(),
        scan.as_secs_f64() / record.as_secs_f64()
    );
}
