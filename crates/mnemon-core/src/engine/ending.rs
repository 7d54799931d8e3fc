//! Session-log compaction, session end, and provider calibration.

use serde::Serialize;
use serde_json::json;

use super::actions::{msg_item, op_item, push_checkpoint, summary_items};
use super::live;
use super::state::EngineState;
use super::store::{CompactionRecord, EngineCommit};
use super::summary::SessionReport;
use super::{Engine, EngineError, EngineStore, Outcome, View};
use crate::compress::{self, Summary, compress_within};
use crate::memory::{
    DocKind, EntityKind, EntityQuery, EntityStatus, Page, SessionChange, SessionStatus,
};

/// What `compact` did or would do.
#[derive(Debug, Clone, Serialize)]
pub struct Compaction {
    pub session_id: String,
    pub dry_run: bool,
    pub summary: Summary,
}

impl<S: EngineStore + ?Sized> Engine<S> {
    /// Compresses the session log: everything the session recorded, to at
    /// most `session.compression_target_ratio` of its size (0.7 by
    /// default), pinned items kept whole while they fit in it. The
    /// originals stay in the store.
    pub fn compact(&self, dry_run: bool) -> Result<Compaction, EngineError> {
        let _g = self.lock();
        super::retry_conflicts(self.runtime.as_ref(), || {
            self.compact_locked(&self.view()?, dry_run)
        })
    }

    pub(super) fn compact_locked(
        &self,
        v: &View,
        dry_run: bool,
    ) -> Result<Compaction, EngineError> {
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
                summary_items(&r.summary),
                r.through_op_seq,
                r.through_msg_seq,
            ),
            None => (Vec::new(), 0, 0),
        };
        let (op_head, msg_head) = self.store().log_heads()?;
        let mut ops = self
            .store()
            .operations_after(&session.id, Page::all_after(op_from))?;
        ops.reverse();
        let mut msgs = self
            .store()
            .messages_after(&session.id, Page::all_after(msg_from))?;
        msgs.reverse();
        items.extend(ops.iter().map(op_item));
        items.extend(msgs.iter().map(msg_item));
        let counter = self.memory.counter();
        let input = compress::verbatim_tokens(&items, counter);
        // The configured share of the input
        // (`session.compression_target_ratio`), pinned items included:
        // they are kept whole, newest first, while they fit in it, and
        // those that do not stay in the log, named in the audit's
        // `pinned_deferred`. A compaction that kept every pinned item
        // whatever their size would not be one (0.77 of a log of
        // decisions).
        let target = (input as u128 * self.cfg.compression_ratio_ppm as u128 / 1_000_000) as u64;
        let summary = compress_within(self.summarizer.as_ref(), &items, target, counter)?;
        if !dry_run {
            let state = EngineState {
                compacted_tokens: session.tokens,
                ..v.state.clone()
            };
            let commit = EngineCommit {
                compaction: Some(CompactionRecord::of(
                    &session.id,
                    "session_log",
                    self.now(),
                    &summary,
                    (op_head, msg_head),
                )),
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

    /// The summary ending the session now would write, without ending it
    /// (`/context summary`); `None` with no active session.
    pub fn session_report(&self) -> Result<Option<SessionReport>, EngineError> {
        let v = self.view()?;
        match &v.session {
            Some(session) => Ok(Some(self.report_for(session)?)),
            None => Ok(None),
        }
    }

    fn report_for(&self, session: &crate::memory::Session) -> Result<SessionReport, EngineError> {
        let mut ops = self
            .store()
            .operations_after(&session.id, Page::all_after(0))?;
        ops.reverse();
        let decisions = self.store().decisions(Some(50))?;
        let entities = |kind, status, limit| {
            self.store().entities(&EntityQuery {
                kind: Some(kind),
                status: Some(status),
                limit: Some(limit),
                ..EntityQuery::default()
            })
        };
        // Tasks first; a project planned only down to stories still has
        // next steps.
        let mut next = Vec::new();
        for kind in [EntityKind::Task, EntityKind::Story] {
            next.extend(entities(kind, EntityStatus::InProgress, 3)?);
        }
        for kind in [EntityKind::Task, EntityKind::Story] {
            next.extend(entities(kind, EntityStatus::Pending, 3)?);
        }
        next.truncate(3);
        let blocked = self.store().entities(&EntityQuery {
            status: Some(EntityStatus::Blocked),
            limit: Some(5),
            ..EntityQuery::default()
        })?;
        let at = self.now();
        Ok(SessionReport::build(
            session, &ops, &decisions, &next, &blocked, at,
        ))
    }

    /// Ends the agent's session (design v1 `flush_session`): a `session_end`
    /// checkpoint, a structured summary built from the session's
    /// operations, the session archived, the episodic documents updated
    /// (old versions kept), and a fresh epoch with empty working memory.
    pub fn end_session(&self) -> Result<Outcome<SessionReport>, EngineError> {
        let _g = self.lock();
        super::retry_conflicts(self.runtime.as_ref(), || self.end_session_once())
    }

    fn end_session_once(&self) -> Result<Outcome<SessionReport>, EngineError> {
        let v = self.view()?;
        let Some(session) = v.session.clone() else {
            return Err(EngineError::Invalid(
                "there is no active session to end".into(),
            ));
        };
        let mut events = Vec::new();
        let mut checkpoints = Vec::new();
        let v = if self.cfg.checkpoints.session_end {
            let cp = self.checkpoint_locked(&v, "session_end")?;
            push_checkpoint(cp, &mut events, &mut checkpoints);
            self.view()?
        } else {
            v
        };
        let report = self.report_for(&session)?;
        let at = report.ended_at;
        let mut items = summary_items(session.summary.as_deref().unwrap_or(""));
        items.extend(
            self.store()
                .operations_after(&session.id, Page::all_after(v.state.op_seq))?
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
            .map(|(k, d)| (k, self.fit_document(d)))
            .collect();
        let ctx = self.epoch_context(None, &docs, &[], &[])?;
        let (op_head, msg_head) = self.store().log_heads()?;
        let used = v.calibration.apply(ctx.tokens);
        let state = EngineState {
            session_id: None,
            phase: None,
            compacted_tokens: 0,
            ..v.state
                .next_epoch(ctx.tokens, (op_head, msg_head), &self.cfg.window, used)
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
            compaction: Some(CompactionRecord::of(
                &session.id,
                "session_end",
                at,
                &narrative,
                (op_head, msg_head),
            )),
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
    pub(super) fn fit_document(&self, text: String) -> String {
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
        super::retry_conflicts(self.runtime.as_ref(), || {
            self.report_usage_once(prompt_tokens)
        })
    }

    fn report_usage_once(&self, prompt_tokens: u64) -> Result<super::EngineStatus, EngineError> {
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
