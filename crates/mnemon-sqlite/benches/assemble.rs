//! Assembling an 8K-token context with a query from a store of 1,000 tasks
//! and N operations (default 10,000 and 100,000; pass sizes as arguments),
//! against two baselines in the same run: the most recent operations that
//! fit, and BM25's top operations packed until full. Also peak RSS.
//!
//! Run: `cargo bench -p mnemon-sqlite --bench assemble [-- 10000 100000 1000000]`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::time::Instant;

use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::retrieve::{ALL_SOURCES, SearchStore, query_terms};
use mnemon_core::assemble::{BudgetPlan, Format};
use mnemon_core::engine::ContextRequest;
use mnemon_core::memory::{EntityKind, NewEntity, NewOperation, OperationLog, OperationQuery};
use mnemon_core::tokens::{ChatFormat, Encoding, OpenAiBpe, TokenCounter};
use mnemon_sqlite::SqliteStore;
use serde_json::json;

#[path = "support.rs"]
mod support;
use support::report;

const WORDS: &[&str] = &[
    "login",
    "signup",
    "token",
    "refresh",
    "schema",
    "cache",
    "latency",
    "bcrypt",
    "salt",
    "email",
    "session",
    "migration",
    "endpoint",
    "review",
    "deploy",
    "rollback",
    "index",
    "query",
    "retry",
    "timeout",
    "quota",
    "billing",
    "invoice",
    "search",
    "ranking",
    "upload",
    "thumbnail",
    "queue",
];

/// The worst case: every operation draws on the same 28 words, so every
/// query word is in about a fifth of all records.
fn narrow(i: usize) -> String {
    let w = |k: usize| WORDS[(i * 7 + k * 13 + i / 11) % WORDS.len()];
    format!(
        "Step {i}: fixed the {} {} after the {} {} failed on task #{}; reran {} tests.",
        w(0),
        w(1),
        w(2),
        w(3),
        i % 1000,
        w(4)
    )
}

/// A deterministic pseudo-random stream (64-bit LCG).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

/// A made-up but pronounceable word for rank `r`.
fn word(r: usize) -> String {
    const SYL: &[&str] = &[
        "ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "pa", "ro", "ne", "bi", "to", "ga",
        "li",
    ];
    let mut w = String::new();
    let mut n = r + 16;
    while n > 0 {
        w.push_str(SYL[n % SYL.len()]);
        n /= SYL.len();
    }
    w
}

/// Word ranks drawn from a Zipf distribution (s = 1.07) over a 5,000-word
/// vocabulary, the shape of natural text: a few words everywhere, most
/// words rare.
struct Zipf {
    cumulative: Vec<f64>,
    seed: u64,
}

impl Zipf {
    fn new(seed: u64) -> Zipf {
        let mut acc = 0.0;
        let cumulative = (1..=5_000)
            .map(|k| {
                acc += 1.0 / (k as f64).powf(1.07);
                acc
            })
            .collect();
        Zipf { cumulative, seed }
    }

