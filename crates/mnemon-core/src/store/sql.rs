//! What the SQL backends share, written once: the columns a log's rows are
//! read by, how such a row reads back whatever the driver ([`Columns`]),
//! the filters of the logs' queries, and the row a draft becomes once
//! stored. The backends differ in their drivers, placeholders and text
//! search, not in these; a third SQL backend takes them as they are.

use crate::importance::Role;
use crate::memory::{
    DecisionRecord, DocKind, Document, Entity, EntityKind, HotItem, HotKind, HotStatus, Message,
    MessageDraft, MessageQuery, Operation, OperationDraft, OperationQuery, Phase, Priority,
    Session, SessionStatus, StoreError, StoreResult, Timestamp, drawn_decision_id,
};
use crate::optimize::{Artifact, Replacement, Substitution, Technique};

/// The columns an operation is read by, in the order [`operation`] reads.
pub const OPERATION_COLUMNS: &str =
    "seq, id, session_id, agent, kind, data, tokens, phase, status, importance, pinned, created_at";

/// The columns a message is read by, in the order [`message`] reads.
pub const MESSAGE_COLUMNS: &str =
    "seq, id, session_id, role, agent, content, tokens, importance, pinned, created_at";

/// The columns a hot-context item is read by, in the order [`hot_item`]
/// reads.
pub const HOT_COLUMNS: &str = "id, kind, text, detail, parent_id, priority, status, agent, version, created_at, updated_at, seq";

/// The columns an entity is read by, in the order [`entity`] reads.
pub const ENTITY_COLUMNS: &str =
    "number, kind, title, description, status, priority, parent, created_at, updated_at";

/// The columns a document version is read by, in the order [`document`]
/// reads.
pub const DOCUMENT_COLUMNS: &str = "version, content, created_at";

/// The columns a session is read by, in the order [`session`] reads.
pub const SESSION_COLUMNS: &str = "id, title, agent, status, started_at, ended_at, summary, operation_count, message_count, tokens, last_activity";

/// The columns an optimizer's substitution is read by
/// ([`StoredSubstitution::read`]).
pub const SUBSTITUTION_COLUMNS: &str =
    "op_seq, technique, kind, text, tokens, reason, original_tokens";

/// The columns an archived artifact is read by ([`StoredArtifact::read`]).
pub const ARTIFACT_COLUMNS: &str = "path, technique, content";

/// The tables of the records a user counts: `mnemon doctor` reports their
/// rows, and a project is copied only into a database where they (and the
/// compactions made of them) are empty.
pub const RECORD_TABLES: [&str; 8] = [
    "sessions",
    "operations",
    "messages",
    "hot_items",
    "decisions",
    "entities",
    "documents",
    "checkpoints",
];

/// One row as a driver returns it, read by column position. A backend
/// implements it once for its driver's row, and every row kind shared here
/// reads through it.
pub trait Columns {
    type Error;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn maybe_int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn real(&self, i: usize) -> Result<f64, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn maybe_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
}

/// The columns of a row from `from` on: a row that holds another's
/// columns after its own is read by the other's decoder through it.
#[derive(Debug)]
pub struct Shifted<'a, C: ?Sized>(pub &'a C, pub usize);

impl<C: Columns + ?Sized> Columns for Shifted<'_, C> {
    type Error = C::Error;
    fn int(&self, i: usize) -> Result<i64, C::Error> {
        self.0.int(self.1 + i)
    }
    fn maybe_int(&self, i: usize) -> Result<Option<i64>, C::Error> {
        self.0.maybe_int(self.1 + i)
    }
    fn real(&self, i: usize) -> Result<f64, C::Error> {
        self.0.real(self.1 + i)
    }
    fn flag(&self, i: usize) -> Result<bool, C::Error> {
        self.0.flag(self.1 + i)
    }
    fn text(&self, i: usize) -> Result<String, C::Error> {
        self.0.text(self.1 + i)
    }
    fn maybe_text(&self, i: usize) -> Result<Option<String>, C::Error> {
        self.0.maybe_text(self.1 + i)
    }
}

