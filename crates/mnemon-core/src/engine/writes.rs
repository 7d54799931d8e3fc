//! Every write that is not an operation or a message: hot context,
//! decisions, entities and sessions. They go through the engine like
//! `record` does, so each is accounted for in the window, refused at the
//! 95 % line when it would cross it, and can trigger zone actions; none
//! can slip past the engine by calling [`Memory`] directly.

use super::{Engine, EngineError, EngineEvent, EngineStore, Outcome, retry_conflicts};
use crate::memory::{
    DecisionRecord, DecisionStatus, Entity, EntityChange, HotItem, HotItemChange, HotKind, Memory,
    NewDecision, NewEntity, Priority, RestoredSession, Session, StoreResult,
};

/// Framing that the log line of a change adds to its text (the operation's
/// type and JSON keys), so the 95 % guard does not under-count small items.
const LOG_LINE_OVERHEAD: u64 = 24;

impl<S: EngineStore + ?Sized> Engine<S> {
    /// Runs `write` as a record does: a refresh first if `tokens` more
    /// would reach the 95 % line, a refusal if they do not fit even then,
    /// and zone actions and checkpoint triggers after the commit. For
    /// writes of one's own through [`Memory`]; `tokens` is what the write
    /// will add to the live context.
    pub fn write<T>(
        &self,
        tokens: u64,
        write: impl FnOnce(&Memory<S>) -> StoreResult<T>,
    ) -> Result<Outcome<T>, EngineError> {
        self.accept(tokens, None, write)
    }

    /// The texts a write stores, plus the framing of its one log line.
    fn estimate(&self, texts: &[&str]) -> u64 {
        let counter = self.memory.counter();
        LOG_LINE_OVERHEAD + texts.iter().map(|t| counter.count(t) as u64).sum::<u64>()
    }

    /// The most tokens one item that every context includes (a goal, a
    /// constraint, a remembered fact, a decision's entry) may take: 1/32 of
    /// the effective window, between 256 and 4,096. Larger items would
    /// leave too little of a small budget for anything else, and a few of
    /// them would make every context fail to assemble.
    pub fn item_limit(&self) -> u64 {
        (self.cfg.window.effective_max() / 32).clamp(256, 4_096)
    }

    /// Refuses, before anything is stored, an always-included item over
    /// `limit` tokens.
    fn check_item(
        &self,
        what: &'static str,
        texts: &[&str],
        limit: u64,
    ) -> Result<(), EngineError> {
        let counter = self.memory.counter();
        let tokens: u64 = texts.iter().map(|t| counter.count(t) as u64).sum();
        if tokens > limit {
            return Err(EngineError::ItemTooLarge {
                what,
                tokens,
                limit,
                effective_max: self.cfg.window.effective_max(),
            });
        }
        Ok(())
    }

    /// The most tokens the live hot context may hold in all: a quarter of
    /// the effective window, so that a context with every always-included
    /// item can be assembled within the window with room to spare.
    pub fn hot_limit(&self) -> u64 {
        self.cfg.window.effective_max() / 4
    }

    /// Refuses an addition that would take the hot context past
    /// [`Engine::hot_limit`].
    fn check_hot_total(&self, texts: &[&str]) -> Result<(), EngineError> {
        self.check_hot_total_replacing(None, texts)
    }

    /// As [`Engine::check_hot_total`], with the item `replacing` (one being
    /// edited) counted at its new size instead of its current one, so that
    /// an edit cannot grow the hot context past its limit either.
    fn check_hot_total_replacing(
        &self,
        replacing: Option<&str>,
        texts: &[&str],
    ) -> Result<(), EngineError> {
        let counter = self.memory.counter();
        let held: u64 = self
            .memory
            .hot()?
            .items
            .iter()
            .filter(|i| Some(i.id.as_str()) != replacing)
            .map(|i| {
                counter.count(&i.text) as u64
                    + i.detail.as_deref().map_or(0, |d| counter.count(d) as u64)
            })
            .sum();
        let adding: u64 = texts.iter().map(|t| counter.count(t) as u64).sum();
        let limit = self.hot_limit();
        if held + adding > limit {
            return Err(EngineError::Invalid(format!(
                "the hot context holds {held} tokens of the {limit} it may take (a quarter of the {}-token window) and this item needs {adding}: complete goals, remove items no longer needed (`mnemon goal complete`, `mnemon hot`), or keep this text as a record instead",
                self.cfg.window.effective_max()
            )));
        }
        Ok(())
    }

    /// A decision's hot entry (its decision and rationale) is always
    /// included; the whole record rides in a pinned operation, so it may
    /// take four items' worth.
    fn check_decision(&self, d: &NewDecision) -> Result<(), EngineError> {
        let rationale = d
            .consequences
            .positive
            .first()
            .map_or(d.context.as_str(), String::as_str);
        self.check_item("decision", &[&d.decision, rationale], self.item_limit())?;
        self.check_hot_total(&[&d.decision, rationale])?;
        let whole = serde_json::to_string(d).unwrap_or_default();
        self.check_item("decision record", &[&whole], 4 * self.item_limit())
    }

    /// Adds a goal, constraint, note or decision to the hot context.
    pub fn add_hot(
        &self,
        kind: HotKind,
        text: &str,
        detail: Option<&str>,
        priority: Option<Priority>,
        parent: Option<&str>,
    ) -> Result<Outcome<HotItem>, EngineError> {
        self.check_item(
            kind.name(),
            &[text, detail.unwrap_or_default()],
            self.item_limit(),
        )?;
        self.check_hot_total(&[text, detail.unwrap_or_default()])?;
        let tokens = self.estimate(&[text, detail.unwrap_or_default()]);
        self.write(tokens, |m| m.add_hot(kind, text, detail, priority, parent))
    }

