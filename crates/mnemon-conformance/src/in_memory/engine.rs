//! The engine's rows: its state per agent, calibration, checkpoints,
//! compactions, hot-item history, the optimizer's results, and the
//! one-change [`EngineCommit`].

use std::sync::Arc;

use mnemon_core::engine::forget::ForgetAudit;
use mnemon_core::engine::{
    ACTION_KIND, Calibration, CommitWrites, CompactionRecord, EngineCommit, EngineState,
    EngineStore, HotRestore, LiveTotals, StateRow, StoredCheckpoint,
};
use mnemon_core::memory::{
    DocumentDraft, HotItem, Message, Operation, OperationDraft, Page, SessionChange, StoreError,
    StoreResult, Timestamp,
};
use mnemon_core::optimize::{Artifact, Substitution};

use super::{InMemoryStore, Keyed, Tables};

/// What this store's errors name as its place, where a file backend names
/// its path.
pub(super) const PLACE: &str = "the in-memory store";

impl Tables {
    /// Tokens and counts of a session's log after the given positions, and
    /// the newest positions counted.
    fn live(&self, session: &str, op_seq: i64, msg_seq: i64) -> (LiveTotals, i64, i64) {
        let mut totals = LiveTotals::default();
        let (mut op_head, mut msg_head) = (op_seq, msg_seq);
        for o in self.operations.iter().filter(|o| {
            o.seq > op_seq && o.kind != ACTION_KIND && o.session_id.as_deref() == Some(session)
        }) {
            totals.op_tokens += o.tokens;
            totals.op_count += 1;
            op_head = op_head.max(o.seq);
        }
        for m in self
            .messages
            .iter()
            .filter(|m| m.seq > msg_seq && m.session_id.as_deref() == Some(session))
        {
            totals.msg_tokens += m.tokens;
            totals.msg_count += 1;
            msg_head = msg_head.max(m.seq);
        }
        (totals, op_head, msg_head)
    }
}

/// The tables inside a unit of work, as core's commit writes them.
struct Committing<'a>(&'a mut Tables);

