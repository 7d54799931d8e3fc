//! The latency of `record` and of an 8K `context` with a query, called
//! from Rust: the baseline `crates/mnemon-py/bench/verbs.py` compares the
//! Python package's calls with (`scripts/python-calls.sh` runs both).
//!
//! `cargo run --release -p mnemon --example verb_latency -- DIR FILL RECORDS CONTEXTS`
//! records FILL operations untimed into the project at DIR (made by
//! `mnemon init`), then times RECORDS records and CONTEXTS contexts, and
//! prints each call's microseconds as JSON.

use std::time::Instant;

use mnemon::{ContextQuery, Mnemon, NewOperation};
use serde_json::json;

fn op(i: usize) -> NewOperation {
    NewOperation::new(
        "task_execution",
        json!({"task": i, "result": format!("step {i}: the parser handles case {} of the grammar", i % 97)}),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, fill, records, contexts] = args.as_slice() else {
        return Err("usage: verb_latency DIR FILL RECORDS CONTEXTS".into());
    };
    let (fill, records, contexts): (usize, usize, usize) =
        (fill.parse()?, records.parse()?, contexts.parse()?);
    let m = Mnemon::open(dir)?;
    for i in 0..fill {
        m.record(op(i))?;
    }
    let mut rec = Vec::with_capacity(records);
    for i in 0..records {
        let t = Instant::now();
        m.record(op(fill + i))?;
        rec.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let mut ctx = Vec::with_capacity(contexts);
    for i in 0..contexts {
        let q = ContextQuery {
            budget: Some(8000),
            query: Some(format!(
                "which case of the grammar did step {} handle",
                i * 7
            )),
            ..ContextQuery::default()
        };
        let t = Instant::now();
        let c = m.context(&q)?;
        ctx.push(t.elapsed().as_secs_f64() * 1e6);
        assert!(c.tokens <= 8000);
    }
    println!("{}", json!({"record": rec, "context": ctx}));
    Ok(())
}
