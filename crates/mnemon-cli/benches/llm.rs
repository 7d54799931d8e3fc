//! What talking to an LLM costs mnemon, beyond the model's own time.
//!
//! `cargo bench -p mnemon-cli --bench llm -- [RECORDS] [ROUNDS]`
//!
//! 1. `mnemon record` with window detection on (`[llm]` pointing at a live
//!    llama-server, probe cached) against the same command without
//!    `[llm]`, interleaved process by process so that machine noise falls
//!    on both alike.
//! 2. `mnemon refresh` with the LLM summarizer: its wall time minus the
//!    time the server says it spent (`/metrics`: prompt and generation
//!    seconds), against an extractive refresh of an identical project.
//!
//! The server is the one the tests use: `scripts/llama-server.sh` builds
//! it, SmolLM2-135M with `-c 2048`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench: a panic with its message is the failure report"
)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mnemon");

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server() -> (Server, u16) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llama-server.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg("paths")
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/llama-server.sh paths failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace();
    let (bin, model) = (parts.next().unwrap(), parts.next().unwrap());
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(bin)
        .args([
            "-m",
            model,
            "-c",
            "2048",
            "--host",
            "127.0.0.1",
            "--metrics",
            "-t",
            "2",
        ])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let s = Server(child);
    let start = Instant::now();
    while !curl(&format!("http://127.0.0.1:{port}/health")).contains("ok") {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "server not healthy"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (s, port)
}

/// A plain HTTP GET on loopback: the status line, headers and body.
fn curl(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let Ok(mut s) = std::net::TcpStream::connect(host) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return String::new();
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// Seconds the server spent on prompts and on generation, from /metrics.
fn model_seconds(port: u16) -> f64 {
    let m = curl(&format!("http://127.0.0.1:{port}/metrics"));
    m.lines()
        .filter(|l| {
            l.starts_with("llamacpp:prompt_seconds_total")
                || l.starts_with("llamacpp:tokens_predicted_seconds_total")
        })
        .filter_map(|l| l.split_whitespace().last()?.parse::<f64>().ok())
        .sum()
}

fn project(llm: Option<u16>) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    run(&dir, &["init"]);
    if let Some(port) = llm {
        let path = dir.join(".mnemon/config.toml");
        let text = std::fs::read_to_string(&path).unwrap().replacen(
            "# provider = \"openai\"",
            &format!("provider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n#"),
            1,
        );
        std::fs::write(&path, text).unwrap();
    } else {
        // The same window without asking a server, so both projects do
        // the same work apart from detection.
        let path = dir.join(".mnemon/config.toml");
        let text = std::fs::read_to_string(&path).unwrap().replacen(
            "# max_tokens = 128000",
            "max_tokens = 2048",
            1,
        );
        std::fs::write(&path, text).unwrap();
    }
    (tmp, dir)
}

fn run(dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "mnemon {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let p = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    (p(0.5), p(0.95))
}

fn fill(dir: &Path, n: usize) {
    for i in 0..n {
        run(
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

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let records = args.first().copied().unwrap_or(200);
    let rounds = args.get(1).copied().unwrap_or(3);
    let (_server, port) = start_server();

    // 1. record, with and without detection, interleaved.
    let (_a, plain) = project(None);
    let (_b, detect) = project(Some(port));
    run(&detect, &["status"]); // warms the probe cache
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for i in 0..records {
        let data = format!("{{\"i\": {i}}}");
        let args = ["record", "--type", "bench", "--data", &data];
        without.push(run(&plain, &args).as_secs_f64() * 1e3);
        with.push(run(&detect, &args).as_secs_f64() * 1e3);
    }
    let (w50, w95) = stats(without);
    let (d50, d95) = stats(with);
    println!("record, {records} processes each, interleaved");
    println!("  without [llm]         p50 {w50:.2} ms  p95 {w95:.2} ms");
    println!(
        "  with detection cached p50 {d50:.2} ms  p95 {d95:.2} ms   ratio p50 {:.3}×, p95 {:.3}×",
        d50 / w50,
        d95 / w95
    );

    // 2. refresh: the LLM's overhead outside the model.
    let mut overheads = Vec::new();
    let mut llm_walls = Vec::new();
    let mut model_times = Vec::new();
    let mut extractive = Vec::new();
    for _ in 0..rounds {
        let (_c, llm) = project(Some(port));
        let (_e, ext) = project(None);
        fill(&llm, 40);
        fill(&ext, 40);
        let before = model_seconds(port);
        let wall = run(&llm, &["refresh"]).as_secs_f64();
        let model = model_seconds(port) - before;
        llm_walls.push(wall * 1e3);
        model_times.push(model * 1e3);
        overheads.push((wall - model) * 1e3);
        extractive.push(run(&ext, &["refresh"]).as_secs_f64() * 1e3);
    }
    let (o50, _) = stats(overheads);
    let (l50, _) = stats(llm_walls);
    let (m50, _) = stats(model_times);
    let (e50, _) = stats(extractive);
    println!("refresh of 40 operations, {rounds} rounds (medians)");
    println!("  with the LLM summarizer  {l50:.0} ms wall, of which the model {m50:.0} ms");
    println!(
        "  outside the model        {o50:.0} ms   (extractive refresh {e50:.0} ms: ratio {:.2}×)",
        o50 / e50
    );
}
