//! The records mnemon remembers.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::importance::Role;

/// Milliseconds since the Unix epoch, UTC. Supplied by a [`Clock`], never
/// read by core itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn millis(self) -> i64 {
        self.0
    }

    pub fn datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.0).unwrap_or_default()
    }

    /// `2025-01-15T14:30:00.000Z`.
    pub fn rfc3339(self) -> String {
        self.datetime().to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    pub fn parse(s: &str) -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|d| Timestamp(d.timestamp_millis()))
    }

    pub fn plus_millis(self, ms: i64) -> Timestamp {
        Timestamp(self.0.saturating_add(ms))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not an RFC 3339 timestamp")))
    }
}

/// The source of "now". The CLI reads the system clock; tests and replays
/// pass a fixed or advancing one.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> Timestamp;
}

/// The phase an operation belongs to (design v2's phase budgets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Planning,
    Execution,
    Validation,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Planning => "planning",
            Phase::Execution => "execution",
            Phase::Validation => "validation",
        }
    }
}

impl FromStr for Phase {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "planning" => Ok(Phase::Planning),
            "execution" => Ok(Phase::Execution),
            "validation" => Ok(Phase::Validation),
            _ => Err(format!(
                "unknown phase `{s}`: expected planning, execution or validation"
            )),
        }
    }
}

/// Something the orchestrator did, as the caller describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewOperation {
    /// `nl_command`, `task_execution`, `validation`, `decision`, `error`, or any other type.
    pub kind: String,
    pub data: serde_json::Value,
    /// Counted with the project's tokenizer when not given.
    pub tokens: Option<u64>,
    pub phase: Option<Phase>,
    pub agent: Option<String>,
    pub status: Option<String>,
}

impl NewOperation {
    /// An operation of type `kind` carrying `data`; everything else is
    /// counted, scored or taken from the session.
    pub fn new(kind: impl Into<String>, data: serde_json::Value) -> NewOperation {
        NewOperation {
            kind: kind.into(),
            data,
            ..NewOperation::default()
        }
    }
}

/// An operation ready to store: everything but the id and position, which
/// the store assigns.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationDraft {
    pub session_id: Option<String>,
    pub agent: String,
    pub kind: String,
    pub data: serde_json::Value,
    pub tokens: u64,
    pub phase: Option<Phase>,
    pub status: Option<String>,
    pub importance: f64,
    pub pinned: bool,
    pub created_at: Timestamp,
}

/// A stored operation. Serialized with its handle (`"handle": "o12"`)
/// beside its fields (`memory/handle.rs`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Operation {
    pub id: String,
    /// Position in the project's log: increases with every write.
    pub seq: i64,
    pub session_id: Option<String>,
    pub agent: String,
    pub kind: String,
    pub data: serde_json::Value,
    pub tokens: u64,
    pub phase: Option<Phase>,
    pub status: Option<String>,
    pub importance: f64,
    pub pinned: bool,
    pub created_at: Timestamp,
}

/// A message as the caller gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    pub agent: Option<String>,
    pub tokens: Option<u64>,
}

impl NewMessage {
    /// A turn said by `role`.
    pub fn new(role: Role, content: impl Into<String>) -> NewMessage {
        NewMessage {
            role,
            content: content.into(),
            agent: None,
            tokens: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MessageDraft {
    pub session_id: Option<String>,
    pub role: Role,
    pub agent: String,
    pub content: String,
    pub tokens: u64,
    pub importance: f64,
    pub pinned: bool,
    pub created_at: Timestamp,
}

/// A stored message (a turn). Serialized with its handle (`"m7"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    pub id: String,
    pub seq: i64,
    pub session_id: Option<String>,
    pub role: Role,
    pub agent: String,
    pub content: String,
    pub tokens: u64,
    pub importance: f64,
    pub pinned: bool,
    pub created_at: Timestamp,
}

/// Which operations to read, most recent first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperationQuery {
    pub session_id: Option<String>,
    pub kind: Option<String>,
    /// Full-text keywords; every word must match.
    pub keywords: Option<String>,
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageQuery {
    pub session_id: Option<String>,
    pub keywords: Option<String>,
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    Active,
    Ended,
    Archived,
}

impl SessionStatus {
    pub fn name(self) -> &'static str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Ended => "ended",
            SessionStatus::Archived => "archived",
        }
    }

    pub fn parse(s: &str) -> Option<SessionStatus> {
        [
            SessionStatus::Active,
            SessionStatus::Ended,
            SessionStatus::Archived,
        ]
        .into_iter()
        .find(|x| x.name() == s)
    }
}

/// A session (tier 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub title: Option<String>,
    pub agent: String,
    pub status: SessionStatus,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    /// The running summary, when one has been written.
    pub summary: Option<String>,
    pub operation_count: u64,
    pub message_count: u64,
    /// Tokens of everything recorded in the session.
    pub tokens: u64,
    pub last_activity: Timestamp,
}

/// Changes to a session; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionChange {
    pub status: Option<SessionStatus>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub ended_at: Option<Timestamp>,
}
