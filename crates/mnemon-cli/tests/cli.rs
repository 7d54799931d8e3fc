//! The `mnemon` binary end to end: what a person or a script sees.
//! Output is snapshotted (insta), so a change to it is a reviewed change.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::io::Write;

use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn mnemon(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("MNEMON_")) {
        cmd.env_remove(k);
    }
    // A cache of its own, so what this machine has fetched shows nowhere.
    cmd.env("MNEMON_CACHE", dir.join(".mnemon-test-cache"));
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("mnemon runs");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = mnemon(dir, args, None);
    assert!(o.status.success(), "mnemon {args:?} failed: {}", stderr(&o));
    stdout(&o)
}

fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

#[test]
fn init_then_status() {
    let tmp = tempfile::tempdir().unwrap();
    let created = ok(tmp.path(), &["init", "--model", "qwen2.5-coder:32b"]);
    insta::assert_snapshot!(created, @"created .mnemon/config.toml (model qwen2.5-coder:32b, effective window 128,000 tokens, profile balanced)\n");
    // Status is found from a subdirectory, as git finds .git.
    let sub = tmp.path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let o = mnemon(&sub, &["status", "--used", "89600"], None);
    assert!(o.status.success());
    insta::assert_snapshot!(
        "status_qwen_orange",
        stdout(&o).replace(&tmp.path().display().to_string(), "<tmp>")
    );
    assert!(
        stderr(&o).contains("estimates (characters / 4)"),
        "{}",
        stderr(&o)
    );

    let again = mnemon(tmp.path(), &["init"], None);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already exists"));
}

#[test]
fn status_json_at_zone_boundaries() {
    let tmp = tempfile::tempdir().unwrap();
    ok(tmp.path(), &["init", "--model", "gpt-4o"]);
    for (used, zone, action) in [
        ("63999", "green", "proceed_normally"),
        ("64000", "yellow", "monitor_and_plan_checkpoint"),
        ("89599", "yellow", "monitor_and_plan_checkpoint"),
        ("89600", "orange", "optimize_then_checkpoint"),
        ("108800", "red", "emergency_checkpoint_and_refresh"),
    ] {
        let v = json(tmp.path(), &["status", "--json", "--used", used]);
        assert_eq!(v["window"]["zone"], zone, "at {used}");
        assert_eq!(v["recommended_action"], action, "at {used}");
        assert_eq!(v["window"]["emergency"], false);
    }
    let v = json(tmp.path(), &["status", "--json", "--used", "121600"]);
    assert_eq!(v["window"]["emergency"], true);
    assert_eq!(v["tokenizer"]["name"], "o200k_base");
    assert_eq!(v["tokenizer"]["exact"], true);
}

#[test]
fn each_profile_at_4k_16k_128k_1m() {
    let tmp = tempfile::tempdir().unwrap();
    ok(tmp.path(), &["init"]);
    for (window, profile, wm_ops) in [
        ("4096", "ultra-aggressive", 10),
        ("16384", "aggressive", 30),
        ("128000", "balanced", 50),
        ("1000000", "minimal", 100),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
            .args(["status", "--json"])
            .current_dir(tmp.path())
            .env("MNEMON_CONTEXT_WINDOW__MAX_TOKENS", window)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["profile"]["name"], profile, "window {window}");
        assert_eq!(
            v["profile"]["parameters"]["working_memory_max_operations"]["value"],
            wm_ops
        );
        assert_eq!(v["window_source"], "config");
    }
}

