//! `mnemon serve` and `mnemon token create` as a user runs them: no server
//! before a token exists, the token on the last line, a request answered,
//! and a clean stop on SIGTERM.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::io::{Read, Write};

fn http(addr: &str, request: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// `POST /v1/projects/default/operations` with `body`, over raw HTTP.
fn post_operation(addr: &str, token: &str, body: &str) -> String {
    http(
        addr,
        &format!(
            "POST /v1/projects/default/operations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

#[test]
fn serve_needs_a_token_then_answers_and_stops_on_sigterm() {
    let tmp = common::project();
    let d = tmp.path();
    let o = common::mnemon(d, &["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("mnemon token create"));

    let out = common::ok(d, &["token", "create", "--project", "default"]);
    let token = out.lines().last().unwrap().trim().to_string();
    assert!(token.starts_with("mnm_") && token.len() > 40, "{token}");

    let server = common::serve(d);
    let addr = server.addr.clone();
    // It started again with two glibc arenas (the server's memory).
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        let environ = std::fs::read(format!("/proc/{}/environ", server.child.id())).unwrap();
        assert!(
            environ
                .split(|b| *b == 0)
                .any(|v| v == b"MALLOC_ARENA_MAX=2"),
            "the server's environment"
        );
    }

    let health = http(
        &addr,
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let denied = http(
        &addr,
        "GET /v1/projects/default/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(denied.starts_with("HTTP/1.1 401"), "{denied}");
    let body = r#"{"type":"task_execution","data":{"task":1}}"#;
    let created = post_operation(&addr, &token, body);
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");

    assert!(server.stop(), "a graceful stop");
    let recent = common::json(d, &["recent", "--json"]);
    assert_eq!(
        recent[0]["kind"], "task_execution",
        "the write is in the project"
    );
}

/// Server clients and `mnemon record` processes write into one project at
/// the same time: every record is stored once, none is reported failed.
#[test]
fn server_clients_and_cli_processes_write_together_and_lose_nothing() {
    let tmp = common::project();
    let d = tmp.path().to_path_buf();
    let token = common::token(&d, "default");
    let server = common::serve(&d);
    let addr = server.addr.clone();

    const EACH: usize = 20;
    let mut threads = Vec::new();
    for c in 0..4 {
        let (addr, token) = (addr.clone(), token.clone());
        threads.push(std::thread::spawn(move || {
            for i in 0..EACH {
                let body = format!(
                    r#"{{"type":"mixed","agent":"http-{c}","data":{{"who":"http-{c}","i":{i}}}}}"#
                );
                let answer = post_operation(&addr, &token, &body);
                assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
            }
        }));
    }
    for c in 0..4 {
        let d = d.clone();
        threads.push(std::thread::spawn(move || {
            for i in 0..EACH {
                let data = format!(r#"{{"who":"cli-{c}","i":{i}}}"#);
                let agent = format!("cli-{c}");
                let o = common::mnemon(
                    &d,
                    &[
                        "record", "--type", "mixed", "--data", &data, "--agent", &agent,
                    ],
                );
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    assert!(server.stop(), "a graceful stop");

    let recent = common::json(
        &d,
        &["recent", "--type", "mixed", "--limit", "1000", "--json"],
    );
    let mut seen: Vec<(String, u64)> = recent
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["data"]["who"].as_str().unwrap().to_string(),
                o["data"]["i"].as_u64().unwrap(),
            )
        })
        .collect();
    let all = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(all, seen.len(), "nothing stored twice");
    // Per writer, so a failure says whose acknowledged writes are missing.
    let mut per_writer = std::collections::BTreeMap::new();
    for (who, _) in &seen {
        *per_writer.entry(who.clone()).or_insert(0usize) += 1;
    }
    assert_eq!(
        seen.len(),
        8 * EACH,
        "every record stored; per writer: {per_writer:?}"
    );
}
