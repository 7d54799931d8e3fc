//! mnemon against a real LLM server: llama.cpp's `llama-server`, built
//! from the sources on PyPI by `scripts/llama-server.sh` (cached under
//! `~/.cache/mnemon/`), serving SmolLM2-135M-Instruct with `-c 2048`
//! (trained window 8,192). Nothing here is a double: probes, answers,
//! usage, token counts and refusals are the server's own.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;

use common::llama::Llama;

/// A project whose `[llm]` points at `url`, with `extra` lines in `[llm]`.
fn project_with(url: &str, extra: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    common::ok(tmp.path(), &["init"]);
    let path = tmp.path().join(".mnemon/config.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    let mut added = String::new();
    // Short answers keep a 135M model on 2 cores quick; the window math
    // is the same.
    let extra = format!("answer_tokens = 64\n{extra}");
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        // A key the default file sets is changed in place; others are added.
        let key = line.split('=').next().unwrap().trim();
        match text.find(&format!("\n{key} = ")) {
            Some(at) => {
                let end = text[at + 1..].find('\n').map_or(text.len(), |e| at + 1 + e);
                text.replace_range(at + 1..end, line);
            }
            None => {
                added.push_str(line);
                added.push('\n');
            }
        }
    }
    let text = text.replacen(
        "# provider = \"openai\"",
        &format!("provider = \"openai\"\nbase_url = \"{url}\"\n{added}#"),
        1,
    );
    std::fs::write(&path, text).unwrap();
    tmp
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_served_window_is_detected_and_managed() {
    let llama = Llama::start(&[]);
    let p = project_with(&llama.url(), "");
    let probe = common::json(p.path(), &["llm", "probe", "--json"]);
    assert_eq!(probe["server"], "llama.cpp", "{probe}");
    assert_eq!(probe["served"], 2048, "{probe}");
    assert_eq!(probe["model_max"], 8192, "{probe}");
    assert_eq!(probe["exact_tokens"], true);
    assert_eq!(probe["effective_window"], 2048);
    assert_eq!(probe["window_source"], "served");
    assert!(
        probe["warnings"]
            .to_string()
            .contains("serves a window of 2048 tokens but the model can hold 8192"),
        "the smaller served window is said loudly: {probe}"
    );
    assert!(probe["latency_ms"].as_f64().unwrap() > 0.0);

    let status = common::json(p.path(), &["status", "--json"]);
    assert_eq!(status["window"]["effective_max"], 2048, "{status}");
    assert_eq!(status["window_source"], "served");
    assert_eq!(status["window_sizes"]["served"], 2048);
    assert_eq!(status["window_sizes"]["model_max"], 8192);
    // The human view shows each number and where it came from.
    let text = String::from_utf8(common::mnemon(p.path(), &["status"]).stdout).unwrap();
    assert!(text.contains("served 2,048 · model max 8,192"), "{text}");
    assert!(text.contains("detected from llama.cpp"), "{text}");
}

#[test]
fn ask_answers_records_both_turns_and_calibrates() {
    let llama = Llama::start(&[]);
    let p = project_with(&llama.url(), "");
    common::ok(
        p.path(),
        &["remember", "The staging database listens on port 5433"],
    );
    let out = common::mnemon(
        p.path(),
        &[
            "ask",
            "--json",
            "Which port does the staging database listen on?",
        ],
    );
    let asked = json_of(&out);
    let answer = asked["answer"].as_str().unwrap();
    assert!(!answer.trim().is_empty(), "{asked}");
    let prompt = asked["usage"]["prompt_tokens"].as_u64().unwrap();
    assert!(prompt > 0);
    // The server counted what mnemon counted, to within its framing.
    let server = asked["request"]["server_tokens"].as_u64().unwrap();
    let answer_tokens = asked["request"]["answer_tokens"].as_u64().unwrap();
    assert_eq!(answer_tokens, 64, "llm.answer_tokens");
    assert!(server + answer_tokens <= 2048, "{asked}");
    assert!(
        asked["request"]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("5433"),
        "the remembered fact is in the context sent: {asked}"
    );

    let status = common::json(p.path(), &["status", "--json"]);
    let engine = &status["engine"];
    assert!(engine["reported"].as_u64().is_some(), "{status}");
    assert!(
        engine["calibration_samples"].as_u64().unwrap() >= 1,
        "{status}"
    );
    assert_eq!(status["usage_source"], "provider_report");

    // Both turns are in the log, once each.
    let conv = common::json(p.path(), &["session", "list", "--json"]);
    assert_eq!(conv.as_array().unwrap().len(), 1);
    let search = common::ok(p.path(), &["search", "staging database", "--json"]);
    assert!(
        search.contains("Which port does the staging database listen on?"),
        "{search}"
    );

    // --dry-run prints the request and its exact size, and sends nothing.
    let dry = common::json(
        p.path(),
        &["ask", "--dry-run", "--json", "What did we decide?"],
    );
    assert!(dry["tokens"].as_u64().unwrap() > 0);
    assert!(dry["server_tokens"].as_u64().is_some());
    let again = common::json(p.path(), &["status", "--json"]);
    assert_eq!(
        again["engine"]["local_usage"], engine["local_usage"],
        "a dry run records nothing"
    );
}

#[test]
fn a_question_longer_than_the_window_is_fitted_and_never_rejected() {
    let llama = Llama::start(&[]);
    let p = project_with(&llama.url(), "");
    for i in 0..20 {
        common::ok(
            p.path(),
            &[
                "record",
                "--type",
                "task_execution",
                "--data",
                &format!(
                    r#"{{"task": {i}, "result": "module {i} of the billing service was ported and its tests pass"}}"#
                ),
            ],
        );
    }
    // About 3,000 tokens of question against a 2,048-token window.
    let question = format!(
        "Review this log and tell me what failed. {}",
        "The billing worker retried the invoice export and the ledger sync reported a mismatch. "
            .repeat(180)
    );
    let out = common::mnemon(p.path(), &["ask", "--json", &question]);
    let asked = json_of(&out);
    assert_eq!(
        asked["request"]["question_cut"], true,
        "{}",
        asked["request"]
    );
    let server = asked["request"]["server_tokens"].as_u64().unwrap();
    let answer = asked["request"]["answer_tokens"].as_u64().unwrap();
    assert!(
        server + answer <= 2048,
        "sent {server} + {answer} answer tokens"
    );
    assert!(
        asked["usage"]["prompt_tokens"].as_u64().unwrap() + answer <= 2048,
        "the server's own count fits too: {}",
        asked["usage"]
    );
    // The question is recorded as sent: its start, its end, and what was
    // left out.
    let found = common::ok(
        p.path(),
        &["search", "ledger sync reported a mismatch", "--json"],
    );
    assert!(found.contains("Review this log"), "{found}");
    assert!(
        found.contains("characters of the question left out"),
        "{found}"
    );
}

/// The summary of every pinned item must be verbatim, and the whole within
/// the profile's target.
fn check_summary(dir: &Path, pinned: &[&str]) -> String {
    let sessions = common::json(dir, &["session", "list", "--json"]);
    let summary = sessions[0]["summary"].as_str().unwrap().to_string();
    for fact in pinned {
        assert!(
            summary.contains(fact),
            "{fact:?} is verbatim in:\n{summary}"
        );
    }
    let status = common::json(dir, &["status", "--json"]);
    let target = status["profile"]["parameters"]["session_summary_max_tokens"]["value"]
        .as_u64()
        .unwrap();
    let file = dir.join("summary.txt");
    std::fs::write(&file, &summary).unwrap();
    let counted = common::mnemon(dir, &["tokens", "count", "--json", file.to_str().unwrap()]);
    let n = json_of(&counted)["tokens"].as_u64().unwrap();
    assert!(
        n <= target,
        "summary of {n} tokens over its target {target}"
    );
    summary
}

fn fill(dir: &Path, n: usize) {
    for i in 0..n {
        common::ok(
            dir,
            &[
                "record",
                "--type",
                "task_execution",
                "--data",
                &format!(
                    r#"{{"task": {i}, "result": "step {i} moved table t{i} to the new cluster and verified its row counts"}}"#
                ),
            ],
        );
    }
}

#[test]
fn an_llm_refresh_keeps_pinned_facts_verbatim_within_target() {
    let llama = Llama::start(&[]);
    let p = project_with(&llama.url(), "");
    common::ok(p.path(), &["remember", "Never run migrations on Fridays"]);
    fill(p.path(), 25);
    common::ok(
        p.path(),
        &[
            "record",
            "--type",
            "error",
            "--data",
            r#"{"error": "disk quota exceeded on db-7"}"#,
        ],
    );
    let before = common::json(p.path(), &["recent", "--limit", "1000", "--json"]);
    let out = common::mnemon(p.path(), &["refresh", "--json"]);
    let v = json_of(&out);
    let refreshed = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "refreshed")
        .unwrap();
    assert!(
        refreshed["summarized_by"]
            .as_str()
            .unwrap()
            .starts_with("openai:"),
        "the LLM wrote the summary: {refreshed}"
    );
    check_summary(
        p.path(),
        &[
            "Never run migrations on Fridays",
            "disk quota exceeded on db-7",
        ],
    );
    // Nothing is lost: every operation is still in the store.
    let after = common::json(p.path(), &["recent", "--limit", "1000", "--json"]);
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_str().unwrap().to_string())
            .collect()
    };
    for id in ids(&before) {
        assert!(ids(&after).contains(&id), "{id} is still stored");
    }
}

