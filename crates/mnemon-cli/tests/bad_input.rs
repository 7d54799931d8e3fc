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

mod common;

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

/// Numeric flags, each with values it must refuse by name.
fn numbers() -> Vec<Case> {
    let flags: &[(&[&str], &str)] = &[
        (&["context", "--budget"], "--budget"),
        (&["recent", "--limit"], "--limit"),
        (&["search", "deploy", "--limit"], "--limit"),
        (&["session", "list", "--limit"], "--limit"),
        (&["decision", "list", "--limit"], "--limit"),
        (&["checkpoint", "list", "--limit"], "--limit"),
        (&["status", "--used"], "--used"),
        (&["record", "--type", "x", "--tokens"], "--tokens"),
        (&["tokens", "count", "--limit"], "--limit"),
        (&["eval", "synth", "--out", "s.json", "--turns"], "--turns"),
        (
            &["eval", "synth", "--out", "s.json", "--sessions"],
            "--sessions",
        ),
    ];
    let mut out = Vec::new();
    for (args, flag) in flags {
        for (value, says) in [
            ("-500", "negative"),
            ("1000000000000", "out of range"),
            ("ten", "not a whole number"),
            ("1.5", "not a whole number"),
        ] {
            let mut a: Vec<&str> = args.to_vec();
            a.push(value);
            let mut c = case("numbers", &a, 2, says);
            c.says = says;
            let _ = flag;
            out.push(c);
        }
    }
    for args in [
        &["recent", "--limit", "0"][..],
        &["search", "deploy", "--limit", "0"],
        &["context", "--budget", "0"],
        &["tokens", "count", "--limit", "0"],
        &["eval", "synth", "--out", "s.json", "--conversations", "0"],
    ] {
        out.push(case("numbers", args, 2, "out of range"));
    }
    out.push(case("numbers", &["report-usage", "-5"], 2, "negative"));
    out.push(case(
        "numbers",
        &[
            "eval",
            "synth",
            "--out",
            "s.json",
            "--sessions",
            "1000",
            "--turns",
            "10000",
        ],
        1,
        "at most",
    ));
    out
}

fn sizes(dir: &Path) -> Vec<Case> {
    // Under the kernel's 128 KiB limit for one argument, over the window.
    let big = "a fact about the deploy ".repeat(4_000);
    let huge_decision = dir.join("huge_decision.json");
    std::fs::write(
        &huge_decision,
        serde_json::json!({"title": "t", "context": "word ".repeat(400_000), "decision": "d"})
            .to_string(),
    )
    .unwrap();
    let script = dir.join("remember.script");
    std::fs::write(&script, format!("/remember {}\n", "word ".repeat(200_000))).unwrap();
    vec![
        case("sizes", &["remember", &big], 1, "tokens"),
        case("sizes", &["goal", "add", &big], 1, "tokens"),
        case("sizes", &["constraint", "add", &big], 1, "tokens"),
        case(
            "sizes",
            &[
                "decision",
                "add",
                "--from-json",
                huge_decision.to_str().unwrap(),
            ],
            1,
            "tokens",
        ),
        case(
            "sizes",
            &[
                "record",
                "--type",
                "note",
                "--data",
                &format!("{{\"t\": \"{}\"}}", "w ".repeat(50_000)),
            ],
            1,
            "tokens",
        ),
        case(
            "sizes",
            &["message", "--role", "user", &"w ".repeat(50_000)],
            1,
            "tokens",
        ),
        // A line without end is refused, not buffered.
        with_stdin(
            case("sizes", &["chat"], 1, "longer than"),
            vec![b'y'; 5_000_000],
        ),
        // An endless stream is read only until the limit is certainly passed.
        with_stdin(
            case("sizes", &["tokens", "count", "--limit", "100"], 0, ""),
            vec![b'y'; 50_000_000],
        ),
    ]
}

fn environment() -> Vec<Case> {
    let mut out = Vec::new();
    for args in [
        &["status"][..],
        &["recent"],
        &["hot"],
        &["context", "--budget", "500"],
    ] {
        out.push(with_env(
            case("environment", args, 0, ""),
            b"PROJECT_OWNER",
            b"Jos\xe9",
        ));
    }
    out.push(with_env(
        case("environment", &["status"], 1, "mnemon_agent"),
        b"MNEMON_AGENT",
        b"\xff\xfe",
    ));
    out.push(with_env(
        case(
            "environment",
            &["status"],
            1,
            "mnemon_context_window__max_tokens",
        ),
        b"MNEMON_CONTEXT_WINDOW__MAX_TOKENS",
        b"lots",
    ));
    let mut bad_arg = case("environment", &["recent", "--type"], 2, "utf-8");
    bad_arg.args.push(OsString::from_vec(b"\xff\xfe".to_vec()));
    out.push(bad_arg);
    out
}

