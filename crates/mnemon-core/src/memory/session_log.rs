//! The session log file, `sessions/session_<id>.md`, in design v1 §3.3's
//! layout: header, an Operations Log entry per operation, Session Summary,
//! Current State. It is a view of the store, rendered in full each time.

use std::collections::BTreeMap;

use super::decision::DecisionRecord;
use super::entities::Entity;
use super::types::{Operation, Session, SessionStatus};
use crate::text::thousands;

/// What the log shows besides the session's own operations.
#[derive(Debug, Clone, Default)]
pub struct SessionLogContext<'a> {
    pub project: &'a str,
    pub project_id: &'a str,
    /// The effective window, for "Tokens Used: n / max (p%)".
    pub effective_max: Option<u64>,
    pub active_work: &'a [Entity],
    pub blocked: &'a [Entity],
    pub recent_decisions: &'a [DecisionRecord],
    pub next_steps: &'a [Entity],
    /// The latest session-log compaction: its summary stands in for every
    /// operation up to the log position, which stay in the store.
    pub compacted: Option<(&'a str, i64)>,
}

/// `nl_command` → "NL Command", `task_execution` → "Task Execution".
pub fn kind_title(kind: &str) -> String {
    kind.split('_')
        .map(|w| match w {
            "nl" => "NL".to_string(),
            w => {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `5 NL commands`, `1 task execution`.
fn count_phrase(n: usize, kind: &str) -> String {
    let words: Vec<String> = kind_title(kind)
        .split(' ')
        .map(|w| {
            if w == "NL" {
                w.to_string()
            } else {
                w.to_lowercase()
            }
        })
        .collect();
    format!("{n} {}{}", words.join(" "), if n == 1 { "" } else { "s" })
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Renders the log; `operations` oldest first.
pub fn render(session: &Session, operations: &[Operation], cx: &SessionLogContext<'_>) -> String {
    let started = session.started_at.datetime();
    let status = match session.status {
        SessionStatus::Active => "Active",
        SessionStatus::Ended => "Ended",
        SessionStatus::Archived => "Archived",
    };
    let mut md = format!(
        "# Orchestrator Session: {}\n\n**Session ID**: {}\n**Project**: {} (ID: {})\n**Started**: {} UTC\n**Status**: {status}\n",
        started.format("%Y-%m-%d %H:%M:%S"),
        session.id,
        cx.project,
        cx.project_id,
        started.format("%Y-%m-%d %H:%M:%S"),
    );
    if let Some(t) = &session.title {
        md.push_str(&format!("**Title**: {t}\n"));
    }
    md.push_str("\n---\n\n## Operations Log\n");
    let mut through = i64::MIN;
    if let Some((summary, seq)) = cx.compacted {
        through = seq;
        let n = operations.iter().filter(|o| o.seq <= seq).count();
        md.push_str(&format!(
            "\n### Compacted history ({n} operations; originals in the store, `mnemon recent --session {}`)\n{summary}\n",
            session.id
        ));
    }
    for op in operations.iter().filter(|o| o.seq > through) {
        let title = op
            .data
            .get("title")
            .and_then(|t| t.as_str())
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        md.push_str(&format!(
            "\n### [{}] {}{title}\n",
            op.created_at.datetime().format("%H:%M:%S"),
            kind_title(&op.kind)
        ));
        match &op.data {
            serde_json::Value::Object(map) => {
                for (k, v) in map.iter().filter(|(k, _)| k.as_str() != "title") {
                    md.push_str(&format!("**{}**: {}\n", kind_title(k), value_text(v)));
                }
            }
            serde_json::Value::Null => {}
            other => md.push_str(&format!("**Data**: {}\n", value_text(other))),
        }
        if let Some(s) = &op.status {
            md.push_str(&format!("**Status**: {s}\n"));
        }
        md.push_str(&format!("**Tokens**: {}\n", thousands(op.tokens)));
    }

    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for op in operations {
        *by_kind.entry(op.kind.as_str()).or_default() += 1;
    }
    let commands = by_kind
        .iter()
        .map(|(k, n)| count_phrase(*n, k))
        .collect::<Vec<_>>()
        .join(", ");
    let tokens = match cx.effective_max {
        Some(max) if max > 0 => format!(
            "{} / {} ({:.1}%)",
            thousands(session.tokens),
            thousands(max),
            session.tokens as f64 * 100.0 / max as f64
        ),
        _ => thousands(session.tokens),
    };
    let issues: Vec<String> = operations
        .iter()
        .filter(|o| o.kind == "error" || matches!(o.status.as_deref(), Some("failed" | "error")))
        .map(|o| {
            format!(
                "{} at {}",
                kind_title(&o.kind),
                o.created_at.datetime().format("%H:%M:%S")
            )
        })
        .collect();
    let list = |items: Vec<String>, none: &str| {
        if items.is_empty() {
            none.to_string()
        } else {
            items.join("; ")
        }
    };
    md.push_str(&format!(
        "\n---\n\n## Session Summary\n\n**Total Operations**: {}\n**Commands**: {}\n**Tokens Used**: {tokens}\n**Issues**: {}\n**Blockers**: {}\n",
        operations.len(),
        if commands.is_empty() { "none".into() } else { commands },
        list(issues, "None"),
        list(cx.blocked.iter().map(Entity::label).collect(), "None"),
    ));

    let bullets = |items: Vec<String>, none: &str| {
        if items.is_empty() {
            format!("- {none}")
        } else {
            items
                .iter()
                .map(|i| format!("- {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    md.push_str(&format!(
        "\n---\n\n## Current State\n\n**Active Work**:\n{}\n\n**Recent Decisions**:\n{}\n\n**Next Steps**:\n{}\n",
        bullets(cx.active_work.iter().map(Entity::label).collect(), "Nothing in progress"),
        bullets(cx.recent_decisions.iter().map(|d| format!("{} ({}, {})", d.decision, d.id, d.status)).collect(), "None"),
        bullets(cx.next_steps.iter().map(Entity::label).collect(), "Nothing planned"),
    ));
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::types::Timestamp;

    #[test]
    fn kind_titles() {
        assert_eq!(kind_title("nl_command"), "NL Command");
        assert_eq!(kind_title("task_execution"), "Task Execution");
        assert_eq!(kind_title("quality_score"), "Quality Score");
    }

    #[test]
    fn renders_the_seed_layout() {
        let t0 = Timestamp(1_736_951_400_000);
        let session = Session {
            id: "550e8400-e29b-41d4-a716-446655440000".into(),
            title: None,
            agent: "orchestrator".into(),
            status: SessionStatus::Active,
            started_at: t0,
            ended_at: None,
            summary: None,
            operation_count: 2,
            message_count: 0,
            tokens: 2_801,
            last_activity: t0.plus_millis(80_000),
        };
        let op =
            |secs, kind: &str, data: serde_json::Value, tokens, status: Option<&str>| Operation {
                id: format!("op-{secs}"),
                seq: secs,
                session_id: Some(session.id.clone()),
                agent: "orchestrator".into(),
                kind: kind.into(),
                data,
                tokens,
                phase: None,
                status: status.map(Into::into),
                importance: 0.7,
                pinned: false,
                created_at: t0.plus_millis(secs * 1_000),
            };
        let ops = vec![
            op(
                15,
                "nl_command",
                serde_json::json!({"title": "Create Epic", "intent": "CREATE operation for EPIC entity", "input": "Create an epic for user authentication system", "result": "Created Epic #5 \"User Authentication System\""}),
                1_234,
                None,
            ),
            op(
                102,
                "nl_command",
                serde_json::json!({"intent": "CREATE operation for STORY entities", "input": "Add 3 stories to it: login, signup, and MFA", "result": "Created Stories #10, #11, #12 under Epic #5"}),
                1_567,
                Some("completed"),
            ),
        ];
        let cx = SessionLogContext {
            project: "obra",
            project_id: "1",
            effective_max: Some(128_000),
            ..SessionLogContext::default()
        };
        insta::assert_snapshot!(render(&session, &ops, &cx));
    }
}
