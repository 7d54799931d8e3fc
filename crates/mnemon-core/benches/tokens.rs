//! Token-counting throughput, mnemon's counters against bpe-openai (the
//! encoder mnemon used before its own tables) and tiktoken-rs in the same
//! run, and the cost of a "does it fit in 4,096 tokens?" check on a
//! 10 MB input against a full count of the same input.
//!
//! Run: `cargo bench -p mnemon-core --bench tokens`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mnemon_core::tokens::{Encoding, Heuristic, OpenAiBpe, TokenCounter};

#[path = "../tests/support/corpus.rs"]
#[allow(dead_code)] // shared with the parity tests, which also use `chunks`
mod corpus;

fn throughput(c: &mut Criterion) {
    let text = corpus::mixed(42, 1 << 20);
    let mut g = c.benchmark_group("count_1MiB_mixed");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for e in Encoding::ALL {
        let ours = OpenAiBpe::new(e);
        let theirs = match e {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base().unwrap(),
            Encoding::O200kBase => tiktoken_rs::o200k_base().unwrap(),
        };
        g.bench_function(format!("mnemon/{e}"), |b| {
            b.iter(|| ours.count(black_box(&text)))
        });
        let before = match e {
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
            Encoding::O200kBase => bpe_openai::o200k_base(),
        };
        g.bench_function(format!("bpe-openai/{e}"), |b| {
            b.iter(|| before.count(black_box(text.as_str())))
        });
        g.bench_function(format!("tiktoken-rs/{e}"), |b| {
            b.iter(|| theirs.encode_ordinary(black_box(&text)).len())
        });
    }
    let h = Heuristic::default();
    g.bench_function("heuristic", |b| b.iter(|| h.count(black_box(&text))));
    g.finish();
}

fn limit_check(c: &mut Criterion) {
    let text = corpus::mixed(43, 10 << 20);
    let mut g = c.benchmark_group("fits_4096_in_10MiB");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for e in Encoding::ALL {
        let ours = OpenAiBpe::new(e);
        g.bench_function(format!("count_up_to/{e}"), |b| {
            b.iter(|| assert_eq!(ours.count_up_to(black_box(&text), 4_096), None))
        });
        g.bench_function(format!("full_count/{e}"), |b| {
            b.iter(|| ours.count(black_box(&text)) > 4_096)
        });
    }
    g.finish();
}

criterion_group!(benches, throughput, limit_check);
criterion_main!(benches);
