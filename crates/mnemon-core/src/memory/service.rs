//! `Memory`: the rules every write passes through before it reaches a
//! store. Tokens are counted, importance scored, critical items pinned, raw
//! reasoning stripped, and each record attached to the agent's session.

mod decisions;
mod documents;
mod entities;

use std::sync::Arc;

use serde_json::json;

use super::hot::{HotContext, HotItem, HotItemChange, HotItemDraft, HotKind, HotStatus, Priority};
use super::privacy::{strip_reasoning, strip_reasoning_fields};
use super::redact::Redactor;
use super::store::{Atomically, HotItemUpdate, SessionDraft, Store, StoreError, StoreResult};
use super::types::{
    Clock, Message, MessageDraft, MessageQuery, NewMessage, NewOperation, Operation,
    OperationDraft, OperationQuery, Session, SessionChange, SessionStatus, Timestamp,
};
use super::working::WorkingMemory;
use crate::importance::{Role, is_pinned_operation, score_message};
use crate::tokens::TokenCounter;

/// What restoring a session brings back (short-term-context seed §5).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RestoredSession {
    pub session: Session,
    pub hot_context: HotContext,
    /// The last ten messages, oldest first.
    pub recent_messages: Vec<Message>,
    pub summary: Option<String>,
}

pub struct Memory<S: ?Sized> {
    /// Shared, so that one backend may stand behind a trait object
    /// (`Memory<dyn Backend>`) as well as a concrete type.
    store: Arc<S>,
    counter: Arc<dyn TokenCounter>,
    clock: Arc<dyn Clock>,
    agent: String,
    working_limits: (usize, u64),
    redactor: Redactor,
    /// Kinds of secret removed since the engine last asked, for its notice.
    redacted: std::sync::Mutex<Vec<String>>,
}

impl<S: ?Sized> std::fmt::Debug for Memory<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("agent", &self.agent)
            .field("counter", &self.counter.name())
            .finish()
    }
}

const DEFAULT_AGENT: &str = "orchestrator";

