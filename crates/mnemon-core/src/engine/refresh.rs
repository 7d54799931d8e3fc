//! A refresh: checkpoint, working memory into the session summary (by
//! the configured summarizer, made outside the engine's lock), episodic
//! documents updated, a new epoch.

use serde_json::json;

use super::actions::{msg_item, op_item, push_checkpoint, summary_items, window_event};
use super::checkpoint::Checkpoint;
use super::state::EngineState;
use super::store::{CompactionRecord, EngineCommit};
use super::{Engine, EngineError, EngineEvent, EngineStore, Outcome, View, zone_events};
use crate::compress::{SourceItem, Summarizer, compress_within};
use crate::memory::{Session, SessionChange};

impl<S: EngineStore + ?Sized> Engine<S> {
    /// Refreshes now: checkpoint, working memory into the session summary,
    /// episodic documents updated, a new epoch.
    pub fn refresh(&self, trigger: &str) -> Result<Outcome<()>, EngineError> {
        let _g = self.lock();
        let mut events = Vec::new();
        let mut checkpoints = Vec::new();
        super::retry_conflicts(self.runtime.as_ref(), || {
            self.refresh_locked(trigger, &mut events, &mut checkpoints)
        })?;
        self.outcome((), events, checkpoints)
    }

    /// Refreshes with a summarizer that may be slow (an LLM): it
    /// summarizes a snapshot of the epoch before the engine's lock is
    /// taken, then the refresh commits under the lock as usual. If writes
    /// landed meanwhile, or a race is retried, the prepared summary is
    /// reused for what it covers and only the newer items go through the
    /// extractive summarizer, so the slow summarizer runs exactly once and
    /// nothing written during its call is lost.
    pub fn refresh_with(
        &self,
        trigger: &str,
        summarizer: &dyn Summarizer,
    ) -> Result<Outcome<()>, EngineError> {
        let v = self.view()?;
        let prepared = match v.epoch_session().cloned() {
            Some(session) => {
                let items = self.refresh_items(&v, &session)?;
                let target = self.cfg.profile.session_summary_max_tokens.value;
                let summary = compress_within(summarizer, &items, target, self.memory.counter())?;
                Some(Prepared { items, summary })
            }
            None => None,
        };
        let _g = self.lock();
        let mut events = Vec::new();
        let mut checkpoints = Vec::new();
        super::retry_conflicts(self.runtime.as_ref(), || {
            self.refresh_from(trigger, prepared.as_ref(), &mut events, &mut checkpoints)
        })?;
        self.outcome((), events, checkpoints)
    }

    /// What a refresh compresses: the session summary so far, then the
    /// epoch's operations and live messages.
    fn refresh_items(&self, v: &View, session: &Session) -> Result<Vec<SourceItem>, EngineError> {
        let mut items = summary_items(session.summary.as_deref().unwrap_or(""));
        items.extend(self.epoch_operations(v)?.iter().map(op_item));
        for m in self.live_messages(v, usize::MAX)? {
            items.push(msg_item(&m));
        }
        Ok(items)
    }

    pub(crate) fn refresh_locked(
        &self,
        trigger: &str,
        events: &mut Vec<EngineEvent>,
        checkpoints: &mut Vec<Checkpoint>,
    ) -> Result<(), EngineError> {
        self.refresh_from(trigger, None, events, checkpoints)
    }