/// An operation read by [`OPERATION_COLUMNS`]. Data that is not JSON
/// (written by hand into the database) reads back as a JSON string rather
/// than failing the whole log.
pub fn operation<C: Columns + ?Sized>(r: &C) -> Result<Operation, C::Error> {
    let data = r.text(5)?;
    Ok(Operation {
        seq: r.int(0)?,
        id: r.text(1)?,
        session_id: r.maybe_text(2)?,
        agent: r.text(3)?,
        kind: r.text(4)?,
        data: serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data)),
        tokens: r.int(6)? as u64,
        phase: r.maybe_text(7)?.and_then(|p| p.parse::<Phase>().ok()),
        status: r.maybe_text(8)?,
        importance: r.real(9)?,
        pinned: r.flag(10)?,
        created_at: Timestamp(r.int(11)?),
    })
}

/// A message read by [`MESSAGE_COLUMNS`]; a role this build does not know
/// reads as `system`.
pub fn message<C: Columns + ?Sized>(r: &C) -> Result<Message, C::Error> {
    Ok(Message {
        seq: r.int(0)?,
        id: r.text(1)?,
        session_id: r.maybe_text(2)?,
        role: r.text(3)?.parse::<Role>().unwrap_or(Role::System),
        agent: r.text(4)?,
        content: r.text(5)?,
        tokens: r.int(6)? as u64,
        importance: r.real(7)?,
        pinned: r.flag(8)?,
        created_at: Timestamp(r.int(9)?),
    })
}

/// A hot-context item read by [`HOT_COLUMNS`]; a kind or status this
/// build does not know reads as a note, active.
pub fn hot_item<C: Columns + ?Sized>(r: &C) -> Result<HotItem, C::Error> {
    Ok(HotItem {
        id: r.text(0)?,
        kind: HotKind::parse(&r.text(1)?).unwrap_or(HotKind::Note),
        text: r.text(2)?,
        detail: r.maybe_text(3)?,
        parent_id: r.maybe_text(4)?,
        priority: r.maybe_text(5)?.and_then(|p| p.parse::<Priority>().ok()),
        status: HotStatus::parse(&r.text(6)?).unwrap_or(HotStatus::Active),
        agent: r.text(7)?,
        version: r.int(8)? as u64,
        created_at: Timestamp(r.int(9)?),
        updated_at: Timestamp(r.int(10)?),
        seq: r.int(11)? as u64,
    })
}

/// An entity read by [`ENTITY_COLUMNS`]; a kind or status this build does
/// not know reads as a task, open.
pub fn entity<C: Columns + ?Sized>(r: &C) -> Result<Entity, C::Error> {
    Ok(Entity {
        number: r.int(0)? as u64,
        kind: r.text(1)?.parse().unwrap_or(EntityKind::Task),
        title: r.text(2)?,
        description: r.maybe_text(3)?,
        status: r.text(4)?.parse().unwrap_or_default(),
        priority: r.int(5)? as u8,
        parent: r.maybe_int(6)?.map(|p| p as u64),
        created_at: Timestamp(r.int(7)?),
        updated_at: Timestamp(r.int(8)?),
    })
}

/// A version of a `kind` document read by [`DOCUMENT_COLUMNS`].
pub fn document<C: Columns + ?Sized>(kind: DocKind, r: &C) -> Result<Document, C::Error> {
    Ok(Document {
        kind,
        version: r.int(0)? as u64,
        content: r.text(1)?,
        created_at: Timestamp(r.int(2)?),
    })
}