impl<S: Store + ?Sized> Memory<S> {
    /// `working_limits` are the profile's working-memory operation count and tokens.
    pub fn new(
        store: impl Into<Arc<S>>,
        counter: Box<dyn TokenCounter>,
        clock: Arc<dyn Clock>,
        agent: Option<&str>,
        working_limits: (usize, u64),
    ) -> Self {
        Memory {
            store: store.into(),
            counter: Arc::from(counter),
            clock,
            agent: agent
                .filter(|a| !a.trim().is_empty())
                .unwrap_or(DEFAULT_AGENT)
                .to_string(),
            working_limits,
            redactor: Redactor::default(),
            redacted: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The same agent, counter, clock, limits and redaction over another
    /// store: a reader on a connection of its own (the server's view
    /// renderer) never waits for, nor holds up, the agent's writes.
    pub fn over<T: ?Sized>(&self, store: impl Into<Arc<T>>) -> Memory<T> {
        Memory {
            store: store.into(),
            counter: Arc::clone(&self.counter),
            clock: Arc::clone(&self.clock),
            agent: self.agent.clone(),
            working_limits: self.working_limits,
            redactor: self.redactor.clone(),
            redacted: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Secrets are redacted with `r` (built-in rules plus config's).
    pub fn with_redactor(mut self, r: Redactor) -> Self {
        self.redactor = r;
        self
    }

    /// The kinds of secret redacted since the last call (one per secret).
    pub fn take_redactions(&self) -> Vec<String> {
        std::mem::take(&mut *self.redacted.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Text as it may be stored: reasoning blocks cut, secrets redacted.
    /// `note` records what was redacted for the write's notice; counting
    /// tokens ahead of a write does not.
    /// `text` as a write would store it (reasoning blocks removed, secrets
    /// redacted): what an import compares against to find a turn it
    /// already stored.
    pub fn stored_text(&self, text: &str) -> String {
        self.clean_text(text, false)
    }

    fn clean_text(&self, text: &str, note: bool) -> String {
        let (out, found) = self.redactor.redact(&strip_reasoning(text));
        if note && !found.is_empty() {
            self.redacted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(found);
        }
        out
    }

    /// Data as it may be stored: reasoning fields dropped, secrets redacted.
    fn clean_data(&self, data: &serde_json::Value, note: bool) -> serde_json::Value {
        let (data, _) = strip_reasoning_fields(data);
        let (data, found) = self.redactor.redact_json(&data);
        if note && !found.is_empty() {
            self.redacted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(found);
        }
        data
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn agent(&self) -> &str {
        &self.agent
    }

    pub fn counter(&self) -> &dyn TokenCounter {
        self.counter.as_ref()
    }

    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    /// The profile's working-memory operation count and tokens.
    pub fn working_limits(&self) -> (usize, u64) {
        self.working_limits
    }

    /// The agent's active session, started if there is none.
    pub fn current_session(&self) -> StoreResult<Session> {
        // The plain read first: a write transaction on every call would
        // serialize all readers of the session behind the writers.
        match self.store.active_session(&self.agent)? {
            Some(s) => Ok(s),
            None => self
                .store
                .active_or_new_session(&self.agent, self.clock.now()),
        }
    }

    /// The tokens [`Memory::record`] will store for `new`: the caller's
    /// count if given, else the operation's type and text counted exactly.
    pub fn operation_tokens(&self, new: &NewOperation) -> u64 {
        new.tokens.unwrap_or_else(|| {
            let data = self.clean_data(&new.data, false);
            self.counter
                .count(&format!("{} {}", new.kind.trim(), data_text(&data))) as u64
        })
    }

    /// The tokens [`Memory::message`] will store for `new`.
    pub fn message_tokens(&self, new: &NewMessage) -> u64 {
        new.tokens
            .unwrap_or_else(|| self.counter.count(&self.clean_text(&new.content, false)) as u64)
    }

    pub fn record(&self, new: NewOperation) -> StoreResult<Operation> {
        let kind = new.kind.trim();
        if kind.is_empty() {
            return Err(StoreError::Invalid(
                "an operation needs a type, such as nl_command or task_execution".into(),
            ));
        }
        let data = self.clean_data(&new.data, true);
        let text = data_text(&data);
        let tokens = self.operation_tokens(&new);
        // Commands come from a person; everything else is the agent's doing.
        let role = if kind == "nl_command" {
            Role::User
        } else {
            Role::Assistant
        };
        let pinned = is_pinned_operation(kind, new.status.as_deref(), &data);
        let mut importance = score_message(role, &text);
        if pinned {
            importance = importance.max(0.9);
        }
        let session = self.current_session()?;
        self.store.append_operation(&OperationDraft {
            session_id: Some(session.id),
            agent: new.agent.unwrap_or_else(|| self.agent.clone()),
            kind: kind.to_string(),
            data,
            tokens,
            phase: new.phase,
            status: new.status,
            importance,
            pinned,
            created_at: self.clock.now(),
        })
    }

    pub fn message(&self, new: NewMessage) -> StoreResult<Message> {
        let session = self.current_session()?;
        let draft = self.message_draft(new, &session.id, self.clock.now())?;
        self.store.append_message(&draft)
    }

    /// Stores turns said at the times given, in order, in one commit.
    pub fn messages_at(&self, turns: Vec<(NewMessage, Timestamp)>) -> StoreResult<Vec<Message>> {
        let session = self.current_session()?;
        let drafts = turns
            .into_iter()
            .map(|(new, at)| self.message_draft(new, &session.id, at))
            .collect::<Result<Vec<_>, _>>()?;
        self.store.append_messages(&drafts)
    }

    /// A turn as it is stored: reasoning removed, secrets redacted (and
    /// noted), counted and scored, in the agent's current session.
    fn message_draft(
        &self,
        new: NewMessage,
        session: &str,
        at: Timestamp,
    ) -> StoreResult<MessageDraft> {
        let content = self.clean_text(&new.content, true);
        if content.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a message needs content (after removing any <think> blocks)".into(),
            ));
        }
        let tokens = new
            .tokens
            .unwrap_or_else(|| self.counter.count(&content) as u64);
        let importance = score_message(new.role, &content);
        Ok(MessageDraft {
            session_id: Some(session.to_string()),
            role: new.role,
            agent: new.agent.unwrap_or_else(|| self.agent.clone()),
            // Asking to be remembered pins a message as it pins an operation.
            pinned: importance >= 1.0 && crate::importance::Signals::of(&content).remember,
            content,
            tokens,
            importance,
            created_at: at,
        })
    }

    pub fn recent(&self, q: &OperationQuery) -> StoreResult<Vec<Operation>> {
        self.store.operations(q)
    }

    pub fn recent_messages(&self, q: &MessageQuery) -> StoreResult<Vec<Message>> {
        self.store.messages(q)
    }

    /// Tier 1, rebuilt from the current session's log.
    pub fn working_memory(&self) -> StoreResult<WorkingMemory> {
        let (max_ops, max_tokens) = self.working_limits;
        let session = self.store.active_session(&self.agent)?;
        let recent = match session {
            Some(s) => self.store.operations(&OperationQuery {
                session_id: Some(s.id),
                limit: Some(max_ops),
                ..OperationQuery::default()
            })?,
            None => Vec::new(),
        };
        Ok(WorkingMemory::rebuild(max_ops, max_tokens, &recent))
    }

    /// Starts a session, ending the agent's current one: an agent works in
    /// one session at a time.
    pub fn start_session(&self, title: Option<&str>) -> StoreResult<Session> {
        if let Some(active) = self.store.active_session(&self.agent)? {
            self.end_session(Some(&active.id))?;
        }
        self.store.create_session(&SessionDraft {
            title: title.map(|t| self.clean_text(t, true)),
            agent: self.agent.clone(),
            started_at: self.clock.now(),
        })
    }

    fn session_or_current(&self, id: Option<&str>) -> StoreResult<Session> {
        match id {
            Some(id) => self.store.session(id),
            None => self
                .store
                .active_session(&self.agent)?
                .ok_or_else(|| StoreError::NotFound {
                    what: "active session",
                    id: self.agent.clone(),
                }),
        }
    }

    pub fn end_session(&self, id: Option<&str>) -> StoreResult<Session> {
        let s = self.session_or_current(id)?;
        self.store.update_session(
            &s.id,
            &SessionChange {
                status: Some(SessionStatus::Ended),
                ended_at: Some(self.clock.now()),
                ..SessionChange::default()
            },
        )
    }

    pub fn archive_session(&self, id: Option<&str>, title: Option<&str>) -> StoreResult<Session> {
        let s = self.session_or_current(id)?;
        self.store.update_session(
            &s.id,
            &SessionChange {
                status: Some(SessionStatus::Archived),
                title: title.map(|t| self.clean_text(t, true)),
                ended_at: Some(s.ended_at.unwrap_or_else(|| self.clock.now())),
                ..SessionChange::default()
            },
        )
    }

    /// Makes `id` the agent's active session again and returns its state.
    pub fn restore_session(&self, id: &str) -> StoreResult<RestoredSession> {
        let s = self.store.session(id)?;
        if let Some(active) = self.store.active_session(&self.agent)?
            && active.id != s.id
        {
            self.end_session(Some(&active.id))?;
        }
        let session = self.store.update_session(
            &s.id,
            &SessionChange {
                status: Some(SessionStatus::Active),
                ..SessionChange::default()
            },
        )?;
        let mut recent_messages = self.store.messages(&MessageQuery {
            session_id: Some(session.id.clone()),
            limit: Some(10),
            ..MessageQuery::default()
        })?;
        recent_messages.reverse();
        Ok(RestoredSession {
            summary: session.summary.clone(),
            session,
            hot_context: self.store.hot_context()?,
            recent_messages,
        })
    }

    pub fn hot(&self) -> StoreResult<HotContext> {
        self.store.hot_context()
    }

    /// Adds a hot-context item and records the change as a pinned operation,
    /// so "what did we do?" and compaction both see it; the two commit together.
    pub fn add_hot(
        &self,
        kind: HotKind,
        text: &str,
        detail: Option<&str>,
        priority: Option<Priority>,
        parent: Option<&str>,
    ) -> StoreResult<HotItem> {
        let text = self.clean_text(text, true);
        if text.trim().is_empty() {
            return Err(StoreError::Invalid(format!("a {} needs text", kind.name())));
        }
        let parent_id = match parent {
            Some(p) => Some(self.store.hot_item(p)?.id),
            None => None,
        };
        let status = if kind == HotKind::Goal {
            HotStatus::Pending
        } else {
            HotStatus::Active
        };
        self.store.atomically(|| {
            let item = self.store.add_hot_item(&HotItemDraft {
                kind,
                text: text.trim().to_string(),
                detail: detail
                    .map(|d| self.clean_text(d, true))
                    .filter(|d| !d.trim().is_empty()),
                parent_id,
                priority: if kind == HotKind::Goal {
                    Some(priority.unwrap_or_default())
                } else {
                    priority
                },
                status,
                agent: self.agent.clone(),
                created_at: self.clock.now(),
            })?;
            self.log_hot("added", &item)?;
            Ok(item)
        })
    }

    /// Changes an item the caller read at `version`; a stale version is a
    /// [`StoreError::Conflict`] carrying the current item.
    pub fn update_hot(
        &self,
        id: &str,
        version: u64,
        change: HotItemChange,
    ) -> StoreResult<HotItem> {
        let current = self.store.hot_item(id)?;
        if let Some(status) = change.status {
            let goal_status = matches!(
                status,
                HotStatus::Pending | HotStatus::InProgress | HotStatus::Complete
            );
            if (current.kind == HotKind::Goal) != goal_status && status != HotStatus::Removed {
                return Err(StoreError::Invalid(format!(
                    "a {} cannot become {status}: goals are pending, in-progress or complete; other items are active or removed",
                    current.kind.name()
                )));
            }
        }
        let change = HotItemChange {
            agent: Some(self.agent.clone()),
            text: change.text.as_deref().map(|t| self.clean_text(t, true)),
            detail: change.detail.as_deref().map(|d| self.clean_text(d, true)),
            ..change
        };
        self.store.atomically(|| {
            let item = self.store.update_hot_item(&HotItemUpdate {
                id: &current.id,
                expected_version: version,
                change: &change,
                at: self.clock.now(),
            })?;
            self.log_hot("updated", &item)?;
            Ok(item)
        })
    }

    fn log_hot(&self, action: &str, item: &HotItem) -> StoreResult<Operation> {
        self.record(NewOperation {
            kind: format!("{}_{action}", item.kind.name()),
            data: json!({"id": item.id, "text": item.text, "status": item.status.name(), "version": item.version}),
            status: Some(item.status.name().into()),
            ..NewOperation::default()
        })
    }
}

/// Open epics listed in project_state; the document's cap trims further.
const EPICS_SHOWN: usize = 50;

/// The text of an operation's data, for counting and scoring.
pub fn data_text(data: &serde_json::Value) -> String {
    match data {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
