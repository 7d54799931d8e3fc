//! The context proxy with the clients its users have: the official `openai`
//! and `anthropic` Python SDKs (pinned below, installed from PyPI into
//! `~/.cache/mnemon/proxy-venv`) against `mnemon serve` in front of a real
//! llama-server (SmolLM2, `-c 2048`). `tests/proxy_client.py` holds the
//! scenarios; between mnemon and llama-server it runs a relay that logs
//! what mnemon sent upstream and can break a stream off: instrumentation,
//! not a double, since every answer is llama-server's own.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::llama::Llama;
use serde_json::Value;

/// The SDK releases the scenarios are written against.
const SDKS: [&str; 2] = ["openai==3.57.0", "anthropic==2.14.0"];

fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| common::python::venv("proxy-venv", &SDKS, "import openai, anthropic"))
        .clone()
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/proxy_client.py")
}

/// The relay between mnemon and llama-server, killed when dropped.
struct Relay {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Relay {
    fn start(upstream: &str, log: PathBuf) -> Relay {
        let mut child = Command::new(python())
            .arg(script())
            .args(["relay", upstream])
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the relay prints its port");
        Relay { child, port, log }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project whose `[llm]` reaches llama-server through the relay (its
/// summarizer straight, so the relay logs only what the proxy sent), with
/// each `[proxy]` key of `proxy` set and each text of `replace` replaced,
/// served, and a token for it.
struct Setup {
    _llama: Llama,
    relay: Relay,
    dir: tempfile::TempDir,
    server: common::Served,
    token: String,
    upstream: String,
    // One llama-server at a time: three on two cores take longer than one
    // after the other. Last, so it is let go after the rest is stopped.
    _turn: std::sync::MutexGuard<'static, ()>,
}

fn setup(proxy: &[(&str, &str)], replace: &[(&str, &str)]) -> Setup {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let llama = Llama::start(&[]);
    let upstream = format!("http://127.0.0.1:{}", llama.port);
    let dir = tempfile::tempdir().unwrap();
    let relay = Relay::start(&upstream, dir.path().join("upstream.jsonl"));
    common::ok(dir.path(), &["init"]);
    let path = dir.path().join(".mnemon/config.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut text = text
        .replacen(
            "# provider = \"openai\"",
            &format!(
                "provider = \"openai\"\nbase_url = \"http://127.0.0.1:{}/v1\"\n#",
                relay.port
            ),
            1,
        )
        .replacen(
            "# [llm.summarizer]",
            &format!("[llm.summarizer]\nprovider = \"openai\"\nbase_url = \"{upstream}/v1\"\n#"),
            1,
        )
        .to_string();
    for (key, value) in proxy {
        let at = text.find("[proxy]").unwrap();
        let line = text[at..].find(&format!("\n{key} = ")).unwrap() + at + 1;
        let end = text[line..].find('\n').unwrap() + line;
        text.replace_range(line..end, &format!("{key} = {value}"));
    }
    for (old, new) in replace {
        assert!(text.contains(old), "{old} is in the default configuration");
        text = text.replacen(old, new, 1);
    }
    std::fs::write(&path, text).unwrap();
    let token = common::token(dir.path(), "default");
    let server = common::serve(dir.path());
    Setup {
        _llama: llama,
        relay,
        dir,
        server,
        token,
        upstream,
        _turn: turn,
    }
}

impl Setup {
    fn run(&self, scenario: &str) -> String {
        let out = Command::new(python())
            .arg(script())
            .arg(scenario)
            .arg(format!("http://{}", self.server.addr))
            .arg(&self.token)
            .arg(&self.upstream)
            .arg(&self.relay.log)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "scenario {scenario} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// The proxy's sessions: title, agent and messages recorded.
    fn sessions(&self) -> Vec<(String, u64)> {
        let out = common::ok(
            self.dir.path(),
            &["session", "list", "--json", "--limit", "100"],
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .filter(|s| s["title"].as_str().unwrap_or("").starts_with("proxy "))
            .map(|s| {
                (
                    s["title"].as_str().unwrap()["proxy ".len()..].to_string(),
                    s["message_count"].as_u64().unwrap(),
                )
            })
            .collect()
    }
}

#[test]
fn a_conversation_four_times_the_window_is_answered_whole_and_recorded_once() {
    // Extractive summaries keep this 150-turn run to the model's own time;
    // the LLM summarizer's compaction is in the test below.
    let s = setup(&[("summary", "\"extractive\"")], &[]);
    let out = s.run("long");
    println!("{out}");
    let sessions = s.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    // 150 questions, 150 answers, six tool calls with their results.
    assert_eq!(sessions[0].1, 312, "every turn once: {sessions:?}");
    let audit = common::ok(
        s.dir.path(),
        &[
            "recent",
            "--type",
            "proxy_compaction",
            "--json",
            "--limit",
            "100",
        ],
    );
    let audit: Value = serde_json::from_str(&audit).unwrap();
    assert!(
        audit.as_array().is_some_and(|a| !a.is_empty()),
        "each compaction is in the log: {audit}"
    );
}

#[test]
fn streams_errors_and_concurrent_conversations_in_both_formats() {
    let s = setup(&[], &[]);
    println!("{}", s.run("streams"));
    println!("{}", s.run("bad"));
    println!("{}", s.run("concurrent"));
    let sessions = s.sessions();
    let count = |name: &str| {
        sessions
            .iter()
            .find(|(t, _)| t == name)
            .map(|(_, n)| *n)
            .unwrap_or_else(|| panic!("no conversation {name}: {sessions:?}"))
    };
    assert_eq!(count("stream-openai"), 2);
    assert_eq!(count("stream-anthropic"), 2);
    assert_eq!(count("anthropic-whole"), 2);
    // Broken off upstream, then retried: the question once, the answer once.
    assert_eq!(count("cut-stream"), 2);
    // Dropped by the client half-way: the question, and no answer.
    assert_eq!(count("dropped"), 1);
    for i in 0..16 {
        assert_eq!(count(&format!("many-{i}")), 6, "conversation many-{i}");
    }
    // An upstream that answered an error page: the question is kept, and
    // no answer was made up.
    assert_eq!(count("html"), 1);
}

#[test]
fn an_anthropic_conversation_is_compacted_by_the_llm_summarizer_and_keeps_its_system_prompt() {
    let s = setup(&[], &[]);
    println!("{}", s.run("anthropic_long"));
    let sessions = s.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0].1, 80, "40 questions and 40 answers, once each");
}

#[test]
fn injected_standing_facts_follow_the_system_prompt() {
    let s = setup(&[("inject", "\"hot\"")], &[]);
    common::ok(s.dir.path(), &["remember", "We deploy to Frankfurt only."]);
    println!("{}", s.run("inject"));
}

#[test]
fn an_upstream_that_refuses_for_length_gets_a_request_compacted_harder() {
    // mnemon is told the window is 4,096 tokens; llama-server serves 2,048,
    // as when a model's server was started with a smaller window than
    // configured and nothing probes it.
    let s = setup(
        &[],
        &[
            ("auto_detect = true", "auto_detect = false"),
            ("# max_tokens = 128000", "max_tokens = 4096"),
        ],
    );
    println!("{}", s.run("mismatch"));
    let sessions = s.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0].1, 60, "30 questions and 30 answers, once each");
}
