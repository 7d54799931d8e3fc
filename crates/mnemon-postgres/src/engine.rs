//! The engine's storage: state, calibration, checkpoints, compaction
//! audits, hot-item history, the optimizer's tables, and the
//! one-transaction [`EngineCommit`].

use crate::row::{Cols, sure};
use mnemon_core::engine::forget::ForgetAudit;
use mnemon_core::engine::{
    Calibration, CompactionRecord, EngineCommit, EngineState, EngineStore, LiveTotals,
    StoredCheckpoint,
};
use mnemon_core::memory::{HotItem, Message, Operation, Page, StoreError, StoreResult, Timestamp};
use mnemon_core::optimize::{Artifact, Substitution};
use mnemon_core::store::sql::{
    ARTIFACT_COLUMNS, SUBSTITUTION_COLUMNS, StoredArtifact, StoredSubstitution,
};
use tokio_postgres::Row;

use crate::PgStore;
use crate::log::{MSG_COLUMNS, OP_COLUMNS, msg_from_row, op_from_row};

const ACTION: &str = mnemon_core::engine::ACTION_KIND;

pub(crate) const CP_COLUMNS: &str = "id, agent, session_id, trigger, created_at, json";

fn checkpoint_row(r: &Row) -> StoredCheckpoint {
    StoredCheckpoint {
        id: r.get(0),
        agent: r.get(1),
        session_id: r.get(2),
        trigger: r.get(3),
        created_at: Timestamp(r.get(4)),
        json: r.get(5),
    }
}

pub(crate) const COMPACTION_COLUMNS: &str = "session_id, kind, created_at, input_tokens, output_tokens, audit, summary, through_op_seq, through_msg_seq";

fn compaction_row(r: &Row) -> CompactionRecord {
    let audit: String = r.get(5);
    CompactionRecord {
        session_id: r.get(0),
        kind: r.get(1),
        created_at: Timestamp(r.get(2)),
        input_tokens: r.get::<_, i64>(3) as u64,
        output_tokens: r.get::<_, i64>(4) as u64,
        audit: serde_json::from_str(&audit).unwrap_or_default(),
        summary: r.get(6),
        through_op_seq: r.get(7),
        through_msg_seq: r.get(8),
    }
}