    /// Changes an item read at `version`; a stale version is refused with
    /// the current item ([`crate::memory::StoreError::Conflict`]).
    pub fn update_hot(
        &self,
        id: &str,
        version: u64,
        change: HotItemChange,
    ) -> Result<Outcome<HotItem>, EngineError> {
        if change.text.is_some() || change.detail.is_some() {
            let hot = self.memory.hot()?;
            let current = hot.items.iter().find(|i| i.id == id);
            let text = change
                .text
                .as_deref()
                .or(current.map(|i| i.text.as_str()))
                .unwrap_or_default();
            let detail = change
                .detail
                .as_deref()
                .or(current.and_then(|i| i.detail.as_deref()))
                .unwrap_or_default();
            self.check_item("item", &[text, detail], self.item_limit())?;
            if current.is_some() {
                self.check_hot_total_replacing(Some(id), &[text, detail])?;
            }
        }
        let tokens = self.estimate(&[change.text.as_deref().unwrap_or_default()]);
        self.write(tokens, |m| m.update_hot(id, version, change))
    }

    /// Records a decision: its ADR, a pinned operation and a hot item.
    pub fn decide(&self, d: &NewDecision) -> Result<Outcome<DecisionRecord>, EngineError> {
        self.check_decision(d)?;
        let tokens = self.decision_tokens(d);
        self.write(tokens, |m| m.decide(d))
    }

    /// Replaces `old` with a new decision.
    pub fn supersede(
        &self,
        old: &str,
        d: &NewDecision,
    ) -> Result<Outcome<(DecisionRecord, DecisionRecord)>, EngineError> {
        self.check_decision(d)?;
        let tokens = self.decision_tokens(d);
        self.write(tokens, |m| m.supersede(old, d))
    }

    /// A decision enters the live context twice: its operation and its hot item.
    fn decision_tokens(&self, d: &NewDecision) -> u64 {
        2 * self.estimate(&[&d.title, &d.decision, &d.context])
    }

    pub fn set_decision_status(
        &self,
        id: &str,
        status: DecisionStatus,
    ) -> Result<Outcome<DecisionRecord>, EngineError> {
        self.write(LOG_LINE_OVERHEAD, |m| m.set_decision_status(id, status))
    }

    pub fn create_entity(&self, e: &NewEntity) -> Result<Outcome<Entity>, EngineError> {
        let tokens = self.estimate(&[&e.title, e.description.as_deref().unwrap_or_default()]);
        self.write(tokens, |m| m.create_entity(e))
    }

    pub fn update_entity(
        &self,
        number: u64,
        change: &EntityChange,
    ) -> Result<Outcome<Entity>, EngineError> {
        let tokens = self.estimate(&[change.title.as_deref().unwrap_or_default()]);
        self.write(tokens, |m| m.update_entity(number, change))
    }

    pub fn delete_entity(&self, number: u64) -> Result<Outcome<Entity>, EngineError> {
        self.write(LOG_LINE_OVERHEAD, |m| m.delete_entity(number))
    }

    /// Starts a session (ending the agent's current one) and moves the
    /// window to it at once: a new session is a new epoch whose baseline is
    /// the memory it loads, so `status` right after tells the truth.
    pub fn start_session(&self, title: Option<&str>) -> Result<Outcome<Session>, EngineError> {
        self.session_write(|m| m.start_session(title))
    }

    /// Ends a session without the engine's summary and checkpoint: another
    /// agent's, or one that is not active. The agent's own active session
    /// ends with [`Engine::end_session`].
    pub fn mark_session_ended(&self, id: Option<&str>) -> Result<Outcome<Session>, EngineError> {
        self.session_write(|m| m.end_session(id))
    }

    pub fn archive_session(
        &self,
        id: Option<&str>,
        title: Option<&str>,
    ) -> Result<Outcome<Session>, EngineError> {
        self.session_write(|m| m.archive_session(id, title))
    }

    /// Makes `id` the agent's active session again; the window moves to it.
    pub fn restore_session(&self, id: &str) -> Result<Outcome<RestoredSession>, EngineError> {
        self.session_write(|m| m.restore_session(id))
    }

    /// A change of session, then the window moved to whichever session is
    /// now active (a fresh epoch for it), all under the write lock.
    fn session_write<T>(
        &self,
        write: impl FnOnce(&Memory<S>) -> StoreResult<T>,
    ) -> Result<Outcome<T>, EngineError> {
        let _g = self.lock();
        let value = write(&self.memory)?;
        let mut events = Vec::new();
        // The write is durable: a contest over the window that outlasts
        // the retries is left to the next write, never reported as a
        // failure of this one.
        let moved = retry_conflicts(self.runtime.as_ref(), || {
            let mut v = self.view()?;
            match v.session.clone() {
                Some(s) if v.state.session_id.as_deref() != Some(&s.id) => {
                    self.begin_session_epoch(&mut v, &s)?;
                    Ok(Some(s.id))
                }
                _ => Ok(None),
            }
        });
        match moved {
            Ok(Some(session_id)) => events.push(EngineEvent::SessionStarted { session_id }),
            Ok(None) | Err(EngineError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
        self.outcome(value, events, Vec::new())
    }
}