fn inputs(dir: &Path) -> Vec<Case> {
    let wrong_type = dir.join("wrong_type.json");
    std::fs::write(
        &wrong_type,
        r#"{"title": ["a"], "context": "c", "decision": "d"}"#,
    )
    .unwrap();
    let nested = dir.join("nested.json");
    std::fs::write(
        &nested,
        r#"{"title": "t", "context": "c", "decision": "d", "consequences": {"positive": [1]}}"#,
    )
    .unwrap();
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "title: yaml is not json\n").unwrap();
    let reasoning = dir.join("reasoning.json");
    std::fs::write(
        &reasoning,
        r#"{"title": "t", "context": "c", "decision": "d", "chain_of_thought": "..."}"#,
    )
    .unwrap();
    let long_bad = format!("{{\"a\": {}", "x".repeat(130_000));
    let p = |f: &Path| f.to_str().unwrap().to_string();
    vec![
        case(
            "inputs",
            &["record", "--type", "x", "--data", "{nope"],
            1,
            "not valid json",
        ),
        case(
            "inputs",
            &["record", "--type", "x", "--data", &long_bad],
            1,
            "130,00",
        ),
        case(
            "inputs",
            &["record", "--type", "x", "--phase", "lunch"],
            1,
            "lunch",
        ),
        case(
            "inputs",
            &["decision", "add", "--from-json", &p(&wrong_type)],
            1,
            "`title`",
        ),
        case(
            "inputs",
            &["decision", "add", "--from-json", &p(&nested)],
            1,
            "consequences.positive[0]",
        ),
        case(
            "inputs",
            &["decision", "add", "--from-json", &p(&not_json)],
            1,
            "not.json",
        ),
        case(
            "inputs",
            &["decision", "add", "--from-json", &p(&reasoning)],
            1,
            "chain_of_thought",
        ),
        case(
            "inputs",
            &["decision", "add", "--from-json", "missing.json"],
            1,
            "missing.json",
        ),
        case(
            "inputs",
            &["decision", "add", "--from-json", &p(dir)],
            1,
            "directory",
        ),
        case("inputs", &["tokens", "count", &p(dir)], 1, "directory"),
        case(
            "inputs",
            &["tokens", "count", "missing.txt"],
            1,
            "missing.txt",
        ),
        case(
            "inputs",
            &["context", "--preset", "nope"],
            1,
            "unknown preset",
        ),
        case("inputs", &["context", "--format", "yaml"], 2, "yaml"),
        case("inputs", &["message", "--role", "robot", "hi"], 2, "robot"),
        case("inputs", &["message", "--role", "user", "   "], 1, "empty"),
        case(
            "inputs",
            &["status", "--model", "no-such-model"],
            1,
            "no-such-model",
        ),
        case(
            "inputs",
            &["checkpoint", "create", "--trigger", "../x"],
            2,
            "trigger",
        ),
        case("inputs", &["init", "--model", "no-such-model"], 1, "exists"),
        with_stdin(
            case("inputs", &["tokens", "count", "-"], 1, "utf-8"),
            b"caf\xe9".to_vec(),
        ),
        with_stdin(
            case("inputs", &["message", "--role", "user"], 1, "utf-8"),
            b"caf\xe9".to_vec(),
        ),
        case("inputs", &["record", "--type", ""], 1, "needs a type"),
        case(
            "inputs",
            &["--dir", "/nonexistent-mnemon-dir", "status"],
            1,
            "not a directory",
        ),
        with_stdin(
            case(
                "inputs",
                &["tokens", "count", "--chat", "-"],
                1,
                "chat messages",
            ),
            b"[1, 2]".to_vec(),
        ),
    ]
}

fn ids() -> Vec<Case> {
    vec![
        case("ids", &["session", "show", "nope"], 1, "nope"),
        case("ids", &["session", "restore", "nope"], 1, "nope"),
        case("ids", &["decision", "show", "DR-nope"], 1, "dr-nope"),
        case(
            "ids",
            &["decision", "status", "DR-nope", "accepted"],
            1,
            "dr-nope",
        ),
        case(
            "ids",
            &["checkpoint", "show", "CP-19990101-000000"],
            1,
            "cp-19990101",
        ),
        case(
            "ids",
            &["checkpoint", "resume", "CP-19990101-000000"],
            1,
            "cp-19990101",
        ),
        case("ids", &["goal", "complete", "nope"], 1, "nope"),
        case("ids", &["doc", "show", "diary"], 2, "diary"),
        case(
            "ids",
            &["goal", "update", "nope", "--if-version", "0"],
            2,
            "out of range",
        ),
        case(
            "ids",
            &["goal", "update", "nope", "--status", "sleeping"],
            1,
            "sleeping",
        ),
        case(
            "ids",
            &["session", "archive", "nope", "--title", "x"],
            1,
            "nope",
        ),
        case(
            "ids",
            &["checkpoint", "resume", "/etc/passwd.json"],
            1,
            "passwd",
        ),
        case("ids", &["forget", "o999999"], 1, "o999999"),
        case("ids", &["forget", "DR-00000000"], 1, "dr-00000000"),
        case("ids", &["forget", "--matching", "ab"], 1, "too short"),
    ]
}

