//! `mnemon goal`, `mnemon constraint`, `mnemon remember`, `mnemon hot`.

use anyhow::Result;
use mnemon_core::memory::{HotItem, HotItemChange, HotKind, HotStatus, HotStore, Priority};

use crate::cli::{AgentArg, ConstraintCommand, Global, GoalCommand, RememberArgs, VersionArg};
use crate::commands::log::short;
use crate::output::{BOLD, DIM, json};
use crate::project::{Project, ProjectMemory};

fn memory(g: &Global, agent: &AgentArg) -> Result<(Project, ProjectMemory)> {
    let project = Project::find(g.dir.as_deref())?;
    let m = project.memory(agent.agent.as_deref())?;
    Ok((project, m))
}

/// After a change: refresh the rendered views, then report.
fn changed(
    g: &Global,
    project: &Project,
    m: &ProjectMemory,
    verb: &str,
    item: &HotItem,
) -> Result<()> {
    crate::files::refresh_views(project, m)?;
    show(g, verb, item)
}

fn priority(p: &Option<String>) -> Result<Option<Priority>> {
    p.as_deref()
        .map(str::parse)
        .transpose()
        .map_err(anyhow::Error::msg)
}

/// The version to check: the one given, else the item's current one.
fn version(m: &ProjectMemory, id: &str, v: &VersionArg) -> Result<u64> {
    Ok(match v.if_version {
        Some(v) => v,
        None => m.store().hot_item(id)?.version,
    })
}

fn show(g: &Global, verb: &str, item: &HotItem) -> Result<()> {
    if g.json {
        return json(item);
    }
    anstream::println!(
        "{BOLD}{verb}{BOLD:#} {} {} \"{}\"  {DIM}[{} · version {}]{DIM:#}",
        item.kind.name().replace('_', " "),
        short(&item.id),
        item.text,
        item.status,
        item.version
    );
    Ok(())
}

fn list(g: &Global, kind: HotKind) -> Result<()> {
    let (_, m) = memory(g, &AgentArg { agent: None })?;
    let hot = m.hot()?;
    let items: Vec<&HotItem> = hot.of_kind(kind).collect();
    if g.json {
        return json(&items);
    }
    if items.is_empty() {
        anstream::println!("no active {}s", kind.name());
    }
    for i in items {
        let prio = i
            .priority
            .map(|p| format!(" ({})", p.name()))
            .unwrap_or_default();
        anstream::println!(
            "{} {}{prio}  {DIM}[{} · version {}]{DIM:#}",
            short(&i.id),
            i.text,
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
            let (project, m) = memory(g, agent)?;
            let item = m.add_hot(HotKind::Goal, text, None, priority(p)?, parent.as_deref())?;
            changed(g, &project, &m, "added", &item)
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
            let (project, m) = memory(g, agent)?;
            let ver = version(&m, id, v)?;
            let item = m.update_hot(
                id,
                ver,
                HotItemChange {
                    text: text.clone(),
                    priority: priority(p)?,
                    status,
                    ..HotItemChange::default()
                },
            )?;
            changed(g, &project, &m, "updated", &item)
        }
        GoalCommand::Complete {
            id,
            version: v,
            agent,
        } => set_status(g, id, v, agent, HotStatus::Complete, "completed"),
        GoalCommand::List => list(g, HotKind::Goal),
    }
}

pub fn constraint(g: &Global, c: &ConstraintCommand) -> Result<()> {
    match c {
        ConstraintCommand::Add { text, agent } => {
            let (project, m) = memory(g, agent)?;
            let item = m.add_hot(HotKind::Constraint, text, None, None, None)?;
            changed(g, &project, &m, "added", &item)
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
    let (project, m) = memory(g, agent)?;
    let ver = version(&m, id, v)?;
    let change = HotItemChange {
        status: Some(status),
        ..HotItemChange::default()
    };
    let item = m.update_hot(id, ver, change)?;
    changed(g, &project, &m, verb, &item)
}

pub fn remember(g: &Global, a: &RememberArgs) -> Result<()> {
    let (project, m) = memory(g, &a.agent)?;
    let item = m.add_hot(HotKind::Note, &a.text, None, None, None)?;
    changed(g, &project, &m, "remembered", &item)
}

pub fn hot(g: &Global, a: &AgentArg) -> Result<()> {
    let hot = memory(g, a)?.1.hot()?;
    if g.json {
        return json(&hot.to_json());
    }
    anstream::print!("{}", hot.to_markdown());
    Ok(())
}