/// A session read by [`SESSION_COLUMNS`]; a status this build does not
/// know reads as ended.
pub fn session<C: Columns + ?Sized>(r: &C) -> Result<Session, C::Error> {
    Ok(Session {
        id: r.text(0)?,
        title: r.maybe_text(1)?,
        agent: r.text(2)?,
        status: SessionStatus::parse(&r.text(3)?).unwrap_or(SessionStatus::Ended),
        started_at: Timestamp(r.int(4)?),
        ended_at: r.maybe_int(5)?.map(Timestamp),
        summary: r.maybe_text(6)?,
        operation_count: r.int(7)? as u64,
        message_count: r.int(8)? as u64,
        tokens: r.int(9)? as u64,
        last_activity: Timestamp(r.int(10)?),
    })
}

/// A substitution's row as read, before its technique is known to this
/// build: an unknown one is an error of the data, not of the driver.
#[derive(Debug, Clone)]
pub struct StoredSubstitution {
    pub op_seq: i64,
    technique: String,
    kind: Option<String>,
    text: Option<String>,
    tokens: i64,
    reason: String,
    original_tokens: i64,
}

impl StoredSubstitution {
    /// A row of [`SUBSTITUTION_COLUMNS`].
    pub fn read<C: Columns + ?Sized>(r: &C) -> Result<StoredSubstitution, C::Error> {
        Ok(StoredSubstitution {
            op_seq: r.int(0)?,
            technique: r.text(1)?,
            kind: r.maybe_text(2)?,
            text: r.maybe_text(3)?,
            tokens: r.int(4)?,
            reason: r.text(5)?,
            original_tokens: r.int(6)?,
        })
    }

    pub fn substitution(self) -> StoreResult<Substitution> {
        Ok(Substitution {
            op_seq: self.op_seq,
            technique: technique(&self.technique)?,
            replacement: match (self.kind, self.text) {
                (Some(kind), Some(text)) => Some(Replacement {
                    kind,
                    text,
                    tokens: self.tokens as u64,
                }),
                _ => None,
            },
            reason: self.reason,
            original_tokens: self.original_tokens as u64,
        })
    }
}

/// The `kind` and `text` columns of a substitution: both empty when the
/// operation leaves the live context.
pub fn replacement_columns(s: &Substitution) -> (Option<&str>, Option<&str>) {
    match &s.replacement {
        Some(r) => (Some(r.kind.as_str()), Some(r.text.as_str())),
        None => (None, None),
    }
}

/// An artifact's row as read, before its technique and JSON are checked.
#[derive(Debug, Clone)]
pub struct StoredArtifact {
    path: String,
    technique: String,
    content: String,
}

impl StoredArtifact {
    /// A row of [`ARTIFACT_COLUMNS`].
    pub fn read<C: Columns + ?Sized>(r: &C) -> Result<StoredArtifact, C::Error> {
        Ok(StoredArtifact {
            path: r.text(0)?,
            technique: r.text(1)?,
            content: r.text(2)?,
        })
    }

    pub fn artifact(self) -> StoreResult<Artifact> {
        Ok(Artifact {
            content: serde_json::from_str(&self.content).map_err(|e| {
                StoreError::Invalid(format!("artifact {} is not valid JSON: {e}", self.path))
            })?,
            technique: technique(&self.technique)?,
            path: self.path,
        })
    }
}

fn technique(s: &str) -> StoreResult<Technique> {
    Technique::parse(s).ok_or_else(|| {
        StoreError::Invalid(format!(
            "unknown optimizer technique `{s}` in the database; it was written by a newer mnemon"
        ))
    })
}

/// The error of a write that expected version `expected` of `item`, found
/// as it now is.
pub fn hot_conflict(item: HotItem, expected: u64) -> StoreError {
    StoreError::Conflict {
        what: "hot-context item",
        id: item.id.clone(),
        expected,
        actual: item.version,
        current: Box::new(item),
    }
}

/// The filters both logs' queries share: which table, and which of its
/// rows (a session's, a kind's, those holding every keyword).
#[derive(Debug, Clone, Copy)]
pub struct LogFilter<'q> {
    pub table: &'static str,
    pub session_id: Option<&'q String>,
    pub kind: Option<&'q String>,
    pub keywords: Option<&'q String>,
}

