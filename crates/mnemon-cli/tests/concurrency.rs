//! Many `mnemon` processes into one fresh project, as agents run them:
//! every write stored once, every command exits 0, and none warns. Exit
//! codes by class of error.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::process::{Command, Stdio};

use common::{json, mnemon};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.env("NO_COLOR", "1");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("MNEMON_")) {
        cmd.env_remove(k);
    }
    cmd
}

#[test]
fn processes_writing_into_a_fresh_project_lose_nothing_and_never_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    common::ok(dir, &["init", "--window", "128000"]);
    assert!(!dir.join(".mnemon/mnemon.db").exists(), "no database yet");
    let procs = 6;
    let each = 20;
    let workers: Vec<_> = (0..procs)
        .map(|p| {
            let dir = dir.to_path_buf();
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                for i in 0..each {
                    let out = bin()
                        .current_dir(&dir)
                        .args([
                            "record",
                            "--type",
                            "conc",
                            "--agent",
                            &format!("a{p}"),
                            "--data",
                            &format!("{{\"p\":{p},\"i\":{i}}}"),
                        ])
                        .output()
                        .unwrap();
                    let err = String::from_utf8_lossy(&out.stderr).to_string();
                    if !out.status.success() || err.contains("warning") {
                        failures.push(format!("{p}/{i}: {:?} {err}", out.status.code()));
                    }
                }
                // A chat session of the same agent, piped, as a script would.
                let mut chat = bin()
                    .current_dir(&dir)
                    .args(["chat", "--json", "--agent", &format!("a{p}")])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                {
                    use std::io::Write;
                    let mut stdin = chat.stdin.take().unwrap();
                    writeln!(stdin, "create a task for worker {p}").unwrap();
                    writeln!(stdin, "/remember worker {p} was here").unwrap();
                }
                let out = chat.wait_with_output().unwrap();
                if !out.status.success() {
                    failures.push(format!(
                        "chat {p}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
                failures
            })
        })
        .collect();
    let failures: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    let all = json(
        dir,
        &["recent", "--type", "conc", "--limit", "100000", "--json"],
    );
    let mut pairs: Vec<(u64, u64)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["data"]["p"].as_u64().unwrap(),
                o["data"]["i"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs.len(), procs * each, "every record stored");
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), procs * each, "none stored twice");
    let hot = json(dir, &["hot", "--json"]);
    let notes = hot.to_string().matches("was here").count();
    assert_eq!(notes, procs, "every remembered note, once: {hot}");
}

#[test]
fn exit_codes_tell_input_storage_and_conflict_apart() {
    let tmp = common::project();
    let d = tmp.path();
    // Input: a bad value.
    let o = mnemon(d, &["record", "--type", "x", "--data", "{not json"]);
    assert_eq!(o.status.code(), Some(1));
    // Usage: clap.
    let o = mnemon(d, &["record"]);
    assert_eq!(o.status.code(), Some(2));
    // Conflict: a stale version.
    let added = json(d, &["goal", "add", "Ship it", "--json"]);
    let id = added["id"].as_str().unwrap();
    common::ok(
        d,
        &[
            "goal",
            "update",
            id,
            "--status",
            "in-progress",
            "--if-version",
            "1",
        ],
    );
    let o = mnemon(d, &["goal", "complete", id, "--if-version", "1"]);
    assert_eq!(o.status.code(), Some(4));
    // Storage: the database is not a database.
    std::fs::write(d.join(".mnemon/mnemon.db"), "plain text, not SQLite").unwrap();
    let o = mnemon(d, &["record", "--type", "x"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a mnemon database"));
}

/// Eight `mnemon init` with different windows in one fresh directory:
/// exactly one creates the project; the others say it exists, with the
/// settings it has, and what is on disk is the creator's.
#[test]
fn concurrent_inits_create_the_project_once() {
    let tmp = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let window = 10_000 + i * 1_000;
            let child = bin()
                .current_dir(tmp.path())
                .args(["init", "--window", &window.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (window, child)
        })
        .collect();
    let mut created = Vec::new();
    for (window, child) in children {
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            created.push(window);
        } else {
            assert_eq!(out.status.code(), Some(1));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("already exists") && err.contains("effective window"),
                "{err}"
            );
        }
    }
    assert_eq!(created.len(), 1, "exactly one init created the project");
    let config = std::fs::read_to_string(tmp.path().join(".mnemon/config.toml")).unwrap();
    assert!(config.contains(&format!("max_tokens = {}", created[0])));
    let stray: Vec<_> = std::fs::read_dir(tmp.path().join(".mnemon"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".new-"))
        .collect();
    assert!(stray.is_empty(), "no temp files left: {stray:?}");
}