    fn refresh_from(
        &self,
        trigger: &str,
        prepared: Option<&Prepared>,
        events: &mut Vec<EngineEvent>,
        checkpoints: &mut Vec<Checkpoint>,
    ) -> Result<(), EngineError> {
        let mut v = self.view()?;
        if self.cfg.checkpoints.allows(trigger) {
            let cp = self.checkpoint_locked(&v, trigger)?;
            push_checkpoint(cp, events, checkpoints);
            v = self.view()?;
        }
        let Some(session) = v.epoch_session().cloned() else {
            return Ok(());
        };
        let before = v.used();
        let items = self.refresh_items(&v, &session)?;
        let target = self.cfg.profile.session_summary_max_tokens.value;
        let mut summary = match prepared {
            Some(p) => p.merge(
                &items,
                target,
                self.summarizer.as_ref(),
                self.memory.counter(),
            )?,
            None => compress_within(
                self.summarizer.as_ref(),
                &items,
                target,
                self.memory.counter(),
            )?,
        };
        let docs = self.memory.render_documents()?.to_vec();
        let mut ctx = self.epoch_context(Some(&summary.text), &docs, &[], &[])?;
        // A refresh exists to make room: it never leaves the window fuller
        // than it found it. On a small epoch the summary's tags and the
        // documents it updates can outweigh what they replace; the summary
        // is then made again from the same records, by the engine's own
        // summarizer, into what is left (down to nothing but the notice of
        // what it holds elsewhere), so its audit speaks of the records.
        let mut room = summary.tokens;
        while v.calibration.apply(ctx.tokens) > before && room > 0 {
            let over = v.calibration.apply(ctx.tokens) - before;
            room = room.saturating_sub(over.max(1));
            summary = compress_within(
                self.summarizer.as_ref(),
                &items,
                room,
                self.memory.counter(),
            )?;
            ctx = self.epoch_context(Some(&summary.text), &docs, &[], &[])?;
        }
        let (op_head, msg_head) = self.store().log_heads()?;
        let after = v.calibration.apply(ctx.tokens);
        let state = EngineState {
            refreshes: v.state.refreshes + 1,
            ..v.state
                .next_epoch(ctx.tokens, (op_head, msg_head), &self.cfg.window, after)
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
            compaction: Some(CompactionRecord::of(
                &session.id,
                "refresh",
                self.now(),
                &summary,
                (op_head, msg_head),
            )),
            operation: Some(self.action_op(
                Some(&session.id),
                json!({"action": "refresh", "trigger": trigger, "tokens_before": before,
                       "tokens_after": after, "epoch": state.epoch}),
            )),
            ..EngineCommit::default()
        };
        let (wevents, _, _) = zone_events(&self.cfg.window, &v.state, after);
        self.commit_state(&v, state.clone(), commit)?;
        events.push(EngineEvent::Refreshed {
            trigger: trigger.to_string(),
            tokens_before: before,
            tokens_after: after,
            epoch: state.epoch,
            summarized: summary.audit.summarized.len(),
            kept_verbatim: summary.audit.kept_verbatim.len(),
            pinned_deferred: summary.audit.pinned_deferred.len(),
            summarized_by: summarized_by(&summary, self.summarizer.name()),
            fell_back: summary
                .audit
                .stages
                .iter()
                .filter_map(|s| s.fell_back.as_ref().map(|r| format!("{}: {r}", s.stage)))
                .collect(),
        });
        events.extend(wevents.into_iter().map(window_event));
        Ok(())
    }
}

/// A summary made outside the engine's lock, and what it was made from.
struct Prepared {
    items: Vec<SourceItem>,
    summary: crate::compress::Summary,
}

impl Prepared {
    /// The summary for `items`, the epoch as it is now: the prepared one
    /// when nothing changed; else its lines plus every item it does not
    /// cover, compressed by `fallback` (extractive), never by calling the
    /// slow summarizer again.
    fn merge(
        &self,
        items: &[SourceItem],
        target: u64,
        fallback: &dyn Summarizer,
        counter: &dyn crate::tokens::TokenCounter,
    ) -> Result<crate::compress::Summary, EngineError> {
        if items == self.items.as_slice() {
            return Ok(self.summary.clone());
        }
        let covered: std::collections::HashSet<&str> = self
            .items
            .iter()
            .flat_map(|i| i.sources.iter().map(String::as_str))
            .collect();
        let newer: Vec<&SourceItem> = items
            .iter()
            .filter(|i| !i.sources.iter().all(|s| covered.contains(s.as_str())))
            .collect();
        let mut merged: Vec<SourceItem> = self.summary.lines.iter().map(|l| l.to_item()).collect();
        merged.extend(newer.iter().map(|i| (*i).clone()));
        merged.sort_by_key(|i| i.order);
        let mut out = compress_within(fallback, &merged, target, counter)?;
        let mut stages = self.summary.audit.stages.clone();
        stages.push(crate::compress::Stage {
            stage: "merge".into(),
            by: fallback.name().to_string(),
            items: merged.len(),
            tokens_in: self.summary.tokens,
            tokens_out: out.tokens,
            fell_back: Some(format!(
                "{} items were written while the summary was made; they were added without calling the summarizer again",
                newer.len()
            )),
        });
        out.audit.stages = stages;
        Ok(out)
    }
}

/// The summarizers that wrote a summary's stages without falling back, or
/// `default` for a summary made in one go.
fn summarized_by(summary: &crate::compress::Summary, default: &str) -> String {
    let mut by: Vec<&str> = Vec::new();
    for s in &summary.audit.stages {
        if s.fell_back.is_none() && s.stage != "trim" && !by.contains(&s.by.as_str()) {
            by.push(&s.by);
        }
    }
    if by.is_empty() {
        if summary.audit.stages.is_empty() {
            default.to_string()
        } else {
            "extractive".to_string()
        }
    } else {
        by.join(", ")
    }
}
