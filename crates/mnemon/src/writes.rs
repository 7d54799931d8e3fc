//! The verbs that change memory. Each goes through the agent's engine (so
//! it is accounted for in the window, guarded by the 95 % line and may
//! trigger zone actions), then renders what it changed. Once the store has
//! committed, nothing can turn the call into an error: a view that could
//! not be written becomes a warning on the result.

use mnemon_core::engine::{Checkpoint, EngineEvent, EngineStatus, Outcome, SessionReport};
use mnemon_core::memory::{
    DecisionRecord, DecisionStatus, Entity, EntityChange, HotItem, HotItemChange, HotKind, Message,
    NewDecision, NewEntity, NewMessage, NewOperation, Operation, Priority, RestoredSession,
    Session,
};
use serde::Serialize;
use std::sync::Arc;

use crate::background::ProjectEvent;
use crate::render::{Touched, render_with};

use crate::error::{Error, Result};
use crate::{Mnemon, ProjectEngine};

/// What a write stored, what the engine did on its own because of it, the
/// window after it, and anything that went wrong after the commit.
#[derive(Debug, Clone, Serialize)]
pub struct Written<T> {
    /// What was stored.
    pub value: T,
    /// What the engine did on its own because of the write.
    pub events: Vec<EngineEvent>,
    /// The agent's window after the write.
    pub status: EngineStatus,
    /// Problems after the commit (a view not rendered, say). The write
    /// itself is durable; `mnemon export` renders every view again.
    pub warnings: Vec<String>,
}

impl<T: Serialize> Written<T> {
    /// The stored value's fields with `events`, `window`, `epoch` and
    /// `warnings` beside them: what `mnemon record --json` prints and the
    /// HTTP API answers. A value that is not an object sits under `value`.
    pub fn to_json(&self) -> serde_json::Result<serde_json::Value> {
        let mut v = serde_json::to_value(&self.value)?;
        if !v.is_object() {
            v = serde_json::json!({ "value": v });
        }
        if let Some(obj) = v.as_object_mut() {
            obj.insert("events".into(), serde_json::to_value(&self.events)?);
            obj.insert("window".into(), serde_json::to_value(&self.status.window)?);
            obj.insert("epoch".into(), self.status.epoch.into());
            obj.insert("warnings".into(), serde_json::to_value(&self.warnings)?);
        }
        Ok(v)
    }
}

impl<T> Written<T> {
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Written<U> {
        Written {
            value: f(self.value),
            events: self.events,
            status: self.status,
            warnings: self.warnings,
        }
    }
}

/// How a session ended.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "ended", rename_all = "snake_case")]
pub enum SessionEnd {
    /// The agent's own active session: checkpoint, summary, archive,
    /// episodic documents, a fresh epoch.
    Summarized {
        /// The structured summary written into the session.
        report: SessionReport,
    },
    /// Another agent's session, or one that was not active: marked ended.
    Marked {
        /// The session as it is now.
        session: Session,
    },
}

impl Mnemon {
    /// Renders what a committed write changed; every failure is a warning.
    pub(crate) fn settle<T>(
        &self,
        e: &Arc<ProjectEngine>,
        out: Outcome<T>,
        mut touched: Touched,
    ) -> Written<T> {
        touched.checkpoints.extend(out.checkpoints);
        let warnings = self.after_write(e, &out.events, Some(&out.status), touched);
        Written {
            value: out.value,
            events: out.events,
            status: out.status,
            warnings,
        }
    }