    fn rank(&mut self) -> usize {
        let total = *self.cumulative.last().expect("not empty");
        let x = (lcg(&mut self.seed) as f64 / (1u64 << 31) as f64) * total;
        self.cumulative.partition_point(|c| *c < x)
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| word(self.rank()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One line of `/proc/self/status` in MiB (0 where there is none).
fn status_mib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// What the process has had fetched from storage so far, in MiB
/// (`read_bytes` of `/proc/self/io`): reads the page cache answered do not
/// count, so this tells a slow run on a cold cache from a slow build.
fn disk_read_mib() -> f64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("read_bytes:"))
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .map_or(0.0, |b| b / (1024.0 * 1024.0))
}

/// The process's peak resident memory, and what is resident now split into
/// memory it allocated (heap, SQLite's page cache) and pages of its own
/// executable: the tokenizer's tables are compiled into the binary and
/// read once when it loads, and those clean pages count towards RSS until
/// the kernel needs them back.
fn memory() -> String {
    format!(
        "peak RSS {:.1} MiB (now {:.1} MiB allocated, {:.1} MiB of the executable's pages)",
        status_mib("VmHWM:"),
        status_mib("RssAnon:"),
        status_mib("RssFile:")
    )
}

fn pack(counter: &dyn TokenCounter, lines: &[String], budget: u64) -> u64 {
    let mut est = 0;
    let mut kept: Vec<&str> = Vec::new();
    for l in lines {
        let c = counter.count(l) as u64 + 1;
        if est + c <= budget {
            est += c;
            kept.push(l);
        }
    }
    let mut t = kept.join("\n");
    while counter.count(&t) as u64 > budget {
        kept.pop();
        t = kept.join("\n");
    }
    counter.count(&t) as u64
}

fn main() {
    let sizes: Vec<usize> = {
        let v: Vec<usize> = std::env::args()
            .skip(1)
            .filter_map(|a| a.parse().ok())
            .collect();
        if v.is_empty() {
            vec![10_000, 100_000]
        } else {
            v
        }
    };
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let corpora: Vec<&str> = match std::env::var("MNEMON_BENCH_CORPUS") {
        Ok(c) => vec![if c == "narrow" { "narrow" } else { "zipf" }],
        Err(_) => vec!["zipf", "narrow"],
    };
    for n in sizes {
        for corpus in &corpora {
            run(&counter, n, corpus);
        }
    }
}

fn run(counter: &OpenAiBpe, n: usize, corpus: &str) {
    let counter = *counter;
    {
        let mut zipf = Zipf::new(42);
        let mut text = |i: usize| match corpus {
            "narrow" => narrow(i),
            _ => format!("step {i}: {} on task #{}", zipf.words(12), i % 1000),
        };
        // MNEMON_BENCH_KEEP=DIR keeps each store there and reuses it on the
        // next run, so a profile of the queries need not wait for ingest.
        let dir = tempfile::tempdir().unwrap();
        let path = match std::env::var_os("MNEMON_BENCH_KEEP") {
            Some(keep) => std::path::PathBuf::from(keep).join(format!("assemble-{corpus}-{n}.db")),
            None => dir.path().join("mnemon.db"),
        };
        let reuse = path.exists();
        let e = engine(
            SqliteStore::open(&path).unwrap(),
            128_000,
            SteppingClock::starting(T0),
            "bench",
        );
        let m = e.memory();
        let t = Instant::now();
        for i in 0..if reuse { 0 } else { 1_000 } {
            let t = text(i);
            m.create_entity(&NewEntity {
                kind: EntityKind::Task,
                title: format!("Task {i}: {}", t.chars().take(40).collect::<String>()),
                description: None,
                priority: Some((i % 5 + 1) as u8),
                parent: None,
            })
            .unwrap();
        }
        for i in 0..if reuse { 0 } else { n } {
            if i % 2_000 == 0 {
                m.start_session(None).unwrap();
            }
            m.record(NewOperation {
                kind: "task_execution".into(),
                data: json!({ "text": text(i) }),
                status: Some("completed".into()),
                ..NewOperation::default()
            })
            .unwrap();
        }
        if reuse {
            println!(
                "\n{n} operations ({corpus} corpus): reusing {}",
                path.display()
            );
        } else {
            println!(
                "\n{n} operations ({corpus} corpus) and 1,000 tasks stored in {:.1?}",
                t.elapsed()
            );
        }
        let mut qz = Zipf::new(7);
        let queries: Vec<String> = (0..200)
            .map(|i| match corpus {
                "narrow" => format!(
                    "why did the {} {} fail",
                    WORDS[i % WORDS.len()],
                    WORDS[(i * 5) % WORDS.len()]
                ),
                _ => format!("why did the {} fail", qz.words(3)),
            })
            .collect();
        let budget = 8_000;
        let plan = BudgetPlan::preset("tiers").unwrap();
        let ask = |q: &str| {
            let out = e
                .context(&ContextRequest {
                    plan: plan.clone(),
                    budget: Some(budget),
                    query: Some(q.to_string()),
                    format: Format::Markdown,
                    chat: ChatFormat::OPENAI,
                    messages_before: None,
                })
                .unwrap();
            assert!(out.tokens <= budget);
        };
        // A warm-up with other queries of the same shape, so the first
        // measured calls do not pay for cold caches (page cache, statement
        // cache, the counts of common words) that an orchestrator pays once.
        let mut wz = Zipf::new(11);
        for i in 0..50 {
            ask(&match corpus {
                "narrow" => format!("what broke the {}", WORDS[(i * 3 + 1) % WORDS.len()]),
                _ => format!("what broke the {}", wz.words(3)),
            });
        }
        let before = memory();
        let disk = disk_read_mib();
        let mut times = Vec::new();
        for q in &queries {
            let t = Instant::now();
            ask(q);
            times.push(t.elapsed());
        }
        let ours = report("mnemon context (tiers, query, 8K)", times);
        println!(
            "  read from the disk, not the page cache, during those calls: {:.1} MiB",
            disk_read_mib() - disk
        );
        let mut times = Vec::new();
        for q in &queries {
            let t = Instant::now();
            e.search(q, 320).unwrap();
            times.push(t.elapsed());
        }
        report("  of which retrieval alone", times);
        let after = memory();
        let store = e.memory().store();
        let mut times = Vec::new();
        for _ in &queries {
            let t = Instant::now();
            let recent = store
                .operations(&OperationQuery {
                    limit: Some(400),
                    ..OperationQuery::default()
                })
                .unwrap();
            let lines: Vec<String> = recent.iter().map(|o| o.data["text"].to_string()).collect();
            pack(&counter, &lines, budget);
            times.push(t.elapsed());
        }
        let recent = report("baseline recent operations", times);
        let mut times = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let mut hits = store
                .search(&query_terms(q).join(" "), 200, &ALL_SOURCES)
                .unwrap();
            hits.sort_by(|a, b| a.bm25.total_cmp(&b.bm25));
            let lines: Vec<String> = hits.into_iter().map(|h| h.text).collect();
            pack(&counter, &lines, budget);
            times.push(t.elapsed());
        }
        let bm25 = report("baseline BM25 top operations", times);
        println!(
            "p95 ratios: mnemon / recent {:.2}, mnemon / bm25 {:.2}\nafter loading and warm-up: {before}\nafter assembling: {after}",
            ours.as_secs_f64() / recent.as_secs_f64(),
            ours.as_secs_f64() / bm25.as_secs_f64(),
        );
    }
}
