//! The structured summary written when a session ends (design v1
//! `flush_session`), built from the operations the session really recorded.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::memory::{DecisionRecord, Entity, Operation, Session, Timestamp, data_text};

/// At most this many lines per list; the rest are counted.
const LIST_MAX: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionReport {
    pub session_id: String,
    pub started_at: Timestamp,
    pub ended_at: Timestamp,
    pub duration_seconds: u64,
    pub total_operations: u64,
    pub total_messages: u64,
    pub tokens: u64,
    /// Operation counts by type, most frequent first.
    pub by_kind: Vec<(String, u64)>,
    pub accomplishments: Vec<String>,
    pub decisions: Vec<String>,
    pub issues: Vec<String>,
    pub state_changes: Vec<String>,
    pub next_steps: Vec<String>,
}

fn entity_label(op: &Operation) -> Option<String> {
    let d = &op.data;
    let kind = d["entity_type"].as_str()?;
    let mut k = kind.to_string();
    if let Some(first) = k.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    Some(format!(
        "{k} #{} \"{}\"",
        d["number"],
        d["title"].as_str().unwrap_or_default()
    ))
}

fn short(op: &Operation) -> String {
    let text = data_text(&op.data);
    let text: String = text.chars().take(160).collect();
    format!("{}: {text}", op.kind)
}

const DONE: &[&str] = &[
    "completed",
    "complete",
    "done",
    "success",
    "succeeded",
    "passed",
];
const BAD: &[&str] = &["failed", "failure", "error", "blocked"];

impl SessionReport {
    /// `operations` oldest first, without the engine's own records.
    pub fn build(
        session: &Session,
        operations: &[Operation],
        decisions: &[DecisionRecord],
        next: &[Entity],
        blocked: &[Entity],
        at: Timestamp,
    ) -> SessionReport {
        let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
        let mut accomplishments = Vec::new();
        let mut issues = Vec::new();
        let mut state_changes = Vec::new();
        let mut decided = Vec::new();
        for op in operations {
            *by_kind.entry(op.kind.clone()).or_default() += 1;
            let status = op.status.as_deref().unwrap_or("");
            let label = entity_label(op);
            match (op.kind.as_str(), &label) {
                ("entity_created", Some(l)) => accomplishments.push(format!("Created {l}")),
                ("entity_updated", Some(l)) => {
                    state_changes.push(format!("{l} is now {status}"));
                    if DONE.contains(&status) {
                        accomplishments.push(format!("Completed {l}"));
                    }
                }
                // The record itself is listed below, in a readable form.
                ("decision", _)
                    if decisions
                        .iter()
                        .any(|d| Some(d.id.as_str()) == op.data["id"].as_str()) => {}
                ("decision", _) => decided.push(short(op)),
                _ => {
                    if op.kind.contains("error") || BAD.contains(&status) {
                        issues.push(short(op));
                    } else if DONE.contains(&status) {
                        accomplishments.push(short(op));
                    }
                }
            }
        }
        for d in decisions {
            if d.timestamp >= session.started_at {
                decided.push(if d.title == d.decision {
                    format!("{}: {}", d.id, d.decision)
                } else {
                    format!("{}: {} — {}", d.id, d.title, d.decision)
                });
            }
        }
        let mut next_steps: Vec<String> = blocked
            .iter()
            .map(|e| format!("Unblock {}", e.label()))
            .collect();
        next_steps.extend(next.iter().map(|e| match e.status.name() {
            "in_progress" => format!("Continue {}", e.label()),
            _ => format!("Start {}", e.label()),
        }));
        let mut by_kind: Vec<(String, u64)> = by_kind.into_iter().collect();
        by_kind.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        SessionReport {
            session_id: session.id.clone(),
            started_at: session.started_at,
            ended_at: at,
            duration_seconds: ((at.0 - session.started_at.0).max(0) / 1000) as u64,
            total_operations: session.operation_count,
            total_messages: session.message_count,
            tokens: session.tokens,
            by_kind,
            accomplishments,
            decisions: decided,
            issues,
            state_changes,
            next_steps,
        }
    }

    pub fn to_markdown(&self) -> String {
        let mut md = String::from("## Session Summary\n\n");
        let kinds: Vec<String> = self
            .by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        md.push_str(&format!(
            "**Total Operations**: {}\n**Messages**: {}\n**Commands**: {}\n**Tokens Recorded**: {}\n**Duration**: {}\n",
            self.total_operations,
            self.total_messages,
            if kinds.is_empty() { "none".into() } else { kinds.join(", ") },
            crate::text::thousands(self.tokens),
            duration(self.duration_seconds),
        ));
        for (title, items) in [
            ("Accomplishments", &self.accomplishments),
            ("Decisions", &self.decisions),
            ("Issues", &self.issues),
            ("Project State Changes", &self.state_changes),
            ("Recommended Next Steps", &self.next_steps),
        ] {
            md.push_str(&format!("\n### {title}\n"));
            if items.is_empty() {
                md.push_str("- None\n");
            }
            for i in items.iter().take(LIST_MAX) {
                md.push_str(&format!("- {i}\n"));
            }
            if items.len() > LIST_MAX {
                md.push_str(&format!(
                    "- (+{} more in the session log)\n",
                    items.len() - LIST_MAX
                ));
            }
        }
        md
    }
}

fn duration(secs: u64) -> String {
    let (h, m) = (secs / 3600, (secs % 3600) / 60);
    if h > 0 {
        format!("{h}h {m:02}m")
    } else {
        format!("{m}m {:02}s", secs % 60)
    }
}
