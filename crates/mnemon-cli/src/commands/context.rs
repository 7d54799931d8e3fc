//! `mnemon context` (what to send) and `mnemon search` (across every tier).

use anyhow::Result;
use mnemon::ContextQuery;
use mnemon_core::assemble::Format;

use crate::cli::{ContextArgs, Global, SearchArgs};
use crate::output::{BOLD, DIM, WARN, json, stored, thousands};
use crate::project::Project;

pub fn context(g: &Global, a: &ContextArgs) -> Result<()> {
    let format: Format = a.format.parse().map_err(anyhow::Error::msg)?;
    let m = Project::find(g.dir.as_deref())?.open(a.agent.agent.as_deref())?;
    let out = m.context(&ContextQuery {
        budget: a.budget,
        preset: a.preset.clone(),
        query: a.query.clone(),
        format,
        messages_before: None,
    })?;
    for w in &out.warnings {
        anstream::eprintln!("{WARN}warning{WARN:#}: {w}");
    }
    if g.json || format == Format::Json {
        return json(&out);
    }
    if format == Format::Messages {
        return json(&out.messages);
    }
    println!("{}", stored(&out.text));
    let sections: Vec<String> = out
        .sections
        .iter()
        .map(|s| format!("{} {}", s.kind.name(), thousands(s.tokens)))
        .collect();
    anstream::eprintln!(
        "{DIM}{} / {} tokens ({}, plan {}): {}{DIM:#}",
        thousands(out.tokens),
        thousands(out.budget),
        m.tokenizer()?,
        out.plan,
        sections.join(", ")
    );
    Ok(())
}

pub fn search(g: &Global, a: &SearchArgs) -> Result<()> {
    let hits = Project::find(g.dir.as_deref())?
        .open(None)?
        .search(&a.query, a.limit)?;
    if g.json {
        return json(&hits);
    }
    if hits.is_empty() {
        println!("nothing matches `{}`", a.query);
    }
    for h in &hits {
        let text: String = h.hit.text.replace('\n', " ").chars().take(160).collect();
        let text = stored(&text);
        println!(
            "{BOLD}{:<12}{BOLD:#} {:.3}  {DIM}{:?} {}{DIM:#}  {text}",
            h.hit.id,
            h.score,
            h.hit.source,
            h.hit.at.datetime().format("%Y-%m-%d %H:%M")
        );
    }
    Ok(())
}