#[test]
fn utilization_limit_below_one() {
    let tmp = tempfile::tempdir().unwrap();
    ok(tmp.path(), &["init", "--model", "qwen_2.5_32b"]);
    let cfg = tmp.path().join(".mnemon/config.toml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("utilization_limit = 1.0", "utilization_limit = 0.75");
    std::fs::write(&cfg, text).unwrap();
    let v = json(tmp.path(), &["status", "--json", "--used", "48000"]);
    assert_eq!(v["window"]["effective_max"], 96_000);
    assert_eq!(v["window"]["zone"], "yellow");
    assert_eq!(v["window"]["thresholds"]["red_from"], 81_600);
    // 96,000 effective tokens is below balanced's 100,000 floor.
    assert_eq!(v["profile"]["name"], "balanced-aggressive");
    assert_eq!(v["profile"]["source"], "window");
}

#[test]
fn bad_config_is_reported_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    ok(tmp.path(), &["init"]);
    let cfg = tmp.path().join(".mnemon/config.toml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("red_threshold = 0.95", "red_threshold = 0.8")
        .replace("keep_versions = 10", "keep_versions = -1");
    std::fs::write(&cfg, text).unwrap();
    let o = mnemon(tmp.path(), &["config", "validate"], None);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("validate_bad_type", stderr(&o));

    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("keep_versions = -1", "keep_versions = 3");
    std::fs::write(&cfg, text).unwrap();
    let o = mnemon(tmp.path(), &["status"], None);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("status_bad_threshold", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["status", "--used", "lots"][..],
        &["tokens", "count", "--encoding", "p50k_base"],
        &["frobnicate"],
    ] {
        let o = mnemon(tmp.path(), args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn unknown_model_names_near_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let o = mnemon(tmp.path(), &["init", "--model", "gpt-4o-mni"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        !tmp.path().join(".mnemon").exists(),
        "nothing is created for a bad model"
    );
    insta::assert_snapshot!("init_unknown_model", stderr(&o));
}

#[test]
fn tokens_count_text_json_limit_and_chat() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "Hello, world! 日本語 🧑🏿‍💻\r\n    indented";
    let o = mnemon(
        tmp.path(),
        &["tokens", "count", "--encoding", "cl100k_base"],
        Some(text.as_bytes()),
    );
    insta::assert_snapshot!(stdout(&o), @"22 tokens  (cl100k_base, exact; 53 bytes)\n");
    std::fs::write(tmp.path().join("in.txt"), text).unwrap();
    let v = json(
        tmp.path(),
        &[
            "tokens",
            "count",
            "--encoding",
            "o200k_base",
            "in.txt",
            "--json",
        ],
    );
    assert_eq!(v["tokens"], 18);
    assert_eq!(v["exact"], true);
    let v = json(
        tmp.path(),
        &[
            "tokens",
            "count",
            "--encoding",
            "cl100k_base",
            "in.txt",
            "--limit",
            "21",
            "--json",
        ],
    );
    assert_eq!(
        (v["fits"].clone(), v["tokens"].clone()),
        (serde_json::json!(false), serde_json::Value::Null)
    );
    let o = mnemon(
        tmp.path(),
        &[
            "tokens",
            "count",
            "--encoding",
            "cl100k_base",
            "--limit",
            "22",
            "in.txt",
        ],
        None,
    );
    insta::assert_snapshot!(stdout(&o), @"22 tokens: fits in 22  (cl100k_base, exact; 53 bytes)\n");

    let chat = br#"[{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi", "name": "ada"}]"#;
    let o = mnemon(
        tmp.path(),
        &["tokens", "count", "--model", "gpt-4o", "--chat", "--json"],
        Some(chat),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Every field's tokens, 3 per message, 1 for the name, 3 to prime the reply.
    let o200k = OpenAiBpe::new(Encoding::O200kBase);
    let fields: usize = ["system", "You are terse.", "user", "hi", "ada"]
        .iter()
        .map(|t| o200k.count(t))
        .sum();
    assert_eq!(v["tokens"], fields + 2 * 3 + 1 + 3, "{v}");
    assert_eq!(v["chat_format"], "openai");
}

#[test]
fn tokens_count_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let o = mnemon(
        tmp.path(),
        &["tokens", "count", "--encoding", "cl100k_base"],
        Some(b"ok \xff\xfe bad"),
    );
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&o), @"error: standard input is not UTF-8 text (the first invalid byte is at offset 3); convert it first, for example with `iconv -t UTF-8`\n");
    let o = mnemon(
        tmp.path(),
        &["tokens", "count", "--chat"],
        Some(b"{\"role\": \"user\"}"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a JSON array of chat messages"),
        "{}",
        stderr(&o)
    );
    let o = mnemon(tmp.path(), &["tokens", "count", "missing.txt"], None);
    assert!(
        stderr(&o).contains("cannot read missing.txt"),
        "{}",
        stderr(&o)
    );
}

#[cfg(feature = "hf-tokenizer")]
#[test]
fn tokens_count_with_a_huggingface_file() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemon-core/tests/data/bpe_tiny.json");
    std::fs::copy(fixture, tmp.path().join("tokenizer.json")).unwrap();
    let v: serde_json::Value = serde_json::from_slice(
        &mnemon(
            tmp.path(),
            &["tokens", "count", "--tokenizer", "tokenizer.json", "--json"],
            Some(b"hello hell hel"),
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(v["tokens"], 4);
    // A model configured with the file counts with it in `status`.
    ok(tmp.path(), &["init"]);
    let cfg = tmp.path().join(".mnemon/config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("\n[models.\"tiny\"]\nprovider = \"llamacpp\"\ncontext_window = 8192\ntokenizer = \"hf:tokenizer.json\"\n");
    text = text.replace("# active = \"qwen2.5-coder:32b\"", "active = \"tiny\"");
    std::fs::write(&cfg, text).unwrap();
    let v = json(tmp.path(), &["status", "--json"]);
    assert_eq!(v["tokenizer"]["name"], "hf:tokenizer.json");
    assert_eq!(v["tokenizer"]["exact"], true);
    assert_eq!(v["profile"]["name"], "aggressive");
}

#[test]
fn models_list_and_config_commands() {
    let tmp = tempfile::tempdir().unwrap();
    insta::assert_snapshot!("models_list", ok(tmp.path(), &["models", "list"]));
    let models = json(tmp.path(), &["models", "list", "--json"]);
    assert!(models.as_array().unwrap().len() >= 20);

    let default = ok(tmp.path(), &["config", "default"]);
    assert_eq!(default, mnemon_core::config::DEFAULT_TOML);
    let o = mnemon(tmp.path(), &["config", "validate"], None);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("fallback_size = 16384"),
        "no model: the fallback is announced"
    );
    assert!(
        stderr(&o).contains("context_window.auto_detect = true has nothing to ask"),
        "a setting without effect says so: {}",
        stderr(&o)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["config", "validate"])
        .current_dir(tmp.path())
        .env("MNEMON_CONTEXT_WINDOW__AUTO_DETECT", "false")
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("auto_detect"), "{}", stderr(&o));

    let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["config", "show"])
        .current_dir(tmp.path())
        .env("MNEMON_CONTEXT_WINDOW__MAX_TOKENS", "32768")
        .output()
        .unwrap();
    let shown = stdout(&o);
    assert!(
        shown.contains("# context_window.max_tokens comes from MNEMON_CONTEXT_WINDOW__MAX_TOKENS"),
        "{shown}"
    );
    assert!(shown.contains("max_tokens = 32768"), "{shown}");
}

#[test]
fn help_is_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        &["--help"][..],
        &["status", "--help"],
        &["tokens", "count", "--help"],
        &["config", "--help"],
        &["models", "list", "--help"],
        &["init", "--help"],
    ] {
        let o = mnemon(tmp.path(), args, None);
        assert!(o.status.success(), "{args:?}");
        assert!(stdout(&o).contains("Usage: mnemon"), "{args:?}");
    }
    insta::assert_snapshot!("help", ok(tmp.path(), &["--help"]));
}

