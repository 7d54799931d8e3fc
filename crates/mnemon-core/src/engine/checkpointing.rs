//! Checkpoints: creating them on every trigger, and resuming from one.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;

use super::checkpoint::{
    Checkpoint, ContextSnapshot, FORMAT, HotRef, Metadata, ResumeInstructions, Snapshot,
    checkpoint_id,
};
use super::state::EngineState;
use super::store::{EngineCommit, HotRestore, StoredCheckpoint};
use super::{Engine, EngineError, EngineStore, View};
use crate::memory::{
    DocKind, EntityKind, EntityQuery, EntityStatus, HotStatus, Operation, SessionChange,
    SessionStatus, StoreError, StoreResult, data_text,
};
use crate::window::Zone;

/// What `resume` restored.
#[derive(Debug, Clone, Serialize)]
pub struct Resumed {
    pub checkpoint: String,
    pub session_id: Option<String>,
    pub working_memory_operations: usize,
    pub hot_items_restored: usize,
    pub hot_items_removed: usize,
}

impl<S: EngineStore + ?Sized> Engine<S> {
    /// Creates a checkpoint now (manual, or any named trigger).
    pub fn checkpoint(&self, trigger: &str) -> Result<Checkpoint, EngineError> {
        if !self.cfg.checkpoints.allows(trigger) {
            return Err(EngineError::Invalid(format!(
                "`{trigger}` checkpoints are switched off ({} = false in the configuration); set it to true to take one",
                self.cfg.checkpoints.key_for(trigger)
            )));
        }
        let _g = self.lock();
        super::retry_conflicts(self.runtime.as_ref(), || self.checkpoint_once(trigger))
    }

    fn checkpoint_once(&self, trigger: &str) -> Result<Checkpoint, EngineError> {
        let mut v = self.view()?;
        // A session started outside the engine gets its epoch first, so the
        // checkpoint describes the session that is really active.
        if let Some(s) = v.session.clone()
            && v.state.session_id.as_deref() != Some(&s.id)
        {
            self.begin_session_epoch(&mut v, &s)?;
            v = self.view()?;
        }
        self.checkpoint_locked(&v, trigger)
    }

