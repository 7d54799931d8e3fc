//! `mnemon reindex`: vectors for every stored record, so retrieval by
//! meaning finds history written before `[embeddings]` was set (or before
//! its model changed). `mnemon import` does the same for what it imported.
//! `mnemon embeddings fetch`: a model's files from the Hugging Face hub.

use std::io::IsTerminal;

use anyhow::Result;
use mnemon::Mnemon;
use mnemon::embeddings::Reindexed;

use crate::cli::{FetchArgs, Global};
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

/// Fetches a model, loads it once (so a bad download is found now, not at
/// the first context), and prints the configuration that uses it.
pub fn fetch(g: &Global, a: &FetchArgs) -> Result<()> {
    let progress = !g.json && std::io::stderr().is_terminal();
    let f = mnemon_embed::hub::fetch(&a.repo, &a.revision, a.cache.as_deref(), progress)?;
    let name = a.repo.rsplit('/').next().unwrap_or(&a.repo).to_string();
    let model = mnemon_embed::LocalEmbedder::open(&f.dir, Some(&name))?;
    let dims = mnemon::mnemon_core::assemble::semantic::Embedder::embed_query(&model, "hello")
        .map(|v| v.len())
        .map_err(|e| anyhow::anyhow!("{} does not embed: {e}", f.dir.display()))?;
    if g.json {
        return json(&serde_json::json!({
            "repo": f.repo,
            "revision": f.revision,
            "dir": f.dir,
            "model": name,
            "dimensions": dims,
        }));
    }
    println!(
        "{BOLD}fetched{BOLD:#} {} ({}) into {}  {DIM}({dims}-dimensional vectors){DIM:#}",
        f.repo,
        f.revision,
        f.dir.display()
    );
    println!("\nAdd to .mnemon/config.toml, then run `mnemon reindex`:\n");
    println!(
        "[embeddings]\nprovider = \"local\"\npath = {}\nmodel = {}",
        toml_string(&f.dir.display().to_string()),
        toml_string(&name)
    );
    Ok(())
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}
