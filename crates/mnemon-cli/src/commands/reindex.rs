//! `mnemon reindex`: vectors for every stored record, so retrieval by
//! meaning finds history written before `[embeddings]` was set (or before
//! its model changed). `mnemon import` does the same for what it imported.

use std::io::IsTerminal;

use anyhow::Result;
use mnemon::Mnemon;
use mnemon::embeddings::Reindexed;

use crate::cli::Global;
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::Project;

pub fn run(g: &Global) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(None)?;
    let r = embed_all(&m, g.json)?;
    if g.json {
        return json(&r);
    }
    println!(
        "{BOLD}reindexed{BOLD:#}: {} records embedded with {}{}",
        thousands(r.embedded),
        r.model,
        if r.remaining > 0 {
            format!(
                "  {DIM}({} written meanwhile; run it again){DIM:#}",
                thousands(r.remaining)
            )
        } else {
            String::new()
        }
    );
    Ok(())
}

/// Every record without a vector embedded, with a progress bar on a
/// terminal (never in what a script reads).
pub fn embed_all(m: &Mnemon, quiet: bool) -> Result<Reindexed> {
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} embedding {pos}/{len} records [{bar:30}] {eta} left",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let r = m.reindex(&mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    Ok(r?)
}
