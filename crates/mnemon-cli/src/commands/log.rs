//! `mnemon record`, `mnemon message`, `mnemon recent`: the operation log.

use std::io::Read;

use anyhow::{Context, Result};
use mnemon_core::importance::Role;
use mnemon_core::memory::{NewMessage, NewOperation, Operation, OperationQuery, Phase};

use crate::cli::{Global, MessageArgs, RecentArgs, RecordArgs};
use crate::output::{BOLD, DIM, json, stored, thousands};
use crate::project::Project;

pub fn record(g: &Global, a: &RecordArgs) -> Result<()> {
    let data = match &a.data {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "--data is not valid JSON: {}\n  give an object such as '{{\"task\": 15, \"result\": \"ok\"}}'",
                mnemon_core::text::json_error(text, &e)
            )
        })?,
        None => serde_json::Value::Object(Default::default()),
    };
    let phase = a
        .phase
        .as_deref()
        .map(str::parse::<Phase>)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let m = Project::find(g.dir.as_deref())?.open_at(a.agent.agent.as_deref(), a.at)?;
    let out = m.record(NewOperation {
        kind: a.kind.clone(),
        data,
        tokens: a.tokens,
        phase,
        agent: a.agent.agent.clone(),
        status: a.status.clone(),
    })?;
    crate::commands::checkpoint::after(g, &out);
    let op = &out.value;
    if g.json {
        return json(&out.to_json()?);
    }
    let pinned = if op.pinned { ", pinned" } else { "" };
    println!(
        "{BOLD}recorded{BOLD:#} {} {}  {DIM}({} tokens, importance {:.2}{pinned}){DIM:#}",
        op.kind,
        op.handle(),
        thousands(op.tokens),
        op.importance
    );
    Ok(())
}

pub fn message(g: &Global, a: &MessageArgs) -> Result<()> {
    let role: Role = a.role.parse().map_err(anyhow::Error::msg)?;
    let content = match a.text.as_deref() {
        Some(t) if t != "-" => t.to_string(),
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("cannot read the message from standard input")?;
            s
        }
    };
    let m = Project::find(g.dir.as_deref())?.open_at(a.agent.agent.as_deref(), a.at)?;
    let out = m.message(NewMessage {
        role,
        content,
        agent: a.agent.agent.clone(),
        tokens: None,
    })?;
    crate::commands::checkpoint::after(g, &out);
    let msg = &out.value;
    if g.json {
        return json(&out.to_json()?);
    }
    println!(
        "{BOLD}recorded{BOLD:#} {} message {}  {DIM}({} tokens, importance {:.2}{}){DIM:#}",
        msg.role,
        msg.handle(),
        thousands(msg.tokens),
        msg.importance,
        if msg.pinned { ", pinned" } else { "" }
    );
    Ok(())
}

pub fn recent(g: &Global, a: &RecentArgs) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(None)?;
    let ops = m.recent(&OperationQuery {
        session_id: a.session.clone(),
        kind: a.kind.clone(),
        keywords: a.search.clone(),
        limit: Some(a.limit),
    })?;
    if g.json {
        return json(&ops);
    }
    if ops.is_empty() {
        println!("no operations recorded yet");
    }
    for op in &ops {
        print_op(op);
    }
    Ok(())
}

fn print_op(op: &Operation) {
    let time = op.created_at.datetime().format("%Y-%m-%d %H:%M:%S");
    let pin = if op.pinned { " 📌" } else { "" };
    let data = mnemon_core::memory::data_text(&op.data);
    let data = if data.chars().count() > 100 {
        format!("{}…", data.chars().take(100).collect::<String>())
    } else {
        data
    };
    println!(
        "{DIM}{time}{DIM:#} {BOLD}{}{BOLD:#}{pin} {} {DIM}[{} · {} tokens · {}]{DIM:#}",
        stored(&op.kind),
        stored(&data),
        stored(&op.agent),
        thousands(op.tokens),
        op.handle()
    );
}
