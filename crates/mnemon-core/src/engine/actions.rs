//! The engine's actions: epochs, zone actions, refresh, optimize,
//! checkpoints, resume, session end, session-log compaction, calibration.
//! Each computes everything first and writes once through
//! [`EngineStore::commit`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;

use super::checkpoint::{
    Checkpoint, ContextSnapshot, FORMAT, HotRef, Metadata, ResumeInstructions, Snapshot,
    checkpoint_id,
};
use super::live::{self, LiveParts};
use super::state::{ACTION_KIND, EngineState};
use super::store::{CompactionRecord, EngineCommit, HotRestore, STATE_CONFLICT, StoredCheckpoint};
use super::summary::SessionReport;
use super::{Engine, EngineError, EngineEvent, EngineStore, Outcome, View, doc_text, zone_events};
use crate::compress::{self, SourceItem, Summary, compress_within};
use crate::memory::{
    DocKind, EntityKind, EntityQuery, EntityStatus, HotStatus, Message, Operation, OperationDraft,
    Session, SessionChange, SessionStatus, StoreError, data_text,
};
use crate::window::{Action, WindowEvent, Zone};

const HOUR_MS: i64 = 3_600_000;

/// What `compact` did or would do.
#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    pub session_id: String,
    pub dry_run: bool,
    pub summary: Summary,
}

/// What `resume` restored.
#[derive(Debug, Clone, Serialize)]
pub struct Resumed {
    pub checkpoint: String,
    pub session_id: Option<String>,
    pub working_memory_operations: usize,
    pub hot_items_restored: usize,
    pub hot_items_removed: usize,
}

fn trigger_for(zone: Zone) -> &'static str {
    match zone {
        Zone::Green => "threshold_green",
        Zone::Yellow => "threshold_50pct",
        Zone::Orange => "threshold_70pct",
        Zone::Red => "threshold_85pct",
    }
}

fn op_item(op: &Operation) -> SourceItem {
    let status = op
        .status
        .as_deref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    SourceItem {
        sources: vec![format!("o{}", op.seq)],
        order: op.created_at.0,
        text: format!("{}{status}: {}", op.kind, data_text(&op.data)),
        pinned: op.pinned,
        importance: op.importance,
    }
}

fn msg_item(m: &Message) -> SourceItem {
    SourceItem {
        sources: vec![format!("m{}", m.seq)],
        order: m.created_at.0,
        text: format!("{}: {}", m.role.name(), m.content.replace('\n', " ")),
        pinned: m.pinned,
        importance: m.importance,
    }
}

/// Earlier summary lines come before anything recorded since.
fn previous_summary(session: &Session) -> Vec<SourceItem> {
    let lines = compress::parse(session.summary.as_deref().unwrap_or(""));
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| SourceItem {
            order: i64::MIN / 2 + i as i64,
            ..l.to_item()
        })
        .collect()
}

impl<S: EngineStore> Engine<S> {
    fn action_op(&self, session: Option<&str>, data: serde_json::Value) -> OperationDraft {
        let text = data_text(&data);
        OperationDraft {
            session_id: session.map(str::to_string),
            agent: self.memory.agent().to_string(),
            kind: ACTION_KIND.to_string(),
            tokens: self
                .memory
                .counter()
                .count(&format!("{ACTION_KIND} {text}")) as u64,
            data,
            phase: None,
            status: None,
            importance: 0.3,
            pinned: false,
            created_at: self.now(),
        }
    }

    /// Commits `c` with `state` as the next version of `v`'s state.
    fn commit_state(
        &self,
        v: &View,
        mut state: EngineState,
        mut c: EngineCommit,
    ) -> Result<Option<Operation>, EngineError> {
        let expected = v.stored.then_some(v.state.version);
        state.version = v.state.version + 1;
        c.state = Some((expected, state));
        c.at = self.now();
        c.keep_versions = self.cfg.keep_versions;
        self.store().commit(&c).map_err(|e| match e {
            StoreError::Invalid(m) if m.starts_with(STATE_CONFLICT) => EngineError::Invalid(
                format!("{m}: another process changed the context at the same moment; retry"),
            ),
            e => e.into(),
        })
    }

