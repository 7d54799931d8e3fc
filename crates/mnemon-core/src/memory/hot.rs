//! Hot context: the working state that goes into every prompt (goals,
//! pending actions, constraints, key decisions, current files, key entities).
//!
//! Each item carries its own version. An update names the version it read
//! and is refused if the item changed since; adding items never conflicts,
//! so two agents adding different goals at once both succeed.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::types::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HotKind {
    Goal,
    PendingAction,
    Constraint,
    Decision,
    File,
    Entity,
    /// Something the user asked to remember.
    Note,
}

impl HotKind {
    pub const ALL: [HotKind; 7] = [
        HotKind::Goal,
        HotKind::PendingAction,
        HotKind::Constraint,
        HotKind::Decision,
        HotKind::File,
        HotKind::Entity,
        HotKind::Note,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HotKind::Goal => "goal",
            HotKind::PendingAction => "pending_action",
            HotKind::Constraint => "constraint",
            HotKind::Decision => "decision",
            HotKind::File => "file",
            HotKind::Entity => "entity",
            HotKind::Note => "note",
        }
    }

    pub fn parse(s: &str) -> Option<HotKind> {
        HotKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Goal priority (the seed's high / medium / low).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    High,
    #[default]
    Medium,
    Low,
}

impl Priority {
    pub fn name(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
        }
    }
}

impl FromStr for Priority {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "high" => Ok(Priority::High),
            "medium" => Ok(Priority::Medium),
            "low" => Ok(Priority::Low),
            _ => Err(format!(
                "unknown priority `{s}`: expected high, medium or low"
            )),
        }
    }
}

/// An item's state. Goals move pending → in-progress → complete; other
/// items are active until removed. Completed and removed items leave the
/// hot context but stay in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HotStatus {
    Pending,
    InProgress,
    Complete,
    Active,
    Removed,
}

impl HotStatus {
    pub fn name(self) -> &'static str {
        match self {
            HotStatus::Pending => "pending",
            HotStatus::InProgress => "in-progress",
            HotStatus::Complete => "complete",
            HotStatus::Active => "active",
            HotStatus::Removed => "removed",
        }
    }

    pub fn parse(s: &str) -> Option<HotStatus> {
        [
            HotStatus::Pending,
            HotStatus::InProgress,
            HotStatus::Complete,
            HotStatus::Active,
            HotStatus::Removed,
        ]
        .into_iter()
        .find(|x| x.name() == s || x.name().replace('-', "_") == s)
    }

    /// Whether the item is part of the live hot context.
    pub fn is_live(self) -> bool {
        !matches!(self, HotStatus::Complete | HotStatus::Removed)
    }
}

impl fmt::Display for HotStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A new item.
#[derive(Debug, Clone, PartialEq)]
pub struct HotItemDraft {
    pub kind: HotKind,
    pub text: String,
    /// Rationale of a decision, current function of a file, type of an entity.
    pub detail: Option<String>,
    pub parent_id: Option<String>,
    pub priority: Option<Priority>,
    pub status: HotStatus,
    pub agent: String,
    pub created_at: Timestamp,
}

/// A change to an item; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HotItemChange {
    pub text: Option<String>,
    pub detail: Option<String>,
    pub priority: Option<Priority>,
    pub status: Option<HotStatus>,
    pub agent: Option<String>,
}

/// An item of the hot context. Serialized with its handle (`"h3"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HotItem {
    pub id: String,
    /// The item's place in the store, unique per database: its handle is
    /// `h{seq}`. Absent (0) in hot contexts saved before handles existed.
    #[serde(default)]
    pub seq: u64,
    pub kind: HotKind,
    pub text: String,
    pub detail: Option<String>,
    pub parent_id: Option<String>,
    pub priority: Option<Priority>,
    pub status: HotStatus,
    pub agent: String,
    /// Starts at 1; every update adds 1.
    pub version: u64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The live hot context.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HotContext {
    /// Rises with every add or update anywhere in the hot context.
    pub version: u64,
    /// Live items, oldest first.
    pub items: Vec<HotItem>,
}

