//! `Memory`: the rules every write passes through before it reaches a
//! store. Tokens are counted, importance scored, critical items pinned, raw
//! reasoning stripped, and each record attached to the agent's session.

use std::sync::Arc;

use serde_json::json;

use super::decision::{DecisionRecord, DecisionStatus, NewDecision};
use super::entities::{Entity, EntityChange, EntityDraft, EntityStatus, NewEntity};
use super::episodic::{DocKind, Document};
use super::hot::{HotContext, HotItem, HotItemChange, HotItemDraft, HotKind, HotStatus, Priority};
use super::privacy::{strip_reasoning, strip_reasoning_fields};
use super::redact::Redactor;
use super::store::{Store, StoreError};
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

pub struct Memory<S> {
    store: S,
    counter: Arc<dyn TokenCounter>,
    clock: Arc<dyn Clock>,
    agent: String,
    working_limits: (usize, u64),
    redactor: Redactor,
    /// Kinds of secret removed since the engine last asked, for its notice.
    redacted: std::sync::Mutex<Vec<String>>,
}

impl<S> std::fmt::Debug for Memory<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("agent", &self.agent)
            .field("counter", &self.counter.name())
            .finish()
    }
}

const DEFAULT_AGENT: &str = "orchestrator";

impl<S: Store> Memory<S> {
    /// `working_limits` are the profile's working-memory operation count and tokens.
    pub fn new(
        store: S,
        counter: Box<dyn TokenCounter>,
        clock: Arc<dyn Clock>,
        agent: Option<&str>,
        working_limits: (usize, u64),
    ) -> Self {
        Memory {
            store,
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
    pub fn over<T>(&self, store: T) -> Memory<T> {
        Memory {
            store,
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
    pub fn current_session(&self) -> Result<Session, StoreError> {
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

    pub fn record(&self, new: NewOperation) -> Result<Operation, StoreError> {
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

    pub fn message(&self, new: NewMessage) -> Result<Message, StoreError> {
        let session = self.current_session()?;
        let draft = self.message_draft(new, &session.id, self.clock.now())?;
        self.store.append_message(&draft)
    }

    /// Stores turns said at the times given, in order, in one commit.
    pub fn messages_at(
        &self,
        turns: Vec<(NewMessage, Timestamp)>,
    ) -> Result<Vec<Message>, StoreError> {
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
    ) -> Result<MessageDraft, StoreError> {
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

    pub fn recent(&self, q: &OperationQuery) -> Result<Vec<Operation>, StoreError> {
        self.store.operations(q)
    }

    pub fn recent_messages(&self, q: &MessageQuery) -> Result<Vec<Message>, StoreError> {
        self.store.messages(q)
    }

    /// Tier 1, rebuilt from the current session's log.
    pub fn working_memory(&self) -> Result<WorkingMemory, StoreError> {
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
    pub fn start_session(&self, title: Option<&str>) -> Result<Session, StoreError> {
        if let Some(active) = self.store.active_session(&self.agent)? {
            self.end_session(Some(&active.id))?;
        }
        let title = title.map(|t| self.clean_text(t, true));
        self.store
            .create_session(None, title.as_deref(), &self.agent, self.clock.now())
    }

    fn session_or_current(&self, id: Option<&str>) -> Result<Session, StoreError> {
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

    pub fn end_session(&self, id: Option<&str>) -> Result<Session, StoreError> {
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

    pub fn archive_session(
        &self,
        id: Option<&str>,
        title: Option<&str>,
    ) -> Result<Session, StoreError> {
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
    pub fn restore_session(&self, id: &str) -> Result<RestoredSession, StoreError> {
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

    pub fn hot(&self) -> Result<HotContext, StoreError> {
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
    ) -> Result<HotItem, StoreError> {
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
    ) -> Result<HotItem, StoreError> {
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
            let item =
                self.store
                    .update_hot_item(&current.id, version, &change, self.clock.now())?;
            self.log_hot("updated", &item)?;
            Ok(item)
        })
    }

    fn log_hot(&self, action: &str, item: &HotItem) -> Result<Operation, StoreError> {
        self.record(NewOperation {
            kind: format!("{}_{action}", item.kind.name()),
            data: json!({"id": item.id, "text": item.text, "status": item.status.name(), "version": item.version}),
            status: Some(item.status.name().into()),
            ..NewOperation::default()
        })
    }
}

impl<S: Store> Memory<S> {
    fn decision_draft(&self, d: &NewDecision) -> Result<DecisionRecord, StoreError> {
        d.validate()
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        // Every text of the record, redacted: the record round-trips
        // through JSON so no field is missed.
        let d: NewDecision = serde_json::to_value(d)
            .ok()
            .map(|v| self.clean_data(&v, true))
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_else(|| d.clone());
        let d = &d;
        Ok(DecisionRecord {
            id: String::new(),
            timestamp: self.clock.now(),
            title: d.title.trim().to_string(),
            context: d.context.trim().to_string(),
            decision: d.decision.trim().to_string(),
            consequences: d.consequences.clone(),
            alternatives: d.alternatives.clone(),
            assumptions: d.assumptions.clone(),
            status: d.status,
            superseded_by: None,
            agent: self.agent.clone(),
        })
    }

    /// Records a decision: the ADR in the store, a pinned `decision`
    /// operation carrying its compact JSON, and a key decision in the hot
    /// context, all in one unit of work.
    pub fn decide(&self, d: &NewDecision) -> Result<DecisionRecord, StoreError> {
        let draft = self.decision_draft(d)?;
        self.store.atomically(|| {
            let record = self.store.insert_decision(&draft)?;
            self.after_decision(&record)?;
            Ok(record)
        })
    }

    /// Replaces `old` with a new decision. Both records, the new decision's
    /// operation and hot item, and the old one's removal from the hot
    /// context commit together.
    pub fn supersede(
        &self,
        old: &str,
        d: &NewDecision,
    ) -> Result<(DecisionRecord, DecisionRecord), StoreError> {
        let draft = self.decision_draft(d)?;
        self.store.atomically(|| self.supersede_now(old, &draft))
    }

    fn supersede_now(
        &self,
        old: &str,
        draft: &DecisionRecord,
    ) -> Result<(DecisionRecord, DecisionRecord), StoreError> {
        let (old, new) = self.store.supersede_decision(old, draft)?;
        self.after_decision(&new)?;
        // The replaced decision leaves the hot context; its record stays.
        let stale: Vec<_> = self
            .store
            .hot_context()?
            .of_kind(HotKind::Decision)
            .filter(|h| h.text.contains(&old.id))
            .map(|h| (h.id.clone(), h.version))
            .collect();
        for (id, version) in stale {
            self.update_hot(
                &id,
                version,
                HotItemChange {
                    status: Some(HotStatus::Removed),
                    ..HotItemChange::default()
                },
            )?;
        }
        Ok((old, new))
    }

    pub fn set_decision_status(
        &self,
        id: &str,
        status: DecisionStatus,
    ) -> Result<DecisionRecord, StoreError> {
        self.store.set_decision_status(id, status)
    }

    fn after_decision(&self, r: &DecisionRecord) -> Result<(), StoreError> {
        self.record(NewOperation {
            kind: "decision".into(),
            data: r.to_compact_json(),
            status: Some(r.status.name().to_ascii_lowercase()),
            ..NewOperation::default()
        })?;
        let rationale = r
            .consequences
            .positive
            .first()
            .cloned()
            .unwrap_or_else(|| r.context.clone());
        self.add_hot(
            HotKind::Decision,
            &format!("{} ({})", r.decision, r.id),
            Some(&rationale),
            None,
            None,
        )?;
        Ok(())
    }
}

impl<S: Store> Memory<S> {
    /// Creates an entity under a parent of an allowed kind, and records it
    /// in the same unit of work.
    pub fn create_entity(&self, e: &NewEntity) -> Result<Entity, StoreError> {
        let title = e.title.trim();
        if title.is_empty() {
            return Err(StoreError::Invalid(format!("a {} needs a title", e.kind)));
        }
        let priority = e.priority.unwrap_or(3);
        if !(1..=5).contains(&priority) {
            return Err(StoreError::Invalid(format!(
                "priority {priority} is out of range: use 1 (most urgent) to 5"
            )));
        }
        if let Some(p) = e.parent {
            let parent = self.store.entity(p)?;
            if !e.kind.allowed_parents().contains(&parent.kind) {
                let allowed: Vec<_> = e.kind.allowed_parents().iter().map(|k| k.name()).collect();
                return Err(StoreError::Invalid(format!(
                    "a {} cannot go under {}; its parent must be {}",
                    e.kind,
                    parent.label(),
                    if allowed.is_empty() {
                        "nothing".to_string()
                    } else {
                        allowed.join(" or ")
                    }
                )));
            }
        }
        self.store.atomically(|| {
            let entity = self.store.create_entity(&EntityDraft {
                kind: e.kind,
                title: self.clean_text(title, true),
                description: e
                    .description
                    .as_deref()
                    .map(|d| self.clean_text(d, true))
                    .filter(|d| !d.trim().is_empty()),
                priority,
                parent: e.parent,
                status: EntityStatus::Pending,
                at: self.clock.now(),
            })?;
            self.log_entity("entity_created", &entity)?;
            Ok(entity)
        })
    }

    pub fn update_entity(&self, number: u64, change: &EntityChange) -> Result<Entity, StoreError> {
        if let Some(p) = change.priority
            && !(1..=5).contains(&p)
        {
            return Err(StoreError::Invalid(format!(
                "priority {p} is out of range: use 1 (most urgent) to 5"
            )));
        }
        let change = EntityChange {
            title: change.title.as_deref().map(|t| self.clean_text(t, true)),
            description: change
                .description
                .as_deref()
                .map(|d| self.clean_text(d, true)),
            ..change.clone()
        };
        let change = &change;
        self.store.atomically(|| {
            let entity = self.store.update_entity(number, change, self.clock.now())?;
            self.log_entity("entity_updated", &entity)?;
            Ok(entity)
        })
    }

    /// Deletes an entity with no live children; its number stays taken.
    pub fn delete_entity(&self, number: u64) -> Result<Entity, StoreError> {
        self.store.atomically(|| {
            let entity = self.store.delete_entity(number, self.clock.now())?;
            self.log_entity("entity_deleted", &entity)?;
            Ok(entity)
        })
    }

    /// Recorded so that "what did we just do?" and "add stories to it" can
    /// find the entity; epic and milestone completions are pinned.
    fn log_entity(&self, kind: &str, e: &Entity) -> Result<Operation, StoreError> {
        self.record(NewOperation {
            kind: kind.into(),
            data: json!({"entity_type": e.kind.name(), "number": e.number, "title": e.title, "parent": e.parent}),
            status: Some(e.status.name().into()),
            ..NewOperation::default()
        })
    }
}

impl<S: Store> Memory<S> {
    /// Regenerates project_state, work_plan and decision_log from the
    /// entities, this session and the decision records. A document whose
    /// body did not change keeps its version.
    pub fn refresh_documents(&self, keep_versions: u64) -> Result<[Document; 3], StoreError> {
        let at = self.clock.now();
        let [(k1, d1), (k2, d2), (k3, d3)] = self.render_documents()?;
        Ok([
            self.store.save_document(k1, &d1, at, keep_versions)?,
            self.store.save_document(k2, &d2, at, keep_versions)?,
            self.store.save_document(k3, &d3, at, keep_versions)?,
        ])
    }

    /// The three episodic documents as they would be saved now, without
    /// saving them, so a caller can save them in its own transaction.
    pub fn render_documents(&self) -> Result<[(DocKind, String); 3], StoreError> {
        use super::entities::{EntityKind, EntityQuery};
        let at = self.clock.now();
        let by_status = |status, limit| {
            self.store.entities(&EntityQuery {
                status: Some(status),
                limit,
                ..EntityQuery::default()
            })
        };
        let in_progress = by_status(EntityStatus::InProgress, Some(50))?;
        let blocked = by_status(EntityStatus::Blocked, Some(50))?;
        let backlog = by_status(EntityStatus::Pending, Some(20))?;
        let counts = self.store.status_counts()?;
        let session = self.store.active_session(&self.agent)?;
        let mut progress = Vec::new();
        if let Some(s) = &session {
            let ops = self.store.operations(&OperationQuery {
                session_id: Some(s.id.clone()),
                limit: Some(500),
                ..OperationQuery::default()
            })?;
            for op in ops.iter().rev().filter(|o| o.kind.starts_with("entity_")) {
                let d = &op.data;
                let label = format!(
                    "{} #{} \"{}\"",
                    d["entity_type"]
                        .as_str()
                        .and_then(|k| k.parse::<EntityKind>().ok())
                        .map_or("Item", |k| k.title()),
                    d["number"],
                    d["title"].as_str().unwrap_or_default()
                );
                progress.push(match op.kind.as_str() {
                    "entity_created" => format!("Created {label}"),
                    _ => format!(
                        "{label} is now {}",
                        op.status.as_deref().unwrap_or("updated")
                    ),
                });
            }
        }
        let mut epics = Vec::new();
        for e in self.store.entities(&EntityQuery {
            kind: Some(EntityKind::Epic),
            limit: Some(EPICS_SHOWN),
            ..EntityQuery::default()
        })? {
            if e.status == EntityStatus::Completed {
                continue;
            }
            let children = self.store.entities(&EntityQuery {
                parent: Some(e.number),
                ..EntityQuery::default()
            })?;
            let done = children
                .iter()
                .filter(|c| c.status == EntityStatus::Completed)
                .count();
            epics.push(format!(
                "{} ({}, priority {}): {} items, {done} completed",
                e.label(),
                e.status,
                e.priority,
                children.len()
            ));
        }
        let state = super::episodic::project_state(
            at,
            &super::episodic::ProjectFacts {
                session_id: session.as_ref().map(|s| s.id.as_str()),
                in_progress: &in_progress,
                blocked: &blocked,
                counts: &counts,
                recent_progress: &progress,
                epics: &epics,
            },
        );
        let next: Vec<Entity> = in_progress
            .iter()
            .chain(
                backlog
                    .iter()
                    .filter(|e| e.kind != EntityKind::Milestone)
                    .take(3),
            )
            .cloned()
            .collect();
        let future = self.store.entities(&EntityQuery {
            kind: Some(EntityKind::Milestone),
            status: Some(EntityStatus::Pending),
            ..EntityQuery::default()
        })?;
        let plan = super::episodic::work_plan(at, &next, &backlog, &future);
        let mut decisions = self.store.decisions(None)?;
        decisions.reverse();
        let log = super::episodic::decision_log(at, &decisions);
        Ok([
            (DocKind::ProjectState, state),
            (DocKind::WorkPlan, plan),
            (DocKind::DecisionLog, log),
        ])
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