/// `mnemon … | head`: a reader that goes away is no bug. The process ends
/// as one killed by SIGPIPE would (141), without a message. The reader is
/// gone before the process starts: closed after it, a quick process could
/// write its whole answer into the pipe's buffer first and exit 0.
#[test]
fn a_closed_pipe_ends_quietly() {
    let p = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["models", "list"])
        .current_dir(p.path())
        .env("NO_COLOR", "1")
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("bug"), "{err}");
    assert_eq!(out.status.code(), Some(141), "{err}");
}

#[test]
fn completions_and_manual_pages_cover_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let commands = [
        "init",
        "status",
        "record",
        "message",
        "import",
        "context",
        "search",
        "chat",
        "serve",
        "mcp",
        "token",
        "migrate",
        "forget",
        "completions",
        "man",
    ];
    let bash = mnemon(d, &["completions", "bash"], None);
    assert!(bash.status.success());
    let script = String::from_utf8(bash.stdout).unwrap();
    for c in commands {
        assert!(script.contains(c), "bash completion knows `{c}`");
    }
    // The script is valid bash.
    let file = d.join("mnemon.bash");
    std::fs::write(&file, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for shell in ["zsh", "fish"] {
        let out = mnemon(d, &["completions", shell], None);
        assert!(out.status.success() && out.stdout.len() > 1_000, "{shell}");
    }

    let page = mnemon(d, &["man"], None);
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(page.contains(".TH mnemon 1"), "{page}");
    assert!(page.contains("record"), "the top page lists the commands");
    let dir = d.join("man");
    let out = mnemon(d, &["man", "--out", dir.to_str().unwrap()], None);
    assert!(out.status.success());
    for c in commands {
        let p = dir.join(format!("mnemon-{c}.1"));
        assert!(p.is_file(), "{}", p.display());
    }
    let record = std::fs::read_to_string(dir.join("mnemon-record.1")).unwrap();
    assert!(
        record.contains("\\-\\-type"),
        "a command's page has its flags"
    );
}

