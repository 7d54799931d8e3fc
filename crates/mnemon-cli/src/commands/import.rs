//! `mnemon import FILE`: an existing history brought in with its dates.

use std::io::{IsTerminal, Read};
use std::sync::Arc;

use anyhow::{Context, Result};
use mnemon::ReplayClock;
use mnemon_import::{ImportFormat, SessionBy, parse};

use crate::cli::{Global, ImportArgs};
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::Project;

pub fn run(g: &Global, a: &ImportArgs) -> Result<()> {
    let (text, name) = if a.file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read the history from standard input")?;
        (s, "standard input".to_string())
    } else {
        let text = std::fs::read_to_string(&a.file).with_context(|| {
            format!(
                "cannot read {}: give a file in the evaluation format, OpenAI-style JSONL or a ChatGPT conversations.json",
                a.file.display()
            )
        })?;
        (text, a.file.display().to_string())
    };
    let format = match a.format.as_deref() {
        Some(f) => ImportFormat::parse(f)
            .with_context(|| format!("unknown format `{f}`: use {}", ImportFormat::NAMES))?,
        None => ImportFormat::detect(&text),
    };
    let by = match a.sessions.as_str() {
        "file" => SessionBy::File,
        _ => SessionBy::Day,
    };
    let sessions = parse(&text, format, by, &name)?;
    let turns: usize = sessions.iter().map(|s| s.turns.len()).sum();
    let clock = Arc::new(ReplayClock::default());
    let m = Project::find(g.dir.as_deref())?
        .open_with_clock(a.agent.agent.as_deref(), clock.clone())?;
    // Progress on the terminal only, never in what a script reads.
    let bar = (!g.json && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(turns as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} importing {pos}/{len} turns [{bar:30}] {eta} left",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let report = mnemon::import::import(&m, &clock, &sessions, |done| {
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let report = report?;
    m.flush_views();
    // What was imported is found by meaning too, when a model is set.
    let reindexed = match m.embedding_model() {
        Some(_) => Some(super::reindex::embed_all(&m, g.json)?),
        None => None,
    };
    if g.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(r) = &reindexed {
            v["embedded"] = serde_json::json!(r.embedded);
        }
        return json(&v);
    }
    println!(
        "{BOLD}imported{BOLD:#} {} messages in {} sessions from {name}{}",
        thousands(report.messages as u64),
        thousands(report.sessions as u64),
        match (&report.from, &report.to) {
            (Some(f), Some(t)) => format!("  {DIM}({} to {}){DIM:#}", &f[..10], &t[..10]),
            _ => String::new(),
        }
    );
    if let Some(r) = &reindexed {
        println!(
            "{DIM}{} records embedded with {} for retrieval by meaning{DIM:#}",
            thousands(r.embedded),
            r.model
        );
    }
    if report.already_stored > 0 {
        println!(
            "{DIM}{} turns were already stored and were left alone{DIM:#}",
            thousands(report.already_stored as u64)
        );
    }
    Ok(())
}