#[test]
fn a_server_stopped_mid_refresh_falls_back_to_extractive_and_loses_nothing() {
    let mut llama = Llama::start(&[]);
    let p = project_with(&llama.url(), "connect_timeout_ms = 300");
    common::ok(
        p.path(),
        &["remember", "The release branch is frozen until Monday"],
    );
    fill(p.path(), 60);
    let before = common::json(p.path(), &["recent", "--limit", "1000", "--json"]);
    let refresh = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["refresh"])
        .current_dir(p.path())
        .env("NO_COLOR", "1")
        .env("MNEMON_NOW", "2025-01-15T14:30:00Z")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    llama.kill();
    let out = refresh.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the refresh still succeeds: {stderr}");
    assert!(
        stderr.contains("fell back to extractive"),
        "the fallback is reported: {stderr}"
    );
    check_summary(p.path(), &["The release branch is frozen until Monday"]);
    let after = common::json(p.path(), &["recent", "--limit", "1000", "--json"]);
    assert_eq!(
        before.as_array().unwrap().len() + 2,
        after.as_array().unwrap().len(),
        "every operation is kept, plus the refresh's checkpoint and action"
    );
}

#[test]
fn a_free_form_chat_line_is_asked_and_a_bad_key_is_refused() {
    let llama = Llama::start(&["--api-key", "right-key"]);
    let p = project_with(&llama.url(), "api_key_env = \"MNEMON_TEST_LLM_KEY\"");
    // Without the variable: a clear error naming it, exit 1.
    let out = common::mnemon(p.path(), &["ask", "hello"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MNEMON_TEST_LLM_KEY is not set"), "{err}");
    // A wrong key: refused by the server, exit 5, nothing recorded.
    let run = |key: &str, args: &[&str], stdin: Option<&str>| {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_mnemon"))
            .args(args)
            .current_dir(p.path())
            .env("NO_COLOR", "1")
            .env("MNEMON_TEST_LLM_KEY", key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(s) = stdin {
            child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
        }
        drop(child.stdin.take());
        child.wait_with_output().unwrap()
    };
    let out = run("wrong-key", &["ask", "hello"], None);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused the key"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = common::json(p.path(), &["status", "--json"]);
    assert_eq!(status["engine"]["local_usage"], 0, "nothing was recorded");

    // With the right key, a chat line that is no command is a question.
    let out = run(
        "right-key",
        &["chat", "--json"],
        Some("Tell me something about release trains\n"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "answer", "{first}");
    assert!(!first["text"].as_str().unwrap().trim().is_empty());
    // A command still goes to the rules, not the model.
    let out = run(
        "right-key",
        &["chat", "--json"],
        Some("create an epic for billing\n"),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "done", "{first}");
}

#[test]
fn an_unreachable_server_never_hangs_a_command() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let p = project_with(&format!("http://127.0.0.1:{port}/v1"), "");
    let start = Instant::now();
    let out = common::mnemon(
        p.path(),
        &["record", "--type", "note", "--data", "{\"x\": 1}"],
    );
    assert!(
        out.status.success(),
        "records still work: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = common::mnemon(p.path(), &["status", "--json"]);
    let v = json_of(&status);
    assert!(
        v["warnings"].to_string().contains("could not be detected"),
        "status says why the window is the configured one: {v}"
    );
    assert_eq!(v["window_source"], "fallback");
    let out = common::mnemon(p.path(), &["ask", "anything"]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the model server"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "bounded by the connect timeout, never a hang"
    );
}

#[test]
fn a_servers_embeddings_endpoint_indexes_history_for_retrieval_by_meaning() {
    // SmolLM2 is a chat model, not a sentence encoder: this proves the
    // wire (llama-server's OpenAI-compatible /v1/embeddings), not the
    // quality, which the local-model tests (tests/embeddings.rs) cover.
    let mut llama = Llama::start(&["--embeddings", "--pooling", "mean"]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    common::ok(dir, &["init", "--model", "gpt-4o"]);
    let path = dir.join(".mnemon/config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!(
            "{text}\n[embeddings]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"smollm2\"\n",
            llama.url()
        ),
    )
    .unwrap();
    for t in [
        "The deploy to staging failed on a missing secret.",
        "We adopted a beagle puppy named Rex.",
        "Invoices are exported as one CSV per month.",
    ] {
        common::ok(dir, &["message", "--role", "user", t]);
    }
    let r = common::json(dir, &["reindex", "--json"]);
    assert_eq!(r["embedded"], 3, "{r}");
    assert_eq!(r["model"], "smollm2");
    let ctx = common::json(
        dir,
        &["context", "--query", "beagle", "--budget", "400", "--json"],
    );
    assert!(ctx.to_string().contains("beagle"), "{ctx}");
    let again = common::json(dir, &["reindex", "--json"]);
    assert_eq!(again["embedded"], 0, "{again}");

    // A server that went away: the error names it, and nothing is lost.
    llama.kill();
    common::ok(dir, &["message", "--role", "user", "One more turn."]);
    let out = common::mnemon(dir, &["reindex"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("smollm2") && err.contains("/v1/embeddings"),
        "{err}"
    );
    // The context is made from words alone, and says why.
    let out = common::mnemon(
        dir,
        &["context", "--query", "One more turn", "--budget", "400"],
    );
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("One more turn"), "{said}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("retrieval by meaning is off"), "{err}");
}
