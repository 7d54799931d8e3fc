//! What an exact count costs in memory: resident set size (from
//! /proc/self/status) of a fresh process before counting, after its first
//! count, and after counting 3 MB of mixed text, for mnemon's tables and
//! for bpe-openai (the encoder mnemon used before them). Each measurement
//! runs in a child process of its own, so none inherits another's pages.
//!
//! Run: `cargo bench -p mnemon-core --bench token_memory` (Linux only).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};

#[path = "../tests/support/corpus.rs"]
#[allow(dead_code)]
mod corpus;

/// Resident kilobytes now and at the peak (VmRSS, VmHWM).
fn resident() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux's /proc");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn child(encoder: &str, encoding: Encoding) {
    let text = corpus::mixed(7, 3 << 20);
    let (before, _) = resident();
    let count: Box<dyn Fn(&str) -> usize> = match encoder {
        "mnemon" => {
            let o = OpenAiBpe::new(encoding);
            Box::new(move |t| o.count(t))
        }
        _ => {
            let b = match encoding {
                Encoding::Cl100kBase => bpe_openai::cl100k_base(),
                Encoding::O200kBase => bpe_openai::o200k_base(),
            };
            Box::new(move |t| b.count(t))
        }
    };
    count("hello world");
    let (first, _) = resident();
    let n = count(&text);
    let (_, peak) = resident();
    println!(
        "| {encoding} | {encoder} | {:.1} MiB | {:.1} MiB | {n} |",
        (first - before) as f64 / 1024.0,
        (peak - before) as f64 / 1024.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let encoding: Encoding = args[i + 2].parse().unwrap();
        child(&args[i + 1], encoding);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    println!(
        "| encoding | encoder | resident after the first count | peak after counting 3 MB | tokens |"
    );
    println!("|---|---|---|---|---|");
    let me = std::env::current_exe().unwrap();
    for encoding in Encoding::ALL {
        for encoder in ["mnemon", "bpe-openai"] {
            let out = std::process::Command::new(&me)
                .args(["--child", encoder, encoding.name()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}
