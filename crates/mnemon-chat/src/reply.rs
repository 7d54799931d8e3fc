//! What a chat answers to a line: its kind, its text, and what it stored or
//! changed.

use serde::Serialize;

use super::command::Command;
use mnemon_core::engine::{Checkpoint, EngineEvent, EngineStatus};
use mnemon_core::memory::{DecisionRecord, Entity};

/// What kind of answer a line got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyKind {
    /// A command ran and changed the project.
    Done,
    /// A question or listing was answered; nothing changed.
    Answer,
    /// A reference was ambiguous: the reply asks which one.
    Clarify,
    /// Understood, but something is missing; nothing changed.
    Incomplete,
    /// Not understood; nothing changed.
    NotUnderstood,
    /// The command was refused (unknown number, invalid change).
    Error,
    /// The session ended (Ctrl-D, `/quit`, end of a script).
    Ended,
    /// An empty line.
    Empty,
}

/// The answer to one line.
#[derive(Debug, Clone, Serialize)]
pub struct Reply {
    pub input: String,
    pub kind: ReplyKind,
    pub text: String,
    /// What the command understood, when it was a project command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Command>,
    /// Entities the command created, changed or showed.
    pub entities: Vec<Entity>,
    /// The operation recording this line and its token count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Recorded>,
    /// What the engine did on its own after the write.
    pub events: Vec<EngineEvent>,
    #[serde(skip)]
    pub checkpoints: Vec<Checkpoint>,
    /// Decision records this line created, for the caller to write.
    #[serde(skip)]
    pub decisions: Vec<DecisionRecord>,
    /// Sessions whose files changed (ended, archived, restored).
    #[serde(skip)]
    pub sessions: Vec<String>,
    pub status: EngineStatus,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    pub id: String,
    pub kind: String,
    pub tokens: u64,
}