fn lim(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl EngineStore for PgStore {
    fn engine_state(&self, agent: &str) -> StoreResult<Option<EngineState>> {
        let row = self.db()?.opt(
            "SELECT version, state FROM engine_state WHERE project_id = $1 AND agent = $2",
            &[&self.project(), &agent],
        )?;
        row.map(|r| {
            let text: String = r.get(1);
            let mut st: EngineState =
                serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    path: self.shown().to_string(),
                    reason: format!("the engine state of agent `{agent}` does not parse: {e}"),
                })?;
            st.version = r.get::<_, i64>(0) as u64;
            Ok(st)
        })
        .transpose()
    }

    fn calibration(&self, model: &str) -> StoreResult<Option<Calibration>> {
        Ok(self
            .db()?
            .opt(
                "SELECT factor_ppm, samples FROM calibration WHERE project_id = $1 AND model = $2",
                &[&self.project(), &model],
            )?
            .map(|r| Calibration {
                factor_ppm: r.get::<_, i64>(0) as u64,
                samples: r.get::<_, i64>(1) as u64,
            }))
    }

    fn live_totals(&self, session_id: &str, op_seq: i64, msg_seq: i64) -> StoreResult<LiveTotals> {
        // One pass over each log's range (not one per figure).
        let r = self.db()?.one(
            "SELECT o.t, o.n, m.t, m.n FROM
               (SELECT coalesce(sum(tokens), 0)::bigint AS t, count(*) AS n FROM operations
                 WHERE session_id = $1 AND seq > $2 AND kind <> $4) o,
               (SELECT coalesce(sum(tokens), 0)::bigint AS t, count(*) AS n FROM messages
                 WHERE session_id = $1 AND seq > $3) m",
            &[&session_id, &op_seq, &msg_seq, &ACTION],
        )?;
        Ok(LiveTotals {
            op_tokens: r.get::<_, i64>(0) as u64,
            op_count: r.get::<_, i64>(1) as u64,
            msg_tokens: r.get::<_, i64>(2) as u64,
            msg_count: r.get::<_, i64>(3) as u64,
        })
    }

    fn log_heads(&self) -> StoreResult<(i64, i64)> {
        let r = self.db()?.one(
            "SELECT coalesce((SELECT max(seq) FROM operations), 0), coalesce((SELECT max(seq) FROM messages), 0)",
            &[],
        )?;
        Ok((r.get(0), r.get(1)))
    }

    fn operations_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Operation>> {
        let rows = self.db()?.query(
            &format!(
                "SELECT {OP_COLUMNS} FROM operations WHERE session_id = $1 AND seq > $2 AND kind <> $3 ORDER BY seq DESC LIMIT $4"
            ),
            &[&session_id, &page.after, &ACTION, &lim(page.limit)],
        )?;
        Ok(rows.iter().map(op_from_row).collect())
    }

    fn messages_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Message>> {
        let rows = self.db()?.query(
            &format!(
                "SELECT {MSG_COLUMNS} FROM messages WHERE session_id = $1 AND seq > $2 ORDER BY seq DESC LIMIT $3"
            ),
            &[&session_id, &page.after, &lim(page.limit)],
        )?;
        Ok(rows.iter().map(msg_from_row).collect())
    }

    fn operations_at(&self, seqs: &[i64]) -> StoreResult<Vec<Operation>> {
        let rows = self.db()?.query(
            &format!("SELECT {OP_COLUMNS} FROM operations WHERE seq = ANY($1) AND project_id = $2 ORDER BY seq"),
            &[&seqs, &self.project()],
        )?;
        Ok(rows.iter().map(op_from_row).collect())
    }

    fn messages_at(&self, seqs: &[i64]) -> StoreResult<Vec<Message>> {
        let rows = self.db()?.query(
            &format!("SELECT {MSG_COLUMNS} FROM messages WHERE seq = ANY($1) AND project_id = $2 ORDER BY seq"),
            &[&seqs, &self.project()],
        )?;
        Ok(rows.iter().map(msg_from_row).collect())
    }

    fn hot_item_at(&self, id: &str, version: u64) -> StoreResult<HotItem> {
        self.db()?
            .opt(
                "SELECT i.id, i.kind, h.text, h.detail, i.parent_id, h.priority, h.status, h.agent, h.version, i.created_at, h.updated_at, i.seq
                 FROM hot_history h JOIN hot_items i ON i.id = h.item_id
                 WHERE h.item_id = $1 AND h.version = $2 AND i.project_id = $3",
                &[&id, &(version as i64), &self.project()],
            )?
            .map(|r| crate::hot::from_row(&r))
            .ok_or_else(|| StoredCheckpoint::item_version_not_found(id, version))
    }

    fn checkpoint(&self, id: &str) -> StoreResult<StoredCheckpoint> {
        self.db()?
            .opt(
                &format!("SELECT {CP_COLUMNS} FROM checkpoints WHERE id = $1 AND project_id = $2"),
                &[&id.trim(), &self.project()],
            )?
            .map(|r| checkpoint_row(&r))
            .ok_or_else(|| StoredCheckpoint::not_found(id))
    }

    fn checkpoints(&self, n: usize) -> StoreResult<Vec<StoredCheckpoint>> {
        let rows = self.db()?.query(
            &format!(
                "SELECT {CP_COLUMNS} FROM checkpoints WHERE project_id = $1 ORDER BY created_at DESC, row_id DESC LIMIT $2"
            ),
            &[&self.project(), &lim(n)],
        )?;
        Ok(rows.iter().map(checkpoint_row).collect())
    }

    fn last_compaction(
        &self,
        session_id: &str,
        kind: &str,
    ) -> StoreResult<Option<CompactionRecord>> {
        Ok(self
            .db()?
            .opt(
                &format!(
                    "SELECT {COMPACTION_COLUMNS} FROM compactions WHERE session_id = $1 AND kind = $2 AND project_id = $3 ORDER BY seq DESC LIMIT 1"
                ),
                &[&session_id, &kind, &self.project()],
            )?
            .map(|r| compaction_row(&r)))
    }

    fn compactions(&self, n: usize) -> StoreResult<Vec<CompactionRecord>> {
        let rows = self.db()?.query(
            &format!(
                "SELECT {COMPACTION_COLUMNS} FROM compactions WHERE project_id = $1 ORDER BY seq DESC LIMIT $2"
            ),
            &[&self.project(), &lim(n)],
        )?;
        Ok(rows.iter().map(compaction_row).collect())
    }

    fn substitutions(&self, seqs: &[i64]) -> StoreResult<Vec<Substitution>> {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.db()?.query(
            &format!(
                "SELECT {SUBSTITUTION_COLUMNS} FROM substitutions WHERE project_id = $1 AND op_seq = ANY($2)"
            ),
            &[&self.project(), &seqs],
        )?;
        rows.iter()
            .map(|r| sure(StoredSubstitution::read(&Cols(r))).substitution())
            .collect()
    }

    fn read_artifacts(&self, path: Option<&str>) -> StoreResult<Vec<Artifact>> {
        let rows = self.db()?.query(
            &format!(
                "SELECT {ARTIFACT_COLUMNS} FROM artifacts
                 WHERE project_id = $1 AND ($2::text IS NULL OR path = $2) ORDER BY path COLLATE \"C\""
            ),
            &[&self.project(), &path],
        )?;
        rows.iter()
            .map(|r| sure(StoredArtifact::read(&Cols(r))).artifact())
            .collect()
    }

    fn forgettings(&self, limit: usize) -> StoreResult<Vec<ForgetAudit>> {
        self.forget_audit(limit)
    }

    fn commit(&self, c: &EngineCommit) -> StoreResult<Option<Operation>> {
        self.commit_engine(c)
    }
}
