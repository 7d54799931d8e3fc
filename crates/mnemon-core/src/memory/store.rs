//! The storage seam. Core defines what a backend must do; `mnemon-sqlite`,
//! `mnemon-postgres` and the conformance crate's in-memory store implement it. Every method is one transaction and
//! returns only after it commits. Nothing here is SQLite-specific: ids are
//! opaque strings the backend assigns, `seq` is any strictly increasing
//! position, and every row belongs to the store's project.

use super::decision::{DecisionRecord, DecisionStatus};
use super::entities::{Entity, EntityChange, EntityDraft, EntityQuery, StatusCount};
use super::episodic::{DocKind, Document};
use super::hot::{HotContext, HotItem, HotItemChange, HotItemDraft};
use super::types::{
    Message, MessageDraft, MessageQuery, Operation, OperationDraft, OperationQuery, Session,
    SessionChange, Timestamp,
};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    #[error("no {what} with id `{id}`")]
    NotFound { what: &'static str, id: String },
    #[error("`{prefix}` matches {count} {what}s; give more of the id")]
    Ambiguous {
        what: &'static str,
        prefix: String,
        count: usize,
    },
    /// An update named a version that is no longer current. `current` is
    /// the item as it is now, so the caller can redo its change on it.
    #[error(
        "conflict: {what} `{id}` is at version {actual}, not {expected}; someone else changed it. Re-read it and apply your change again"
    )]
    Conflict {
        what: &'static str,
        id: String,
        expected: u64,
        actual: u64,
        current: Box<HotItem>,
    },
    /// An engine commit lost a race with another writer (usually another
    /// process): the state version it named was already replaced, or the
    /// checkpoint id it chose was just taken. Nothing was written; the
    /// engine reads the state again and re-evaluates.
    #[error(
        "engine state changed for agent `{agent}`: another writer committed first; nothing was written"
    )]
    StateConflict { agent: String },
    #[error("{0}")]
    Invalid(String),
    #[error("{path} is not a mnemon database: {reason}")]
    Foreign { path: String, reason: String },
    #[error(
        "{path} was written by a newer mnemon (schema version {found}; this mnemon knows up to {supported}). Upgrade mnemon; the file was not changed"
    )]
    NewerSchema {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error("{path} is damaged: {reason}. Restore it from a backup; mnemon changed nothing")]
    Corrupt { path: String, reason: String },
    #[error("cannot write {path}: {reason}")]
    ReadOnly { path: String, reason: String },
    #[error("the disk is full; nothing was written. Free space and retry")]
    DiskFull,
    #[error("storage error: {0}")]
    Backend(String),
}

/// What every storage method returns.
pub type StoreResult<T> = Result<T, StoreError>;

/// A page of rows by position: those after `after`, at most `limit`. A
/// reader that has seen up to a position asks for what came after it,
/// which an index answers without counting what it skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub after: i64,
    pub limit: usize,
}

impl Page {
    /// Every row after `after`.
    pub fn all_after(after: i64) -> Self {
        Self {
            after,
            limit: usize::MAX,
        }
    }
}

/// A new session; the store assigns its id.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionDraft {
    pub title: Option<String>,
    pub agent: String,
    pub started_at: Timestamp,
}

impl SessionDraft {
    /// The session an agent gets when it records without starting one.
    pub fn untitled(agent: &str, at: Timestamp) -> Self {
        Self {
            title: None,
            agent: agent.to_string(),
            started_at: at,
        }
    }
}

/// A compare-and-set change of a hot-context item: applied only while the
/// item is at `expected_version`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotItemUpdate<'a> {
    pub id: &'a str,
    pub expected_version: u64,
    pub change: &'a HotItemChange,
    pub at: Timestamp,
}

/// A decision's new status, and the decision that supersedes it when one
/// does. `id` is the full id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusWrite<'a> {
    pub id: &'a str,
    pub status: DecisionStatus,
    pub superseded_by: Option<&'a str>,
}

/// A document's next version, and how many old versions to keep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DocumentDraft<'a> {
    pub kind: DocKind,
    pub content: &'a str,
    pub at: Timestamp,
    pub keep_versions: u64,
}

/// What a backend's health check (`mnemon doctor`) found. Empty lists
/// mean healthy.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Health {
    /// The database's own page and index checks (SQLite's
    /// `PRAGMA integrity_check`).
    pub integrity: Vec<String>,
    /// Full-text indexes that do not match their tables.
    pub search_index: Vec<String>,
    /// Rows pointing at rows that do not exist.
    pub orphans: Vec<String>,
    /// The schema version of the store, and the one this build writes.
    pub schema_version: i64,
    pub latest_schema: i64,
    /// Rows per table, for the report.
    pub rows: Vec<(String, u64)>,
}

impl Health {
    pub fn ok(&self) -> bool {
        self.integrity.is_empty()
            && self.search_index.is_empty()
            && self.orphans.is_empty()
            && self.schema_version == self.latest_schema
    }
}

/// Operations and messages: an append-only log.
pub trait OperationLog {
    fn append_operation(&self, op: &OperationDraft) -> StoreResult<Operation>;
    fn append_message(&self, msg: &MessageDraft) -> StoreResult<Message> {
        let mut out = self.append_messages(std::slice::from_ref(msg))?;
        out.pop()
            .ok_or_else(|| StoreError::Invalid("the store stored no message".into()))
    }
    /// Appends `msgs` in order, all or none: an import writes a history
    /// in batches, one commit each, instead of one commit per turn.
    fn append_messages(&self, msgs: &[MessageDraft]) -> StoreResult<Vec<Message>>;
    /// Most recent first.
    fn operations(&self, q: &OperationQuery) -> StoreResult<Vec<Operation>>;
    /// How many operations `operations(q)` would return, without reading
    /// them: a status line must not read a session's whole log to count it.
    fn count_operations(&self, q: &OperationQuery) -> StoreResult<u64>;
    /// Most recent first.
    fn messages(&self, q: &MessageQuery) -> StoreResult<Vec<Message>>;
    fn operation(&self, id: &str) -> StoreResult<Operation>;
}

