//! The engine's epoch actions: new epochs, zone actions and triggers,
//! refresh and optimize. Checkpoints and resume are in `checkpointing`,
//! compaction, session end and calibration in `ending`.
//! Each computes everything first and writes once through
//! [`EngineStore::commit`].

use super::checkpoint::Checkpoint;
use super::live::{self, LiveParts};
use super::state::{ACTION_KIND, EngineState};
use super::store::EngineCommit;
use super::{Engine, EngineError, EngineEvent, EngineStore, View, doc_text, zone_events};
use crate::compress::{self, SourceItem};
use crate::memory::{
    DocKind, Message, Operation, OperationDraft, Session, StoreError, StoreResult, Timestamp,
    data_text,
};
use crate::window::{Action, WindowEvent, Zone};

pub(super) const HOUR_MS: i64 = 3_600_000;

fn trigger_for(zone: Zone) -> &'static str {
    match zone {
        Zone::Green => "threshold_green",
        Zone::Yellow => "threshold_50pct",
        Zone::Orange => "threshold_70pct",
        Zone::Red => "threshold_85pct",
    }
}

pub(super) fn op_item(op: &Operation) -> SourceItem {
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

pub(super) fn msg_item(m: &Message) -> SourceItem {
    SourceItem {
        sources: vec![format!("m{}", m.seq)],
        order: m.created_at.0,
        text: format!("{}: {}", m.role.name(), m.content.replace('\n', " ")),
        pinned: m.pinned,
        importance: m.importance,
    }
}

/// The lines of an earlier summary as items, ordered before anything
/// recorded since.
pub(super) fn summary_items(text: &str) -> Vec<SourceItem> {
    compress::parse(text)
        .iter()
        .enumerate()
        .map(|(i, l)| SourceItem {
            order: i64::MIN / 2 + i as i64,
            ..l.to_item()
        })
        .collect()
}

impl<S: EngineStore + ?Sized> Engine<S> {
    pub(super) fn action_op(
        &self,
        session: Option<&str>,
        data: serde_json::Value,
    ) -> OperationDraft {
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
    pub(super) fn commit_state(
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
            e @ StoreError::StateConflict { .. } => EngineError::Conflict(e.to_string()),
            e => e.into(),
        })
    }

    pub(super) fn stored_documents(&self) -> StoreResult<Vec<(DocKind, String)>> {
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
    ) -> StoreResult<live::LiveContext> {
        let hot = self.store().hot_context()?;
        let decisions = self
            .store()
            .decisions(Some(self.cfg.profile.max_decision_records.value as usize))?;
        // What a context sends of each document: only what it says (an
        // empty template adds nothing), so usage is what would be sent.
        let lean = |kind| doc_text(docs, kind).and_then(crate::memory::episodic::lean);
        let (project_state, work_plan) = (lean(DocKind::ProjectState), lean(DocKind::WorkPlan));
        let parts = LiveParts {
            hot: &hot,
            session_summary: summary,
            project_state: project_state.as_deref(),
            work_plan: work_plan.as_deref(),
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
        mut v: View,
        phase: Option<crate::memory::Phase>,
        events: &mut Vec<EngineEvent>,
        checkpoints: &mut Vec<Checkpoint>,
    ) -> Result<View, EngineError> {
        // Most writes change nothing here; this is also the test a
        // history's batch is cut by, so the two cannot disagree.
        let since = self.operations_since_checkpoint(&v)?;
        if self.quiet_after(&v, phase, since, self.now()) {
            return Ok(v);
        }
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
            v = self.view()?;
        }
        // The state is re-read only after something was written: most
        // records change nothing here, and each read is four queries.
        let mut checkpointed = false;
        if let Some(z) = rising {
            match w.action(z) {
                Action::OptimizeThenCheckpoint => {
                    self.optimize_locked(false, events)?;
                    if self.cfg.checkpoints.threshold {
                        let v = self.view()?;
                        let cp = self.checkpoint_locked(&v, trigger_for(z))?;
                        push_checkpoint(cp, events, checkpoints);
                    }
                    checkpointed = true;
                }
                Action::EmergencyCheckpointAndRefresh => {
                    self.refresh_locked(trigger_for(z), events, checkpoints)?;
                    checkpointed = true;
                }
                Action::MonitorAndPlanCheckpoint | Action::ProceedNormally => {}
            }
            if checkpointed {
                v = self.view()?;
            }
        }
        // The guard in `accept` keeps one process under the line, but
        // writers in several processes can pass it together: whoever finds
        // the window past it after writing refreshes at once.
        let refreshed =
            rising.is_some_and(|z| w.action(z) == Action::EmergencyCheckpointAndRefresh);
        if !refreshed && w.is_emergency(v.used()) {
            self.refresh_locked("emergency_95pct", events, checkpoints)?;
            checkpointed = true;
            v = self.view()?;
        }
        if !checkpointed {
            let trigger = match phase_done {
                Some(p) if self.cfg.checkpoints.phase => {
                    Some(format!("phase_complete_{}", p.name()))
                }
                _ => self.interval_trigger(&v)?,
            };
            if let Some(t) = trigger {
                let cp = self.checkpoint_locked(&v, &t)?;
                push_checkpoint(cp, events, checkpoints);
                v = self.view()?;
            }
        }
        if self.compaction_due(&v) {
            let c = self.compact_locked(&v, false)?;
            events.push(EngineEvent::SessionLogCompacted {
                input_tokens: c.summary.input_tokens,
                output_tokens: c.summary.tokens,
            });
            v = self.view()?;
        }
        // Re-read after every write above: the caller answers with it.
        Ok(v)
    }

    pub(super) fn interval_trigger(&self, v: &View) -> StoreResult<Option<String>> {
        let since = self.operations_since_checkpoint(v)?;
        Ok(self.interval_due(v, since, self.now()))
    }

    /// Operations logged in the session since the last checkpoint.
    pub(super) fn operations_since_checkpoint(&self, v: &View) -> StoreResult<u64> {
        let Some(s) = &v.session else { return Ok(0) };
        Ok(self
            .store()
            .live_totals(&s.id, v.state.checkpoint_op_seq, i64::MAX)?
            .op_count)
    }

    /// The operation-count or time trigger due at `now`, given the
    /// operations logged since the last checkpoint.
    pub(super) fn interval_due(&self, v: &View, since: u64, now: Timestamp) -> Option<String> {
        let s = v.session.as_ref()?;
        let p = &self.cfg.profile;
        let every = p.checkpoint_interval_operations.value;
        if self.cfg.checkpoints.operations && every > 0 && since >= every {
            return Some(format!("operations_{every}"));
        }
        if !self.cfg.checkpoints.time {
            return None;
        }
        let hours = p.checkpoint_interval_hours.value;
        let last = v.state.last_checkpoint_at.unwrap_or(s.started_at);
        let interval_ms = (hours * HOUR_MS as f64) as i64;
        if interval_ms > 0 && now.0 - last.0 >= interval_ms {
            return Some(format!("time_{}", hours_label(hours)));
        }
        None
    }

    /// Whether the session's log has grown enough since it was last
    /// compacted to be compacted now.
    pub(super) fn compaction_due(&self, v: &View) -> bool {
        let threshold = self.cfg.profile.session_compression_threshold_tokens.value;
        v.session
            .as_ref()
            .is_some_and(|s| s.tokens.saturating_sub(v.state.compacted_tokens) >= threshold)
    }

    /// Whether [`Engine::after_write`] would do nothing for `v` at `now`:
    /// no zone or emergency change, no phase change, no trigger due, no
    /// compaction. A history's turns between two such actions can go in
    /// as one write.
    pub(super) fn quiet_after(
        &self,
        v: &View,
        phase: Option<crate::memory::Phase>,
        since: u64,
        now: Timestamp,
    ) -> bool {
        let w = &self.cfg.window;
        let used = v.used();
        let (wevents, zone, emergency) = zone_events(w, &v.state, used);
        wevents.is_empty()
            && zone == v.state.zone
            && emergency == v.state.emergency
            && !w.is_emergency(used)
            && phase.is_none_or(|p| v.state.phase == Some(p))
            && self.interval_due(v, since, now).is_none()
            && !self.compaction_due(v)
    }
}

pub(super) fn push_checkpoint(
    cp: Checkpoint,
    events: &mut Vec<EngineEvent>,
    cps: &mut Vec<Checkpoint>,
) {
    events.push(EngineEvent::CheckpointCreated {
        id: cp.id.clone(),
        trigger: cp.trigger.clone(),
    });
    cps.push(cp);
}

pub(super) fn window_event(e: WindowEvent) -> EngineEvent {
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
