//! The engine's storage: state, calibration, checkpoints, compaction
//! audits, hot-item history, and the one-transaction [`EngineCommit`].

use mnemon_core::engine::forget::ForgetAudit;
use mnemon_core::engine::{
    Calibration, CompactionRecord, EngineCommit, EngineState, EngineStore, LiveTotals,
    StoredCheckpoint,
};
use mnemon_core::memory::{HotItem, Message, Operation, Page, StoreError, StoreResult, Timestamp};
use mnemon_core::optimize::{Artifact, Substitution};
use rusqlite::{OptionalExtension, Row, params};

use crate::SqliteStore;
use crate::log::{MSG_COLUMNS, OP_COLUMNS, msg_from_row, op_from_row};

const ACTION: &str = mnemon_core::engine::ACTION_KIND;

fn checkpoint_row(r: &Row<'_>) -> rusqlite::Result<StoredCheckpoint> {
    Ok(StoredCheckpoint {
        id: r.get(0)?,
        agent: r.get(1)?,
        session_id: r.get(2)?,
        trigger: r.get(3)?,
        created_at: Timestamp(r.get(4)?),
        json: r.get(5)?,
    })
}

pub(crate) const COMPACTION_COLUMNS: &str = "session_id, kind, created_at, input_tokens, output_tokens, audit, summary, through_op_seq, through_msg_seq";

fn compaction_row(r: &Row<'_>) -> rusqlite::Result<CompactionRecord> {
    let audit: String = r.get(5)?;
    Ok(CompactionRecord {
        session_id: r.get(0)?,
        kind: r.get(1)?,
        created_at: Timestamp(r.get(2)?),
        input_tokens: r.get::<_, i64>(3)? as u64,
        output_tokens: r.get::<_, i64>(4)? as u64,
        audit: serde_json::from_str(&audit).unwrap_or_default(),
        summary: r.get(6)?,
        through_op_seq: r.get(7)?,
        through_msg_seq: r.get(8)?,
    })
}

pub(crate) const CP_COLUMNS: &str = "id, agent, session_id, trigger, created_at, json";

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(-1)
}

impl SqliteStore {
    /// Rows of `table` at the given log positions; missing ones left out.
    fn at_positions<T>(
        &self,
        columns: &str,
        table: &str,
        seqs: &[i64],
        from_row: fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> StoreResult<Vec<T>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {columns} FROM {table} WHERE seq = ?1 AND project_id = ?2"
            ))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(seqs.len());
        for seq in seqs {
            if let Some(row) = stmt
                .query_row(params![seq, self.project_id], from_row)
                .optional()
                .map_err(|e| self.err(e))?
            {
                out.push(row);
            }
        }
        Ok(out)
    }
}