    /// What follows every committed write: subscribers hear of it, and its
    /// views are rendered (now, or by the background worker).
    pub(crate) fn after_write(
        &self,
        e: &Arc<ProjectEngine>,
        events: &[EngineEvent],
        status: Option<&EngineStatus>,
        touched: Touched,
    ) -> Vec<String> {
        if self.inner.events.listened() {
            let status = match status {
                Some(s) => Some(s.clone()),
                None => e.status().ok(),
            };
            if let Some(status) = status {
                self.inner.events.publish(ProjectEvent {
                    agent: e.memory().agent().to_string(),
                    events: events.to_vec(),
                    status,
                });
            }
        }
        let Some(views) = self.views() else {
            return Vec::new();
        };
        let keep = self.keep_versions();
        match self.inner.renderer.as_ref() {
            None => render_with(views, keep, e.memory(), events, touched),
            Some(r) => match r.queue(Arc::clone(e), events.to_vec(), touched) {
                Ok(()) => Vec::new(),
                Err((events, touched)) => render_with(views, keep, e.memory(), &events, touched),
            },
        }
    }

    /// Settles a write that appended to the log.
    pub(crate) fn written<T>(&self, e: &Arc<ProjectEngine>, out: Outcome<T>) -> Written<T> {
        self.settle(e, out, Touched::logged())
    }

    /// Records an operation in the agent's live context. Durable on return.
    pub fn record(&self, op: NewOperation) -> Result<Written<Operation>> {
        let e = self.engine()?;
        let op = NewOperation {
            agent: op.agent.or_else(|| self.agent.clone()),
            ..op
        };
        let out = e.record(op)?;
        Ok(self.written(&e, out))
    }

    /// Records a turn of the conversation.
    pub fn message(&self, msg: NewMessage) -> Result<Written<Message>> {
        if msg.content.trim().is_empty() {
            return Err(Error::Input(
                "the message is empty; give its text as an argument or on standard input".into(),
            ));
        }
        let e = self.engine()?;
        let msg = NewMessage {
            agent: msg.agent.or_else(|| self.agent.clone()),
            ..msg
        };
        let out = e.message(msg)?;
        Ok(self.written(&e, out))
    }

    /// Stores a message in its session's history without it entering the
    /// live window: listed and found by search, never sent as a recent
    /// turn nor counted in the window. For a turn no context could hold
    /// (`message` refuses it as too large), as `import` keeps one.
    pub fn archive_message(&self, msg: NewMessage) -> Result<Message> {
        let e = self.engine()?;
        let msg = NewMessage {
            agent: msg.agent.or_else(|| self.agent.clone()),
            ..msg
        };
        Ok(e.memory().message(msg)?)
    }

    /// Adds a goal, constraint, note or key decision to the hot context.
    pub fn add_hot(
        &self,
        kind: HotKind,
        text: &str,
        priority: Option<Priority>,
        parent: Option<&str>,
    ) -> Result<Written<HotItem>> {
        let e = self.engine()?;
        let out = e.add_hot(kind, text, None, priority, parent)?;
        Ok(self.written(&e, out))
    }

    /// Changes a hot item. With `version`, the change applies only if the
    /// item is still at it (else a conflict carrying the current item);
    /// without, it applies to the current version.
    pub fn update_hot(
        &self,
        id: &str,
        version: Option<u64>,
        change: HotItemChange,
    ) -> Result<Written<HotItem>> {
        let e = self.engine()?;
        let version = match version {
            Some(v) => v,
            None => e.memory().store().hot_item(id)?.version,
        };
        let out = e.update_hot(id, version, change)?;
        Ok(self.written(&e, out))
    }

    /// Records a decision: its ADR file, a pinned operation, a hot item.
    pub fn decide(&self, d: &NewDecision) -> Result<Written<DecisionRecord>> {
        let e = self.engine()?;
        let out = e.decide(d)?;
        let touched = Touched::logged().with_decisions(vec![out.value.clone()]);
        Ok(self.settle(&e, out, touched))
    }

    /// Replaces decision `old`; returns the old and the new record.
    pub fn supersede(
        &self,
        old: &str,
        d: &NewDecision,
    ) -> Result<Written<(DecisionRecord, DecisionRecord)>> {
        let e = self.engine()?;
        let out = e.supersede(old, d)?;
        let touched =
            Touched::logged().with_decisions(vec![out.value.0.clone(), out.value.1.clone()]);
        Ok(self.settle(&e, out, touched))
    }

