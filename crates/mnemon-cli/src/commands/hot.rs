//! `mnemon goal`, `mnemon constraint`, `mnemon remember`, `mnemon hot`.

use anyhow::Result;
use mnemon::{Mnemon, Written};
use mnemon_core::memory::{HotItem, HotItemChange, HotKind, HotStatus, Priority};

use crate::cli::{AgentArg, ConstraintCommand, Global, GoalCommand, RememberArgs, VersionArg};
use crate::output::{BOLD, DIM, json, stored};
use crate::project::Project;

fn open(g: &Global, agent: &AgentArg) -> Result<Mnemon> {
    Project::find(g.dir.as_deref())?.open(agent.agent.as_deref())
}

/// After a change: what the engine did, then the item.
fn changed(g: &Global, verb: &str, out: &Written<HotItem>) -> Result<()> {
    crate::commands::checkpoint::after(g, out);
    show(g, verb, &out.value)
}

fn priority(p: &Option<String>) -> Result<Option<Priority>> {
    p.as_deref()
        .map(str::parse)
        .transpose()
        .map_err(anyhow::Error::msg)
}

fn show(g: &Global, verb: &str, item: &HotItem) -> Result<()> {
    if g.json {
        return json(item);
    }
    println!(
        "{BOLD}{verb}{BOLD:#} {} {} \"{}\"  {DIM}[{} · version {}]{DIM:#}",
        item.kind.name().replace('_', " "),
        item.handle(),
        stored(&item.text),
        item.status,
        item.version
    );
    Ok(())
}

fn list(g: &Global, kind: HotKind) -> Result<()> {
    let hot = open(g, &AgentArg { agent: None })?.hot()?;
    let items: Vec<&HotItem> = hot.of_kind(kind).collect();
    if g.json {
        return json(&items);
    }
    if items.is_empty() {
        println!("no active {}s", kind.name());
    }
    for (n, i) in items.into_iter().enumerate() {
        // Goals are numbered: `goal complete 2` takes the number.
        let number = if kind == HotKind::Goal {
            format!("{}. ", n + 1)
        } else {
            String::new()
        };
        let prio = i
            .priority
            .map(|p| format!(" ({})", p.name()))
            .unwrap_or_default();
        println!(
            "{number}{} {}{prio}  {DIM}[{} · version {}]{DIM:#}",
            i.handle(),
            stored(&i.text),
            i.status,
            i.version
        );
    }
    Ok(())
}

pub fn goal(g: &Global, c: &GoalCommand) -> Result<()> {
    match c {
        GoalCommand::Add {
            text,
            priority: p,
            parent,
            agent,
        } => {
            let out =
                open(g, agent)?.add_hot(HotKind::Goal, text, priority(p)?, parent.as_deref())?;
            changed(g, "added", &out)
        }
        GoalCommand::Update {
            id,
            status,
            priority: p,
            text,
            version: v,
            agent,
        } => {
            let status = status
                .as_deref()
                .map(|s| {
                    HotStatus::parse(s).ok_or_else(|| {
                        anyhow::anyhow!(
                            "unknown goal status `{s}`: expected pending, in-progress or complete"
                        )
                    })
                })
                .transpose()?;
            let out = open(g, agent)?.update_hot(
                id,
                v.if_version,
                HotItemChange {
                    text: text.clone(),
                    priority: priority(p)?,
                    status,
                    ..HotItemChange::default()
                },
            )?;
            changed(g, "updated", &out)
        }
        GoalCommand::Complete {
            id,
            version: v,
            agent,
        } => {
            // As chat's /complete_goal: a number from `goal list`, the
            // start of an id, or words of the goal's text.
            let m = open(g, agent)?;
            let hot = m.hot()?;
            let goal = hot.goal(id).map_err(mnemon::Error::Input)?;
            let change = HotItemChange {
                status: Some(HotStatus::Complete),
                ..HotItemChange::default()
            };
            let out = m.update_hot(&goal.id, v.if_version, change)?;
            changed(g, "completed", &out)
        }
        GoalCommand::List => list(g, HotKind::Goal),
    }
}

pub fn constraint(g: &Global, c: &ConstraintCommand) -> Result<()> {
    match c {
        ConstraintCommand::Add { text, agent } => {
            let out = open(g, agent)?.add_hot(HotKind::Constraint, text, None, None)?;
            changed(g, "added", &out)
        }
        ConstraintCommand::Remove {
            id,
            version: v,
            agent,
        } => set_status(g, id, v, agent, HotStatus::Removed, "removed"),
        ConstraintCommand::List => list(g, HotKind::Constraint),
    }
}

/// Moves an item to `status`, checked against the version given (or read).
fn set_status(
    g: &Global,
    id: &str,
    v: &VersionArg,
    agent: &AgentArg,
    status: HotStatus,
    verb: &str,
) -> Result<()> {
    let change = HotItemChange {
        status: Some(status),
        ..HotItemChange::default()
    };
    let out = open(g, agent)?.update_hot(id, v.if_version, change)?;
    changed(g, verb, &out)
}

pub fn remember(g: &Global, a: &RememberArgs) -> Result<()> {
    let out = open(g, &a.agent)?.add_hot(HotKind::Note, &a.text, None, None)?;
    changed(g, "remembered", &out)
}

pub fn hot(g: &Global, a: &AgentArg) -> Result<()> {
    let hot = open(g, a)?.hot()?;
    if g.json {
        return json(&hot.to_json());
    }
    print!("{}", stored(&hot.to_markdown()));
    Ok(())
}
