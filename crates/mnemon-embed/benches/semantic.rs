//! Assembling an 8K-token context with a query at N operations (default
//! 100,000), by words only and fused with retrieval by meaning, in the same
//! run: the price of embeddings, query embedding included.
//!
//! The stored vectors are random unit vectors, one per operation: the
//! scan and the fusion cost the same whatever the vectors say, and
//! embedding 100,000 records with the real model would take most of an
//! hour. The query is embedded by the real all-MiniLM-L6-v2 (the directory
//! `scripts/embedding-model.sh` prints, or `MNEMON_EMBED_MODEL`).
//!
//! Run: `cargo bench -p mnemon-embed --bench semantic [-- 100000]`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

mod support;

use std::sync::Arc;
use std::time::Instant;

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::retrieve::{HitSource, SearchStore};
use mnemon_core::assemble::semantic::{Embedder, Quantized, StoredVector, VectorStore};
use mnemon_core::assemble::{BudgetPlan, Format};
use mnemon_core::engine::ContextRequest;
use mnemon_core::memory::NewOperation;
use mnemon_core::tokens::ChatFormat;
use mnemon_embed::LocalEmbedder;
use mnemon_sqlite::SqliteStore;
use serde_json::json;

/// Words of a project's log, as the assemble bench of mnemon-sqlite uses
/// them: few enough that every query word is in many records.
const WORDS: &[&str] = &[
    "login",
    "schema",
    "cache",
    "latency",
    "email",
    "session",
    "migration",
    "endpoint",
    "deploy",
    "rollback",
    "index",
    "query",
    "retry",
    "timeout",
    "billing",
    "invoice",
    "upload",
    "queue",
];

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let words_only = engine(
        SqliteStore::open(&path).unwrap(),
        128_000,
        SteppingClock::starting(T0),
        "bench",
    );
    let m = words_only.memory();
    let t = Instant::now();
    let mut seed = 42u64;
    for i in 0..n {
        if i % 2_000 == 0 {
            m.start_session(None).unwrap();
        }
        let w = |s: &mut u64| WORDS[lcg(s) as usize % WORDS.len()];
        let text = format!(
            "Step {i}: fixed the {} {} after the {} failed; reran the {} tests.",
            w(&mut seed),
            w(&mut seed),
            w(&mut seed),
            w(&mut seed)
        );
        m.record(NewOperation {
            kind: "task_execution".into(),
            data: json!({ "text": text }),
            status: Some("completed".into()),
            ..NewOperation::default()
        })
        .unwrap();
    }
    let store = m.store();
    let model: Arc<dyn Embedder> =
        Arc::new(LocalEmbedder::open(&support::model_dir(), None).unwrap());
    let last = store.last_row(HitSource::Operation).unwrap() as i64;
    let mut batch = Vec::new();
    for row in 1..=last {
        let v: Vec<f32> = (0..384)
            .map(|_| lcg(&mut seed) as f32 / (1u64 << 31) as f32 - 0.5)
            .collect();
        batch.push(StoredVector {
            source: HitSource::Operation,
            row,
            chunk: 0,
            vector: Quantized::of(&v),
        });
        if batch.len() == 5_000 {
            store.put_vectors(model.model(), &batch).unwrap();
            batch.clear();
        }
    }
    store.put_vectors(model.model(), &batch).unwrap();
    println!(
        "\n{n} operations and their vectors stored in {:.1?}",
        t.elapsed()
    );
    // As `mnemon` opens a project whose contexts retrieve by meaning.
    let meaning_store = SqliteStore::open(&path).unwrap();
    meaning_store
        .set_page_cache_kib(mnemon_sqlite::MEANING_PAGE_CACHE_KIB)
        .unwrap();
    let with_meaning = engine(meaning_store, 128_000, SteppingClock::starting(T0), "bench")
        .with_embedder(Arc::clone(&model), Arc::default());

    let queries: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "Why did the {} {} fail?",
                WORDS[i % WORDS.len()],
                WORDS[(i * 5) % WORDS.len()]
            )
        })
        .collect();
    let plan = BudgetPlan::preset("tiers").unwrap();
    let budget = 8_000;
    let ask = |e: &mnemon_core::engine::Engine<SqliteStore>, q: &str| {
        let out = e
            .context(&ContextRequest {
                plan: plan.clone(),
                budget: Some(budget),
                query: Some(q.to_string()),
                format: Format::Markdown,
                chat: ChatFormat::OPENAI,
                messages_before: None,
            })
            .unwrap();
        assert!(out.tokens <= budget);
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    };
    // Warm-up: caches, and the first call of the fused engine loads every
    // stored vector into memory (once per process).
    let t = Instant::now();
    ask(&with_meaning, "what broke the deploy");
    println!(
        "first fused call (loads {last} vectors): {:.1?}",
        t.elapsed()
    );
    for i in 0..30 {
        ask(
            &words_only,
            &format!("what broke the {}", WORDS[i % WORDS.len()]),
        );
        ask(
            &with_meaning,
            &format!("what broke the {}", WORDS[i % WORDS.len()]),
        );
    }
    let mut words = Vec::new();
    let mut fused = Vec::new();
    let mut embed = Vec::new();
    // Interleaved, so both meet the same machine noise.
    for q in &queries {
        let t = Instant::now();
        ask(&words_only, q);
        words.push(t.elapsed());
        let t = Instant::now();
        ask(&with_meaning, q);
        fused.push(t.elapsed());
        let t = Instant::now();
        model.embed_query(q).unwrap();
        embed.push(t.elapsed());
    }
    let w = support::report("context 8K, words only", words);
    let f = support::report("context 8K, words and meaning fused", fused);
    support::report("  of which embedding the query", embed);
    println!(
        "p95 ratio: fused / words only {:.2}",
        f.as_secs_f64() / w.as_secs_f64()
    );
}
