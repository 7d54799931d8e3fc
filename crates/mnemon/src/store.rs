//! The project's store: the embedded SQLite file, or a PostgreSQL database
//! shared by many machines (`[storage] url`). One type, so engines, chat
//! and the server are the same code over either; every call goes straight
//! to the backend's own implementation of the storage traits.

use std::path::Path;

use mnemon_core::assemble::retrieve::{Hit, HitSource, SearchStore};
use mnemon_core::assemble::semantic::{StoredVector, VectorStore};
use mnemon_core::engine::forget::{ForgetAudit, ForgetRequest, Forgotten};
use mnemon_core::engine::{
    Calibration, CompactionRecord, EngineCommit, EngineState, EngineStore, LiveTotals,
    StoredCheckpoint,
};
use mnemon_core::memory::{
    DecisionRecord, DecisionStatus, DecisionStore, DocKind, Document, DocumentStore, Entity,
    EntityChange, EntityDraft, EntityQuery, EntityStore, Health, HotContext, HotItem,
    HotItemChange, HotItemDraft, HotStore, Message, MessageDraft, MessageQuery, Operation,
    OperationDraft, OperationLog, OperationQuery, Session, SessionChange, SessionStore,
    StatusCount, Store, StoreError, Timestamp,
};
use mnemon_core::optimize::{Artifact, Substitution};
#[cfg(feature = "postgres")]
use mnemon_postgres::PgStore;
use mnemon_sqlite::SqliteStore;

/// Where one handle's data lives.
#[derive(Debug, Clone)]
pub enum AnyStore {
    /// `.mnemon/mnemon.db`, or a database in memory.
    Sqlite(SqliteStore),
    /// A PostgreSQL database shared by many machines (feature `postgres`).
    #[cfg(feature = "postgres")]
    Postgres(PgStore),
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AnyStore::Sqlite($s) => $e,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres($s) => $e,
        }
    };
}

impl AnyStore {
    /// A consistent snapshot in `dest` (SQLite); a PostgreSQL database is
    /// backed up with its own tools.
    pub fn backup_to(&self, dest: &Path) -> Result<(), StoreError> {
        match self {
            AnyStore::Sqlite(s) => s.backup_to(dest),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(p) => Err(StoreError::Invalid(format!(
                "this project lives in PostgreSQL ({}); back it up with pg_dump (`pg_dump -Fc -n SCHEMA DATABASE`), which takes a consistent snapshot while servers write",
                p.shown()
            ))),
        }
    }

    /// The store's health, for `mnemon doctor`.
    pub fn check(&self) -> Result<Health, StoreError> {
        match self {
            AnyStore::Sqlite(s) => s.check(),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(p) => p.check(),
        }
    }

    /// The database as messages name it (never with a password).
    pub fn shown(&self) -> String {
        match self {
            AnyStore::Sqlite(s) => s.path().to_string(),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(p) => p.shown().to_string(),
        }
    }
}

impl OperationLog for AnyStore {
    fn append_operation(&self, op: &OperationDraft) -> Result<Operation, StoreError> {
        each!(self, s => s.append_operation(op))
    }
    fn append_messages(&self, msgs: &[MessageDraft]) -> Result<Vec<Message>, StoreError> {
        each!(self, s => s.append_messages(msgs))
    }
    fn operations(&self, q: &OperationQuery) -> Result<Vec<Operation>, StoreError> {
        each!(self, s => s.operations(q))
    }
    fn count_operations(&self, q: &OperationQuery) -> Result<u64, StoreError> {
        each!(self, s => s.count_operations(q))
    }
    fn messages(&self, q: &MessageQuery) -> Result<Vec<Message>, StoreError> {
        each!(self, s => s.messages(q))
    }
    fn operation(&self, id: &str) -> Result<Operation, StoreError> {
        each!(self, s => s.operation(id))
    }
}

impl SessionStore for AnyStore {
    fn create_session(
        &self,
        id_hint: Option<&str>,
        title: Option<&str>,
        agent: &str,
        at: Timestamp,
    ) -> Result<Session, StoreError> {
        each!(self, s => s.create_session(id_hint, title, agent, at))
    }
    fn session(&self, id: &str) -> Result<Session, StoreError> {
        each!(self, s => s.session(id))
    }
    fn sessions(&self, limit: usize) -> Result<Vec<Session>, StoreError> {
        each!(self, s => s.sessions(limit))
    }
    fn update_session(&self, id: &str, change: &SessionChange) -> Result<Session, StoreError> {
        each!(self, s => s.update_session(id, change))
    }
    fn active_session(&self, agent: &str) -> Result<Option<Session>, StoreError> {
        each!(self, s => s.active_session(agent))
    }
    fn active_or_new_session(&self, agent: &str, at: Timestamp) -> Result<Session, StoreError> {
        each!(self, s => s.active_or_new_session(agent, at))
    }
}