impl<'q> LogFilter<'q> {
    pub fn operations(q: &'q OperationQuery) -> LogFilter<'q> {
        LogFilter {
            table: "operations",
            session_id: q.session_id.as_ref(),
            kind: q.kind.as_ref(),
            keywords: q.keywords.as_ref(),
        }
    }

    pub fn messages(q: &'q MessageQuery) -> LogFilter<'q> {
        LogFilter {
            table: "messages",
            session_id: q.session_id.as_ref(),
            kind: None,
            keywords: q.keywords.as_ref(),
        }
    }
}

/// A token count as the databases' signed 64-bit integers hold it.
pub fn stored_tokens(tokens: u64) -> StoreResult<i64> {
    i64::try_from(tokens)
        .map_err(|_| StoreError::Invalid(format!("{tokens} tokens is more than can be stored")))
}

impl OperationDraft {
    /// The operation this draft became once stored under `id` at `seq`.
    pub fn stored(&self, id: String, seq: i64) -> Operation {
        Operation {
            id,
            seq,
            session_id: self.session_id.clone(),
            agent: self.agent.clone(),
            kind: self.kind.clone(),
            data: self.data.clone(),
            tokens: self.tokens,
            phase: self.phase,
            status: self.status.clone(),
            importance: self.importance,
            pinned: self.pinned,
            created_at: self.created_at,
        }
    }
}

impl MessageDraft {
    /// The message this draft became once stored under `id` at `seq`.
    pub fn stored(&self, id: String, seq: i64) -> Message {
        Message {
            id,
            seq,
            session_id: self.session_id.clone(),
            role: self.role,
            agent: self.agent.clone(),
            content: self.content.clone(),
            tokens: self.tokens,
            importance: self.importance,
            pinned: self.pinned,
            created_at: self.created_at,
        }
    }
}

/// Whether `tables`, everything a database or schema holds, are mnemon's:
/// `true` when its migrations table is there, `false` when there are no
/// tables yet. Another program's tables are refused as [`StoreError::Foreign`],
/// `holds` saying where they are ("it holds", "its schema holds") and
/// `advice` what to do.
pub fn tables_are_ours(
    tables: &[String],
    place: &str,
    holds: &str,
    advice: &str,
) -> StoreResult<bool> {
    let ours = tables.iter().any(|t| t == "schema_migrations");
    if !ours && !tables.is_empty() {
        return Err(StoreError::Foreign {
            path: place.to_string(),
            reason: format!(
                "{holds} other tables ({}) and no mnemon schema{advice}",
                tables.join(", ")
            ),
        });
    }
    Ok(ours)
}

/// Refuses a schema a newer mnemon wrote: this build would misread it.
pub fn not_newer(found: i64, supported: i64, place: &str) -> StoreResult<()> {
    if found > supported {
        return Err(StoreError::NewerSchema {
            path: place.to_string(),
            found,
            supported,
        });
    }
    Ok(())
}

/// A new decision under a freshly drawn id (from `uuid`), with its JSON,
/// drawn again while `insert` answers that the id is taken: eight hex
/// digits can collide.
pub fn insert_drawn_decision(
    draft: &DecisionRecord,
    uuid: impl Fn() -> String,
    mut insert: impl FnMut(&DecisionRecord, &str) -> StoreResult<bool>,
) -> StoreResult<DecisionRecord> {
    for _ in 0..8 {
        let mut r = draft.clone();
        r.id = drawn_decision_id(&uuid());
        let json = serde_json::to_string(&r).map_err(|e| StoreError::Invalid(e.to_string()))?;
        if insert(&r, &json)? {
            return Ok(r);
        }
    }
    Err(StoreError::Backend(
        "could not draw a unique decision id".into(),
    ))
}
