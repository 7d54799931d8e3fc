//! The bad-input catalogue: what careless agents and new users pass to
//! `mnemon`, by class. Each case asserts the exit code (no signal), that
//! the message names the problem, that nothing panicked, that the error is
//! short (an input is excerpted, never echoed whole), and, after every
//! case, that a canary written before is intact.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

#[path = "../common/mod.rs"]
mod common;

mod cases;
mod stores;

use cases::{environment, ids, inputs, numbers, sizes, usage};
use stores::{db, freeze, stores};

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Stdio};

struct Case {
    class: &'static str,
    args: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    env: Vec<(OsString, OsString)>,
    code: i32,
    /// Words the message must contain (lowercase), on stderr.
    says: &'static str,
}

fn case(class: &'static str, args: &[&str], code: i32, says: &'static str) -> Case {
    Case {
        class,
        args: args.iter().map(OsString::from).collect(),
        stdin: None,
        env: Vec::new(),
        code,
        says,
    }
}

fn with_stdin(mut c: Case, bytes: Vec<u8>) -> Case {
    c.stdin = Some(bytes);
    c
}

fn with_env(mut c: Case, k: &[u8], v: &[u8]) -> Case {
    c.env.push((
        OsString::from_vec(k.to_vec()),
        OsString::from_vec(v.to_vec()),
    ));
    c
}

/// A message as the snapshot keeps it: the project's path and the ids
/// that change from run to run replaced by names.
fn shown(stderr: &str, dir: &Path) -> String {
    let text = stderr.replace(&dir.display().to_string(), "<project>");
    let uuid =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let text = uuid.replace_all(&text, "<id>");
    let tmp = regex::Regex::new(r"/tmp/\.tmp[A-Za-z0-9]+").unwrap();
    tmp.replace_all(&text, "<tmp>").trim_end().to_string()
}