impl CommitWrites for Committing<'_> {
    fn write_state(&mut self, (expected, st, text): &StateRow<'_>) -> StoreResult<bool> {
        let states = &mut self.0.engine_states;
        let row = Arc::new((st.agent.clone(), st.version, text.clone()));
        match (expected, states.iter().position(|s| s.0 == st.agent)) {
            (None, None) => states.push(row),
            (Some(v), Some(i)) if states[i].1 == *v => states[i] = row,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn write_calibration(&mut self, model: &str, cal: &Calibration) -> StoreResult<()> {
        self.0.calibrations.retain(|(m, _)| m != model);
        self.0.calibrations.push((model.to_string(), *cal));
        Ok(())
    }

    fn insert_checkpoint(&mut self, cp: &StoredCheckpoint) -> StoreResult<bool> {
        if self.0.checkpoints.iter().any(|x| x.id == cp.id) {
            return Ok(false);
        }
        self.0.checkpoints.push(Arc::new(cp.clone()));
        Ok(true)
    }

    fn update_session(&mut self, id: &str, change: &SessionChange) -> StoreResult<()> {
        self.0.update_session(id, change).map(drop)
    }

    fn save_document(&mut self, draft: &DocumentDraft<'_>) -> StoreResult<()> {
        self.0.save_document(draft);
        Ok(())
    }

    fn insert_compaction(&mut self, r: &CompactionRecord) -> StoreResult<()> {
        self.0.last_compaction += 1;
        self.0.compactions.push(Arc::new(Keyed {
            key: self.0.last_compaction,
            row: r.clone(),
        }));
        Ok(())
    }

    fn restore_hot_item(&mut self, h: &HotRestore, at: Timestamp) -> StoreResult<()> {
        let t = &mut *self.0;
        if let Some(item) = t.hot_items.iter_mut().find(|i| i.id == h.id) {
            let item = Arc::make_mut(item);
            item.text = h.text.clone();
            item.detail = h.detail.clone();
            item.priority = h.priority;
            item.status = h.status;
            item.version += 1;
            item.updated_at = at;
            let version = item.clone();
            t.hot_history.push(Arc::new(version));
        }
        Ok(())
    }

    fn bump_hot_version(&mut self) -> StoreResult<()> {
        self.0.hot_version += 1;
        Ok(())
    }

    fn write_substitution(&mut self, s: &Substitution, _: Timestamp) -> StoreResult<()> {
        self.0.substitutions.retain(|x| x.op_seq != s.op_seq);
        self.0.substitutions.push(Arc::new(s.clone()));
        Ok(())
    }

    fn write_artifact(&mut self, a: &Artifact, _: Timestamp) -> StoreResult<()> {
        self.0.artifacts.retain(|x| x.path != a.path);
        self.0.artifacts.push(Arc::new(a.clone()));
        Ok(())
    }

    fn insert_operation(&mut self, op: &OperationDraft) -> StoreResult<Operation> {
        self.0.insert_operation(op)
    }
}

/// The rows of `rows` at `seqs`, oldest first; missing ones left out.
fn at<T: Clone>(rows: &[Arc<T>], seqs: &[i64], seq: impl Fn(&T) -> i64) -> Vec<T> {
    let mut out: Vec<T> = rows
        .iter()
        .filter(|r| seqs.contains(&seq(r)))
        .map(|r| T::clone(r))
        .collect();
    out.sort_by_key(|r| seq(r));
    out
}

impl EngineStore for InMemoryStore {
    fn engine_state(&self, agent: &str) -> StoreResult<Option<EngineState>> {
        self.read(|t| {
            t.engine_states
                .iter()
                .find(|s| s.0 == agent)
                .map(|s| {
                    let mut st: EngineState =
                        serde_json::from_str(&s.2).map_err(|e| StoreError::Corrupt {
                            path: PLACE.into(),
                            reason: format!(
                                "the engine state of agent `{agent}` does not parse: {e}"
                            ),
                        })?;
                    st.version = s.1;
                    Ok(st)
                })
                .transpose()
        })
    }

    fn calibration(&self, model: &str) -> StoreResult<Option<Calibration>> {
        self.read(|t| {
            Ok(t.calibrations
                .iter()
                .find(|(m, _)| m == model)
                .map(|(_, c)| *c))
        })
    }

    fn live_totals(&self, session_id: &str, op_seq: i64, msg_seq: i64) -> StoreResult<LiveTotals> {
        self.read(|t| Ok(t.live(session_id, op_seq, msg_seq).0))
    }

    /// Writers take turns and positions are handed out in turn: a position
    /// seen means every older one is there too.
    fn live_totals_through(
        &self,
        session_id: &str,
        op_seq: i64,
        msg_seq: i64,
    ) -> StoreResult<Option<(LiveTotals, i64, i64)>> {
        self.read(|t| Ok(Some(t.live(session_id, op_seq, msg_seq))))
    }

    fn log_heads(&self) -> StoreResult<(i64, i64)> {
        self.read(|t| {
            Ok((
                t.operations.iter().map(|o| o.seq).max().unwrap_or(0),
                t.messages.iter().map(|m| m.seq).max().unwrap_or(0),
            ))
        })
    }

    fn operations_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Operation>> {
        self.read(|t| {
            Ok(t.operations
                .iter()
                .rev()
                .filter(|o| {
                    o.seq > page.after
                        && o.kind != ACTION_KIND
                        && o.session_id.as_deref() == Some(session_id)
                })
                .take(page.limit)
                .map(|o| Operation::clone(o))
                .collect())
        })
    }

    fn messages_after(&self, session_id: &str, page: Page) -> StoreResult<Vec<Message>> {
        self.read(|t| {
            Ok(t.messages
                .iter()
                .rev()
                .filter(|m| m.seq > page.after && m.session_id.as_deref() == Some(session_id))
                .take(page.limit)
                .map(|m| Message::clone(m))
                .collect())
        })
    }

    fn operations_at(&self, seqs: &[i64]) -> StoreResult<Vec<Operation>> {
        self.read(|t| Ok(at(&t.operations, seqs, |o| o.seq)))
    }

    fn messages_at(&self, seqs: &[i64]) -> StoreResult<Vec<Message>> {
        self.read(|t| Ok(at(&t.messages, seqs, |m| m.seq)))
    }

    fn hot_item_at(&self, id: &str, version: u64) -> StoreResult<HotItem> {
        self.read(|t| {
            let item = t.hot_items.iter().find(|i| i.id == id);
            let then = t
                .hot_history
                .iter()
                .find(|h| h.id == id && h.version == version);
            match (item, then) {
                (Some(item), Some(then)) => Ok(HotItem {
                    kind: item.kind,
                    parent_id: item.parent_id.clone(),
                    ..HotItem::clone(then)
                }),
                _ => Err(StoredCheckpoint::item_version_not_found(id, version)),
            }
        })
    }

    fn checkpoint(&self, id: &str) -> StoreResult<StoredCheckpoint> {
        self.read(|t| {
            t.checkpoints
                .iter()
                .find(|c| c.id == id.trim())
                .map(|c| StoredCheckpoint::clone(c))
                .ok_or_else(|| StoredCheckpoint::not_found(id))
        })
    }

    fn checkpoints(&self, limit: usize) -> StoreResult<Vec<StoredCheckpoint>> {
        self.read(|t| {
            let mut all: Vec<(usize, &Arc<StoredCheckpoint>)> =
                t.checkpoints.iter().enumerate().collect();
            all.sort_by_key(|(i, c)| std::cmp::Reverse((c.created_at, *i)));
            Ok(all
                .into_iter()
                .take(limit)
                .map(|(_, c)| StoredCheckpoint::clone(c))
                .collect())
        })
    }

    fn last_compaction(
        &self,
        session_id: &str,
        kind: &str,
    ) -> StoreResult<Option<CompactionRecord>> {
        self.read(|t| {
            Ok(t.compactions
                .iter()
                .rev()
                .find(|c| c.kind == kind && c.session_id.as_deref() == Some(session_id))
                .map(|c| c.row.clone()))
        })
    }

    fn compactions(&self, limit: usize) -> StoreResult<Vec<CompactionRecord>> {
        self.read(|t| {
            Ok(t.compactions
                .iter()
                .rev()
                .take(limit)
                .map(|c| c.row.clone())
                .collect())
        })
    }

    fn substitutions(&self, seqs: &[i64]) -> StoreResult<Vec<Substitution>> {
        self.read(|t| Ok(at(&t.substitutions, seqs, |s| s.op_seq)))
    }

    fn read_artifacts(&self, path: Option<&str>) -> StoreResult<Vec<Artifact>> {
        self.read(|t| {
            let mut found: Vec<Artifact> = t
                .artifacts
                .iter()
                .filter(|a| path.is_none_or(|p| a.path == p))
                .map(|a| Artifact::clone(a))
                .collect();
            found.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(found)
        })
    }

    fn commit(&self, c: &EngineCommit) -> StoreResult<Option<Operation>> {
        let state = c.state_row()?;
        self.write(|t| c.apply(state.as_ref(), &mut Committing(t)))
    }

    fn forgettings(&self, limit: usize) -> StoreResult<Vec<ForgetAudit>> {
        self.read(|t| {
            Ok(t.forgettings
                .iter()
                .rev()
                .take(limit)
                .map(|f| ForgetAudit::clone(f))
                .collect())
        })
    }
}