fn usage() -> Vec<Case> {
    vec![
        case("usage", &["frobnicate"], 2, "unrecognized subcommand"),
        case("usage", &["recent", "--colour"], 2, "unexpected argument"),
        case("usage", &["record"], 2, "--type"),
        case("usage", &["--color", "sometimes", "status"], 2, "sometimes"),
        case("usage", &["search"], 2, "query"),
    ]
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

fn db(d: &Path) -> std::path::PathBuf {
    d.join(".mnemon/mnemon.db")
}

/// Writes every committed page into the main file, so the file alone is
/// the store and can be damaged on purpose.
fn settle(d: &Path) {
    let c = rusqlite::Connection::open(db(d)).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
}

fn overwrite(d: &Path, at: usize, bytes: &[u8]) {
    settle(d);
    let mut all = std::fs::read(db(d)).unwrap();
    all[at..at + bytes.len()].copy_from_slice(bytes);
    std::fs::write(db(d), all).unwrap();
}

/// As root, file modes do not stop writes: the immutable attribute does.
fn freeze(p: &Path, on: bool) {
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    if root {
        let flag = if on { "+i" } else { "-i" };
        let out = Command::new("chattr").arg(flag).arg(p).output().unwrap();
        assert!(
            out.status.success(),
            "chattr {flag} {}: {out:?}",
            p.display()
        );
    } else {
        use std::os::unix::fs::PermissionsExt;
        let mode = match (p.is_dir(), on) {
            (true, true) => 0o555,
            (true, false) => 0o755,
            (false, true) => 0o444,
            (false, false) => 0o644,
        };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

fn stores() -> Vec<StoreCase> {
    vec![
        StoreCase {
            name: "not a database",
            break_it: |d| std::fs::write(db(d), "plain text, not SQLite").unwrap(),
            args: &["record", "--type", "x"],
            code: 3,
            says: "not a mnemon database",
            untouched: true,
        },
        StoreCase {
            name: "a damaged header",
            break_it: |d| overwrite(d, 0, b"NOT SQLITE FORMAT"),
            args: &["recent"],
            code: 3,
            says: "not a mnemon database",
            untouched: true,
        },
        StoreCase {
            name: "damaged pages",
            break_it: |d| {
                settle(d);
                let len = std::fs::metadata(db(d)).unwrap().len() as usize;
                // Every page after the first: tables and indexes.
                overwrite(d, 4096, &vec![0xA5; len - 4096]);
            },
            args: &["record", "--type", "x"],
            code: 3,
            says: "damaged",
            untouched: true,
        },
        StoreCase {
            name: "cut short",
            break_it: |d| {
                settle(d);
                let all = std::fs::read(db(d)).unwrap();
                std::fs::write(db(d), &all[..all.len() / 3]).unwrap();
            },
            args: &["search", "canary"],
            code: 3,
            says: "damaged",
            untouched: true,
        },
        StoreCase {
            name: "from a newer mnemon",
            break_it: |d| {
                let c = rusqlite::Connection::open(db(d)).unwrap();
                c.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)",
                    [],
                )
                .unwrap();
                drop(c);
                settle(d);
            },
            args: &["status"],
            code: 3,
            says: "newer mnemon",
            untouched: true,
        },
        StoreCase {
            name: "read-only",
            break_it: |d| {
                settle(d);
                freeze(&db(d), true);
                freeze(&d.join(".mnemon"), true);
            },
            args: &["record", "--type", "x"],
            code: 3,
            says: "mnemon.db",
            untouched: true,
        },
        StoreCase {
            name: "a stale version",
            break_it: |d| {
                let hot = common::json(d, &["hot", "--json"]);
                let id = hot.to_string();
                let id = regex::Regex::new(
                    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                )
                .unwrap()
                .find(&id)
                .unwrap()
                .as_str()
                .to_string();
                // Someone else moves it to version 2 first.
                common::ok(
                    d,
                    &[
                        "goal",
                        "update",
                        &id,
                        "--status",
                        "in-progress",
                        "--if-version",
                        "1",
                    ],
                );
                std::fs::write(d.join("goal-id"), &id).unwrap();
            },
            args: &["goal", "complete", "@goal-id", "--if-version", "1"],
            code: 4,
            says: "conflict",
            untouched: true,
        },
    ]
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
