//! `mnemon forget`: what a user asked to be forgotten leaves the store, the
//! search index, the summaries and checkpoints that carried it, and the
//! rendered files; `--history` lists the audit (ids and counts only).

use anyhow::Result;
use mnemon::Forgotten;

use crate::cli::{ForgetArgs, Global};
use crate::output::{BOLD, DIM, counted, json};
use crate::project::Project;

pub fn run(g: &Global, a: &ForgetArgs) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(a.agent.agent.as_deref())?;
    if a.history {
        let audit = m.forgettings(mnemon::MAX_LIST as usize)?;
        if g.json {
            return json(&audit);
        }
        if audit.is_empty() {
            println!("nothing has been forgotten in this project");
        }
        for e in &audit {
            let targets: Vec<String> = e
                .targets
                .iter()
                .map(|t| serde_json::to_value(t).map_or_else(|_| String::new(), |v| shown(&v)))
                .collect();
            anstream::println!(
                "{}  {BOLD}{}{BOLD:#}  {}  {DIM}({}){DIM:#}",
                e.at.datetime().format("%Y-%m-%d %H:%M:%S"),
                e.agent,
                targets.join(" "),
                counts(&[
                    (e.operations, "operation"),
                    (e.messages, "message"),
                    (e.hot_items, "hot item"),
                    (e.decisions, "decision"),
                    (e.sessions, "session"),
                ])
            );
        }
        return Ok(());
    }
    let f = m.forget(&a.targets, &a.matching, a.dry_run)?;
    if g.json {
        return json(&f);
    }
    report(&f);
    Ok(())
}

/// A target as the user wrote it: `o12`, `m7`, or the id.
fn shown(v: &serde_json::Value) -> String {
    let id = &v["id"];
    match v["kind"].as_str() {
        Some("operation_at") => format!("o{id}"),
        Some("message_at") => format!("m{id}"),
        Some("matching") => format!("--matching {}", id.as_str().unwrap_or_default()),
        _ => id.as_str().unwrap_or_default().to_string(),
    }
}

fn counts(parts: &[(u64, &str)]) -> String {
    let shown: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| counted(*n, what, &format!("{what}s")))
        .collect();
    if shown.is_empty() {
        "nothing".into()
    } else {
        shown.join(", ")
    }
}

fn report(f: &Forgotten) {
    if f.is_empty() {
        println!("nothing holds that text; nothing was forgotten");
        return;
    }
    let verb = if f.dry_run { "would forget" } else { "forgot" };
    anstream::println!(
        "{BOLD}{verb}{BOLD:#} {}",
        counts(&[
            (f.operations.len() as u64, "operation"),
            (f.messages.len() as u64, "message"),
            (f.hot_items.len() as u64, "hot item"),
            (f.decisions.len() as u64, "decision"),
            (f.sessions.len() as u64, "session"),
        ])
    );
    let mut ids: Vec<String> = f.operations.iter().map(|s| format!("o{s}")).collect();
    ids.extend(f.messages.iter().map(|s| format!("m{s}")));
    if f.hot_handles.len() == f.hot_items.len() {
        ids.extend(f.hot_handles.iter().cloned());
    } else {
        ids.extend(f.hot_items.iter().cloned());
    }
    ids.extend(f.decisions.iter().cloned());
    ids.extend(f.sessions.iter().map(|s| format!("session {s}")));
    anstream::println!("  {DIM}{}{DIM:#}", ids.join(" "));
    let also = counts(&[
        (f.summaries_rewritten as u64, "summary"),
        (f.checkpoints_rewritten.len() as u64, "checkpoint"),
        (f.artifacts_rewritten.len() as u64, "archived file"),
    ]);
    if also != "nothing" {
        let verb = if f.dry_run { "would clean" } else { "cleaned" };
        anstream::println!("  {verb} {}", also.replace("summarys", "summaries"));
    }
    let removed = counts(&[
        (f.checkpoints_removed.len() as u64, "checkpoint"),
        (f.artifacts_removed.len() as u64, "archived file"),
        (f.document_versions_removed as u64, "document version"),
    ]);
    if removed != "nothing" {
        let verb = if f.dry_run { "would remove" } else { "removed" };
        anstream::println!("  {verb} {removed}");
    }
    if f.dry_run {
        anstream::println!("  {DIM}nothing was changed; run it again without --dry-run{DIM:#}");
    }
}
