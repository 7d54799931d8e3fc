//! `mnemon optimize` and the orange-zone action: plans the five techniques
//! over the epoch's operations and applies them in one commit.

use serde::Serialize;
use serde_json::json;

use super::checkpoint::Checkpoint;
use super::store::EngineCommit;
use super::{Engine, EngineError, EngineEvent, EngineState, EngineStore, Outcome, View};
use crate::memory::{Operation, OperationQuery, StoreResult};
use crate::optimize::{
    self, OptimizeInput, REGISTRY_PATH, StateBase, Substitution, TechniqueReport,
};

/// What an optimization did (or, dry, would do).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptimizeReport {
    pub dry_run: bool,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub tokens_saved: u64,
    /// All five techniques, in the order they ran.
    pub techniques: Vec<TechniqueReport>,
    pub substitutions: Vec<Substitution>,
    /// Files written under `.mnemon/` (or that would be).
    pub artifacts: Vec<String>,
}

/// How many stored `state` operations to look through for the one a
/// checkpoint saw.
const STATE_LOOKBACK: usize = 200;

impl<S: EngineStore + ?Sized> Engine<S> {
    /// Runs the optimizer now. With `dry_run`, reports without writing.
    pub fn optimize(&self, dry_run: bool) -> Result<Outcome<OptimizeReport>, EngineError> {
        let _g = self.lock();
        let mut events = Vec::new();
        let report = super::retry_conflicts(self.runtime.as_ref(), || {
            self.optimize_locked(dry_run, &mut events)
        })?;
        self.outcome(report, events, Vec::new())
    }

    /// `ops` as the live context shows them: optimized ones replaced, hidden
    /// ones left out.
    pub(super) fn substituted(&self, ops: Vec<Operation>) -> StoreResult<Vec<Operation>> {
        let seqs: Vec<i64> = ops.iter().map(|o| o.seq).collect();
        let subs = self.store().substitutions(&seqs)?;
        if subs.is_empty() {
            return Ok(ops);
        }
        Ok(ops
            .into_iter()
            .filter_map(|o| match subs.iter().find(|s| s.op_seq == o.seq) {
                Some(s) => s.apply(&o),
                None => Some(o),
            })
            .collect())
    }

    /// The state the last checkpoint saw, if it saw one.
    fn state_base(&self, v: &View) -> Result<Option<StateBase>, EngineError> {
        let Some(id) = &v.state.last_checkpoint else {
            return Ok(None);
        };
        let stored = self.store().checkpoint(id)?;
        let cp = Checkpoint::from_json(&stored.json, id)?;
        let at = cp
            .context_snapshot
            .working_memory_snapshot
            .operation_position;
        let states = self.store().operations(&OperationQuery {
            kind: Some("state".into()),
            limit: Some(STATE_LOOKBACK),
            ..OperationQuery::default()
        })?;
        Ok(states
            .into_iter()
            .find(|o| o.seq <= at && o.data.is_object())
            .map(|o| StateBase {
                checkpoint_id: id.clone(),
                op_seq: o.seq,
                state: o.data,
            }))
    }

    pub(super) fn optimize_locked(
        &self,
        dry_run: bool,
        events: &mut Vec<EngineEvent>,
    ) -> Result<OptimizeReport, EngineError> {
        let v = self.view()?;
        let before = v.used();
        let empty = |techniques| OptimizeReport {
            dry_run,
            tokens_before: before,
            tokens_after: before,
            tokens_saved: 0,
            techniques,
            substitutions: Vec::new(),
            artifacts: Vec::new(),
        };
        let Some(session) = v.epoch_session().cloned() else {
            return Ok(empty(optimize::OptimizePlan::default().reports()));
        };
        let epoch = self.epoch_operations(&v)?;
        let seqs: Vec<i64> = epoch.iter().map(|o| o.seq).collect();
        let done: Vec<i64> = self
            .store()
            .substitutions(&seqs)?
            .into_iter()
            .map(|s| s.op_seq)
            .collect();
        let ops: Vec<Operation> = epoch
            .into_iter()
            .filter(|o| !done.contains(&o.seq))
            .collect();
        let registry = match self.store().artifact(REGISTRY_PATH)? {
            Some(a) => a.content.as_object().cloned().unwrap_or_default(),
            None => Default::default(),
        };
        let input = OptimizeInput {
            ops: &ops,
            session_id: &session.id,
            current_phase: v.state.phase,
            now: self.now(),
            thresholds: self.cfg.optimizer,
            state_base: self.state_base(&v)?,
            registry,
        };
        let plan = optimize::plan(&input, self.summarizer.as_ref(), self.memory.counter())?;
        if plan.is_empty() {
            return Ok(empty(plan.reports()));
        }
        let saved = plan.saved();
        let carried = (v.state.carried + v.totals.tokens()).saturating_sub(saved);
        let local = v.state.baseline + carried;
        let after = v.used_less(saved);
        let report = OptimizeReport {
            dry_run,
            tokens_before: before,
            tokens_after: after,
            tokens_saved: before.saturating_sub(after),
            techniques: plan.reports(),
            substitutions: plan.substitutions.clone(),
            artifacts: plan.artifacts.iter().map(|a| a.path.clone()).collect(),
        };
        if dry_run {
            return Ok(report);
        }
        // The epoch goes on from here with the optimized working memory;
        // what was added so far is carried, less what the plan saved.
        let hidden: Vec<i64> = plan
            .substitutions
            .iter()
            .filter(|s| s.replacement.is_none())
            .map(|s| s.op_seq)
            .collect();
        let wm = self.working_memory_of(&v)?;
        let mut kept: Vec<i64> = wm
            .recent()
            .map(|o| o.seq)
            .filter(|s| !hidden.contains(s))
            .collect();
        kept.reverse();
        let msgs: Vec<i64> = self.live_messages(&v, 200)?.iter().map(|m| m.seq).collect();
        let (op_head, msg_head) = self.store().log_heads()?;
        let w = &self.cfg.window;
        let state = EngineState {
            carried,
            op_seq: op_head,
            msg_seq: msg_head,
            seed_ops: kept,
            seed_msgs: msgs,
            zone: w.zone(after),
            emergency: w.is_emergency(after),
            reported: v.state.reported.map(|_| (after, local)),
            ..v.state.clone()
        };
        let saved_by: serde_json::Map<String, serde_json::Value> = report
            .techniques
            .iter()
            .map(|t| (t.technique.name().to_string(), json!(t.tokens_saved)))
            .collect();
        let commit = EngineCommit {
            operation: Some(self.action_op(
                Some(&session.id),
                json!({"action": "optimize", "items": plan.substitutions.len(),
                       "tokens_before": before, "tokens_after": after, "saved": saved_by}),
            )),
            substitutions: plan.substitutions,
            artifacts: plan.artifacts,
            ..EngineCommit::default()
        };
        self.commit_state(&v, state, commit)?;
        events.push(EngineEvent::Optimized {
            items: report.substitutions.len(),
            tokens_before: before,
            tokens_after: after,
            artifacts: report.artifacts.clone(),
        });
        Ok(report)
    }
}
