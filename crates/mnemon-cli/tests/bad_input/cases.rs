//! The catalogue's cases, by class: numbers, sizes, the environment,
//! inputs, ids and usage.

use super::*;

/// Numeric flags, each with values it must refuse by name.
pub(crate) fn numbers() -> Vec<Case> {
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

pub(crate) fn sizes(dir: &Path) -> Vec<Case> {
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

pub(crate) fn environment() -> Vec<Case> {
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

pub(crate) fn inputs(dir: &Path) -> Vec<Case> {
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

pub(crate) fn ids() -> Vec<Case> {
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

pub(crate) fn usage() -> Vec<Case> {
    vec![
        case("usage", &["frobnicate"], 2, "unrecognized subcommand"),
        case("usage", &["recent", "--colour"], 2, "unexpected argument"),
        case("usage", &["record"], 2, "--type"),
        case("usage", &["--color", "sometimes", "status"], 2, "sometimes"),
        case("usage", &["search"], 2, "query"),
    ]
}
