//! Sessions and the hot context: the tiers that change in place.

use std::sync::Arc;

use mnemon_core::memory::{
    HotContext, HotItem, HotItemDraft, HotItemUpdate, HotStatus, HotStore, Session, SessionChange,
    SessionDraft, SessionStatus, SessionStore, StoreError, StoreResult, Timestamp,
};
use mnemon_core::store::sql::hot_conflict;

use super::{Ids, InMemoryStore, Tables, new_id};

impl Tables {
    fn session_index(&self, id: &str) -> StoreResult<usize> {
        let full = Ids::of(
            self.sessions
                .iter()
                .enumerate()
                .map(|(i, s)| (i as i64 + 1, s.id.as_str())),
        )
        .resolve("sessions", "session", id)?;
        self.sessions
            .iter()
            .position(|s| s.id == full)
            .ok_or_else(|| StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            })
    }

    fn start_session(&mut self, d: &SessionDraft) -> Session {
        let s = Session {
            id: new_id(),
            title: d.title.clone(),
            agent: d.agent.clone(),
            status: SessionStatus::Active,
            started_at: d.started_at,
            ended_at: None,
            summary: None,
            operation_count: 0,
            message_count: 0,
            tokens: 0,
            last_activity: d.started_at,
        };
        self.sessions.push(Arc::new(s.clone()));
        s
    }

    /// The agent's most recently started active session; of two started in
    /// the same millisecond, the later written.
    fn active(&self, agent: &str) -> Option<Session> {
        self.sessions
            .iter()
            .enumerate()
            .filter(|(_, s)| s.agent == agent && s.status == SessionStatus::Active)
            .max_by_key(|(i, s)| (s.started_at, *i))
            .map(|(_, s)| Session::clone(s))
    }

    pub(super) fn update_session(&mut self, id: &str, c: &SessionChange) -> StoreResult<Session> {
        let i = self.session_index(id)?;
        let s = Arc::make_mut(&mut self.sessions[i]);
        if let Some(status) = c.status {
            s.status = status;
        }
        if let Some(title) = &c.title {
            s.title = Some(title.clone());
        }
        if let Some(summary) = &c.summary {
            s.summary = Some(summary.clone());
        }
        // A session made active again has not ended.
        s.ended_at = match c.status {
            Some(SessionStatus::Active) => None,
            _ => c.ended_at.or(s.ended_at),
        };
        Ok(s.clone())
    }

    fn hot_index(&self, id: &str) -> StoreResult<usize> {
        let full = Ids::of(self.hot_items.iter().map(|h| (h.seq as i64, h.id.as_str()))).resolve(
            "hot_items",
            "hot-context item",
            id,
        )?;
        self.hot_items
            .iter()
            .position(|h| h.id == full)
            .ok_or_else(|| StoreError::NotFound {
                what: "hot-context item",
                id: id.to_string(),
            })
    }
}

impl SessionStore for InMemoryStore {
    fn create_session(&self, draft: &SessionDraft) -> StoreResult<Session> {
        self.write(|t| Ok(t.start_session(draft)))
    }

    fn session(&self, id: &str) -> StoreResult<Session> {
        self.read(|t| Ok(Session::clone(&t.sessions[t.session_index(id)?])))
    }

    fn sessions(&self, limit: usize) -> StoreResult<Vec<Session>> {
        self.read(|t| {
            let mut all: Vec<Session> = t.sessions.iter().map(|s| Session::clone(s)).collect();
            all.sort_by(|a, b| {
                (b.last_activity, b.started_at).cmp(&(a.last_activity, a.started_at))
            });
            all.truncate(limit);
            Ok(all)
        })
    }

    fn update_session(&self, id: &str, c: &SessionChange) -> StoreResult<Session> {
        self.write(|t| t.update_session(id, c))
    }

    fn active_session(&self, agent: &str) -> StoreResult<Option<Session>> {
        self.read(|t| Ok(t.active(agent)))
    }

    fn active_or_new_session(&self, agent: &str, at: Timestamp) -> StoreResult<Session> {
        self.write(|t| match t.active(agent) {
            Some(s) => Ok(s),
            None => Ok(t.start_session(&SessionDraft::untitled(agent, at))),
        })
    }
}

impl HotStore for InMemoryStore {
    fn hot_context(&self) -> StoreResult<HotContext> {
        self.read(|t| {
            Ok(HotContext {
                version: t.hot_version,
                items: t
                    .hot_items
                    .iter()
                    .filter(|h| !matches!(h.status, HotStatus::Complete | HotStatus::Removed))
                    .map(|h| HotItem::clone(h))
                    .collect(),
            })
        })
    }

    fn add_hot_item(&self, d: &HotItemDraft) -> StoreResult<HotItem> {
        self.write(|t| {
            t.last_hot += 1;
            t.hot_version += 1;
            let item = HotItem {
                id: new_id(),
                seq: t.last_hot,
                kind: d.kind,
                text: d.text.clone(),
                detail: d.detail.clone(),
                parent_id: d.parent_id.clone(),
                priority: d.priority,
                status: d.status,
                agent: d.agent.clone(),
                version: 1,
                created_at: d.created_at,
                updated_at: d.created_at,
            };
            t.hot_items.push(Arc::new(item.clone()));
            t.hot_history.push(Arc::new(item.clone()));
            Ok(item)
        })
    }

    fn update_hot_item(&self, u: &HotItemUpdate<'_>) -> StoreResult<HotItem> {
        let (c, expected) = (u.change, u.expected_version);
        self.write(|t| {
            let i = t.hot_index(u.id)?;
            if t.hot_items[i].version != expected {
                return Err(hot_conflict(HotItem::clone(&t.hot_items[i]), expected));
            }
            let h = Arc::make_mut(&mut t.hot_items[i]);
            if let Some(text) = &c.text {
                h.text = text.clone();
            }
            if let Some(detail) = &c.detail {
                h.detail = Some(detail.clone());
            }
            h.priority = c.priority.or(h.priority);
            h.status = c.status.unwrap_or(h.status);
            if let Some(agent) = &c.agent {
                h.agent = agent.clone();
            }
            h.version += 1;
            h.updated_at = u.at;
            let item = h.clone();
            t.hot_history.push(Arc::new(item.clone()));
            t.hot_version += 1;
            Ok(item)
        })
    }

    fn hot_item(&self, id: &str) -> StoreResult<HotItem> {
        self.read(|t| Ok(HotItem::clone(&t.hot_items[t.hot_index(id)?])))
    }
}
