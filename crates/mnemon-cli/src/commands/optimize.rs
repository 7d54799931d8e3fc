//! `mnemon optimize`: the five techniques on demand, with what each saved.

use anyhow::Result;

use crate::cli::{Global, OptimizeArgs};
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::Project;

pub fn run(g: &Global, a: &OptimizeArgs) -> Result<()> {
    let out = Project::find(g.dir.as_deref())?
        .open(a.agent.agent.as_deref())?
        .optimize(a.dry_run)?;
    crate::commands::checkpoint::warnings(&out.warnings);
    let r = &out.value;
    if g.json {
        return json(&serde_json::json!({"value": r, "events": out.events, "status": out.status}));
    }
    println!(
        "{BOLD}{}{BOLD:#}: {} → {} tokens ({} saved)",
        if r.dry_run {
            "would optimize"
        } else {
            "optimized"
        },
        thousands(r.tokens_before),
        thousands(r.tokens_after),
        thousands(r.tokens_saved)
    );
    println!(
        "{DIM}{:<20} {:>6} {:>10} {:>10} {:>10}{DIM:#}",
        "technique", "items", "before", "after", "saved"
    );
    for t in &r.techniques {
        println!(
            "{:<20} {:>6} {:>10} {:>10} {:>10}",
            t.technique.name(),
            t.items,
            thousands(t.tokens_before),
            thousands(t.tokens_after),
            thousands(t.tokens_saved)
        );
    }
    if a.verbose {
        for s in &r.substitutions {
            println!(
                "  o{} {}: {} ({} → {} tokens)",
                s.op_seq,
                s.technique.name(),
                s.reason,
                thousands(s.original_tokens),
                thousands(s.tokens_after())
            );
        }
    }
    if !r.artifacts.is_empty() {
        println!(
            "{DIM}{} under .mnemon/: {}{DIM:#}",
            if r.dry_run { "would write" } else { "wrote" },
            r.artifacts.join(", ")
        );
    }
    if r.substitutions.is_empty() {
        println!(
            "{DIM}nothing to optimize: no completed phase, large file, state, large item or stale trace in the live context{DIM:#}"
        );
    }
    Ok(())
}
