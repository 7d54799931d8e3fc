//! One engine commit, applied the same way by every backend: core decides
//! which writes an [`EngineCommit`] makes and in what order, and a backend
//! words each write inside the transaction it opened.

use super::state::Calibration;
use super::store::{CompactionRecord, EngineCommit, HotRestore, StateRow, StoredCheckpoint};
use crate::memory::{
    DocumentDraft, Operation, OperationDraft, SessionChange, StoreError, StoreResult, Timestamp,
};
use crate::optimize::{Artifact, Substitution};

/// The writes a commit is made of, inside one open transaction. None of
/// them commits; a failure anywhere rolls the whole commit back.
pub trait CommitWrites {
    /// Inserts the agent's state row (`row.0` is `None`) or replaces the row
    /// at version `row.0`. `false` when nothing was written because another
    /// writer moved the state first.
    fn write_state(&mut self, row: &StateRow<'_>) -> StoreResult<bool>;
    /// Replaces the model's calibration.
    fn write_calibration(&mut self, model: &str, cal: &Calibration) -> StoreResult<()>;
    /// `false` when the checkpoint's id is taken.
    fn insert_checkpoint(&mut self, cp: &StoredCheckpoint) -> StoreResult<bool>;
    fn update_session(&mut self, id: &str, change: &SessionChange) -> StoreResult<()>;
    fn save_document(&mut self, draft: &DocumentDraft<'_>) -> StoreResult<()>;
    fn insert_compaction(&mut self, r: &CompactionRecord) -> StoreResult<()>;
    /// Puts an item back as it was, as a new version stamped `at`.
    fn restore_hot_item(&mut self, h: &HotRestore, at: Timestamp) -> StoreResult<()>;
    /// Moves the hot context's version on once, after its items changed.
    fn bump_hot_version(&mut self) -> StoreResult<()>;
    /// Replaces any earlier substitution of the same operation.
    fn write_substitution(&mut self, s: &Substitution, at: Timestamp) -> StoreResult<()>;
    /// Replaces any artifact at the same path.
    fn write_artifact(&mut self, a: &Artifact, at: Timestamp) -> StoreResult<()>;
    fn insert_operation(&mut self, op: &OperationDraft) -> StoreResult<Operation>;
}

impl EngineCommit {
    /// Applies this commit through `w`. `state` is [`EngineCommit::state_row`],
    /// encoded by the caller before it opened the transaction, so the lock
    /// is not held while JSON is written.
    ///
    /// The state is written first: a commit that lost the race to another
    /// writer stops there, with [`StoreError::StateConflict`], and the
    /// caller's rollback leaves nothing of it.
    pub fn apply(
        &self,
        state: Option<&StateRow<'_>>,
        w: &mut impl CommitWrites,
    ) -> StoreResult<Option<Operation>> {
        if let Some(row) = state
            && !w.write_state(row)?
        {
            return Err(super::store::state_conflict(row.1));
        }
        if let Some((model, cal)) = &self.calibration {
            w.write_calibration(model, cal)?;
        }
        // Another writer took this second's checkpoint id between the
        // engine's look-up and this commit: like a moved state, the action
        // is evaluated again and picks the next id.
        if let Some(cp) = &self.checkpoint
            && !w.insert_checkpoint(cp)?
        {
            return Err(StoreError::StateConflict {
                agent: cp.agent.clone(),
            });
        }
        for (id, change) in &self.sessions {
            w.update_session(id, change)?;
        }
        for draft in self.document_drafts() {
            w.save_document(&draft)?;
        }
        if let Some(r) = &self.compaction {
            w.insert_compaction(r)?;
        }
        if !self.hot_restore.is_empty() {
            for h in &self.hot_restore {
                w.restore_hot_item(h, self.at)?;
            }
            w.bump_hot_version()?;
        }
        for s in &self.substitutions {
            w.write_substitution(s, self.at)?;
        }
        for a in &self.artifacts {
            w.write_artifact(a, self.at)?;
        }
        self.operation
            .as_ref()
            .map(|op| w.insert_operation(op))
            .transpose()
    }
}
