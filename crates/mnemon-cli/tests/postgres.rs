//! Two `mnemon serve` processes, as on two machines (each its own project
//! directory and tokens), sharing one PostgreSQL database: every record of
//! every client is stored once, entity numbers are unique and gapless, and
//! the CLI on either machine reads what both wrote.
//!
//! The database is a throwaway cluster from the machine's PostgreSQL
//! binaries (skipped without them unless MNEMON_REQUIRE_POSTGRES is set).
//! MNEMON_PG_LOAD=CLIENTSxRECORDS runs it at another size: the issue's load
//! test is `MNEMON_PG_LOAD=8x1000`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mnemon_postgres::{Cluster, ClusterError, ClusterOptions, PgStore};

fn cluster() -> Option<Cluster> {
    match Cluster::start_with(ClusterOptions {
        fsync: true,
        ..ClusterOptions::default()
    }) {
        Ok(c) => Some(c),
        Err(ClusterError::NoBinaries) if std::env::var_os("MNEMON_REQUIRE_POSTGRES").is_none() => {
            eprintln!("skipped: no PostgreSQL binaries on this machine");
            None
        }
        Err(e) => panic!("cannot start a throwaway PostgreSQL cluster: {e}"),
    }
}

fn post(addr: &str, token: &str, path: &str, body: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(
        format!(
            "POST /v1/projects/default/{path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// `mnemon serve --database URL` in `dir`, with its address.
fn serve(dir: &Path, url: &str) -> common::Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database", url])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("MNEMON_STORAGE__URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    common::Served { child, addr }
}

fn size() -> (usize, usize) {
    std::env::var("MNEMON_PG_LOAD")
        .ok()
        .and_then(|v| {
            let (c, n) = v.split_once('x')?;
            Some((c.parse().ok()?, n.parse().ok()?))
        })
        .unwrap_or((4, 60))
}

fn p(sorted: &[Duration], q: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e3
}

#[test]
fn two_servers_on_one_postgres_lose_nothing_and_number_entities_without_gaps() {
    let Some(cluster) = cluster() else { return };
    let url = cluster.create_database("shared").unwrap();
    let (clients, each) = size();

    let machines: Vec<tempfile::TempDir> = (0..2).map(|_| common::project()).collect();
    let tokens: Vec<String> = machines
        .iter()
        .map(|m| common::token(m.path(), "default"))
        .collect();
    let servers: Vec<common::Served> = machines.iter().map(|m| serve(m.path(), &url)).collect();

    let started = Instant::now();
    let mut threads = Vec::new();
    for (s, server) in servers.iter().enumerate() {
        for c in 0..clients {
            let (addr, token) = (server.addr.clone(), tokens[s].clone());
            threads.push(std::thread::spawn(move || {
                let mut took = Vec::with_capacity(each);
                let mut entities = 0;
                for i in 0..each {
                    let body = format!(
                        r#"{{"type":"load","agent":"s{s}c{c}","data":{{"s":{s},"c":{c},"i":{i}}}}}"#
                    );
                    let t = Instant::now();
                    let answer = post(&addr, &token, "operations", &body);
                    took.push(t.elapsed());
                    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
                    if i % 10 == 0 {
                        let body = format!(r#"{{"kind":"task","title":"task {s}-{c}-{i}"}}"#);
                        let answer = post(&addr, &token, "entities", &body);
                        assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
                        entities += 1;
                    }
                }
                (took, entities)
            }));
        }
    }
    let mut took = Vec::new();
    let mut entities = 0;
    for t in threads {
        let (d, e) = t.join().unwrap();
        took.extend(d);
        entities += e;
    }
    let wall = started.elapsed();
    for s in servers {
        assert!(s.stop(), "a graceful stop");
    }
    took.sort();
    eprintln!(
        "2 servers x {clients} clients x {each} records: {:.1} s, record p50 {:.2} ms, p95 {:.2} ms, {:.0} records/s",
        wall.as_secs_f64(),
        p(&took, 0.5),
        p(&took, 0.95),
        took.len() as f64 / wall.as_secs_f64()
    );

    let store = PgStore::open(&url).unwrap();
    let db = store.db().unwrap();
    let stored: i64 = db
        .one("SELECT count(*) FROM operations WHERE kind = 'load'", &[])
        .unwrap()
        .get(0);
    let distinct: i64 = db
        .one(
            "SELECT count(DISTINCT data) FROM operations WHERE kind = 'load'",
            &[],
        )
        .unwrap()
        .get(0);
    let expected = (2 * clients * each) as i64;
    assert_eq!(stored, expected, "every record stored");
    assert_eq!(distinct, expected, "none stored twice");
    let numbers: Vec<i64> = db
        .query("SELECT number FROM entities ORDER BY number", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        numbers,
        (1..=entities as i64).collect::<Vec<_>>(),
        "entity numbers unique and gapless"
    );

    // The CLI of either machine reads the shared memory.
    for m in &machines {
        let out = Command::new(env!("CARGO_BIN_EXE_mnemon"))
            .args(["recent", "--type", "load", "--limit", "3", "--json"])
            .current_dir(m.path())
            .env("MNEMON_STORAGE__URL", &url)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
    }
}

/// `mnemon` in `dir` with a fixed clock and, when given, the PostgreSQL
/// store `url` (schema `schema`) instead of the project's SQLite file.
fn run(dir: &Path, pg: Option<(&str, &str)>, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("MNEMON_NOW", "2025-01-15T14:30:00Z")
        .env_remove("MNEMON_STORAGE__URL")
        .env_remove("MNEMON_STORAGE__SCHEMA");
    if let Some((url, schema)) = pg {
        cmd.env("MNEMON_STORAGE__URL", url)
            .env("MNEMON_STORAGE__SCHEMA", schema);
    }
    cmd.output().unwrap()
}

fn ok(dir: &Path, pg: Option<(&str, &str)>, args: &[&str]) -> String {
    let o = run(dir, pg, args);
    assert!(
        o.status.success(),
        "mnemon {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn migrate_copies_a_project_that_then_answers_the_same_on_postgres() {
    let Some(cluster) = cluster() else { return };
    let url = cluster.url();
    let tmp = common::project();
    let d = tmp.path();
    for i in 0..25 {
        let data =
            format!(r#"{{"text":"build {i} hashed passwords with argon2 on host kestrel"}}"#);
        ok(d, None, &["record", "--type", "note", "--data", &data]);
    }
    ok(
        d,
        None,
        &[
            "message",
            "--role",
            "user",
            "remember the deploy freeze on Fridays",
        ],
    );
    ok(d, None, &["goal", "add", "Ship the kestrel migration"]);
    ok(d, None, &["remember", "the vault code is 7421"]);
    ok(
        d,
        None,
        &[
            "decision",
            "add",
            "--title",
            "Use argon2id",
            "--context",
            "bcrypt is slow to tune",
            "--decision",
            "argon2id with 64 MiB",
        ],
    );
    std::fs::write(
        d.join("plan.txt"),
        "create an epic called Billing with 3 stories\n",
    )
    .unwrap();
    ok(d, None, &["chat", "--script", "plan.txt"]);
    ok(d, None, &["checkpoint", "create"]);
    ok(d, None, &["refresh"]);
    ok(d, None, &["forget", "--matching", "vault code"]);

    let out: serde_json::Value = serde_json::from_str(&ok(
        d,
        None,
        &["migrate", "--to", &url, "--schema", "moved", "--json"],
    ))
    .unwrap();
    let rows: u64 = out["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rows"].as_u64().unwrap())
        .sum();
    assert!(rows > 40, "{out}");
    assert!(!out["target"].as_str().unwrap().contains("password"));

    // Every read answers byte for byte as it did from SQLite.
    let pg = Some((url.as_str(), "moved"));
    for args in [
        &["recent", "--limit", "100", "--json"][..],
        &[
            "context",
            "--query",
            "what hashes passwords on kestrel",
            "--budget",
            "500",
        ],
        &["status", "--json"],
        &["checkpoint", "list", "--json"],
        &["session", "list", "--json"],
        &["hot", "--json"],
        &["decision", "list", "--json"],
        &["doc", "show", "work_plan"],
    ] {
        assert_eq!(ok(d, None, args), ok(d, pg, args), "mnemon {args:?}");
    }
    // Search: the same hits in the same order with the same scores. The
    // raw index score of the small indexes (decisions, hot context,
    // documents) is each backend's own: FTS5's BM25 on SQLite, a ranking
    // of its own on PostgreSQL; retrieval uses it only relative to the
    // best of its index. A word with a version in it is searched as a
    // prefix: "argon2" finds the decision on "argon2id".
    let without_raw = |text: String| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for h in v.as_array_mut().unwrap() {
            h.as_object_mut().unwrap().remove("bm25");
        }
        v
    };
    for word in ["argon2", "kestrel"] {
        let args = &["search", word, "--json"][..];
        let here = without_raw(ok(d, None, args));
        assert_eq!(here, without_raw(ok(d, pg, args)), "mnemon {args:?}");
        if word == "argon2" {
            assert!(here.to_string().contains("DR-"), "the decision: {here}");
        }
    }
    // The copy goes on where the original stopped: new positions follow.
    let next: serde_json::Value = serde_json::from_str(&ok(
        d,
        pg,
        &[
            "record",
            "--type",
            "note",
            "--data",
            r#"{"text":"after"}"#,
            "--json",
        ],
    ))
    .unwrap();
    let last: serde_json::Value =
        serde_json::from_str(&ok(d, None, &["recent", "--limit", "1", "--json"])).unwrap();
    assert!(
        next["seq"].as_i64().unwrap() > last[0]["seq"].as_i64().unwrap(),
        "{next}"
    );

    // A target that holds memory is never written over.
    let again = run(d, None, &["migrate", "--to", &url, "--schema", "moved"]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already holds memory"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// `post`, but an error (the server is gone) is `None` instead of a panic.
fn try_post(addr: &str, token: &str, path: &str, body: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.write_all(
        format!(
            "POST /v1/projects/default/{path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

/// A server killed (SIGKILL) in the middle of a burst of writes loses none
/// it acknowledged, and a server started again on the database goes on.
#[test]
fn a_killed_server_loses_no_acknowledged_write() {
    use std::sync::{Arc, Mutex};
    let Some(cluster) = cluster() else { return };
    let url = cluster.create_database("killed").unwrap();
    let tmp = common::project();
    let token = common::token(tmp.path(), "default");
    let mut server = serve(tmp.path(), &url);
    let acked: Arc<Mutex<Vec<(usize, usize)>>> = Arc::default();
    let threads: Vec<_> = (0..4)
        .map(|c| {
            let (addr, token, acked) = (server.addr.clone(), token.clone(), Arc::clone(&acked));
            std::thread::spawn(move || {
                for i in 0..100_000 {
                    let body =
                        format!(r#"{{"type":"kill","agent":"k{c}","data":{{"c":{c},"i":{i}}}}}"#);
                    match try_post(&addr, &token, "operations", &body) {
                        Some(a) if a.starts_with("HTTP/1.1 201") => {
                            acked.lock().unwrap().push((c, i))
                        }
                        _ => return,
                    }
                }
            })
        })
        .collect();
    while acked.lock().unwrap().len() < 150 {
        std::thread::sleep(Duration::from_millis(5));
    }
    server.child.kill().unwrap();
    let _ = server.child.wait();
    for t in threads {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();

    let store = PgStore::open(&url).unwrap();
    let stored: std::collections::HashSet<(usize, usize)> = store
        .db()
        .unwrap()
        .query("SELECT data FROM operations WHERE kind = 'kill'", &[])
        .unwrap()
        .iter()
        .map(|r| {
            let v: serde_json::Value = serde_json::from_str(&r.get::<_, String>(0)).unwrap();
            (
                v["c"].as_u64().unwrap() as usize,
                v["i"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let lost: Vec<_> = acked.iter().filter(|k| !stored.contains(k)).collect();
    assert!(lost.is_empty(), "acknowledged but not stored: {lost:?}");
    eprintln!(
        "{} acknowledged before SIGKILL, {} stored (a write may commit as its answer is cut off)",
        acked.len(),
        stored.len()
    );

    // Nothing was left holding the project's write lock.
    let again = serve(tmp.path(), &url);
    let answer = post(
        &again.addr,
        &token,
        "operations",
        r#"{"type":"kill","data":{"after":true}}"#,
    );
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(again.stop(), "a graceful stop");
}
