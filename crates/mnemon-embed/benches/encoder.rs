//! The encoder alone: how long one document and one query take, and how
//! many documents a second every core embeds, with the real
//! all-MiniLM-L6-v2 (the directory `scripts/embedding-model.sh` prints,
//! or `MNEMON_EMBED_MODEL`). What an import with embeddings is bound by.
//!
//! The documents are about 700 bytes, the length `chunks` cuts a long
//! record into, of ordinary English made from a fixed list of sentences,
//! so every run embeds the same texts.
//!
//! Run: `cargo bench -p mnemon-embed --bench encoder [-- DOCUMENTS]`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

mod support;

use std::time::Instant;

use mnemon_core::assemble::semantic::Embedder;
use mnemon_embed::LocalEmbedder;

const SENTENCES: &[&str] = &[
    "The migration of the users table finished after midnight, two hours later than planned.",
    "We agreed to keep sessions in Redis and to move the billing jobs to the new queue.",
    "My sister is flying in from Lisbon on Thursday, so I will take the afternoon off.",
    "The login endpoint returned a timeout whenever the cache was cold after a deploy.",
    "Could you remind me which version of the schema added the invoice totals?",
    "Honestly the hike was harder than I expected, but the view from the ridge was worth it.",
    "The rollback restored the index, and the query planner picked the right plan again.",
    "I started reading a book about the history of maps, and it is better than it sounds.",
    "Retry the upload with a smaller batch size and log every response that is not a 200.",
    "Last spring we adopted a beagle puppy called Rex, who still chews every shoe he finds.",
];

/// Document `i`: sentences from the list in an order of its own, up to
/// about 700 bytes.
fn document(i: usize) -> String {
    let mut text = String::new();
    let mut k = i;
    while text.len() < 620 {
        text.push_str(SENTENCES[k % SENTENCES.len()]);
        text.push(' ');
        k = k * 7 + 3;
    }
    text.trim_end().to_string()
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let model = LocalEmbedder::open(&support::model_dir(), None).unwrap();
    let docs: Vec<String> = (0..n).map(document).collect();
    let refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    // Warm-up.
    model.embed(&refs[..refs.len().min(8)]).unwrap();

    let mut one = Vec::new();
    for d in refs.iter().take(40) {
        let t = Instant::now();
        model.embed(&[d]).unwrap();
        one.push(t.elapsed());
    }
    support::report("one document (about 700 bytes)", one);

    let t = Instant::now();
    model.embed(&refs).unwrap();
    let took = t.elapsed();
    println!(
        "{n} documents on every core                 {:.1} documents/s",
        n as f64 / took.as_secs_f64()
    );

    let mut queries = Vec::new();
    for i in 0..300 {
        let q = format!(
            "Why did the {} fail after the deploy?",
            ["login endpoint", "billing queue", "schema migration"][i % 3]
        );
        let t = Instant::now();
        model.embed_query(&q).unwrap();
        queries.push(t.elapsed());
    }
    support::report("one query", queries);
}