impl HotStore for AnyStore {
    fn hot_context(&self) -> Result<HotContext, StoreError> {
        each!(self, s => s.hot_context())
    }
    fn add_hot_item(&self, draft: &HotItemDraft) -> Result<HotItem, StoreError> {
        each!(self, s => s.add_hot_item(draft))
    }
    fn update_hot_item(
        &self,
        id: &str,
        expected_version: u64,
        change: &HotItemChange,
        at: Timestamp,
    ) -> Result<HotItem, StoreError> {
        each!(self, s => s.update_hot_item(id, expected_version, change, at))
    }
    fn hot_item(&self, id: &str) -> Result<HotItem, StoreError> {
        each!(self, s => s.hot_item(id))
    }
}

impl DecisionStore for AnyStore {
    fn insert_decision(&self, draft: &DecisionRecord) -> Result<DecisionRecord, StoreError> {
        each!(self, s => s.insert_decision(draft))
    }
    fn decision(&self, id: &str) -> Result<DecisionRecord, StoreError> {
        each!(self, s => s.decision(id))
    }
    fn decisions(&self, limit: Option<usize>) -> Result<Vec<DecisionRecord>, StoreError> {
        each!(self, s => s.decisions(limit))
    }
    fn set_decision_status(
        &self,
        id: &str,
        status: DecisionStatus,
    ) -> Result<DecisionRecord, StoreError> {
        each!(self, s => s.set_decision_status(id, status))
    }
    fn supersede_decision(
        &self,
        old: &str,
        replacement: &DecisionRecord,
    ) -> Result<(DecisionRecord, DecisionRecord), StoreError> {
        each!(self, s => s.supersede_decision(old, replacement))
    }
}

impl EntityStore for AnyStore {
    fn create_entity(&self, draft: &EntityDraft) -> Result<Entity, StoreError> {
        each!(self, s => s.create_entity(draft))
    }
    fn entity(&self, number: u64) -> Result<Entity, StoreError> {
        each!(self, s => s.entity(number))
    }
    fn update_entity(
        &self,
        number: u64,
        change: &EntityChange,
        at: Timestamp,
    ) -> Result<Entity, StoreError> {
        each!(self, s => s.update_entity(number, change, at))
    }
    fn delete_entity(&self, number: u64, at: Timestamp) -> Result<Entity, StoreError> {
        each!(self, s => s.delete_entity(number, at))
    }
    fn entities(&self, q: &EntityQuery) -> Result<Vec<Entity>, StoreError> {
        each!(self, s => s.entities(q))
    }
    fn status_counts(&self) -> Result<Vec<StatusCount>, StoreError> {
        each!(self, s => s.status_counts())
    }
}

impl DocumentStore for AnyStore {
    fn save_document(
        &self,
        kind: DocKind,
        content: &str,
        at: Timestamp,
        keep_versions: u64,
    ) -> Result<Document, StoreError> {
        each!(self, s => s.save_document(kind, content, at, keep_versions))
    }
    fn document(&self, kind: DocKind, version: Option<u64>) -> Result<Document, StoreError> {
        each!(self, s => s.document(kind, version))
    }
    fn document_versions(&self, kind: DocKind) -> Result<Vec<Document>, StoreError> {
        each!(self, s => s.document_versions(kind))
    }
}

impl Store for AnyStore {
    fn project_id(&self) -> &str {
        each!(self, s => s.project_id())
    }
    fn atomically<T>(&self, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        each!(self, s => s.atomically(f))
    }
}

