//! The writes of an engine commit, worded for PostgreSQL. Which of them
//! run, and in what order, is core's [`EngineCommit::apply`].

use mnemon_core::engine::{
    Calibration, CommitWrites, CompactionRecord, EngineCommit, HotRestore, StateRow,
    StoredCheckpoint,
};
use mnemon_core::memory::{
    DocumentDraft, Operation, OperationDraft, Priority, SessionChange, StoreResult, Timestamp,
};
use mnemon_core::optimize::{Artifact, Substitution};
use mnemon_core::store::sql::replacement_columns;

use crate::PgStore;
use crate::client::Db;
use crate::engine::{COMPACTION_COLUMNS, CP_COLUMNS};

/// An open write transaction of `store`.
struct Committing<'a> {
    db: &'a Db,
    store: &'a PgStore,
}

impl CommitWrites for Committing<'_> {
    fn write_state(&mut self, (expected, st, text): &StateRow<'_>) -> StoreResult<bool> {
        let project = self.store.project();
        let changed = match expected {
            None => self.db.exec(
                "INSERT INTO engine_state (project_id, agent, version, state) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                &[&project, &st.agent, &(st.version as i64), text],
            )?,
            Some(v) => self.db.exec(
                "UPDATE engine_state SET version = $3, state = $4 WHERE project_id = $1 AND agent = $2 AND version = $5",
                &[&project, &st.agent, &(st.version as i64), text, &(*v as i64)],
            )?,
        };
        Ok(changed > 0)
    }

    fn write_calibration(&mut self, model: &str, cal: &Calibration) -> StoreResult<()> {
        self.db.exec(
            "INSERT INTO calibration (project_id, model, factor_ppm, samples) VALUES ($1, $2, $3, $4)
             ON CONFLICT (project_id, model) DO UPDATE SET factor_ppm = EXCLUDED.factor_ppm, samples = EXCLUDED.samples",
            &[&self.store.project(), &model, &(cal.factor_ppm as i64), &(cal.samples as i64)],
        )?;
        Ok(())
    }

    fn insert_checkpoint(&mut self, cp: &StoredCheckpoint) -> StoreResult<bool> {
        let n = self.db.exec(
            &format!(
                "INSERT INTO checkpoints ({CP_COLUMNS}, project_id) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING"
            ),
            &[&cp.id, &cp.agent, &cp.session_id, &cp.trigger, &cp.created_at.0, &cp.json, &self.store.project()],
        )?;
        Ok(n > 0)
    }

    fn update_session(&mut self, id: &str, change: &SessionChange) -> StoreResult<()> {
        crate::sessions::update_in(self.db, self.store, id, change).map(drop)
    }

    fn save_document(&mut self, draft: &DocumentDraft<'_>) -> StoreResult<()> {
        crate::documents::save_in(self.db, self.store, draft).map(drop)
    }

    fn insert_compaction(&mut self, r: &CompactionRecord) -> StoreResult<()> {
        self.db.exec(
            &format!(
                "INSERT INTO compactions (project_id, {COMPACTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            ),
            &[
                &self.store.project(),
                &r.session_id,
                &r.kind,
                &r.created_at.0,
                &(r.input_tokens as i64),
                &(r.output_tokens as i64),
                &r.audit.to_string(),
                &r.summary,
                &r.through_op_seq,
                &r.through_msg_seq,
            ],
        )?;
        Ok(())
    }

    /// Also rewrites the item's search words, which PostgreSQL keeps in a
    /// column of its own.
    fn restore_hot_item(&mut self, h: &HotRestore, at: Timestamp) -> StoreResult<()> {
        self.db.exec(
            "UPDATE hot_items SET text = $2, detail = $3, priority = $4, status = $5, version = version + 1, updated_at = $6
             WHERE id = $1 AND project_id = $7",
            &[&h.id, &h.text, &h.detail, &h.priority.map(Priority::name), &h.status.name(), &at.0, &self.store.project()],
        )?;
        crate::hot::reindex(self.db, &h.id).map(drop)
    }

    fn bump_hot_version(&mut self) -> StoreResult<()> {
        crate::hot::bump(self.db, self.store.project())
    }

    fn write_substitution(&mut self, s: &Substitution, at: Timestamp) -> StoreResult<()> {
        let (kind, text) = replacement_columns(s);
        self.db.exec(
            "INSERT INTO substitutions (project_id, op_seq, technique, kind, text, tokens, reason, original_tokens, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (project_id, op_seq) DO UPDATE SET technique = EXCLUDED.technique, kind = EXCLUDED.kind,
               text = EXCLUDED.text, tokens = EXCLUDED.tokens, reason = EXCLUDED.reason,
               original_tokens = EXCLUDED.original_tokens, created_at = EXCLUDED.created_at",
            &[
                &self.store.project(),
                &s.op_seq,
                &s.technique.name(),
                &kind,
                &text,
                &(s.tokens_after() as i64),
                &s.reason,
                &(s.original_tokens as i64),
                &at.0,
            ],
        )?;
        Ok(())
    }

    fn write_artifact(&mut self, a: &Artifact, at: Timestamp) -> StoreResult<()> {
        self.db.exec(
            "INSERT INTO artifacts (project_id, path, technique, content, created_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (project_id, path) DO UPDATE SET technique = EXCLUDED.technique,
               content = EXCLUDED.content, created_at = EXCLUDED.created_at",
            &[&self.store.project(), &a.path, &a.technique.name(), &a.content.to_string(), &at.0],
        )?;
        Ok(())
    }

    fn insert_operation(&mut self, op: &OperationDraft) -> StoreResult<Operation> {
        crate::log::insert_operation(self.db, self.store, op)
    }
}

impl PgStore {
    /// One engine commit in one transaction.
    pub(crate) fn commit_engine(&self, c: &EngineCommit) -> StoreResult<Option<Operation>> {
        let state = c.state_row()?;
        self.write(|db| c.apply(state.as_ref(), &mut Committing { db, store: self }))
    }
}