    pub(crate) fn checkpoint_locked(
        &self,
        v: &View,
        trigger: &str,
    ) -> Result<Checkpoint, EngineError> {
        let wm = self.working_memory_of(v)?;
        let mut ops: Vec<i64> = wm.recent().map(|o| o.seq).collect();
        ops.reverse();
        let msgs: Vec<i64> = self.live_messages(v, 200)?.iter().map(|m| m.seq).collect();
        let hot = self.store().hot_context()?;
        let mut documents = BTreeMap::new();
        for kind in [
            DocKind::ProjectState,
            DocKind::WorkPlan,
            DocKind::DecisionLog,
        ] {
            match self.store().document(kind, None) {
                Ok(d) => {
                    documents.insert(kind.stem().to_string(), d.version);
                }
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let (op_head, msg_head) = self.store().log_heads()?;
        let used = v.used();
        let w = &self.cfg.window;
        let wm_ops: Vec<Operation> = wm.recent().cloned().collect();
        let resume = self.resume_instructions(v, &wm_ops, used)?;
        let at = self.now();
        let mut n = 1;
        let id = loop {
            let id = checkpoint_id(at, n);
            match self.store().checkpoint(&id) {
                Err(StoreError::NotFound { .. }) => break id,
                Ok(_) => n += 1,
                Err(e) => return Err(e.into()),
            }
        };
        let session = v.epoch_session();
        let cp = Checkpoint {
            id: id.clone(),
            timestamp: at.rfc3339(),
            trigger: trigger.to_string(),
            context_snapshot: ContextSnapshot {
                tokens_used: used,
                percentage: (used as f64 / w.effective_max() as f64 * 10_000.0).round() / 10_000.0,
                effective_max: w.effective_max(),
                configured_max: w.configured_max(),
                utilization_limit: w.utilization_limit().as_f64(),
                plan_manifest_path: ".mnemon/memory/work_plan.md".into(),
                phase_summary_path: session
                    .map(|s| format!(".mnemon/sessions/session_{}.md", s.id)),
                artifacts_registry_path: format!(".mnemon/{}", crate::optimize::REGISTRY_PATH),
                decision_records_path: ".mnemon/decisions/".into(),
                working_memory_snapshot: Snapshot {
                    format: FORMAT,
                    agent: self.memory.agent().to_string(),
                    session_id: session.map(|s| s.id.clone()),
                    epoch: v.state.epoch,
                    baseline: v.state.baseline,
                    added: v.state.carried + v.totals.tokens(),
                    zone: w.zone(used),
                    operation_position: op_head,
                    message_position: msg_head,
                    operations: ops,
                    messages: msgs,
                    hot_context: HotRef {
                        version: hot.version,
                        items: hot
                            .items
                            .iter()
                            .map(|i| (i.id.clone(), i.version))
                            .collect(),
                    },
                    documents,
                    digest: String::new(),
                },
            },
            resume_instructions: resume,
            metadata: Metadata {
                model: self.cfg.model.clone(),
                context_window: w.configured_max(),
                optimization_profile: self.cfg.profile.name.name().to_string(),
                session_duration_seconds: session
                    .map_or(0, |s| ((at.0 - s.started_at.0).max(0) / 1000) as u64),
            },
        }
        .seal();
        let state = EngineState {
            last_checkpoint: Some(id.clone()),
            last_checkpoint_at: Some(at),
            checkpoint_op_seq: op_head,
            ..v.state.clone()
        };
        let sid = session.map(|s| s.id.as_str());
        let commit = EngineCommit {
            checkpoint: Some(StoredCheckpoint {
                id: id.clone(),
                agent: self.memory.agent().to_string(),
                session_id: sid.map(str::to_string),
                trigger: trigger.to_string(),
                created_at: at,
                json: cp.to_json(),
            }),
            operation: Some(self.action_op(
                sid,
                json!({"action": "checkpoint", "id": id, "trigger": trigger, "tokens_used": used}),
            )),
            ..EngineCommit::default()
        };
        self.commit_state(v, state, commit)?;
        Ok(cp)
    }

    pub(super) fn resume_instructions(
        &self,
        v: &View,
        wm: &[Operation],
        used: u64,
    ) -> StoreResult<ResumeInstructions> {
        let task = |status| {
            self.store().entities(&EntityQuery {
                kind: Some(EntityKind::Task),
                status: Some(status),
                limit: Some(1),
                ..EntityQuery::default()
            })
        };
        let mut next = task(EntityStatus::InProgress)?;
        if next.is_empty() {
            next = task(EntityStatus::Pending)?;
        }
        let blocked = self.store().entities(&EntityQuery {
            status: Some(EntityStatus::Blocked),
            limit: Some(10),
            ..EntityQuery::default()
        })?;
        let mut blockers: Vec<String> = blocked
            .iter()
            .map(|e| format!("{} is blocked", e.label()))
            .collect();
        for op in wm {
            let failed = matches!(op.status.as_deref(), Some("failed" | "error"));
            if op.kind.contains("error") || failed {
                let text: String = data_text(&op.data).chars().take(120).collect();
                blockers.push(format!("unresolved {}: {text}", op.kind));
            }
        }
        let mut load = Vec::new();
        if !self.store().hot_context()?.items.is_empty() {
            load.push("hot_context".to_string());
        }
        if v.session.as_ref().is_some_and(|s| s.summary.is_some()) {
            load.push("session_summary".into());
        }
        load.push("project_state".into());
        load.push("work_plan".into());
        let n = self
            .store()
            .decisions(Some(self.cfg.profile.max_decision_records.value as usize))?
            .len();
        if n > 0 {
            load.push(format!("last_{n}_decision_records"));
        }
        if !wm.is_empty() {
            load.push("working_memory".into());
        }
        let mut warnings = Vec::new();
        let w = &self.cfg.window;
        let zone = w.zone(used);
        if zone >= Zone::Orange {
            warnings.push(format!(
                "context at {:.1}% ({}): {}",
                used as f64 * 100.0 / w.effective_max() as f64,
                zone.name(),
                w.action(zone).name()
            ));
        }
        if !self.memory.counter().is_exact() {
            warnings.push(format!(
                "token counts are estimates ({}); report provider usage to calibrate",
                self.memory.counter().name()
            ));
        }
        if !blocked.is_empty() {
            warnings.push(format!("{} blocked item(s)", blocked.len()));
        }
        Ok(ResumeInstructions {
            next_task: next.first().map(|e| e.label()),
            phase: v.state.phase.map(|p| p.name().to_string()),
            blockers,
            context_to_load: load,
            warnings,
        })
    }

    /// Restores working memory, hot context, the session and the window
    /// state exactly as `cp` recorded them, in one transaction. Refuses a
    /// checkpoint of another agent, or one whose references are missing.
    pub fn resume(&self, cp: &Checkpoint) -> Result<Resumed, EngineError> {
        let _g = self.lock();
        super::retry_conflicts(self.runtime.as_ref(), || self.resume_once(cp))
    }

    fn resume_once(&self, cp: &Checkpoint) -> Result<Resumed, EngineError> {
        let snap = cp.snapshot();
        let agent = self.memory.agent();
        if snap.agent != agent {
            return Err(EngineError::Invalid(format!(
                "checkpoint {} belongs to agent `{}`, not `{agent}`; resume it as that agent (MNEMON_AGENT={})",
                cp.id, snap.agent, snap.agent
            )));
        }
        if let Ok(stored) = self.store().checkpoint(&cp.id) {
            let ours = Checkpoint::from_json(&stored.json, &cp.id)?;
            if ours != *cp {
                return Err(EngineError::Invalid(format!(
                    "checkpoint {} differs from the one in the database; nothing was restored. Run `mnemon export` to rewrite the file",
                    cp.id
                )));
            }
        }
        let missing = |what: &str| {
            EngineError::Invalid(format!(
                "checkpoint {} refers to {what} that is not in this project's store; nothing was restored",
                cp.id
            ))
        };
        let ops = self.store().operations_at(&snap.operations)?;
        if ops.len() != snap.operations.len() {
            return Err(missing("operations"));
        }
        if self.store().messages_at(&snap.messages)?.len() != snap.messages.len() {
            return Err(missing("messages"));
        }
        let session = match &snap.session_id {
            Some(id) => Some(self.store().session(id).map_err(|_| missing("a session"))?),
            None => None,
        };
        let current = self.store().hot_context()?;
        let mut restores = Vec::new();
        let mut restored = 0;
        for (id, version) in &snap.hot_context.items {
            let want = self
                .store()
                .hot_item_at(id, *version)
                .map_err(|_| missing("a hot-context item version"))?;
            let now = self.store().hot_item(id)?;
            if now.text != want.text
                || now.detail != want.detail
                || now.priority != want.priority
                || now.status != want.status
            {
                restored += 1;
                restores.push(HotRestore {
                    id: id.clone(),
                    text: want.text,
                    detail: want.detail,
                    priority: want.priority,
                    status: want.status,
                });
            }
        }
        let mut removed = 0;
        for item in &current.items {
            if !snap.hot_context.items.iter().any(|(id, _)| *id == item.id) {
                removed += 1;
                restores.push(HotRestore {
                    id: item.id.clone(),
                    text: item.text.clone(),
                    detail: item.detail.clone(),
                    priority: item.priority,
                    status: HotStatus::Removed,
                });
            }
        }
        let v = self.view()?;
        let mut sessions = Vec::new();
        if let Some(active) = &v.session
            && Some(&active.id) != snap.session_id.as_ref()
        {
            sessions.push((
                active.id.clone(),
                SessionChange {
                    status: Some(SessionStatus::Ended),
                    ended_at: Some(self.now()),
                    ..SessionChange::default()
                },
            ));
        }
        if let Some(s) = &session
            && s.status != SessionStatus::Active
        {
            sessions.push((
                s.id.clone(),
                SessionChange {
                    status: Some(SessionStatus::Active),
                    ..SessionChange::default()
                },
            ));
        }
        let (op_head, msg_head) = self.store().log_heads()?;
        let w = &self.cfg.window;
        let state = EngineState {
            session_id: snap.session_id.clone(),
            epoch: snap.epoch,
            baseline: snap.baseline,
            carried: snap.added,
            op_seq: op_head,
            msg_seq: msg_head,
            seed_ops: snap.operations.clone(),
            seed_msgs: snap.messages.clone(),
            zone: snap.zone,
            emergency: w.is_emergency(cp.context_snapshot.tokens_used),
            last_checkpoint: Some(cp.id.clone()),
            last_checkpoint_at: crate::memory::Timestamp::parse(&cp.timestamp),
            checkpoint_op_seq: op_head,
            reported: None,
            ..v.state.clone()
        };
        let commit = EngineCommit {
            sessions,
            hot_restore: restores,
            operation: Some(self.action_op(
                snap.session_id.as_deref(),
                json!({"action": "resume", "checkpoint": cp.id}),
            )),
            ..EngineCommit::default()
        };
        self.commit_state(&v, state, commit)?;
        Ok(Resumed {
            checkpoint: cp.id.clone(),
            session_id: snap.session_id.clone(),
            working_memory_operations: ops.len(),
            hot_items_restored: restored,
            hot_items_removed: removed,
        })
    }
}
