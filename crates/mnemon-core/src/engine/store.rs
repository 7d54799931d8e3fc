//! What the engine needs from a backend beyond [`Store`]: its own state,
//! checkpoints, compaction audits, hot-item history, and one transaction
//! ([`EngineCommit`]) that applies an action's every write or none of them.

use serde::{Deserialize, Serialize};

use super::state::{Calibration, EngineState, LiveTotals};
use crate::memory::{
    DocKind, DocumentDraft, HotItem, HotStatus, Message, Operation, OperationDraft, Page, Priority,
    SessionChange, Store, StoreError, StoreResult, Timestamp,
};
use crate::optimize::{Artifact, Substitution};

/// A checkpoint as stored: its JSON text is the file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCheckpoint {
    pub id: String,
    pub agent: String,
    pub session_id: Option<String>,
    pub trigger: String,
    pub created_at: Timestamp,
    pub json: String,
}

impl StoredCheckpoint {
    /// The error for a checkpoint id no store holds.
    pub fn not_found(id: &str) -> StoreError {
        StoreError::NotFound {
            what: "checkpoint",
            id: id.to_string(),
        }
    }

    /// The error for an item version, as checkpoints name them, that no
    /// store's history holds.
    pub fn item_version_not_found(item: &str, version: u64) -> StoreError {
        StoreError::NotFound {
            what: "hot-context item version",
            id: format!("{item}@{version}"),
        }
    }
}

/// The audit of one compaction, kept for `mnemon compact` and for finding
/// where a dropped item's original lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionRecord {
    pub session_id: Option<String>,
    /// `refresh`, `session_log`, `session_end` or a document name.
    pub kind: String,
    pub created_at: Timestamp,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The [`crate::compress::Audit`] as JSON.
    pub audit: serde_json::Value,
    pub summary: String,
    /// The log positions this compaction covers up to.
    pub through_op_seq: i64,
    pub through_msg_seq: i64,
}

impl CompactionRecord {
    /// The record of `summary`, covering the log up to `through`
    /// (operation and message positions).
    pub fn of(
        session_id: &str,
        kind: &str,
        at: Timestamp,
        summary: &crate::compress::Summary,
        through: (i64, i64),
    ) -> CompactionRecord {
        CompactionRecord {
            session_id: Some(session_id.to_string()),
            kind: kind.to_string(),
            created_at: at,
            input_tokens: summary.input_tokens,
            output_tokens: summary.tokens,
            audit: serde_json::to_value(&summary.audit).unwrap_or_default(),
            summary: summary.text.clone(),
            through_op_seq: through.0,
            through_msg_seq: through.1,
        }
    }
}

/// Puts a hot-context item back as it was at a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct HotRestore {
    pub id: String,
    pub text: String,
    pub detail: Option<String>,
    pub priority: Option<Priority>,
    pub status: HotStatus,
}

/// Everything one engine action writes, applied in one transaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineCommit {
    /// Written only if the stored state is still at `expected_version`
    /// (`None`: no state row yet); otherwise the commit fails with
    /// [`StoreError::StateConflict`] and writes nothing.
    pub state: Option<(Option<u64>, EngineState)>,
    pub calibration: Option<(String, Calibration)>,
    pub operation: Option<OperationDraft>,
    pub checkpoint: Option<StoredCheckpoint>,
    pub sessions: Vec<(String, SessionChange)>,
    pub documents: Vec<(DocKind, String)>,
    pub keep_versions: u64,
    pub at: Timestamp,
    pub compaction: Option<CompactionRecord>,
    pub hot_restore: Vec<HotRestore>,
    /// Optimizer results: replaces any earlier substitution of the same
    /// operation, and any artifact at the same path.
    pub substitutions: Vec<Substitution>,
    pub artifacts: Vec<Artifact>,
}

/// An engine state as a commit writes it: the version it must replace
/// (`None`: no state row yet), the state, and its stored JSON.
pub type StateRow<'a> = (Option<u64>, &'a EngineState, String);

