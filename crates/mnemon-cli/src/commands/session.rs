//! `mnemon session start|end|list|show|archive|restore`.

use anyhow::Result;
use mnemon_core::memory::{Session, SessionStore, StoreError};

use crate::cli::{Global, SessionCommand};
use crate::commands::log::short;
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::Project;

pub fn run(g: &Global, c: &SessionCommand) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    match c {
        SessionCommand::Start { title, agent } => {
            let m = project.memory(agent.agent.as_deref())?;
            let previous = m.store().active_session(m.agent())?;
            let s = m.start_session(title.as_deref())?;
            if let Some(p) = previous {
                crate::files::write_session(&project, &m, &p.id)?;
            }
            {
                crate::files::write_session(&project, &m, &s.id)?;
                crate::files::refresh_views(&project, &m)?;
                show_one(g, "started", &s)
            }
        }
        SessionCommand::End { id, agent } => {
            let e = project.engine(agent.agent.as_deref())?;
            let m = e.memory();
            let active = m.store().active_session(m.agent())?;
            let own = match (id, &active) {
                (None, _) => true,
                (Some(id), Some(a)) => m.store().session(id)?.id == a.id,
                (Some(_), None) => false,
            };
            if !own {
                // Another agent's or an inactive session: just mark it ended.
                let s = m.end_session(id.as_deref())?;
                crate::files::write_session(&project, m, &s.id)?;
                crate::files::refresh_views(&project, m)?;
                return show_one(g, "ended", &s);
            }
            let out = e.end_session()?;
            crate::files::write_session(&project, m, &out.value.session_id)?;
            crate::commands::checkpoint::after(&project, &e, g, &out)?;
            if g.json {
                return json(&out);
            }
            anstream::println!(
                "{BOLD}ended and archived{BOLD:#} session {}",
                crate::commands::log::short(&out.value.session_id)
            );
            let s = m.store().session(&out.value.session_id)?;
            anstream::print!("{}", s.summary.unwrap_or_default());
            Ok(())
        }
        SessionCommand::Archive { id, title, agent } => {
            let m = project.memory(agent.agent.as_deref())?;
            let s = m.archive_session(id.as_deref(), title.as_deref())?;
            {
                crate::files::write_session(&project, &m, &s.id)?;
                crate::files::refresh_views(&project, &m)?;
                show_one(g, "archived", &s)
            }
        }
        SessionCommand::Show { id, agent } => {
            let m = project.memory(agent.agent.as_deref())?;
            let s =
                match id {
                    Some(id) => m.store().session(id)?,
                    None => m.store().active_session(m.agent())?.ok_or_else(|| {
                        StoreError::NotFound {
                            what: "active session",
                            id: m.agent().to_string(),
                        }
                    })?,
                };
            show_one(g, "session", &s)
        }
        SessionCommand::List { limit } => {
            let m = project.memory(None)?;
            let sessions = m.store().sessions(*limit)?;
            if g.json {
                return json(&sessions);
            }
            if sessions.is_empty() {
                anstream::println!("no sessions yet");
            }
            let now = m.store().sessions(1)?.first().map(|s| s.last_activity);
            for s in &sessions {
                let age = now
                    .map(|n| age(n.0 - s.last_activity.0))
                    .unwrap_or_default();
                anstream::println!(
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
            let m = project.memory(agent.agent.as_deref())?;
            let previous = m.store().active_session(m.agent())?;
            let r = m.restore_session(id)?;
            if let Some(p) = previous.filter(|p| p.id != r.session.id) {
                crate::files::write_session(&project, &m, &p.id)?;
            }
            crate::files::refresh_views(&project, &m)?;
            if g.json {
                return json(&serde_json::json!({
                    "session": r.session,
                    "hot_context": r.hot_context.to_json(),
                    "recent_messages": r.recent_messages,
                    "summary": r.summary,
                }));
            }
            anstream::println!(
                "{BOLD}restored{BOLD:#} session {} {}",
                short(&r.session.id),
                r.session.title.as_deref().unwrap_or("(untitled)")
            );
            let goals = r
                .hot_context
                .of_kind(mnemon_core::memory::HotKind::Goal)
                .count();
            anstream::println!("active goals: {goals}");
            if let Some(last) = r.recent_messages.last() {
                anstream::println!("last activity: {} said \"{}\"", last.role, last.content);
            }
            if let Some(summary) = &r.summary {
                anstream::println!("summary: {summary}");
            }
            anstream::print!("\n{}", r.hot_context.to_markdown());
            Ok(())
        }
    }
}

fn show_one(g: &Global, verb: &str, s: &Session) -> Result<()> {
    if g.json {
        return json(s);
    }
    anstream::println!(
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