    /// Moves a decision along its lifecycle. Superseding needs the new
    /// decision: use [`Mnemon::supersede`].
    pub fn set_decision_status(
        &self,
        id: &str,
        status: DecisionStatus,
    ) -> Result<Written<DecisionRecord>> {
        if status == DecisionStatus::Superseded {
            return Err(Error::Input(format!(
                "use `mnemon decision supersede {id} ...` to name the decision that replaces it"
            )));
        }
        let e = self.engine()?;
        let out = e.set_decision_status(id, status)?;
        let touched = Touched::rendered().with_decisions(vec![out.value.clone()]);
        Ok(self.settle(&e, out, touched))
    }

    /// Creates a milestone, epic, story or task under an allowed parent; it takes the project's next number.
    pub fn create_entity(&self, new: &NewEntity) -> Result<Written<Entity>> {
        let e = self.engine()?;
        let out = e.create_entity(new)?;
        Ok(self.written(&e, out))
    }

    /// Changes an entity's title, description, priority or status.
    pub fn update_entity(&self, number: u64, change: &EntityChange) -> Result<Written<Entity>> {
        let e = self.engine()?;
        let out = e.update_entity(number, change)?;
        Ok(self.written(&e, out))
    }

    /// Deletes an entity with no live children; its number stays taken.
    pub fn delete_entity(&self, number: u64) -> Result<Written<Entity>> {
        let e = self.engine()?;
        let out = e.delete_entity(number)?;
        Ok(self.written(&e, out))
    }

    /// Starts a session for this handle's agent, ending its current one.
    pub fn start_session(&self, title: Option<&str>) -> Result<Written<Session>> {
        let e = self.engine()?;
        let m = e.memory();
        let previous = m.store().active_session(m.agent())?;
        let out = e.start_session(title)?;
        let mut sessions: Vec<String> = previous.into_iter().map(|p| p.id).collect();
        sessions.push(out.value.id.clone());
        let touched = Touched::rendered().with_sessions(sessions);
        Ok(self.settle(&e, out, touched))
    }

    /// Ends a session. The agent's own active one (`id` of `None`, or its
    /// id) is summarized, archived and checkpointed; any other is marked
    /// ended.
    pub fn end_session(&self, id: Option<&str>) -> Result<Written<SessionEnd>> {
        let e = self.engine()?;
        let m = e.memory();
        let active = m.store().active_session(m.agent())?;
        let own = match (id, &active) {
            (None, _) => true,
            (Some(id), Some(a)) => m.store().session(id)?.id == a.id,
            (Some(_), None) => false,
        };
        if own {
            let out = e.end_session()?;
            let touched = Touched::rendered().with_sessions(vec![out.value.session_id.clone()]);
            let w = self.settle(&e, out, touched);
            return Ok(w.map(|report| SessionEnd::Summarized { report }));
        }
        let out = e.mark_session_ended(id)?;
        let touched = Touched::rendered().with_sessions(vec![out.value.id.clone()]);
        let w = self.settle(&e, out, touched);
        Ok(w.map(|session| SessionEnd::Marked { session }))
    }

    /// Archives a session as a fragment that can be restored later.
    pub fn archive_session(
        &self,
        id: Option<&str>,
        title: Option<&str>,
    ) -> Result<Written<Session>> {
        let e = self.engine()?;
        let out = e.archive_session(id, title)?;
        let touched = Touched::rendered().with_sessions(vec![out.value.id.clone()]);
        Ok(self.settle(&e, out, touched))
    }

    /// Makes a session the agent's active one again: hot context, the last
    /// ten messages and the summary come back.
    pub fn restore_session(&self, id: &str) -> Result<Written<RestoredSession>> {
        let e = self.engine()?;
        let m = e.memory();
        let previous = m.store().active_session(m.agent())?;
        let out = e.restore_session(id)?;
        let sessions = previous
            .into_iter()
            .map(|p| p.id)
            .filter(|p| *p != out.value.session.id)
            .collect();
        let touched = Touched::rendered().with_sessions(sessions);
        Ok(self.settle(&e, out, touched))
    }