impl EngineCommit {
    /// The documents this commit saves, each kept with the commit's
    /// retention and time.
    pub fn document_drafts(&self) -> impl Iterator<Item = DocumentDraft<'_>> {
        self.documents.iter().map(|(kind, content)| DocumentDraft {
            kind: *kind,
            content,
            at: self.at,
            keep_versions: self.keep_versions,
        })
    }

    /// The state this commit writes, if any, as its row.
    pub fn state_row(&self) -> StoreResult<Option<StateRow<'_>>> {
        self.state
            .as_ref()
            .map(|(expected, st)| {
                serde_json::to_string(st)
                    .map(|json| (*expected, st, json))
                    .map_err(|e| StoreError::Invalid(format!("cannot encode engine data: {e}")))
            })
            .transpose()
    }
}

/// The error of a state write that found another version than it
/// expected: another writer moved the state on first.
pub fn state_conflict(st: &EngineState) -> StoreError {
    StoreError::StateConflict {
        agent: st.agent.clone(),
    }
}

/// What the engine reads and writes beyond the memory tiers: its state per
/// agent, checkpoints, compactions, the optimizer's results, and the rows
/// forgetting takes ([`super::forget::ForgetRows`]).
pub trait EngineStore: Store + super::forget::ForgetRows {
    fn engine_state(&self, agent: &str) -> StoreResult<Option<EngineState>>;
    fn calibration(&self, model: &str) -> StoreResult<Option<Calibration>>;
    /// Tokens and counts of `session_id`'s operations after `op_seq` and
    /// messages after `msg_seq`, leaving out the engine's own records.
    fn live_totals(&self, session_id: &str, op_seq: i64, msg_seq: i64) -> StoreResult<LiveTotals>;
    /// [`EngineStore::live_totals`] with the newest operation and message
    /// positions it counted (else the positions given), so a caller can
    /// count on from them next time and add. `None` where a newer position
    /// can become visible before an older one (PostgreSQL's sequences hand
    /// out positions before their transactions commit, in any order):
    /// counting on from a position there could miss a row for good.
    fn live_totals_through(
        &self,
        _session_id: &str,
        _op_seq: i64,
        _msg_seq: i64,
    ) -> StoreResult<Option<(LiveTotals, i64, i64)>> {
        Ok(None)
    }
    /// The newest operation and message positions in the project's log.
    fn log_heads(&self) -> StoreResult<(i64, i64)>;
    /// `session_id`'s operations in `page`, newest first, without the
    /// engine's own records.
    fn operations_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Operation>>;
    fn messages_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Message>>;
    /// Operations at the given positions, oldest first; missing ones are left out.
    fn operations_at(&self, seqs: &[i64]) -> StoreResult<Vec<Operation>>;
    fn messages_at(&self, seqs: &[i64]) -> StoreResult<Vec<Message>>;
    /// An item as it was at `version`.
    fn hot_item_at(&self, id: &str, version: u64) -> StoreResult<HotItem>;
    fn checkpoint(&self, id: &str) -> StoreResult<StoredCheckpoint>;
    /// Newest first.
    fn checkpoints(&self, limit: usize) -> StoreResult<Vec<StoredCheckpoint>>;
    /// The newest compaction of `kind` for `session_id`.
    fn last_compaction(
        &self,
        session_id: &str,
        kind: &str,
    ) -> StoreResult<Option<CompactionRecord>>;
    /// Newest first.
    fn compactions(&self, limit: usize) -> StoreResult<Vec<CompactionRecord>>;
    /// The optimizer's substitutions for operations at `seqs`.
    fn substitutions(&self, seqs: &[i64]) -> StoreResult<Vec<Substitution>>;
    /// The artifact at `path`, or every artifact (`None`), by path.
    fn read_artifacts(&self, path: Option<&str>) -> StoreResult<Vec<Artifact>>;
    fn artifact(&self, path: &str) -> StoreResult<Option<Artifact>> {
        Ok(self.read_artifacts(Some(path))?.pop())
    }
    /// Every artifact, by path.
    fn artifacts(&self) -> StoreResult<Vec<Artifact>> {
        self.read_artifacts(None)
    }
    /// Applies every part of `c` in one transaction, or nothing. Returns the
    /// stored operation, if one was given. A checkpoint whose id another
    /// writer took first fails with [`StoreError::StateConflict`], so the
    /// engine evaluates the action again and chooses the next free id.
    fn commit(&self, c: &EngineCommit) -> StoreResult<Option<Operation>>;
    /// The audit of forgetting, newest first.
    fn forgettings(&self, limit: usize) -> StoreResult<Vec<super::forget::ForgetAudit>>;
}