impl HotContext {
    pub fn of_kind(&self, kind: HotKind) -> impl Iterator<Item = &HotItem> {
        self.items.iter().filter(move |i| i.kind == kind)
    }

    /// The goal `arg` names, as a person names it: its number in the list
    /// of goals (from 1), its handle (`h3`), the start of its id, or words of its text that
    /// only one open goal holds. The error says what to give instead.
    pub fn goal(&self, arg: &str) -> Result<&HotItem, String> {
        let arg = arg.trim();
        if arg.is_empty() {
            return Err(
                "name the goal: its number in the list of goals, its handle (`h3`), or its text"
                    .into(),
            );
        }
        let open: Vec<&HotItem> = self
            .of_kind(HotKind::Goal)
            .filter(|g| g.status != HotStatus::Complete)
            .collect();
        let by_number = arg
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| self.of_kind(HotKind::Goal).nth(i));
        let by_handle = super::HandleKind::Hot
            .position(arg)
            .and_then(|seq| open.iter().copied().find(|g| g.seq as i64 == seq));
        if let Some(g) = by_number.or(by_handle) {
            return Ok(g);
        }
        // Ids minted in one millisecond share their start: a prefix must
        // name one goal, never the first of several.
        let by_id: Vec<&HotItem> = open
            .iter()
            .copied()
            .filter(|g| g.id.starts_with(arg))
            .collect();
        match by_id.as_slice() {
            [g] => return Ok(g),
            [] => {}
            more => {
                return Err(format!(
                    "\"{arg}\" starts the ids of {} goals; give its handle (`h3`) or its number from `mnemon goal list`",
                    more.len()
                ));
            }
        }
        let low = arg.to_lowercase();
        let by_text: Vec<&HotItem> = open
            .into_iter()
            .filter(|g| g.text.to_lowercase().contains(&low))
            .collect();
        match by_text.as_slice() {
            [g] => Ok(g),
            [] => Err(format!(
                "no open goal matches \"{arg}\"; `mnemon goal list` shows them with their numbers"
            )),
            more => Err(format!(
                "\"{arg}\" matches {} goals; give its id or its number from `mnemon goal list`",
                more.len()
            )),
        }
    }

    /// The short-term-context seed's JSON shape, with ids, handles and
    /// versions so a reader can update what it read.
    pub fn to_json(&self) -> serde_json::Value {
        let goals: Vec<_> = self
            .of_kind(HotKind::Goal)
            .map(|g| {
                json!({
                    "goal_id": g.id, "handle": g.handle(), "description": g.text, "status": g.status.name(),
                    "priority": g.priority.unwrap_or_default().name(), "created": g.created_at,
                    "parent_goal_id": g.parent_id, "version": g.version,
                })
            })
            .collect();
        let decisions: Vec<_> = self
            .of_kind(HotKind::Decision)
            .map(|d| {
                json!({
                    "decision_id": d.id, "handle": d.handle(), "description": d.text, "rationale": d.detail,
                    "timestamp": d.created_at, "agent": d.agent, "version": d.version,
                })
            })
            .collect();
        let texts = |k| {
            self.of_kind(k)
                .map(|i| json!({"id": i.id, "handle": i.handle(), "text": i.text, "version": i.version}))
                .collect::<Vec<_>>()
        };
        let files: Vec<_> = self.of_kind(HotKind::File).collect();
        let mut entities: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for e in self.of_kind(HotKind::Entity) {
            entities
                .entry(e.detail.clone().unwrap_or_else(|| "other".into()))
                .or_default()
                .push(&e.text);
        }
        json!({
            "version": self.version,
            "active_goals": goals,
            "pending_actions": texts(HotKind::PendingAction),
            "key_decisions": decisions,
            "current_file_context": {
                "files": files.iter().map(|f| &f.text).collect::<Vec<_>>(),
                "last_edited": files.iter().max_by_key(|f| (f.updated_at, f.version)).map(|f| &f.text),
                "current_function": files.iter().max_by_key(|f| (f.updated_at, f.version)).and_then(|f| f.detail.as_ref()),
            },
            "important_constraints": texts(HotKind::Constraint),
            "key_entities": entities,
            "remember": texts(HotKind::Note),
        })
    }

    /// Markdown for the LLM, in the seed's layout: goals with status icons,
    /// current files, the last three decisions with rationale, constraints;
    /// pending actions and key entities too, which the seed stores but did
    /// not print.
    pub fn to_markdown(&self) -> String {
        let mut md = String::from("# Current Context\n\n");
        let mut section = |title: &str, lines: Vec<String>| {
            if !lines.is_empty() {
                md.push_str(&format!("## {title}\n"));
                for l in lines {
                    md.push_str(&l);
                    md.push('\n');
                }
                md.push('\n');
            }
        };
        section(
            "Active Goals",
            self.of_kind(HotKind::Goal)
                .map(|g| {
                    let icon = match g.status {
                        HotStatus::InProgress => "🔄",
                        HotStatus::Complete => "✅",
                        _ => "⏳",
                    };
                    let prio = match g.priority {
                        Some(Priority::High) => " (high)",
                        Some(Priority::Low) => " (low)",
                        _ => "",
                    };
                    format!("- {icon} {}{prio}", g.text)
                })
                .collect(),
        );
        section(
            "Pending Actions",
            self.of_kind(HotKind::PendingAction)
                .map(|a| format!("- {}", a.text))
                .collect(),
        );
        section(
            "Current Files",
            self.of_kind(HotKind::File)
                .map(|f| match &f.detail {
                    Some(func) => format!("- {} (`{func}`)", f.text),
                    None => format!("- {}", f.text),
                })
                .collect(),
        );
        let decisions: Vec<_> = self.of_kind(HotKind::Decision).collect();
        let last3 = &decisions[decisions.len().saturating_sub(3)..];
        section(
            "Key Decisions",
            last3
                .iter()
                .map(|d| match &d.detail {
                    Some(r) => format!("- {}\n  *Rationale: {r}*", d.text),
                    None => format!("- {}", d.text),
                })
                .collect(),
        );
        section(
            "Remember",
            self.of_kind(HotKind::Note)
                .map(|n| format!("- {}", n.text))
                .collect(),
        );
        section(
            "Important Constraints",
            self.of_kind(HotKind::Constraint)
                .map(|c| format!("- {}", c.text))
                .collect(),
        );
        section(
            "Key Entities",
            self.of_kind(HotKind::Entity)
                .map(|e| match &e.detail {
                    Some(t) => format!("- {} ({t})", e.text),
                    None => format!("- {}", e.text),
                })
                .collect(),
        );
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(seq: u64, id: &str, text: &str) -> HotItem {
        HotItem {
            id: id.into(),
            seq,
            kind: HotKind::Goal,
            text: text.into(),
            detail: None,
            parent_id: None,
            priority: None,
            status: HotStatus::Pending,
            agent: "a".into(),
            version: 1,
            created_at: Timestamp(0),
            updated_at: Timestamp(0),
        }
    }

    #[test]
    fn a_goal_is_found_by_number_handle_id_or_words() {
        let hot = HotContext {
            version: 2,
            items: vec![
                goal(3, "01a2191f-e41a-7060", "Ship the login flow"),
                goal(9, "01a2191f-e41b-7061", "Write the docs"),
            ],
        };
        let text = |arg: &str| hot.goal(arg).map(|g| g.text.clone());
        assert_eq!(text("2").as_deref(), Ok("Write the docs"));
        assert_eq!(text("h3").as_deref(), Ok("Ship the login flow"));
        assert_eq!(text("h9").as_deref(), Ok("Write the docs"));
        assert_eq!(text("01a2191f-e41b").as_deref(), Ok("Write the docs"));
        assert_eq!(text("login").as_deref(), Ok("Ship the login flow"));
        assert!(text("h4").is_err(), "no goal has handle h4");
        let both = hot.goal("01a2191f").unwrap_err();
        assert!(both.contains("2 goals"), "{both}");
    }
}
