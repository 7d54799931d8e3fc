//! `mnemon decision add|list|show|supersede|status`.

use std::io::Read;

use anyhow::{Context, Result, bail};
use mnemon_core::memory::{Alternative, Consequences, DecisionRecord, DecisionStatus, NewDecision};

use crate::cli::{DecisionCommand, DecisionInput, Global};
use crate::commands::checkpoint::after;
use crate::output::{BOLD, DIM, json, stored};
use crate::project::Project;

pub fn run(g: &Global, c: &DecisionCommand) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    match c {
        DecisionCommand::Add(input) => {
            let out = project
                .open(input.agent.agent.as_deref())?
                .decide(&read_input(input)?)?;
            after(g, &out);
            show(g, "recorded", &out.value)
        }
        DecisionCommand::Supersede { id, input } => {
            let out = project
                .open(input.agent.agent.as_deref())?
                .supersede(id, &read_input(input)?)?;
            after(g, &out);
            let (old, new) = &out.value;
            if g.json {
                return json(&serde_json::json!({"superseded": old, "new": new}));
            }
            println!("{BOLD}superseded{BOLD:#} {} by {}", old.id, new.id);
            Ok(())
        }
        DecisionCommand::Status { id, status } => {
            let status: DecisionStatus = status.parse().map_err(anyhow::Error::msg)?;
            let out = project.open(None)?.set_decision_status(id, status)?;
            after(g, &out);
            show(g, "updated", &out.value)
        }
        DecisionCommand::Show { id } => {
            let r = project.open(None)?.decision(id)?;
            if g.json {
                return json(&r);
            }
            print!("{}", stored(&r.to_markdown()));
            Ok(())
        }
        DecisionCommand::List { limit } => {
            let all = project.open(None)?.decisions(*limit)?;
            if g.json {
                return json(
                    &all.iter()
                        .map(DecisionRecord::to_compact_json)
                        .collect::<Vec<_>>(),
                );
            }
            if all.is_empty() {
                println!("no decisions recorded yet");
            }
            for r in &all {
                let by = r
                    .superseded_by
                    .as_ref()
                    .map(|s| format!(" by {s}"))
                    .unwrap_or_default();
                println!(
                    "{BOLD}{}{BOLD:#} {}  {DIM}[{}{by} · {}]{DIM:#}",
                    r.id,
                    stored(&r.title),
                    r.status,
                    r.timestamp.datetime().format("%Y-%m-%d")
                );
            }
            Ok(())
        }
    }
}

fn show(g: &Global, verb: &str, r: &DecisionRecord) -> Result<()> {
    if g.json {
        return json(r);
    }
    println!(
        "{BOLD}{verb}{BOLD:#} {} \"{}\" [{}]",
        r.id,
        stored(&r.title),
        r.status
    );
    Ok(())
}

fn read_input(i: &DecisionInput) -> Result<NewDecision> {
    if let Some(path) = &i.from_json {
        let text = if path.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("cannot read standard input")?;
            s
        } else {
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{} is not valid JSON: {}",
                path.display(),
                mnemon_core::text::json_error(&text, &e)
            )
        })?;
        return NewDecision::from_json(&value).with_context(|| format!("in {}", path.display()));
    }
    let alternatives = i
        .alternative
        .iter()
        .map(|a| match a.split_once(':') {
            Some((option, reason)) if !option.trim().is_empty() && !reason.trim().is_empty() => {
                Ok(Alternative {
                    option: option.trim().to_string(),
                    rejected_because: reason.trim().to_string(),
                })
            }
            _ => bail!("--alternative \"{a}\" needs the form \"OPTION: why it was rejected\""),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(NewDecision {
        title: i.title.clone().unwrap_or_default(),
        context: i.context.clone().unwrap_or_default(),
        decision: i.decision.clone().unwrap_or_default(),
        consequences: Consequences {
            positive: i.positive.clone(),
            negative: i.negative.clone(),
            mitigations: i.mitigation.clone(),
        },
        alternatives,
        assumptions: i.assumption.clone(),
        status: match &i.status {
            Some(s) => s.parse().map_err(anyhow::Error::msg)?,
            None => DecisionStatus::Proposed,
        },
    })
}
