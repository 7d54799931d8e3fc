//! `mnemon decision add|list|show|supersede|status`.

use std::io::Read;

use anyhow::{Context, Result, bail};
use mnemon_core::memory::{
    Alternative, Consequences, DecisionRecord, DecisionStatus, DecisionStore, NewDecision,
};

use crate::cli::{DecisionCommand, DecisionInput, Global};
use crate::output::{BOLD, DIM, json};
use crate::project::{Project, ProjectMemory};

pub fn run(g: &Global, c: &DecisionCommand) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    match c {
        DecisionCommand::Add(input) => {
            let m = project.memory(input.agent.agent.as_deref())?;
            let r = m.decide(&read_input(input)?)?;
            write_file(&project, &r)?;
            crate::files::refresh_views(&project, &m)?;
            show(g, "recorded", &r)
        }
        DecisionCommand::Supersede { id, input } => {
            let m = project.memory(input.agent.agent.as_deref())?;
            let (old, new) = m.supersede(id, &read_input(input)?)?;
            write_file(&project, &old)?;
            write_file(&project, &new)?;
            crate::files::refresh_views(&project, &m)?;
            if g.json {
                return json(&serde_json::json!({"superseded": old, "new": new}));
            }
            anstream::println!("{BOLD}superseded{BOLD:#} {} by {}", old.id, new.id);
            Ok(())
        }
        DecisionCommand::Status { id, status } => {
            let status: DecisionStatus = status.parse().map_err(anyhow::Error::msg)?;
            if status == DecisionStatus::Superseded {
                bail!(
                    "use `mnemon decision supersede {id} ...` to name the decision that replaces it"
                );
            }
            let m = project.memory(None)?;
            let r = m.set_decision_status(id, status)?;
            write_file(&project, &r)?;
            crate::files::refresh_views(&project, &m)?;
            show(g, "updated", &r)
        }
        DecisionCommand::Show { id } => {
            let r = project.memory(None)?.store().decision(id)?;
            if g.json {
                return json(&r);
            }
            anstream::print!("{}", r.to_markdown());
            Ok(())
        }
        DecisionCommand::List { limit } => {
            let m: ProjectMemory = project.memory(None)?;
            let all = m.store().decisions(*limit)?;
            if g.json {
                return json(
                    &all.iter()
                        .map(DecisionRecord::to_compact_json)
                        .collect::<Vec<_>>(),
                );
            }
            if all.is_empty() {
                anstream::println!("no decisions recorded yet");
            }
            for r in &all {
                let by = r
                    .superseded_by
                    .as_ref()
                    .map(|s| format!(" by {s}"))
                    .unwrap_or_default();
                anstream::println!(
                    "{BOLD}{}{BOLD:#} {}  {DIM}[{}{by} · {}]{DIM:#}",
                    r.id,
                    r.title,
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
    anstream::println!(
        "{BOLD}{verb}{BOLD:#} {} \"{}\" [{}]",
        r.id,
        r.title,
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
        let value: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?;
        return Ok(NewDecision::from_json(&value)?);
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

/// `.mnemon/decisions/DR-<id>_<slug>.md`, rendered after the commit.
pub(crate) fn write_file(project: &Project, r: &DecisionRecord) -> Result<()> {
    let Some(dir) = &project.dir else {
        return Ok(());
    };
    let dir = dir.join("decisions");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::files::write_atomically(&dir.join(r.file_name()), r.to_markdown().as_bytes())
}
