//! `mnemon session start|end|list|show|archive|restore`.

use anyhow::Result;
use mnemon::SessionEnd;
use mnemon_core::memory::Session;

use crate::cli::{Global, SessionCommand};
use crate::commands::checkpoint::{after, warnings};
use crate::output::short;
use crate::output::{BOLD, DIM, json, stored, thousands};
use crate::project::Project;

pub fn run(g: &Global, c: &SessionCommand) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    match c {
        SessionCommand::Start { title, agent } => {
            let out = project
                .open(agent.agent.as_deref())?
                .start_session(title.as_deref())?;
            warnings(&out.warnings);
            show_one(g, "started", &out.value)
        }
        SessionCommand::End { id, agent } => {
            let out = project
                .open(agent.agent.as_deref())?
                .end_session(id.as_deref())?;
            after(g, &out);
            match &out.value {
                SessionEnd::Marked { session } => show_one(g, "ended", session),
                SessionEnd::Summarized { report } => {
                    if g.json {
                        return json(&serde_json::json!({
                            "value": report, "events": out.events, "status": out.status,
                        }));
                    }
                    println!(
                        "{BOLD}ended and archived{BOLD:#} session {}",
                        short(&report.session_id)
                    );
                    let s = project.open(None)?.session(Some(&report.session_id))?;
                    print!("{}", s.summary.unwrap_or_default());
                    Ok(())
                }
            }
        }
        SessionCommand::Archive { id, title, agent } => {
            let out = project
                .open(agent.agent.as_deref())?
                .archive_session(id.as_deref(), title.as_deref())?;
            warnings(&out.warnings);
            show_one(g, "archived", &out.value)
        }
        SessionCommand::Show { id, agent } => {
            let s = project
                .open(agent.agent.as_deref())?
                .session(id.as_deref())?;
            show_one(g, "session", &s)
        }
        SessionCommand::List { limit } => {
            let m = project.open(None)?;
            let sessions = m.sessions(*limit)?;
            if g.json {
                return json(&sessions);
            }
            if sessions.is_empty() {
                println!("no sessions yet");
            }
            let now = m.sessions(1)?.first().map(|s| s.last_activity);
            for s in &sessions {
                let age = now
                    .map(|n| age(n.0 - s.last_activity.0))
                    .unwrap_or_default();
                println!(
                    "{BOLD}{}{BOLD:#}  {:<32} {:<8} {:>4} messages {:>5} operations  {DIM}{} tokens · {} · last active {age}{DIM:#}",
                    short(&s.id),
                    s.title
                        .as_deref()
                        .map_or("(untitled)".to_string(), |t| format!("\"{t}\"")),
                    s.status.name(),
                    s.message_count,
                    s.operation_count,
                    thousands(s.tokens),
                    s.agent,
                );
            }
            Ok(())
        }
        SessionCommand::Restore { id, agent } => {
            let out = project.open(agent.agent.as_deref())?.restore_session(id)?;
            warnings(&out.warnings);
            let r = &out.value;
            if g.json {
                return json(&serde_json::json!({
                    "session": r.session,
                    "hot_context": r.hot_context.to_json(),
                    "recent_messages": r.recent_messages,
                    "summary": r.summary,
                }));
            }
            println!(
                "{BOLD}restored{BOLD:#} session {} {}",
                short(&r.session.id),
                r.session.title.as_deref().unwrap_or("(untitled)")
            );
            let goals = r
                .hot_context
                .of_kind(mnemon_core::memory::HotKind::Goal)
                .count();
            println!("active goals: {goals}");
            if let Some(last) = r.recent_messages.last() {
                println!(
                    "last activity: {} said \"{}\"",
                    last.role,
                    stored(&last.content)
                );
            }
            if let Some(summary) = &r.summary {
                println!("summary: {}", stored(summary));
            }
            print!("\n{}", stored(&r.hot_context.to_markdown()));
            Ok(())
        }
    }
}

fn show_one(g: &Global, verb: &str, s: &Session) -> Result<()> {
    if g.json {
        return json(s);
    }
    println!(
        "{BOLD}{verb}{BOLD:#} {} {} [{}]  {DIM}{} messages, {} operations, {} tokens, started {}{DIM:#}",
        short(&s.id),
        s.title
            .as_deref()
            .map_or(String::new(), |t| format!("\"{t}\"")),
        s.status.name(),
        s.message_count,
        s.operation_count,
        thousands(s.tokens),
        s.started_at.datetime().format("%Y-%m-%d %H:%M UTC")
    );
    Ok(())
}

fn age(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => "just now".into(),
        60..3600 => format!("{}m ago", s / 60),
        3600..86_400 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}
