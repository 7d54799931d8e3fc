//! `mnemon eval recall` and `mnemon eval synth`. The evaluation itself is
//! the library's (`mnemon::eval`); this prints it.

use anyhow::{Context, Result};
use mnemon::eval::{Baseline, METHODS, Report, recall};
use mnemon_import::eval::{Dataset, synth};

use crate::cli::{BaselineArg, EvalCommand, Global};
use crate::output::{BOLD, DIM, json};

pub fn run(g: &Global, c: &EvalCommand) -> Result<()> {
    match c {
        EvalCommand::Synth {
            out,
            seed,
            conversations,
            sessions,
            turns,
        } => {
            // Each turn is held in memory before the file is written.
            const MAX_TURNS: usize = 2_000_000;
            let total = conversations
                .saturating_mul(*sessions)
                .saturating_mul(*turns);
            if total > MAX_TURNS {
                anyhow::bail!(
                    "{conversations} conversations × {sessions} sessions × {turns} turns is {} turns; at most {} fit in one dataset: lower one of them",
                    mnemon_core::text::thousands(total as u64),
                    mnemon_core::text::thousands(MAX_TURNS as u64)
                );
            }
            let d = synth::generate(*seed, *conversations, *sessions, *turns);
            let text = serde_json::to_string_pretty(&d)?;
            mnemon::write_atomically(out, text.as_bytes())?;
            let q: usize = d.conversations.iter().map(|c| c.questions.len()).sum();
            if g.json {
                return json(
                    &serde_json::json!({"path": out, "conversations": d.conversations.len(), "questions": q}),
                );
            }
            println!(
                "wrote {} ({} conversations, {} questions)",
                out.display(),
                d.conversations.len(),
                q
            );
            Ok(())
        }
        EvalCommand::Recall {
            data,
            budgets,
            window,
            preset,
            trace,
            embeddings,
            baseline,
            vector_cache,
        } => {
            let text = std::fs::read_to_string(data)
                .with_context(|| format!("cannot read {}", data.display()))?;
            let d = Dataset::from_json(&text, &data.display().to_string())?;
            let embedder = match embeddings {
                Some(dir) => {
                    let m: std::sync::Arc<dyn mnemon_core::assemble::semantic::Embedder> =
                        std::sync::Arc::new(mnemon_embed::LocalEmbedder::open(dir, None)?);
                    Some(match vector_cache {
                        Some(path) => std::sync::Arc::new(
                            mnemon::eval::vectors::CachedEmbedder::open(m, path)?,
                        ),
                        None => m,
                    })
                }
                None => None,
            };
            let baselines: Vec<Baseline> = if baseline.is_empty() {
                Baseline::all(embedder.is_some())
            } else {
                baseline
                    .iter()
                    .map(|b| match b {
                        BaselineArg::Recent => Baseline::Recent,
                        BaselineArg::Bm25 => Baseline::Bm25,
                        BaselineArg::Hybrid => Baseline::Hybrid,
                    })
                    .collect()
            };
            let report = recall(&d, budgets, *window, preset, *trace, embedder, &baselines)?;
            if g.json {
                return json(&report);
            }
            print(&report);
            Ok(())
        }
    }
}

fn print(r: &Report) {
    println!(
        "{BOLD}evidence recall{BOLD:#}: {} conversations, {} questions, window {}, preset {}, {}  {DIM}({} refreshes, {} checkpoints during ingest){DIM:#}",
        r.conversations, r.questions, r.window, r.preset, r.tokenizer, r.refreshes, r.checkpoints
    );
    println!(
        "{:>7}  {:<8} {:>7} {:>8} {:>6}",
        "budget", "method", "recall", "all-hit", "MRR"
    );
    for b in &r.results {
        for m in METHODS {
            if let Some(s) = b.overall.get(m) {
                println!(
                    "{:>7}  {:<8} {:>7.3} {:>8.3} {:>6.3}",
                    b.budget, m, s.recall, s.all_hit, s.mrr
                );
            }
        }
    }
    let against: Vec<&str> = METHODS
        .into_iter()
        .filter(|m| r.results.iter().any(|b| b.lead.contains_key(*m)))
        .collect();
    if !against.is_empty() {
        println!(
            "\n{BOLD}mnemon's lead in recall{BOLD:#} {DIM}(mean over questions, 95% interval of it){DIM:#}"
        );
        let mut head = format!("{:>7}", "budget");
        for m in &against {
            head.push_str(&format!("  {m:<26}"));
        }
        println!("{}", head.trim_end());
        for b in &r.results {
            let mut row = format!("{:>7}", b.budget);
            for m in &against {
                let cell = b.lead.get(*m).map_or_else(
                    || "-".to_string(),
                    |l| format!("{:+.3} ({:+.3} to {:+.3})", l.mean, l.low, l.high),
                );
                row.push_str(&format!("  {cell:<26}"));
            }
            println!("{}", row.trim_end());
        }
    }
    let shown: Vec<&str> = METHODS
        .into_iter()
        .filter(|m| r.results.iter().any(|b| b.overall.contains_key(*m)))
        .collect();
    println!("\n{BOLD}recall by category{BOLD:#} ({})", shown.join(" / "));
    for b in &r.results {
        let cats: Vec<String> = b
            .by_category
            .iter()
            .map(|(cat, m)| {
                let each: Vec<String> = shown
                    .iter()
                    .map(|k| format!("{:.2}", m.get(*k).map_or(0.0, |s| s.recall)))
                    .collect();
                format!("{cat} {}", each.join("/"))
            })
            .collect();
        println!("{:>7}  {}", b.budget, cats.join("  "));
    }
}
