//! `mnemon serve` on PostgreSQL against `mnemon serve` on SQLite, in the
//! same run, at the same size.
//!
//! `cargo bench -p mnemon-server --bench backends [-- CLIENTS RECORDS PREFILL]`
//! (default 16 clients × 1,000 records each, after 84,000 prefilled, so
//! the measured records and contexts run at 100,000 stored operations).
//!
//! The SQLite project is prefilled through the API; `mnemon migrate --to`
//! then copies it into a throwaway PostgreSQL cluster (fsync on, loopback),
//! so both servers start from the same rows. Each phase alternates between
//! the two so that neither gets the quieter machine. Both servers run in
//! child processes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

mod common;

use std::time::Instant;

use common::{load, peak_rss_mib, percentiles};
use serde_json::json;

fn project(dir: &std::path::Path) -> String {
    mnemon::init(
        dir,
        &mnemon::InitOptions {
            model: Some("gpt-4o".into()),
            window: None,
        },
    )
    .unwrap();
    mnemon_server::create_token(dir, "default", "2025-01-15T14:30:00Z").unwrap()
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
    let cluster = mnemon_postgres::Cluster::start_with(mnemon_postgres::ClusterOptions {
        fsync: true,
        ..Default::default()
    })
    .unwrap();
    let url = cluster.url();
    let log_file = cluster.log_file();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let lite_dir = tempfile::tempdir().unwrap();
        let pg_dir = tempfile::tempdir().unwrap();
        let lite_token = project(lite_dir.path());
        let pg_token = project(pg_dir.path());
        let (mut lite_child, lite) = common::spawn_server(lite_dir.path(), None);
        let lite_ops = format!("{lite}/v1/projects/default/operations");

        if prefill > 0 {
            let t0 = Instant::now();
            let per = prefill.div_ceil(clients);
            let (_, failed) = load(
                lite_ops.clone(),
                Some(lite_token.clone()),
                clients,
                1_000_000..1_000_000 + per,
            )
            .await;
            assert_eq!(failed, 0);
            println!(
                "prefilled {} operations into SQLite in {:.1} s",
                per * clients,
                t0.elapsed().as_secs_f64()
            );
        }
        let t0 = Instant::now();
        let moved = mnemon::Mnemon::open(lite_dir.path())
            .unwrap()
            .migrate_to(&url, None)
            .unwrap();
        println!(
            "mnemon migrate --to copied {} rows in {:.1} s, every table checked",
            moved.tables.iter().map(|t| t.rows).sum::<u64>(),
            t0.elapsed().as_secs_f64()
        );
        if std::env::var_os("MNEMON_BENCH_PG_LOG").is_some() {
            // Every statement's duration from here on, for finding where
            // PostgreSQL's time goes (this slows the run).
            let s = mnemon_postgres::PgStore::open(&url).unwrap();
            let db = s.db().unwrap();
            db.batch("ALTER SYSTEM SET log_min_duration_statement = 0")
                .unwrap();
            db.batch("SELECT pg_reload_conf()").unwrap();
            println!("statements logged to {}", log_file.display());
        }
        let (mut pg_child, pg) = common::spawn_server(pg_dir.path(), Some(&url));
        let pg_ops = format!("{pg}/v1/projects/default/operations");

        let mut one_l = Vec::new();
        let mut one_p = Vec::new();
        for round in 0..4 {
            let range = 2_000_000 + round * 100..2_000_000 + (round + 1) * 100;
            let (l, f) = load(lite_ops.clone(), Some(lite_token.clone()), 1, range.clone()).await;
            assert_eq!(f, 0);
            one_l.extend(l);
            let (l, f) = load(pg_ops.clone(), Some(pg_token.clone()), 1, range).await;
            assert_eq!(f, 0);
            one_p.extend(l);
        }
        let (l50, l95, l99) = percentiles(one_l);
        let (p50, p95, p99) = percentiles(one_p);
        println!(
            "one client, record ms p50/p95/p99: SQLite {l50:.2}/{l95:.2}/{l99:.2}, PostgreSQL {p50:.2}/{p95:.2}/{p99:.2} (p95 ratio {:.2}x)",
            p95 / l95
        );

        let half = each / 2;
        let mut l_lat = Vec::new();
        let mut p_lat = Vec::new();
        let mut failed = (0, 0);
        for range in [0..half, half..each] {
            let (l, f) = load(lite_ops.clone(), Some(lite_token.clone()), clients, range.clone()).await;
            l_lat.extend(l);
            failed.0 += f;
            let (l, f) = load(pg_ops.clone(), Some(pg_token.clone()), clients, range).await;
            p_lat.extend(l);
            failed.1 += f;
        }
        let (l50, l95, l99) = percentiles(l_lat);
        let (p50, p95, p99) = percentiles(p_lat);
        println!(
            "{clients} clients x {each}, record ms p50/p95/p99: SQLite {l50:.2}/{l95:.2}/{l99:.2}, PostgreSQL {p50:.2}/{p95:.2}/{p99:.2} (p95 ratio {:.2}x); failed {} / {}",
            p95 / l95,
            failed.0,
            failed.1
        );

        let http = reqwest::Client::new();
        let queries = ["parser work", "client 3", "step 500", "finished", "step 17 of client 9"];
        let mut c_l = Vec::new();
        let mut c_p = Vec::new();
        for round in 0..210 {
            for (base, token, out) in [(&lite, &lite_token, &mut c_l), (&pg, &pg_token, &mut c_p)] {
                let t0 = Instant::now();
                let r = http
                    .post(format!("{base}/v1/projects/default/context"))
                    .bearer_auth(token)
                    .json(&json!({"budget": 8000, "query": queries[round % queries.len()], "agent": "client-0"}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 200);
                let _ = r.bytes().await;
                if round >= 10 {
                    out.push(t0.elapsed().as_secs_f64() * 1e3);
                }
            }
        }
        let (l50, l95, l99) = percentiles(c_l);
        let (p50, p95, p99) = percentiles(c_p);
        println!(
            "context (8K, a query), ms p50/p95/p99: SQLite {l50:.2}/{l95:.2}/{l99:.2}, PostgreSQL {p50:.2}/{p95:.2}/{p99:.2} (p95 ratio {:.2}x)",
            p95 / l95
        );
        println!(
            "server peak RSS: SQLite {:.1} MiB, PostgreSQL {:.1} MiB (mnemon's process, not the database's)",
            peak_rss_mib(lite_child.id()),
            peak_rss_mib(pg_child.id())
        );
        for c in [&mut lite_child, &mut pg_child] {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let _ = c.wait();
        }
        let lite_m = mnemon::Mnemon::open(lite_dir.path()).unwrap();
        let pg_m = mnemon::OpenOptions::new()
            .environment(mnemon::Environment::empty().with("MNEMON_STORAGE__URL", &url))
            .open(pg_dir.path())
            .unwrap();
        let (_, ls, ld) = common::stored(&lite_m);
        let (_, ps, pd) = common::stored(&pg_m);
        println!(
            "stored of {}: SQLite {ls} ({ld} duplicated), PostgreSQL {ps} ({pd} duplicated)",
            clients * each
        );
        if std::env::var_os("MNEMON_BENCH_PG_LOG").is_some() {
            let kept = std::env::temp_dir().join("mnemon-backends-postgres.log");
            std::fs::copy(&log_file, &kept).unwrap();
            println!("statement log copied to {}", kept.display());
        }
    });
}
