//! The writes of an engine commit, worded for SQLite. Which of them run,
//! and in what order, is core's [`EngineCommit::apply`].

use mnemon_core::engine::{
    Calibration, CommitWrites, CompactionRecord, EngineCommit, HotRestore, StateRow,
    StoredCheckpoint,
};
use mnemon_core::memory::{
    DocumentDraft, Operation, OperationDraft, Priority, SessionChange, StoreResult, Timestamp,
};
use mnemon_core::optimize::{Artifact, Substitution};
use mnemon_core::store::sql::replacement_columns;
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::engine::{COMPACTION_COLUMNS, CP_COLUMNS};

/// An open write transaction of `store`.
struct Committing<'a> {
    tx: &'a Connection,
    store: &'a SqliteStore,
}

impl Committing<'_> {
    fn run(&self, sql: &str, params: impl rusqlite::Params) -> StoreResult<usize> {
        self.tx.execute(sql, params).map_err(|e| self.store.err(e))
    }
}

impl CommitWrites for Committing<'_> {
    fn write_state(&mut self, (expected, st, text): &StateRow<'_>) -> StoreResult<bool> {
        let project = &self.store.project_id;
        let changed = match expected {
            None => self.run(
                "INSERT OR IGNORE INTO engine_state (project_id, agent, version, state) VALUES (?1, ?2, ?3, ?4)",
                params![project, st.agent, st.version as i64, text],
            )?,
            Some(v) => self.run(
                "UPDATE engine_state SET version = ?3, state = ?4 WHERE project_id = ?1 AND agent = ?2 AND version = ?5",
                params![project, st.agent, st.version as i64, text, *v as i64],
            )?,
        };
        Ok(changed > 0)
    }

    fn write_calibration(&mut self, model: &str, cal: &Calibration) -> StoreResult<()> {
        self.run(
            "INSERT INTO calibration (project_id, model, factor_ppm, samples) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (project_id, model) DO UPDATE SET factor_ppm = excluded.factor_ppm, samples = excluded.samples",
            params![self.store.project_id, model, cal.factor_ppm as i64, cal.samples as i64],
        )?;
        Ok(())
    }

    fn insert_checkpoint(&mut self, cp: &StoredCheckpoint) -> StoreResult<bool> {
        let inserted = self.tx.execute(
            &format!("INSERT INTO checkpoints ({CP_COLUMNS}, project_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
            params![cp.id, cp.agent, cp.session_id, cp.trigger, cp.created_at.0, cp.json, self.store.project_id],
        );
        match inserted {
            Ok(_) => Ok(true),
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                Ok(false)
            }
            Err(e) => Err(self.store.err(e)),
        }
    }

    fn update_session(&mut self, id: &str, change: &SessionChange) -> StoreResult<()> {
        crate::sessions::update_in(self.tx, self.store, id, change).map(drop)
    }

    fn save_document(&mut self, draft: &DocumentDraft<'_>) -> StoreResult<()> {
        crate::documents::save_in(self.tx, self.store, draft).map(drop)
    }

    fn insert_compaction(&mut self, r: &CompactionRecord) -> StoreResult<()> {
        self.run(
            &format!("INSERT INTO compactions (project_id, {COMPACTION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
            params![self.store.project_id, r.session_id, r.kind, r.created_at.0, r.input_tokens as i64,
                    r.output_tokens as i64, r.audit.to_string(), r.summary, r.through_op_seq, r.through_msg_seq],
        )?;
        Ok(())
    }

    fn restore_hot_item(&mut self, h: &HotRestore, at: Timestamp) -> StoreResult<()> {
        self.run(
            "UPDATE hot_items SET text = ?2, detail = ?3, priority = ?4, status = ?5, version = version + 1, updated_at = ?6
             WHERE id = ?1 AND project_id = ?7",
            params![h.id, h.text, h.detail, h.priority.map(Priority::name), h.status.name(), at.0, self.store.project_id],
        )?;
        Ok(())
    }

    fn bump_hot_version(&mut self) -> StoreResult<()> {
        crate::hot::bump(self.tx, &self.store.project_id).map_err(|e| self.store.err(e))
    }

    fn write_substitution(&mut self, s: &Substitution, at: Timestamp) -> StoreResult<()> {
        let (kind, text) = replacement_columns(s);
        self.run(
            "INSERT OR REPLACE INTO substitutions
             (project_id, op_seq, technique, kind, text, tokens, reason, original_tokens, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                self.store.project_id,
                s.op_seq,
                s.technique.name(),
                kind,
                text,
                s.tokens_after() as i64,
                s.reason,
                s.original_tokens as i64,
                at.0
            ],
        )?;
        Ok(())
    }

    fn write_artifact(&mut self, a: &Artifact, at: Timestamp) -> StoreResult<()> {
        self.run(
            "INSERT OR REPLACE INTO artifacts (project_id, path, technique, content, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                self.store.project_id,
                a.path,
                a.technique.name(),
                a.content.to_string(),
                at.0
            ],
        )?;
        Ok(())
    }

    fn insert_operation(&mut self, op: &OperationDraft) -> StoreResult<Operation> {
        crate::log::insert_operation(self.tx, self.store, op)
    }
}

impl SqliteStore {
    /// One engine commit in one write transaction.
    pub(crate) fn commit_engine(&self, c: &EngineCommit) -> StoreResult<Option<Operation>> {
        let state = c.state_row()?;
        self.write(|tx| c.apply(state.as_ref(), &mut Committing { tx, store: self }))
    }
}