#[test]
fn config_set_changes_one_setting_and_refuses_what_would_not_load() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(mnemon(d, &["init"], None).status.success());
    let file = d.join(".mnemon/config.toml");
    let before = std::fs::read_to_string(&file).unwrap();
    let set = mnemon(
        d,
        &["config", "set", "context_window.max_tokens", "32768"],
        None,
    );
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let set = mnemon(d, &["config", "set", "llm.provider", "openai"], None);
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        after.matches("\n[llm]").count(),
        1,
        "the table init wrote, not a second"
    );
    assert!(
        after.lines().count() >= before.lines().count(),
        "the comments stay"
    );
    let shown = mnemon(d, &["config", "show", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(v["config"]["context_window"]["max_tokens"], 32768);
    assert_eq!(v["config"]["llm"]["provider"], "openai");

    let bad = mnemon(
        d,
        &["config", "set", "context_window.max_tokens", "banana"],
        None,
    );
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unchanged") && err.contains("whole number"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        after,
        "nothing written"
    );
}

#[test]
fn dir_may_name_the_project_or_its_dot_mnemon() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(mnemon(d, &["init"], None).status.success());
    assert!(
        mnemon(
            d,
            &["record", "--type", "note", "--data", r#"{"text": "x"}"#],
            None
        )
        .status
        .success()
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let inner = d.join(".mnemon");
    let out = mnemon(
        elsewhere.path(),
        &["--dir", inner.to_str().unwrap(), "recent", "--json"],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
    assert!(!inner.join(".mnemon").exists(), "no project nested inside");
}

#[test]
fn a_directory_where_the_database_belongs_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert!(mnemon(d, &["init"], None).status.success());
    std::fs::create_dir(d.join(".mnemon/mnemon.db")).unwrap();
    let out = mnemon(d, &["status"], None);
    assert_eq!(out.status.code(), Some(3), "a storage problem");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".mnemon/mnemon.db") && err.contains("is a directory"),
        "{err}"
    );
}