impl EngineStore for SqliteStore {
    fn engine_state(&self, agent: &str) -> StoreResult<Option<EngineState>> {
        let conn = self.conn();
        let row: Option<(i64, String)> = conn
            .prepare_cached(
                "SELECT version, state FROM engine_state WHERE project_id = ?1 AND agent = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![self.project_id, agent], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
            })
            .map_err(|e| self.err(e))?;
        row.map(|(version, text)| {
            let mut st: EngineState =
                serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    path: self.path.clone(),
                    reason: format!("the engine state of agent `{agent}` does not parse: {e}"),
                })?;
            st.version = version as u64;
            Ok(st)
        })
        .transpose()
    }

    fn calibration(&self, model: &str) -> StoreResult<Option<Calibration>> {
        let conn = self.conn();
        conn.prepare_cached(
            "SELECT factor_ppm, samples FROM calibration WHERE project_id = ?1 AND model = ?2",
        )
        .and_then(|mut s| {
            s.query_row(params![self.project_id, model], |r| {
                Ok(Calibration {
                    factor_ppm: r.get::<_, i64>(0)? as u64,
                    samples: r.get::<_, i64>(1)? as u64,
                })
            })
            .optional()
        })
        .map_err(|e| self.err(e))
    }

    fn live_totals(&self, session_id: &str, op_seq: i64, msg_seq: i64) -> StoreResult<LiveTotals> {
        Ok(self
            .live_totals_through(session_id, op_seq, msg_seq)?
            .map_or_else(LiveTotals::default, |t| t.0))
    }

    /// One writer at a time commits, in the order positions are handed
    /// out: a position seen means every older one is visible too.
    fn live_totals_through(
        &self,
        session_id: &str,
        op_seq: i64,
        msg_seq: i64,
    ) -> StoreResult<Option<(LiveTotals, i64, i64)>> {
        let conn = self.conn();
        let (op_tokens, op_count, op_head): (i64, i64, i64) = conn
            .prepare_cached(
                "SELECT coalesce(sum(tokens), 0), count(*), coalesce(max(seq), ?2) FROM operations WHERE session_id = ?1 AND seq > ?2 AND kind != ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![session_id, op_seq, ACTION], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
            })
            .map_err(|e| self.err(e))?;
        let (msg_tokens, msg_count, msg_head): (i64, i64, i64) = conn
            .prepare_cached(
                "SELECT coalesce(sum(tokens), 0), count(*), coalesce(max(seq), ?2) FROM messages WHERE session_id = ?1 AND seq > ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![session_id, msg_seq], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
            })
            .map_err(|e| self.err(e))?;
        let totals = LiveTotals {
            op_tokens: op_tokens as u64,
            op_count: op_count as u64,
            msg_tokens: msg_tokens as u64,
            msg_count: msg_count as u64,
        };
        Ok(Some((totals, op_head, msg_head)))
    }

    fn log_heads(&self) -> StoreResult<(i64, i64)> {
        let conn = self.conn();
        conn.query_row(
            "SELECT coalesce((SELECT max(seq) FROM operations), 0), coalesce((SELECT max(seq) FROM messages), 0)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| self.err(e))
    }

    fn operations_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Operation>> {
        let conn = self.conn();
        conn.prepare_cached(&format!(
            "SELECT {OP_COLUMNS} FROM operations WHERE session_id = ?1 AND seq > ?2 AND kind != ?3 ORDER BY seq DESC LIMIT ?4"
        ))
        .and_then(|mut s| {
            s.query_map(params![session_id, page.after, ACTION, limit(page.limit)], op_from_row)?
                .collect()
        })
        .map_err(|e| self.err(e))
    }

    fn messages_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Message>> {
        let conn = self.conn();
        conn.prepare_cached(&format!(
            "SELECT {MSG_COLUMNS} FROM messages WHERE session_id = ?1 AND seq > ?2 ORDER BY seq DESC LIMIT ?3"
        ))
        .and_then(|mut s| s.query_map(params![session_id, page.after, limit(page.limit)], msg_from_row)?.collect())
        .map_err(|e| self.err(e))
    }

    fn operations_at(&self, seqs: &[i64]) -> StoreResult<Vec<Operation>> {
        let mut out = self.at_positions(OP_COLUMNS, "operations", seqs, op_from_row)?;
        out.sort_by_key(|o| o.seq);
        Ok(out)
    }

    fn messages_at(&self, seqs: &[i64]) -> StoreResult<Vec<Message>> {
        let mut out = self.at_positions(MSG_COLUMNS, "messages", seqs, msg_from_row)?;
        out.sort_by_key(|m| m.seq);
        Ok(out)
    }

    fn hot_item_at(&self, id: &str, version: u64) -> StoreResult<HotItem> {
        let conn = self.conn();
        conn.query_row(
            "SELECT i.id, i.kind, h.text, h.detail, i.parent_id, h.priority, h.status, h.agent, h.version, i.created_at, h.updated_at, i.seq
             FROM hot_history h JOIN hot_items i ON i.id = h.item_id
             WHERE h.item_id = ?1 AND h.version = ?2 AND i.project_id = ?3",
            params![id, version as i64, self.project_id],
            crate::hot::from_row,
        )
        .optional()
        .map_err(|e| self.err(e))?
        .ok_or_else(|| StoredCheckpoint::item_version_not_found(id, version))
    }

    fn checkpoint(&self, id: &str) -> StoreResult<StoredCheckpoint> {
        let conn = self.conn();
        conn.query_row(
            &format!("SELECT {CP_COLUMNS} FROM checkpoints WHERE id = ?1 AND project_id = ?2"),
            params![id.trim(), self.project_id],
            checkpoint_row,
        )
        .optional()
        .map_err(|e| self.err(e))?
        .ok_or_else(|| StoredCheckpoint::not_found(id))
    }

    fn checkpoints(&self, n: usize) -> StoreResult<Vec<StoredCheckpoint>> {
        let conn = self.conn();
        conn.prepare_cached(&format!(
            "SELECT {CP_COLUMNS} FROM checkpoints WHERE project_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT ?2"
        ))
        .and_then(|mut s| s.query_map(params![self.project_id, limit(n)], checkpoint_row)?.collect())
        .map_err(|e| self.err(e))
    }

    fn last_compaction(
        &self,
        session_id: &str,
        kind: &str,
    ) -> StoreResult<Option<CompactionRecord>> {
        let conn = self.conn();
        conn.prepare_cached(&format!(
            "SELECT {COMPACTION_COLUMNS} FROM compactions WHERE session_id = ?1 AND kind = ?2 AND project_id = ?3 ORDER BY seq DESC LIMIT 1"
        ))
        .and_then(|mut s| s.query_row(params![session_id, kind, self.project_id], compaction_row).optional())
        .map_err(|e| self.err(e))
    }

    fn compactions(&self, n: usize) -> StoreResult<Vec<CompactionRecord>> {
        let conn = self.conn();
        conn.prepare_cached(&format!(
            "SELECT {COMPACTION_COLUMNS} FROM compactions WHERE project_id = ?1 ORDER BY seq DESC LIMIT ?2"
        ))
        .and_then(|mut s| s.query_map(params![self.project_id, limit(n)], compaction_row)?.collect())
        .map_err(|e| self.err(e))
    }

    fn substitutions(&self, seqs: &[i64]) -> StoreResult<Vec<Substitution>> {
        self.read_substitutions(seqs)
    }

    fn read_artifacts(&self, path: Option<&str>) -> StoreResult<Vec<Artifact>> {
        self.stored_artifacts(path)
    }

    fn forgettings(&self, limit: usize) -> StoreResult<Vec<ForgetAudit>> {
        self.forget_audit(limit)
    }

    fn commit(&self, c: &EngineCommit) -> StoreResult<Option<Operation>> {
        self.commit_engine(c)
    }
}
