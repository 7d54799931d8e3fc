//! The library as a Rust user gets it by default, without its heavy
//! features (`cargo test -p mnemon`, which `.ci/run` runs besides the
//! workspace's tests with every feature): the embedded default works, and
//! what a configuration asks of a missing feature is refused or skipped
//! with a message that names the feature.

#![cfg(not(any(feature = "postgres", feature = "llm", feature = "embeddings")))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon::{ContextQuery, InitOptions, Mnemon, NewOperation, OpenOptions};
use serde_json::json;

fn with_config(extra: &str) -> Mnemon {
    OpenOptions::new()
        .in_memory(Some(extra))
        .expect("a valid configuration")
}

#[test]
fn a_postgres_url_is_refused_with_the_feature_to_build() {
    let dir = tempfile::tempdir().unwrap();
    let made = mnemon::init(dir.path(), &InitOptions::default()).unwrap();
    let mut text = std::fs::read_to_string(&made.config_path).unwrap();
    text.push_str("\n[storage]\nurl = \"postgres://mnemon@127.0.0.1:9/mnemon\"\n");
    std::fs::write(&made.config_path, text).unwrap();
    let err = Mnemon::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("[storage] url"), "{err}");
    assert!(err.contains("`postgres` feature"), "{err}");
    assert!(err.contains("config.toml"), "names where it was set: {err}");
}

#[test]
fn an_llm_summarizer_gives_way_to_an_extractive_summary_that_says_why() {
    let m = with_config(
        "[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    );
    for i in 0..5 {
        m.record(NewOperation::new(
            "task_execution",
            json!({"task": i, "result": "the login form validates"}),
        ))
        .unwrap();
    }
    let done = m.refresh().unwrap();
    assert!(
        done.warnings.iter().any(|w| w.contains("`llm` feature")),
        "{:?}",
        done.warnings
    );
}

#[test]
fn a_local_embedding_model_leaves_retrieval_to_words_and_says_why() {
    let m = with_config("[embeddings]\nprovider = \"local\"\npath = \"models/minilm\"\n");
    m.record(NewOperation::new(
        "task_execution",
        json!({"result": "sessions live in Redis"}),
    ))
    .unwrap();
    let ctx = m
        .context(&ContextQuery {
            budget: Some(500),
            query: Some("where do sessions live".into()),
            ..ContextQuery::default()
        })
        .unwrap();
    assert!(ctx.text.contains("Redis"), "{}", ctx.text);
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("`embeddings` feature")),
        "{:?}",
        ctx.warnings
    );
}