    fn stored_documents(&self) -> Result<Vec<(DocKind, String)>, StoreError> {
        let mut out = Vec::new();
        for kind in [
            DocKind::ProjectState,
            DocKind::WorkPlan,
            DocKind::DecisionLog,
        ] {
            match self.store().document(kind, None) {
                Ok(d) => out.push((kind, d.content)),
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The memory context loaded at an epoch's start, rendered within the
    /// epoch budget.
    pub(crate) fn epoch_context(
        &self,
        summary: Option<&str>,
        docs: &[(DocKind, String)],
        working: &[Operation],
        messages: &[Message],
    ) -> Result<live::LiveContext, StoreError> {
        let hot = self.store().hot_context()?;
        let decisions = self
            .store()
            .decisions(Some(self.cfg.profile.max_decision_records.value as usize))?;
        let parts = LiveParts {
            hot: &hot,
            session_summary: summary,
            project_state: doc_text(docs, DocKind::ProjectState),
            work_plan: doc_text(docs, DocKind::WorkPlan),
            decisions: &decisions,
            working,
            messages,
        };
        Ok(live::render(
            &parts,
            self.cfg.live_caps(),
            self.cfg.epoch_budget(),
            self.memory.counter(),
        ))
    }

    /// A new session gets a fresh epoch: episodic memory and hot context
    /// carry over, working memory starts empty.
    pub(crate) fn begin_session_epoch(
        &self,
        v: &mut View,
        session: &Session,
    ) -> Result<(), EngineError> {
        let docs = self.stored_documents()?;
        let ctx = self.epoch_context(session.summary.as_deref(), &docs, &[], &[])?;
        let (op_head, msg_head) = self.store().log_heads()?;
        let used = v.calibration.apply(ctx.tokens);
        let state = EngineState {
            session_id: Some(session.id.clone()),
            epoch: v.state.epoch + 1,
            baseline: ctx.tokens,
            carried: 0,
            op_seq: op_head,
            msg_seq: msg_head,
            seed_ops: Vec::new(),
            seed_msgs: Vec::new(),
            zone: self.cfg.window.zone(used),
            emergency: self.cfg.window.is_emergency(used),
            checkpoint_op_seq: op_head,
            reported: None,
            phase: None,
            compacted_tokens: session.tokens,
            ..v.state.clone()
        };
        self.commit_state(v, state, EngineCommit::default())?;
        Ok(())
    }

    /// Zone actions, then the phase, time and operation-count triggers,
    /// then session-log compaction.
    pub(crate) fn after_write(
        &self,
        v: View,
        phase: Option<crate::memory::Phase>,
        events: &mut Vec<EngineEvent>,
        checkpoints: &mut Vec<Checkpoint>,
    ) -> Result<(), EngineError> {
        let w = &self.cfg.window;
        let used = v.used();
        let (wevents, zone, emergency) = zone_events(w, &v.state, used);
        let mut rising = None;
        for e in &wevents {
            events.push(window_event(*e));
            if let WindowEvent::ZoneChanged { from, to, .. } = e
                && to > from
            {
                rising = Some(*to);
            }
        }
        let mut phase_done = None;
        if let Some(p) = phase
            && let Some(prev) = v.state.phase
            && prev != p
        {
            phase_done = Some(prev);
        }
        let new_phase = phase.or(v.state.phase);
        if zone != v.state.zone || emergency != v.state.emergency || new_phase != v.state.phase {
            let state = EngineState {
                zone,
                emergency,
                phase: new_phase,
                ..v.state.clone()
            };
            self.commit_state(&v, state, EngineCommit::default())?;
        }
        let mut checkpointed = false;
        if let Some(z) = rising {
            match w.action(z) {
                Action::OptimizeThenCheckpoint => {
                    self.optimize_locked(events)?;
                    let v = self.view()?;
                    let cp = self.checkpoint_locked(&v, trigger_for(z))?;
                    push_checkpoint(cp, events, checkpoints);
                    checkpointed = true;
                }
                Action::EmergencyCheckpointAndRefresh => {
                    self.refresh_locked(trigger_for(z), events, checkpoints)?;
                    checkpointed = true;
                }
                Action::MonitorAndPlanCheckpoint | Action::ProceedNormally => {}
            }
        }
        let v = self.view()?;
        if !checkpointed {
            let trigger = match phase_done {
                Some(p) => Some(format!("phase_complete_{}", p.name())),
                None => self.interval_trigger(&v)?,
            };
            if let Some(t) = trigger {
                let cp = self.checkpoint_locked(&v, &t)?;
                push_checkpoint(cp, events, checkpoints);
            }
        }
        let v = self.view()?;
        if let Some(s) = &v.session {
            let threshold = self.cfg.profile.session_compression_threshold_tokens.value;
            if s.tokens.saturating_sub(v.state.compacted_tokens) >= threshold {
                let c = self.compact_locked(&v, false)?;
                events.push(EngineEvent::SessionLogCompacted {
                    input_tokens: c.summary.input_tokens,
                    output_tokens: c.summary.tokens,
                });
            }
        }
        Ok(())
    }

    fn interval_trigger(&self, v: &View) -> Result<Option<String>, StoreError> {
        let Some(s) = &v.session else { return Ok(None) };
        let p = &self.cfg.profile;
        let every = p.checkpoint_interval_operations.value;
        let since = self
            .store()
            .live_totals(&s.id, v.state.checkpoint_op_seq, i64::MAX)?
            .op_count;
        if every > 0 && since >= every {
            return Ok(Some(format!("operations_{every}")));
        }
        let hours = p.checkpoint_interval_hours.value;
        let last = v.state.last_checkpoint_at.unwrap_or(s.started_at);
        let interval_ms = (hours * HOUR_MS as f64) as i64;
        if interval_ms > 0 && self.now().0 - last.0 >= interval_ms {
            return Ok(Some(format!("time_{}", hours_label(hours))));
        }
        Ok(None)
    }

    /// Creates a checkpoint now (manual, or any named trigger).
    pub fn checkpoint(&self, trigger: &str) -> Result<Checkpoint, EngineError> {
        let _g = self.lock();
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
        let session = v
            .session
            .as_ref()
            .filter(|s| v.state.session_id.as_deref() == Some(&s.id));
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
                artifacts_registry_path: ".mnemon/artifacts/".into(),
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

    fn resume_instructions(
        &self,
        v: &View,
        wm: &[Operation],
        used: u64,
    ) -> Result<ResumeInstructions, StoreError> {
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

    /// Refreshes now: checkpoint, working memory into the session summary,
    /// episodic documents updated, a new epoch.
    pub fn refresh(&self, trigger: &str) -> Result<Outcome<()>, EngineError> {
        let _g = self.lock();
        let mut events = Vec::new();
        let mut checkpoints = Vec::new();
        self.refresh_locked(trigger, &mut events, &mut checkpoints)?;
        let v = self.view()?;
        let wm = self.working_memory_of(&v)?;
        Ok(Outcome {
            value: (),
            status: self.status_of(&v, wm.len()),
            events,
            checkpoints,
        })
    }

    pub(crate) fn refresh_locked(
        &self,
        trigger: &str,
        events: &mut Vec<EngineEvent>,
        checkpoints: &mut Vec<Checkpoint>,
    ) -> Result<(), EngineError> {
        let v = self.view()?;
        let cp = self.checkpoint_locked(&v, trigger)?;
        push_checkpoint(cp, events, checkpoints);
        let v = self.view()?;
        let Some(session) = v
            .session
            .clone()
            .filter(|s| v.state.session_id.as_deref() == Some(&s.id))
        else {
            return Ok(());
        };
        let before = v.used();
        let mut items = previous_summary(&session);
        for op in self.store().operations_at(&v.state.seed_ops)? {
            items.push(op_item(&op));
        }
        for op in self
            .store()
            .operations_after(&session.id, v.state.op_seq, usize::MAX)?
        {
            items.push(op_item(&op));
        }
        for m in self.live_messages(&v, usize::MAX)? {
            items.push(msg_item(&m));
        }
        let target = self.cfg.profile.session_summary_max_tokens.value;
        let summary = compress_within(
            self.summarizer.as_ref(),
            &items,
            target,
            self.memory.counter(),
        )?;
        let docs = self.memory.render_documents()?.to_vec();
        let ctx = self.epoch_context(Some(&summary.text), &docs, &[], &[])?;
        let (op_head, msg_head) = self.store().log_heads()?;
        let after = v.calibration.apply(ctx.tokens);
        let w = &self.cfg.window;
        let state = EngineState {
            epoch: v.state.epoch + 1,
            baseline: ctx.tokens,
            carried: 0,
            op_seq: op_head,
            msg_seq: msg_head,
            seed_ops: Vec::new(),
            seed_msgs: Vec::new(),
            zone: w.zone(after),
            emergency: w.is_emergency(after),
            reported: None,
            refreshes: v.state.refreshes + 1,
            ..v.state.clone()
        };
        let commit = EngineCommit {
            sessions: vec![(
                session.id.clone(),
                SessionChange {
                    summary: Some(summary.text.clone()),
                    ..SessionChange::default()
                },
            )],
            documents: docs,
            compaction: Some(CompactionRecord {
                session_id: Some(session.id.clone()),
                kind: "refresh".into(),
                created_at: self.now(),
                input_tokens: summary.input_tokens,
                output_tokens: summary.tokens,
                audit: serde_json::to_value(&summary.audit).unwrap_or_default(),
                summary: summary.text.clone(),
                through_op_seq: op_head,
                through_msg_seq: msg_head,
            }),
            operation: Some(self.action_op(
                Some(&session.id),
                json!({"action": "refresh", "trigger": trigger, "tokens_before": before,
                       "tokens_after": after, "epoch": state.epoch}),
            )),
            ..EngineCommit::default()
        };
        let (wevents, _, _) = zone_events(w, &v.state, after);
        self.commit_state(&v, state.clone(), commit)?;
        events.push(EngineEvent::Refreshed {
            trigger: trigger.to_string(),
            tokens_before: before,
            tokens_after: after,
            epoch: state.epoch,
            summarized: summary.audit.summarized.len(),
            kept_verbatim: summary.audit.kept_verbatim.len(),
            pinned_deferred: summary.audit.pinned_deferred.len(),
        });
        events.extend(wevents.into_iter().map(window_event));
        Ok(())
    }

    /// The orange-zone optimization: prunes working memory (debug traces
    /// older than an hour, all but the last 5 validation results) and
    /// rebuilds the live context from what remains. Does nothing unless it
    /// saves tokens.
    pub fn optimize(&self) -> Result<Outcome<()>, EngineError> {
        let _g = self.lock();
        let mut events = Vec::new();
        self.optimize_locked(&mut events)?;
        let v = self.view()?;
        let wm = self.working_memory_of(&v)?;
        Ok(Outcome {
            value: (),
            status: self.status_of(&v, wm.len()),
            events,
            checkpoints: Vec::new(),
        })
    }

    fn optimize_locked(&self, events: &mut Vec<EngineEvent>) -> Result<(), EngineError> {
        let v = self.view()?;
        let Some(session) = v
            .session
            .clone()
            .filter(|s| v.state.session_id.as_deref() == Some(&s.id))
        else {
            return Ok(());
        };
        let now = self.now();
        let mut epoch_ops = self.store().operations_at(&v.state.seed_ops)?;
        let mut since = self
            .store()
            .operations_after(&session.id, v.state.op_seq, usize::MAX)?;
        since.reverse();
        epoch_ops.extend(since);
        // Newest first, so "the last 5 validations" are the first 5 seen.
        let mut validations = 0;
        let mut pruned: Vec<i64> = Vec::new();
        let mut saved = 0;
        for op in epoch_ops.iter().rev() {
            let trace = op.kind.contains("debug") || op.kind.contains("trace");
            let old_trace = trace && now.0 - op.created_at.0 > HOUR_MS;
            let old_validation = op.kind == "validation" && {
                validations += 1;
                validations > 5
            };
            if old_trace || old_validation {
                pruned.push(op.seq);
                saved += op.tokens;
            }
        }
        if pruned.is_empty() {
            return Ok(());
        }
        let before = v.used();
        let wm = self.working_memory_of(&v)?;
        let mut kept: Vec<i64> = wm
            .recent()
            .map(|o| o.seq)
            .filter(|s| !pruned.contains(s))
            .collect();
        kept.reverse();
        let msgs: Vec<i64> = self.live_messages(&v, 200)?.iter().map(|m| m.seq).collect();
        let (op_head, msg_head) = self.store().log_heads()?;
        // The epoch goes on without the pruned items: what was added so far
        // is carried, less what pruning removed.
        let carried = (v.state.carried + v.totals.tokens()).saturating_sub(saved);
        let local = v.state.baseline + carried;
        let after = match v.state.reported {
            Some((tokens, at_local)) => (tokens
                + v.calibration.apply(v.local().saturating_sub(at_local)))
            .saturating_sub(v.calibration.apply(saved)),
            None => v.calibration.apply(local),
        };
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
        let removed = pruned.len();
        let commit = EngineCommit {
            operation: Some(self.action_op(
                Some(&session.id),
                json!({"action": "optimize", "pruned": removed, "tokens_before": before, "tokens_after": after}),
            )),
            ..EngineCommit::default()
        };
        self.commit_state(&v, state, commit)?;
        events.push(EngineEvent::Optimized {
            removed,
            tokens_before: before,
            tokens_after: after,
        });
        Ok(())
    }

    /// Restores working memory, hot context, the session and the window
    /// state exactly as `cp` recorded them, in one transaction. Refuses a
    /// checkpoint of another agent, or one whose references are missing.
    pub fn resume(&self, cp: &Checkpoint) -> Result<Resumed, EngineError> {
        let _g = self.lock();
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

    /// Compresses the session log: everything the session recorded, to at
    /// most half its size (the first level of the hierarchy) or, when the
    /// pinned items need more, 70 %. The originals stay in the store.
    pub fn compact(&self, dry_run: bool) -> Result<Compaction, EngineError> {
        let _g = self.lock();
        let v = self.view()?;
        self.compact_locked(&v, dry_run)
    }

    fn compact_locked(&self, v: &View, dry_run: bool) -> Result<Compaction, EngineError> {
        let Some(session) = v.session.clone() else {
            return Err(EngineError::Invalid(
                "there is no active session to compact; start one with `mnemon session start`"
                    .into(),
            ));
        };
        // Incremental: the previous compaction's lines stand for everything
        // up to its positions, so each compaction reads O(summary + new).
        let last = self.store().last_compaction(&session.id, "session_log")?;
        let (mut items, op_from, msg_from) = match &last {
            Some(r) => (
                compress::parse(&r.summary)
                    .iter()
                    .enumerate()
                    .map(|(i, l)| SourceItem {
                        order: i64::MIN / 2 + i as i64,
                        ..l.to_item()
                    })
                    .collect(),
                r.through_op_seq,
                r.through_msg_seq,
            ),
            None => (Vec::new(), 0, 0),
        };
        let (op_head, msg_head) = self.store().log_heads()?;
        let mut ops = self
            .store()
            .operations_after(&session.id, op_from, usize::MAX)?;
        ops.reverse();
        let mut msgs = self
            .store()
            .messages_after(&session.id, msg_from, usize::MAX)?;
        msgs.reverse();
        items.extend(ops.iter().map(op_item));
        items.extend(msgs.iter().map(msg_item));
        let counter = self.memory.counter();
        let input = compress::verbatim_tokens(&items, counter);
        let pinned: Vec<SourceItem> = items.iter().filter(|i| i.pinned).cloned().collect();
        let pinned_tokens = if pinned.is_empty() {
            0
        } else {
            compress::verbatim_tokens(&pinned, counter)
        };
        // Half the input (the hierarchy's first level); never less than the
        // pinned items, which are kept whole. The summarizer also holds the
        // seeds' 0.7 ratio whenever the pinned items allow.
        let summary = self
            .summarizer
            .summarize(&items, (input / 2).max(pinned_tokens), counter)?;
        if !dry_run {
            let state = EngineState {
                compacted_tokens: session.tokens,
                ..v.state.clone()
            };
            let commit = EngineCommit {
                compaction: Some(CompactionRecord {
                    session_id: Some(session.id.clone()),
                    kind: "session_log".into(),
                    created_at: self.now(),
                    input_tokens: summary.input_tokens,
                    output_tokens: summary.tokens,
                    audit: serde_json::to_value(&summary.audit).unwrap_or_default(),
                    summary: summary.text.clone(),
                    through_op_seq: op_head,
                    through_msg_seq: msg_head,
                }),
                operation: Some(self.action_op(
                    Some(&session.id),
                    json!({"action": "compact", "input_tokens": summary.input_tokens,
                           "output_tokens": summary.tokens}),
                )),
                ..EngineCommit::default()
            };
            self.commit_state(v, state, commit)?;
        }
        Ok(Compaction {
            session_id: session.id,
            dry_run,
            summary,
        })
    }

    /// Ends the agent's session (design v1 `flush_session`): a `session_end`
    /// checkpoint, a structured summary built from the session's
    /// operations, the session archived, the episodic documents updated
    /// (old versions kept), and a fresh epoch with empty working memory.
    pub fn end_session(&self) -> Result<Outcome<SessionReport>, EngineError> {
        let _g = self.lock();
        let v = self.view()?;
        let Some(session) = v.session.clone() else {
            return Err(EngineError::Invalid(
                "there is no active session to end".into(),
            ));
        };
        let mut events = Vec::new();
        let mut checkpoints = Vec::new();
        let cp = self.checkpoint_locked(&v, "session_end")?;
        push_checkpoint(cp, &mut events, &mut checkpoints);
        let v = self.view()?;
        let mut ops = self.store().operations_after(&session.id, 0, usize::MAX)?;
        ops.reverse();
        let decisions = self.store().decisions(Some(50))?;
        let entities = |status, limit| {
            self.store().entities(&EntityQuery {
                kind: Some(EntityKind::Task),
                status: Some(status),
                limit: Some(limit),
                ..EntityQuery::default()
            })
        };
        let mut next = entities(EntityStatus::InProgress, 3)?;
        next.extend(entities(EntityStatus::Pending, 3)?);
        next.truncate(3);
        let blocked = self.store().entities(&EntityQuery {
            status: Some(EntityStatus::Blocked),
            limit: Some(5),
            ..EntityQuery::default()
        })?;
        let at = self.now();
        let report = SessionReport::build(&session, &ops, &decisions, &next, &blocked, at);
        let mut items = previous_summary(&session);
        items.extend(
            self.store()
                .operations_after(&session.id, v.state.op_seq, usize::MAX)?
                .iter()
                .map(op_item),
        );
        let narrative = compress_within(
            self.summarizer.as_ref(),
            &items,
            self.cfg.profile.session_summary_max_tokens.value,
            self.memory.counter(),
        )?;
        let mut text = report.to_markdown();
        if !narrative.text.is_empty() {
            text.push_str("\n### Narrative\n");
            text.push_str(&narrative.text);
            text.push('\n');
        }
        let docs: Vec<(DocKind, String)> = self
            .memory
            .render_documents()?
            .into_iter()
            .map(|(k, d)| (k, self.fit_document(k, d)))
            .collect();
        let ctx = self.epoch_context(None, &docs, &[], &[])?;
        let (op_head, msg_head) = self.store().log_heads()?;
        let w = &self.cfg.window;
        let used = v.calibration.apply(ctx.tokens);
        let state = EngineState {
            session_id: None,
            epoch: v.state.epoch + 1,
            baseline: ctx.tokens,
            carried: 0,
            op_seq: op_head,
            msg_seq: msg_head,
            seed_ops: Vec::new(),
            seed_msgs: Vec::new(),
            zone: w.zone(used),
            emergency: w.is_emergency(used),
            reported: None,
            phase: None,
            compacted_tokens: 0,
            ..v.state.clone()
        };
        let commit = EngineCommit {
            sessions: vec![(
                session.id.clone(),
                SessionChange {
                    status: Some(SessionStatus::Archived),
                    summary: Some(text),
                    ended_at: Some(at),
                    ..SessionChange::default()
                },
            )],
            documents: docs,
            compaction: Some(CompactionRecord {
                session_id: Some(session.id.clone()),
                kind: "session_end".into(),
                created_at: at,
                input_tokens: narrative.input_tokens,
                output_tokens: narrative.tokens,
                audit: serde_json::to_value(&narrative.audit).unwrap_or_default(),
                summary: narrative.text.clone(),
                through_op_seq: op_head,
                through_msg_seq: msg_head,
            }),
            operation: Some(self.action_op(
                Some(&session.id),
                json!({"action": "session_end", "operations": report.total_operations}),
            )),
            ..EngineCommit::default()
        };
        self.commit_state(&v, state, commit)?;
        let v = self.view()?;
        Ok(Outcome {
            value: report,
            status: self.status_of(&v, 0),
            events,
            checkpoints,
        })
    }

    /// An episodic document over its compression threshold keeps its
    /// first lines (headings and the most urgent items come first) and
    /// says how many it left out; the full data stays in the entities.
    fn fit_document(&self, _kind: DocKind, text: String) -> String {
        let cap = self.cfg.profile.episodic_compression_threshold_tokens.value;
        let counter = self.memory.counter();
        if counter.count_up_to(&text, cap as usize).is_some() {
            return text;
        }
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        live::fit_head(&lines, cap, counter)
    }

    /// Takes the prompt tokens a provider reported for the live context as
    /// the truth, and learns the ratio to the local count for this model.
    pub fn report_usage(&self, prompt_tokens: u64) -> Result<super::EngineStatus, EngineError> {
        let _g = self.lock();
        let v = self.view()?;
        let local = v.local();
        if local == 0 {
            return Err(EngineError::Invalid(
                "the live context is empty, so there is nothing to calibrate against; report usage after recording something".into(),
            ));
        }
        let observed = (prompt_tokens as u128 * 1_000_000 / local as u128) as u64;
        if !(super::Calibration::MIN_PPM..=super::Calibration::MAX_PPM).contains(&observed) {
            return Err(EngineError::Invalid(format!(
                "the provider reported {prompt_tokens} tokens where mnemon counts {local}: a ratio of {:.2}, outside 0.25-4. Report the prompt tokens of a call that sent mnemon's context",
                observed as f64 / 1e6
            )));
        }
        let cal = v.calibration.observe(observed);
        let w = &self.cfg.window;
        let state = EngineState {
            reported: Some((prompt_tokens, local)),
            zone: w.zone(prompt_tokens),
            emergency: w.is_emergency(prompt_tokens),
            ..v.state.clone()
        };
        let commit = EngineCommit {
            calibration: Some((self.cfg.model.clone(), cal)),
            ..EngineCommit::default()
        };
        self.commit_state(&v, state, commit)?;
        let v = self.view()?;
        let wm = self.working_memory_of(&v)?;
        Ok(self.status_of(&v, wm.len()))
    }
}

fn push_checkpoint(cp: Checkpoint, events: &mut Vec<EngineEvent>, cps: &mut Vec<Checkpoint>) {
    events.push(EngineEvent::CheckpointCreated {
        id: cp.id.clone(),
        trigger: cp.trigger.clone(),
    });
    cps.push(cp);
}

fn window_event(e: WindowEvent) -> EngineEvent {
    match e {
        WindowEvent::ZoneChanged {
            from,
            to,
            used,
            action,
        } => EngineEvent::ZoneChanged {
            from,
            to,
            used,
            action,
        },
        WindowEvent::EmergencyEntered { used } => EngineEvent::EmergencyEntered { used },
        WindowEvent::EmergencyCleared { used } => EngineEvent::EmergencyCleared { used },
    }
}

fn hours_label(h: f64) -> String {
    if (h - h.round()).abs() < 1e-9 {
        format!("{}h", h.round() as u64)
    } else {
        format!("{}min", (h * 60.0).round() as u64)
    }
}
