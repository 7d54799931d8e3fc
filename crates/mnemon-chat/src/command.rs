//! What a line typed in `mnemon chat` means, once understood.
//!
//! The parser (rule-based today, an LLM later) only produces these values;
//! resolving references and touching the store happen afterwards, so every
//! parser is judged by the same table of phrasings.

use serde::Serialize;

use mnemon_core::memory::{EntityKind, EntityStatus};

/// A thing a command points at, before it is resolved to entities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Target {
    /// `#12`, `epic 5`, `task 15`: the kind, when given, is checked.
    Number {
        number: u64,
        kind: Option<EntityKind>,
    },
    /// `it`, `that`, `this` (one thing) or `them`, `those` (a group).
    Pronoun { plural: bool },
    /// `the epic`, `the last task`, `the first story`, `this story`.
    Named { kind: EntityKind, which: Which },
    /// `the login story`, `story "signup"`: matched against titles.
    Title {
        kind: Option<EntityKind>,
        text: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Which {
    /// `the epic`: the one in play.
    Only,
    First,
    Last,
    /// `the second story` (1-based).
    Nth(usize),
}

/// A status filter for listings: one status, or everything not completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    Is(EntityStatus),
    Open,
}

impl StatusFilter {
    pub fn admits(self, s: EntityStatus) -> bool {
        match self {
            StatusFilter::Is(x) => x == s,
            StatusFilter::Open => s != EntityStatus::Completed,
        }
    }
}

/// One field an update changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "field", content = "value", rename_all = "snake_case")]
pub enum Field {
    Title(String),
    Description(String),
    Priority(u8),
}

/// A question about memory, answered without changing anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "about", rename_all = "snake_case")]
pub enum Question {
    /// "what did we just do?"
    JustDid,
    /// "what did we do today?" (0) or "yesterday?" (-1): days from today.
    Day { offset: i64 },
    /// "what did we do this session?"
    Session,
    /// "what's the status of epic 5?"; without a target, the project's.
    Status { target: Option<Target> },
    /// "what's next?"
    Next,
    /// "what's blocked?"
    Blocked,
    /// "what did we decide about X?"
    Decided { topic: String },
}

/// A project command or a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "intent", rename_all = "snake_case")]
pub enum Command {
    Create {
        kind: EntityKind,
        titles: Vec<String>,
        parent: Option<Target>,
        priority: Option<u8>,
    },
    Update {
        target: Target,
        field: Field,
    },
    SetStatus {
        target: Target,
        status: EntityStatus,
    },
    Delete {
        target: Target,
    },
    List {
        kind: Option<EntityKind>,
        status: Option<StatusFilter>,
        parent: Option<Target>,
    },
    Show {
        target: Target,
    },
    Ask(Question),
}

impl Command {
    /// The name recorded in the operation log.
    pub fn intent(&self) -> &'static str {
        match self {
            Command::Create { .. } => "create",
            Command::Update { .. } => "update",
            Command::SetStatus { status, .. } => match status {
                EntityStatus::InProgress => "start",
                EntityStatus::Completed => "complete",
                EntityStatus::Blocked => "block",
                EntityStatus::Pending => "reset",
            },
            Command::Delete { .. } => "delete",
            Command::List { .. } => "list",
            Command::Show { .. } => "show",
            Command::Ask(_) => "question",
        }
    }

    /// Whether running it changes the project.
    pub fn changes(&self) -> bool {
        matches!(
            self,
            Command::Create { .. }
                | Command::Update { .. }
                | Command::SetStatus { .. }
                | Command::Delete { .. }
        )
    }
}

/// What a parser made of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Command(Command),
    /// The line was understood as a command but cannot run as given
    /// ("add 3 stories to it" with no names): what to add.
    Incomplete(String),
    /// Not understood; the closest supported forms.
    Unknown {
        closest: Vec<&'static str>,
    },
}

/// The seam where command understanding plugs in: the rule-based
/// [`super::RuleParser`] today, an LLM-backed parser later.
pub trait CommandParser: Send + Sync {
    fn name(&self) -> &str;
    fn parse(&self, line: &str) -> Parsed;
}
