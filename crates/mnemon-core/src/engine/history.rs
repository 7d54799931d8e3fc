//! A history's turns stored many to a commit (`mnemon import`).
//!
//! Turn by turn, each message is one transaction followed by the engine's
//! look at what it changed; a 20,000-turn history then pays 20,000 commits
//! for a few hundred actions. Here the turns between two actions go in as
//! one write: the engine predicts, from the window's accounting alone,
//! where the next action (a zone change, a trigger, a refresh, a
//! compaction) falls, stores every turn up to and including the one that
//! sets it off, and acts then, exactly as it would have after that turn.
//! The prediction is [`Engine::quiet_after`], the same test
//! [`Engine::after_write`] starts with, so the two cannot disagree.

use super::{Engine, EngineError, EngineStore, Outcome, View};
use crate::memory::{Message, NewMessage, StoreResult, Timestamp};

/// A turn of a history and when it was said.
#[derive(Debug, Clone, PartialEq)]
pub struct DatedMessage {
    pub message: NewMessage,
    pub at: Timestamp,
}

impl<S: EngineStore + ?Sized> Engine<S> {
    /// How many of `turns`, from the first, [`Engine::messages_at`] would
    /// store in one write now: the turns up to and including the first
    /// after which the engine acts. Zero when the first turn needs the
    /// engine before it is written (a new session's epoch, a refresh to
    /// make room, or a turn too large for the window): store that one
    /// with [`Engine::message`].
    ///
    /// The caller sets the clock to the last of them before writing, so
    /// whatever the engine does after the batch happens at the time it
    /// would have after that turn.
    pub fn quiet_run(&self, turns: &[DatedMessage]) -> Result<usize, EngineError> {
        let v = self.view()?;
        Ok(self.quiet_run_of(&v, turns)?.len())
    }

    /// The tokens of each turn of the run, so the write counts none again.
    fn quiet_run_of(&self, v: &View, turns: &[DatedMessage]) -> StoreResult<Vec<u64>> {
        let mut run = Vec::new();
        // A session the epoch does not belong to needs an epoch first.
        if v.epoch_session().is_none() {
            return Ok(run);
        }
        let w = &self.cfg.window;
        let since = self.operations_since_checkpoint(v)?;
        let mut after = v.clone();
        for t in turns {
            let tokens = self.memory.message_tokens(&t.message);
            let alone = v.calibration.apply(tokens);
            // What `accept` checks before a write: such a turn needs the
            // engine first.
            if w.is_emergency(alone) || w.is_emergency(after.used() + alone) {
                break;
            }
            after.totals.msg_tokens += tokens;
            after.totals.msg_count += 1;
            if let Some(s) = after.session.as_mut() {
                s.tokens += tokens;
            }
            run.push(tokens);
            if !self.quiet_after(&after, None, since, t.at) {
                break;
            }
        }
        Ok(run)
    }

    /// Stores the first [`Engine::quiet_run`] of `turns` in one commit,
    /// each at its own time, then acts as the engine would have after the
    /// last of them. Answers with the turns stored, which may be fewer than
    /// given (none when the first needs [`Engine::message`]) if another
    /// writer moved the window since `quiet_run`.
    pub fn messages_at(
        &self,
        turns: &[DatedMessage],
    ) -> Result<Outcome<Vec<Message>>, EngineError> {
        let _g = self.lock();
        let v = self.view()?;
        let run = self.quiet_run_of(&v, turns)?;
        if run.is_empty() {
            return self.outcome_of(v, Vec::new(), Vec::new(), Vec::new());
        }
        // Counted once, in the run: the stored text is the text counted.
        let batch = turns
            .iter()
            .zip(run)
            .map(|(t, tokens)| {
                let message = NewMessage {
                    tokens: Some(tokens),
                    ..t.message.clone()
                };
                (message, t.at)
            })
            .collect();
        let value = self.memory.messages_at(batch)?;
        self.acted_on(value, None, Vec::new(), Vec::new())
    }
}
