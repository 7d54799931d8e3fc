//! Load on `mnemon serve` over loopback, against a bare axum handler that
//! only writes to SQLite with the same durability (WAL, `synchronous =
//! FULL`), measured in the same run.
//!
//! `cargo bench -p mnemon-server --bench load [-- CLIENTS RECORDS PREFILL]`
//! (default 16 clients × 1,000 records each, after 84,000 prefilled
//! through the same API, so the measured records and contexts run at
//! 100,000 stored operations)
//!
//! The mnemon server runs in a child process (this binary re-run with
//! `--serve DIR`), so its peak RSS is its own, not the clients'.
//!
//! With `MNEMON_BENCH_EMBEDDINGS=DIR` (a sentence-transformers model
//! directory, `scripts/embedding-model.sh` prints one) the project has
//! retrieval by meaning on: the contexts embed their queries and the newest
//! records, and the peak RSS includes the model.
//!
//! Reports: records stored, lost, duplicated and failed; p50/p95/p99 of a
//! record for mnemon and for the bare handler; then p50/p95/p99 of an 8K
//! context with a query over what was stored; and the server's peak RSS.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use common::{load, peak_rss_mib, percentiles};

use axum::routing::post;
use serde_json::{Value, json};

/// The baseline: one insert per request into a WAL database with the same
/// durability, on the blocking pool, nothing else.
async fn bare_server(path: std::path::PathBuf) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         CREATE TABLE ops (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, data TEXT NOT NULL);",
    )
    .unwrap();
    let conn = Arc::new(Mutex::new(conn));
    let app = axum::Router::new().route(
        "/bare",
        post(move |axum::Json(v): axum::Json<Value>| {
            let conn = Arc::clone(&conn);
            async move {
                tokio::task::spawn_blocking(move || {
                    let c = conn.lock().unwrap();
                    c.execute(
                        "INSERT INTO ops (kind, data) VALUES (?1, ?2)",
                        rusqlite::params![v["type"].as_str().unwrap_or(""), v["data"].to_string()],
                    )
                    .unwrap();
                    let id = c.last_insert_rowid();
                    (
                        axum::http::StatusCode::CREATED,
                        axum::Json(json!({"id": id})),
                    )
                })
                .await
                .unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn main() {
    mnemon::mnemon_llm::ensure_crypto();
    if common::serve_if_asked() {
        return;
    }
    let raw: Vec<String> = std::env::args().collect();
    let args: Vec<usize> = raw.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    let clients = args.first().copied().unwrap_or(16);
    let each = args.get(1).copied().unwrap_or(1_000);
    let prefill = args.get(2).copied().unwrap_or(84_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let dir = tempfile::tempdir().unwrap();
        mnemon::init(
            dir.path(),
            &mnemon::InitOptions {
                model: Some("gpt-4o".into()),
                window: None,
            },
        )
        .unwrap();
        if let Ok(model) = std::env::var("MNEMON_BENCH_EMBEDDINGS") {
            let config = dir.path().join(".mnemon").join("config.toml");
            let mut text = std::fs::read_to_string(&config).unwrap();
            text.push_str(&format!("\n[embeddings]\nprovider = \"local\"\npath = {model:?}\n"));
            std::fs::write(&config, text).unwrap();
        }
        let token =
            mnemon_server::create_token(dir.path(), "default", "2025-01-15T14:30:00Z").unwrap();
        let (mut child, base) = common::spawn_server(dir.path(), None);
        let server_pid = child.id();
        let bare = bare_server(dir.path().join("bare.db")).await;

        // Up to the size the figures are asked at, through the same API.
        if prefill > 0 {
            let t0 = Instant::now();
            let per = prefill.div_ceil(clients);
            let (_, failed) = load(
                format!("{base}/v1/projects/default/operations"),
                Some(token.clone()),
                clients,
                1_000_000..1_000_000 + per,
            )
            .await;
            assert_eq!(failed, 0);
            println!(
                "prefilled {} operations in {:.1} s",
                per * clients,
                t0.elapsed().as_secs_f64()
            );
        }
        // One client alone: the latency of a record when nothing queues.
        let mut one_m = Vec::new();
        let mut one_b = Vec::new();
        for round in 0..4 {
            let range = 2_000_000 + round * 100..2_000_000 + (round + 1) * 100;
            let (l, f) = load(
                format!("{base}/v1/projects/default/operations"),
                Some(token.clone()),
                1,
                range.clone(),
            )
            .await;
            assert_eq!(f, 0);
            one_m.extend(l);
            let (l, f) = load(format!("{bare}/bare"), None, 1, range).await;
            assert_eq!(f, 0);
            one_b.extend(l);
        }
        let (o50, o95, o99) = percentiles(one_m);
        let (ob50, ob95, ob99) = percentiles(one_b);
        println!(
            "one client, record latency ms p50/p95/p99: mnemon {o50:.2}/{o95:.2}/{o99:.2}, bare SQLite handler {ob50:.2}/{ob95:.2}/{ob99:.2} (p95 ratio {:.2}x)",
            o95 / ob95
        );

        // Alternate halves so that neither side gets the quieter machine.
        let half = each / 2;
        let started = Instant::now();
        let (mut m_lat, mut m_failed) = load(
            format!("{base}/v1/projects/default/operations"),
            Some(token.clone()),
            clients,
            0..half,
        )
        .await;
        let (mut b_lat, mut b_failed) = load(format!("{bare}/bare"), None, clients, 0..half).await;
        let (l, f) = load(
            format!("{base}/v1/projects/default/operations"),
            Some(token.clone()),
            clients,
            half..each,
        )
        .await;
        m_lat.extend(l);
        m_failed += f;
        let (l, f) = load(format!("{bare}/bare"), None, clients, half..each).await;
        b_lat.extend(l);
        b_failed += f;
        let elapsed = started.elapsed().as_secs_f64();

        let m = mnemon::Mnemon::open(dir.path()).unwrap();
        let (total, unique, duplicated) = common::stored(&m);
        let (p50, p95, p99) = percentiles(m_lat);
        let (b50, b95, b99) = percentiles(b_lat);
        println!(
            "records: {clients} clients x {each}: {} of {} stored, {} duplicated, {m_failed} failed (bare: {b_failed} failed), {elapsed:.1} s",
            unique,
            clients * each,
            duplicated
        );
        println!(
            "record latency ms p50/p95/p99: mnemon {p50:.2}/{p95:.2}/{p99:.2}, bare SQLite handler {b50:.2}/{b95:.2}/{b99:.2} (p95 ratio {:.2}x)",
            p95 / b95
        );

        let http = reqwest::Client::new();
        let queries = ["parser work", "client 3", "step 500", "finished", "step 17 of client 9"];
        let mut c_lat = Vec::new();
        for round in 0..60 {
            let t0 = Instant::now();
            let r = http
                .post(format!("{base}/v1/projects/default/context"))
                .bearer_auth(&token)
                .json(&json!({"budget": 8000, "query": queries[round % queries.len()], "agent": "client-0"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 200);
            let _ = r.bytes().await;
            if round >= 10 {
                c_lat.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        let (c50, c95, c99) = percentiles(c_lat);
        println!(
            "context (8K, a query) over {total} stored operations, ms p50/p95/p99: {c50:.2}/{c95:.2}/{c99:.2}; server peak RSS {:.1} MiB (its own process)",
            peak_rss_mib(server_pid)
        );
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &server_pid.to_string()])
            .status();
        let _ = child.wait();
    });
}