impl EngineStore for AnyStore {
    fn engine_state(&self, agent: &str) -> Result<Option<EngineState>, StoreError> {
        each!(self, s => s.engine_state(agent))
    }
    fn calibration(&self, model: &str) -> Result<Option<Calibration>, StoreError> {
        each!(self, s => s.calibration(model))
    }
    fn live_totals(
        &self,
        session_id: &str,
        op_seq: i64,
        msg_seq: i64,
    ) -> Result<LiveTotals, StoreError> {
        each!(self, s => s.live_totals(session_id, op_seq, msg_seq))
    }
    fn live_totals_through(
        &self,
        session_id: &str,
        op_seq: i64,
        msg_seq: i64,
    ) -> Result<Option<(LiveTotals, i64, i64)>, StoreError> {
        each!(self, s => s.live_totals_through(session_id, op_seq, msg_seq))
    }
    fn log_heads(&self) -> Result<(i64, i64), StoreError> {
        each!(self, s => s.log_heads())
    }
    fn operations_after(
        &self,
        session_id: &str,
        op_seq: i64,
        limit: usize,
    ) -> Result<Vec<Operation>, StoreError> {
        each!(self, s => s.operations_after(session_id, op_seq, limit))
    }
    fn messages_after(
        &self,
        session_id: &str,
        msg_seq: i64,
        limit: usize,
    ) -> Result<Vec<Message>, StoreError> {
        each!(self, s => s.messages_after(session_id, msg_seq, limit))
    }
    fn operations_at(&self, seqs: &[i64]) -> Result<Vec<Operation>, StoreError> {
        each!(self, s => s.operations_at(seqs))
    }
    fn messages_at(&self, seqs: &[i64]) -> Result<Vec<Message>, StoreError> {
        each!(self, s => s.messages_at(seqs))
    }
    fn hot_item_at(&self, id: &str, version: u64) -> Result<HotItem, StoreError> {
        each!(self, s => s.hot_item_at(id, version))
    }
    fn checkpoint(&self, id: &str) -> Result<StoredCheckpoint, StoreError> {
        each!(self, s => s.checkpoint(id))
    }
    fn checkpoints(&self, limit: usize) -> Result<Vec<StoredCheckpoint>, StoreError> {
        each!(self, s => s.checkpoints(limit))
    }
    fn last_compaction(
        &self,
        session_id: &str,
        kind: &str,
    ) -> Result<Option<CompactionRecord>, StoreError> {
        each!(self, s => s.last_compaction(session_id, kind))
    }
    fn compactions(&self, limit: usize) -> Result<Vec<CompactionRecord>, StoreError> {
        each!(self, s => s.compactions(limit))
    }
    fn substitutions(&self, seqs: &[i64]) -> Result<Vec<Substitution>, StoreError> {
        each!(self, s => s.substitutions(seqs))
    }
    fn artifact(&self, path: &str) -> Result<Option<Artifact>, StoreError> {
        each!(self, s => s.artifact(path))
    }
    fn artifacts(&self) -> Result<Vec<Artifact>, StoreError> {
        each!(self, s => s.artifacts())
    }
    fn commit(&self, c: &EngineCommit) -> Result<Option<Operation>, StoreError> {
        each!(self, s => s.commit(c))
    }
    fn forget(&self, req: &ForgetRequest) -> Result<Forgotten, StoreError> {
        each!(self, s => s.forget(req))
    }
    fn forgettings(&self, limit: usize) -> Result<Vec<ForgetAudit>, StoreError> {
        each!(self, s => s.forgettings(limit))
    }
}

impl SearchStore for AnyStore {
    fn search(
        &self,
        query: &str,
        limit: usize,
        sources: &[HitSource],
    ) -> Result<Vec<Hit>, StoreError> {
        each!(self, s => s.search(query, limit, sources))
    }
    fn postings(&self, source: HitSource, term: &str, cap: usize) -> Result<Vec<i64>, StoreError> {
        each!(self, s => s.postings(source, term, cap))
    }
    fn records(&self, source: HitSource, rows: &[i64]) -> Result<Vec<Hit>, StoreError> {
        each!(self, s => s.records(source, rows))
    }
    fn last_row(&self, source: HitSource) -> Result<u64, StoreError> {
        each!(self, s => s.last_row(source))
    }
    fn postings_many(
        &self,
        asks: &[(HitSource, &str)],
        cap: usize,
    ) -> Result<Vec<Vec<i64>>, StoreError> {
        each!(self, s => s.postings_many(asks, cap))
    }
    fn last_rows(&self) -> Result<[u64; 2], StoreError> {
        each!(self, s => s.last_rows())
    }
}

impl VectorStore for AnyStore {
    fn put_vectors(&self, model: &str, vectors: &[StoredVector]) -> Result<(), StoreError> {
        each!(self, s => s.put_vectors(model, vectors))
    }
    fn vectors_since(
        &self,
        model: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, StoredVector)>, StoreError> {
        each!(self, s => s.vectors_since(model, after, limit))
    }
    fn unembedded(
        &self,
        model: &str,
        source: HitSource,
        after: i64,
        limit: usize,
    ) -> Result<Vec<i64>, StoreError> {
        each!(self, s => s.unembedded(model, source, after, limit))
    }
    fn unembedded_count(&self, model: &str, source: HitSource) -> Result<u64, StoreError> {
        each!(self, s => s.unembedded_count(model, source))
    }
}