pub trait SessionStore {
    fn create_session(&self, draft: &SessionDraft) -> StoreResult<Session>;
    /// By full id or unique prefix.
    fn session(&self, id: &str) -> StoreResult<Session>;
    /// Most recently active first.
    fn sessions(&self, limit: usize) -> StoreResult<Vec<Session>>;
    fn update_session(&self, id: &str, change: &SessionChange) -> StoreResult<Session>;
    /// The most recently started active session of `agent`, if any.
    fn active_session(&self, agent: &str) -> StoreResult<Option<Session>>;
    /// The active session of `agent`, or one started at `at` when it has
    /// none, decided in one transaction: processes of one agent that start
    /// together must share a session, or each would keep resetting the
    /// others' window accounting to its own.
    fn active_or_new_session(&self, agent: &str, at: Timestamp) -> StoreResult<Session>;
}

pub trait HotStore {
    /// The live items and the hot context's version.
    fn hot_context(&self) -> StoreResult<HotContext>;
    /// Never conflicts.
    fn add_hot_item(&self, draft: &HotItemDraft) -> StoreResult<HotItem>;
    /// Refused with [`StoreError::Conflict`] unless the item is at `expected_version`.
    fn update_hot_item(&self, update: &HotItemUpdate<'_>) -> StoreResult<HotItem>;
    /// By full id or unique prefix, live or not.
    fn hot_item(&self, id: &str) -> StoreResult<HotItem>;
}

/// Decision records. The backend assigns `DR-` ids; everything else comes in
/// the draft.
pub trait DecisionStore {
    fn insert_decision(&self, draft: &DecisionRecord) -> StoreResult<DecisionRecord>;
    /// By full id (`DR-a3f8b2c1`), its hex part, or a unique prefix.
    fn decision(&self, id: &str) -> StoreResult<DecisionRecord>;
    /// Most recent first.
    fn decisions(&self, limit: Option<usize>) -> StoreResult<Vec<DecisionRecord>>;
    /// Writes the status of the decision whose full id is `id`, and the
    /// decision that supersedes it when one does. The lifecycle's rules
    /// are the memory service's: it calls this only for a change they
    /// allow.
    fn write_decision_status(&self, write: &StatusWrite<'_>) -> StoreResult<()>;
}

/// Project entities, numbered from one sequence per project.
pub trait EntityStore {
    /// Takes the project's next number.
    fn create_entity(&self, draft: &EntityDraft) -> StoreResult<Entity>;
    fn entity(&self, number: u64) -> StoreResult<Entity>;
    fn update_entity(
        &self,
        number: u64,
        change: &EntityChange,
        at: Timestamp,
    ) -> StoreResult<Entity>;
    /// Most urgent first, then by number.
    /// Deletes an entity that has no live children. The number is never
    /// reused; the entity leaves listings and search.
    fn delete_entity(&self, number: u64, at: Timestamp) -> StoreResult<Entity>;
    fn entities(&self, q: &EntityQuery) -> StoreResult<Vec<Entity>>;
    fn status_counts(&self) -> StoreResult<Vec<StatusCount>>;
}

/// Versioned episodic documents.
pub trait DocumentStore {
    /// Saves `content` as the next version unless it equals the current one
    /// apart from its `**Last Updated**` line; keeps the current version and
    /// `keep_versions` old ones. Returns the current document.
    fn save_document(&self, draft: &DocumentDraft<'_>) -> StoreResult<Document>;
    /// The current version, or version `version`.
    fn document(&self, kind: DocKind, version: Option<u64>) -> StoreResult<Document>;
    /// Every kept version, newest first.
    fn document_versions(&self, kind: DocKind) -> StoreResult<Vec<Document>>;
}

/// Everything a backend provides.
pub trait Store:
    OperationLog + SessionStore + HotStore + DecisionStore + EntityStore + DocumentStore + Send + Sync
{
    /// The project every row of this store belongs to.
    fn project_id(&self) -> &str;

    /// Runs `f` as one unit of work: every write it makes through this store
    /// commits together when it returns `Ok`, and none does when it fails or
    /// panics. A row and the operation that records it (an entity and its
    /// `entity_created`, a decision, its operation and its hot item) must not
    /// be split by a killed process. Other users of the store never see half
    /// of it: they wait until it ends, or read what was there before it (a
    /// store with snapshots); a unit inside a unit joins it.
    ///
    /// `f` is called once. It takes no value back so that the trait can be
    /// a trait object (`dyn Backend`); [`Atomically::atomically`] is the
    /// form callers use, returning what `f` made.
    fn unit_of_work(&self, f: &mut dyn FnMut() -> StoreResult<()>) -> StoreResult<()>;
}

/// [`Store::unit_of_work`] for a closure that returns a value: every store,
/// sized or a trait object, has it.
pub trait Atomically {
    /// Runs `f` as one unit of work (see [`Store::unit_of_work`]).
    fn atomically<T>(&self, f: impl FnOnce() -> StoreResult<T>) -> StoreResult<T>;
}

impl<S: Store + ?Sized> Atomically for S {
    fn atomically<T>(&self, f: impl FnOnce() -> StoreResult<T>) -> StoreResult<T> {
        let mut f = Some(f);
        let mut out = None;
        self.unit_of_work(&mut || {
            if let Some(f) = f.take() {
                out = Some(f()?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| {
            StoreError::Invalid("the store ended a unit of work without running it".into())
        })
    }
}
