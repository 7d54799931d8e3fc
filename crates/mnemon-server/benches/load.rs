//! Load on `mnemon serve` over loopback, against a bare axum handler that
//! only writes to SQLite with the same durability (WAL, `synchronous =
//! FULL`), measured in the same run.
//!
//! `cargo bench -p mnemon-server --bench load [-- CLIENTS RECORDS]`
//! (default 16 clients × 1,000 records each)
//!
//! Reports: records stored, lost, duplicated and failed; p50/p95/p99 of a
//! record for mnemon and for the bare handler; then p50/p95/p99 of an 8K
//! context with a query over what was stored; and the process's peak RSS.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::routing::post;
use serde_json::{Value, json};

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    (at(0.50), at(0.95), at(0.99))
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

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

/// Fires `clients` × `each` records at `url`; returns latencies (ms) and
/// failures.
async fn load(
    url: String,
    token: Option<String>,
    clients: usize,
    each: std::ops::Range<usize>,
) -> (Vec<f64>, usize) {
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (url, token, each) = (url.clone(), token.clone(), each.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut lat = Vec::with_capacity(each.len());
                let mut failed = 0;
                for i in each {
                    let mut req = http.post(&url).json(&json!({
                        "type": "load",
                        "agent": format!("client-{c}"),
                        "data": {"c": c, "i": i, "result": format!("step {i} of client {c} finished the parser work")}
                    }));
                    if let Some(t) = &token {
                        req = req.bearer_auth(t);
                    }
                    let t0 = Instant::now();
                    match req.send().await {
                        Ok(r) if r.status().as_u16() == 201 => {
                            let _ = r.bytes().await;
                            lat.push(t0.elapsed().as_secs_f64() * 1e3);
                        }
                        _ => failed += 1,
                    }
                }
                (lat, failed)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut failed = 0;
    for t in tasks {
        let (l, f) = t.await.unwrap();
        all.extend(l);
        failed += f;
    }
    (all, failed)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let clients = args.first().copied().unwrap_or(16);
    let each = args.get(1).copied().unwrap_or(1_000);
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
        let token =
            mnemon_server::create_token(dir.path(), "default", "2025-01-15T14:30:00Z").unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let opts = mnemon_server::ServeOptions {
            root: dir.path().to_path_buf(),
            open: mnemon::OpenOptions::new(),
        };
        tokio::spawn(async move {
            mnemon_server::serve(listener, opts, std::future::pending())
                .await
                .unwrap()
        });
        let bare = bare_server(dir.path().join("bare.db")).await;

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
        let ops = m
            .recent(&mnemon::OperationQuery {
                kind: Some("load".into()),
                limit: Some(usize::MAX >> 1),
                ..Default::default()
            })
            .unwrap();
        let mut pairs: Vec<(u64, u64)> = ops
            .iter()
            .map(|o| (o.data["c"].as_u64().unwrap(), o.data["i"].as_u64().unwrap()))
            .collect();
        let stored = pairs.len();
        pairs.sort_unstable();
        pairs.dedup();
        let (p50, p95, p99) = percentiles(m_lat);
        let (b50, b95, b99) = percentiles(b_lat);
        println!(
            "records: {clients} clients x {each}: {} of {} stored, {} duplicated, {m_failed} failed (bare: {b_failed} failed), {elapsed:.1} s",
            pairs.len(),
            clients * each,
            stored - pairs.len()
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
            "context (8K, a query) over {stored} stored operations, ms p50/p95/p99: {c50:.2}/{c95:.2}/{c99:.2}; peak RSS {:.1} MiB (server, clients and baseline in one process)",
            peak_rss_mib()
        );
    });
}