fn run(dir: &Path, c: &Case) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.args(&c.args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("MNEMON_NOW", "2025-01-15T14:30:00Z")
        .stdin(if c.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars_os().filter(|(k, _)| k.to_string_lossy().starts_with("MNEMON_")) {
        if k != "MNEMON_NOW" {
            cmd.env_remove(k);
        }
    }
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = &c.stdin {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.clone();
        // The reader may stop early (that is the point of a limit).
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// An operation every case checks is still there.
fn record_canary(d: &Path) {
    common::ok(
        d,
        &[
            "record",
            "--type",
            "canary",
            "--data",
            r#"{"text": "CANARY-7731"}"#,
        ],
    );
}

#[test]
fn the_catalogue_of_bad_inputs_is_refused_cleanly_and_the_canary_survives() {
    // A small window, so that large items are larger than it.
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    common::ok(d, &["init", "--window", "8192"]);
    record_canary(d);
    common::ok(d, &["remember", "The canary fact is 7731"]);
    let canary = || {
        let recent = common::json(d, &["recent", "--type", "canary", "--json"]);
        let hot = common::json(d, &["hot", "--json"]);
        recent.to_string().contains("CANARY-7731")
            && hot.to_string().contains("canary fact is 7731")
    };
    assert!(canary());
    // Everything stored: no refused input may change any of it.
    let stored = || {
        let ops = common::json(d, &["recent", "--limit", "100000", "--json"]);
        let hot = common::json(d, &["hot", "--json"]);
        format!("{ops}{hot}")
    };
    let before = stored();

    let mut all = Vec::new();
    all.extend(numbers());
    all.extend(sizes(d));
    all.extend(environment());
    all.extend(inputs(d));
    all.extend(ids());
    all.extend(usage());
    let mut per_class = std::collections::BTreeMap::new();
    let mut report = String::new();
    let started = std::time::Instant::now();
    for (i, c) in all.iter().enumerate() {
        let (code, stderr) = run(d, c);
        let what = format!(
            "case {i} ({}): {:?}",
            c.class,
            c.args
                .iter()
                .map(|a| a.to_string_lossy().chars().take(60).collect::<String>())
                .collect::<Vec<_>>()
        );
        assert_eq!(code, Some(c.code), "{what}: {stderr}");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        assert!(
            stderr.len() < 4_096,
            "{what}: an error of {} bytes",
            stderr.len()
        );
        assert!(
            stderr.to_lowercase().contains(c.says),
            "{what}: the message names the problem ({}): {stderr}",
            c.says
        );
        assert!(canary(), "{what}: the canary is intact");
        *per_class.entry(c.class).or_insert(0) += 1;
        report.push_str(&format!(
            "## {i} {} · exit {}\n{}\n",
            c.class,
            c.code,
            shown(&stderr, d)
        ));
    }
    assert_eq!(stored(), before, "nothing stored changed");
    // What users see, case by case: a change to any message shows here.
    insta::assert_snapshot!("catalogue", report);
    eprintln!(
        "{} cases in {:.1} s: {per_class:?}",
        all.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(all.len() >= 100, "{} cases", all.len());
}

/// A project whose database went missing, empty or foreign refuses to
/// start over silently; `init --force` starts over and keeps the old file.
#[test]
fn a_lost_database_is_refused_until_the_user_starts_over() {
    let tmp = common::project();
    let d = tmp.path();
    common::ok(d, &["record", "--type", "history", "--data", "{}"]);
    let db = d.join(".mnemon/mnemon.db");
    let refused = |what: &str| {
        for args in [&["status"][..], &["recent"], &["record", "--type", "x"]] {
            let o = common::mnemon(d, args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(3), "{what} {args:?}: {err}");
            assert!(err.contains("init --force"), "{what}: {err}");
        }
    };
    // Emptied (a full disk, a bad copy).
    let saved = std::fs::read(&db).unwrap();
    for side in ["mnemon.db-wal", "mnemon.db-shm"] {
        let _ = std::fs::remove_file(d.join(".mnemon").join(side));
    }
    std::fs::write(&db, b"").unwrap();
    refused("empty");
    // Deleted.
    std::fs::remove_file(&db).unwrap();
    refused("missing");
    assert!(!db.exists(), "nothing was created in its place");
    // Another project's database.
    let other = common::project();
    common::ok(
        other.path(),
        &["record", "--type", "elsewhere", "--data", "{}"],
    );
    common::ok(other.path(), &["export"]);
    std::fs::copy(other.path().join(".mnemon/mnemon.db"), &db).unwrap();
    let o = common::mnemon(d, &["status"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("another project"));
    // Put back: it works again, history and all.
    std::fs::write(&db, &saved).unwrap();
    let recent = common::json(d, &["recent", "--json"]);
    assert!(recent.to_string().contains("history"), "{recent}");
    // Starting over is explicit and keeps the old file.
    std::fs::write(&db, b"").unwrap();
    let out = common::ok(d, &["init", "--force"]);
    assert!(out.contains("started over"), "{out}");
    let recent = common::ok(d, &["recent"]);
    assert!(recent.contains("no operations"), "{recent}");
}

/// Stored escape sequences reach a pipe byte for byte (and `--json`
/// escapes them as JSON does); a terminal sees them escaped (unit-tested
/// in `output.rs`, since a test has no terminal).
#[test]
fn stored_control_characters_keep_their_bytes_when_piped() {
    let tmp = common::project();
    let d = tmp.path();
    let evil = "title \u{1b}]0;owned\u{7} clip \u{1b}]52;c;ZXZpbA==\u{7} end";
    common::ok(d, &["remember", evil]);
    let out = common::ok(d, &["hot"]);
    assert!(out.contains(evil), "{out:?}");
    let json = common::json(d, &["hot", "--json"]);
    assert!(json.to_string().contains("\\u001b]0;owned"), "{json}");
}

/// A configuration with a runaway line (deep nesting, a huge value) is
/// refused with the line excerpted, not echoed whole.
#[test]
fn a_runaway_config_line_is_refused_with_an_excerpt() {
    for tail in [
        format!("x = {}{}\n", "[".repeat(5_000), "]".repeat(5_000)),
        format!(
            "[context_window]\nmax_tokens = \"{}\"\n",
            "9".repeat(200_000)
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        common::ok(d, &["init"]);
        let config = d.join(".mnemon/config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&tail);
        std::fs::write(&config, text).unwrap();
        let o = common::mnemon(d, &["status"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("config.toml:"),
            "names the file and line: {err}"
        );
        assert!(
            err.len() < 2_000,
            "an excerpt, not the line: {} bytes",
            err.len()
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A store in a bad state, made by `break_it` in a fresh project that holds
/// a canary, then `args` run against it.
struct StoreCase {
    name: &'static str,
    break_it: fn(&Path),
    args: &'static [&'static str],
    code: i32,
    says: &'static str,
    /// The database file must be byte for byte what `break_it` left.
    untouched: bool,
}

/// Damaged, cut, foreign, newer and read-only stores, each in its own
/// project: a clear message with the storage exit code, and the file left
/// exactly as it was. (A full disk is `mnemon-sqlite`'s durability test:
/// SQLite's page cap fails writes with the same SQLITE_FULL.)
#[test]
fn the_catalogue_of_broken_stores_is_refused_without_writing() {
    let mut report = String::new();
    for c in stores() {
        let tmp = common::project();
        let d = tmp.path();
        common::ok(d, &["goal", "add", "Keep the canary alive"]);
        record_canary(d);
        (c.break_it)(d);
        let before = std::fs::read(db(d)).unwrap();
        let args: Vec<String> = c
            .args
            .iter()
            .map(|a| match a.strip_prefix('@') {
                Some(file) => std::fs::read_to_string(d.join(file)).unwrap(),
                None => a.to_string(),
            })
            .collect();
        let case = Case {
            class: "stores",
            args: args.iter().map(OsString::from).collect(),
            stdin: None,
            env: Vec::new(),
            code: c.code,
            says: c.says,
        };
        let (code, stderr) = run(d, &case);
        if c.name == "read-only" {
            freeze(&d.join(".mnemon"), false);
            freeze(&db(d), false);
        }
        assert_eq!(code, Some(c.code), "{}: {stderr}", c.name);
        assert!(!stderr.contains("panicked"), "{}: {stderr}", c.name);
        assert!(
            stderr.to_lowercase().contains(c.says),
            "{}: the message names the problem ({}): {stderr}",
            c.name,
            c.says
        );
        if c.untouched {
            assert!(
                std::fs::read(db(d)).unwrap() == before,
                "{}: the file changed",
                c.name
            );
        }
        report.push_str(&format!(
            "## {} · exit {}\n{}\n",
            c.name,
            c.code,
            shown(&stderr, d)
        ));
    }
    insta::assert_snapshot!("stores", report);
}

#[test]
fn with_json_an_error_is_json_on_stderr_with_its_class() {
    let tmp = common::project();
    let d = tmp.path();
    let parse = |out: &std::process::Output| -> serde_json::Value {
        let err = String::from_utf8_lossy(&out.stderr);
        serde_json::from_str(err.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"))
    };
    let none = common::mnemon(d, &["goal", "complete", "no such goal", "--json"]);
    assert_eq!(none.status.code(), Some(1));
    let v = parse(&none);
    assert_eq!(v["error"]["class"], "input", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no open goal matches"),
        "{v}"
    );
    assert!(none.stdout.is_empty(), "nothing on stdout");

    let goal = common::json(d, &["goal", "add", "Ship it", "--json"]);
    let id = goal["id"].as_str().unwrap();
    common::ok(d, &["goal", "update", id, "--status", "in-progress"]);
    let stale = common::mnemon(d, &["goal", "complete", id, "--if-version", "1", "--json"]);
    assert_eq!(stale.status.code(), Some(4));
    assert_eq!(parse(&stale)["error"]["class"], "conflict");

    // Without --json, the line a person reads.
    let plain = common::mnemon(d, &["goal", "complete", "no such goal"]);
    assert!(String::from_utf8_lossy(&plain.stderr).starts_with("error: "));
}