    /// A checkpoint now, in ADR-018's format, written to `checkpoints/`.
    pub fn checkpoint(&self, trigger: &str) -> Result<Written<Checkpoint>> {
        let e = self.engine()?;
        let cp = e.checkpoint(trigger)?;
        let out = Outcome {
            status: e.status()?,
            events: vec![EngineEvent::CheckpointCreated {
                id: cp.id.clone(),
                trigger: cp.trigger.clone(),
            }],
            checkpoints: vec![cp.clone()],
            value: cp,
        };
        Ok(self.settle(&e, out, Touched::default()))
    }

    /// Checkpoint, working memory into the session summary, a new epoch.
    /// With `[llm]` configured, the summary is the LLM's (made outside the
    /// engine's lock, extractive on any failure).
    pub fn refresh(&self) -> Result<Written<()>> {
        self.refresh_with(true)
    }

    /// A refresh by the LLM summarizer only when `llm` is set and one is
    /// configured; extractive otherwise.
    pub fn refresh_with(&self, llm: bool) -> Result<Written<()>> {
        if llm && let Some(out) = self.refresh_by_llm() {
            return out;
        }
        let e = self.engine()?;
        let out = e.refresh("manual")?;
        Ok(self.written(&e, out))
    }

    /// Compresses the session log (pinned items verbatim); a dry run
    /// changes nothing and shows the audit.
    pub fn compact(&self, dry_run: bool) -> Result<Written<mnemon_core::engine::Compaction>> {
        let e = self.engine()?;
        let c = e.compact(dry_run)?;
        let out = Outcome {
            status: e.status()?,
            events: Vec::new(),
            checkpoints: Vec::new(),
            value: c,
        };
        let touched = Touched {
            views: !dry_run,
            ..Touched::default()
        };
        Ok(self.settle(&e, out, touched))
    }

    /// Design v2's five techniques on the live context.
    pub fn optimize(&self, dry_run: bool) -> Result<Written<mnemon_core::engine::OptimizeReport>> {
        let e = self.engine()?;
        let out = e.optimize(dry_run)?;
        // The engine's `Optimized` event names the artifacts; `render`
        // writes them with the views.
        let touched = if dry_run {
            Touched::default()
        } else {
            Touched::rendered()
        };
        Ok(self.settle(&e, out, touched))
    }

    /// The provider's prompt-token count becomes the usage and calibrates
    /// later estimates for this model.
    pub fn report_usage(&self, prompt_tokens: u64) -> Result<EngineStatus> {
        Ok(self.engine()?.report_usage(prompt_tokens)?)
    }

    /// Restores working memory, hot context, session and window state from
    /// a checkpoint: its file when there is one (so a damaged or edited
    /// file is refused), else the database's copy.
    pub fn resume(&self, id_or_path: &str) -> Result<Written<mnemon_core::engine::Resumed>> {
        Ok(self.resume_from(id_or_path)?.0)
    }

    /// [`Mnemon::resume`], with the checkpoint it resumed from (its resume
    /// instructions: next task, blockers, warnings), read once.
    pub fn resume_from(
        &self,
        id_or_path: &str,
    ) -> Result<(Written<mnemon_core::engine::Resumed>, Checkpoint)> {
        let e = self.engine()?;
        let source = self.checkpoint_source(id_or_path)?;
        let cp = Checkpoint::from_json(&source.json, &source.name)?;
        let r = e.resume(&cp)?;
        let out = Outcome {
            status: e.status()?,
            events: Vec::new(),
            checkpoints: Vec::new(),
            value: r,
        };
        Ok((self.settle(&e, out, Touched::rendered()), cp))
    }
}
