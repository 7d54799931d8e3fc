//! `mnemon serve` and `mnemon token create` as a user runs them: no server
//! before a token exists, the token on the last line, a request answered,
//! and a clean stop on SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

fn http(addr: &str, request: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
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

    let mut server = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(d)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("the address it listens on")
        .to_string();

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
    let created = http(
        &addr,
        &format!(
            "POST /v1/projects/default/operations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(created.starts_with("HTTP/1.1 201"), "{created}");

    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = server.wait().unwrap();
    assert!(status.success(), "a graceful stop: {status:?}");
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
    let out = common::ok(&d, &["token", "create", "--project", "default"]);
    let token = out.lines().last().unwrap().trim().to_string();
    let mut server = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(&d)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_string();

    const EACH: usize = 20;
    let mut threads = Vec::new();
    for c in 0..4 {
        let (addr, token) = (addr.clone(), token.clone());
        threads.push(std::thread::spawn(move || {
            for i in 0..EACH {
                let body = format!(r#"{{"type":"mixed","agent":"http-{c}","data":{{"who":"http-{c}","i":{i}}}}}"#);
                let answer = http(
                    &addr,
                    &format!(
                        "POST /v1/projects/default/operations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    ),
                );
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
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(server.wait().unwrap().success());

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
    assert_eq!(seen.len(), 8 * EACH, "every record stored");
}
