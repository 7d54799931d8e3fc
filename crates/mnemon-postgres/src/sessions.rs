//! Sessions (tier 2).

use mnemon_core::memory::{
    Session, SessionChange, SessionDraft, SessionStatus, SessionStore, StoreResult, Timestamp,
};
use mnemon_core::store::sql::{self, SESSION_COLUMNS as COLUMNS};
use tokio_postgres::Row;

use crate::client::Db;
use crate::row::{Cols, sure};
use crate::{PgStore, new_id, resolve_id};

fn from_row(r: &Row) -> Session {
    sure(sql::session(&Cols(r)))
}

fn by_id(db: &Db, id: &str) -> StoreResult<Session> {
    db.one(
        &format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"),
        &[&id],
    )
    .map(|r| from_row(&r))
}

/// Updates a session inside the caller's transaction.
pub(crate) fn update_in(
    db: &Db,
    store: &PgStore,
    id: &str,
    c: &SessionChange,
) -> StoreResult<Session> {
    let full = resolve_id(db, "sessions", "session", store.project(), id)?;
    db.exec(
        "UPDATE sessions SET status = coalesce($2, status), title = coalesce($3, title), summary = coalesce($4, summary),
         ended_at = CASE WHEN $2 = 'active' THEN NULL ELSE coalesce($5, ended_at) END WHERE id = $1",
        &[
            &full,
            &c.status.map(SessionStatus::name),
            &c.title,
            &c.summary,
            &c.ended_at.map(|t| t.0),
        ],
    )?;
    by_id(db, &full)
}

fn insert_in(db: &Db, store: &PgStore, d: &SessionDraft) -> StoreResult<Session> {
    let id = new_id();
    db.exec(
        "INSERT INTO sessions (id, project_id, title, agent, status, started_at, last_activity) VALUES ($1, $2, $3, $4, 'active', $5, $5)",
        &[&id, &store.project(), &d.title, &d.agent, &d.started_at.0],
    )?;
    by_id(db, &id)
}

fn active_in(db: &Db, store: &PgStore, agent: &str) -> StoreResult<Option<Session>> {
    Ok(db
        .opt(
            &format!(
                "SELECT {COLUMNS} FROM sessions WHERE project_id = $1 AND agent = $2 AND status = 'active' ORDER BY started_at DESC, row_id DESC LIMIT 1"
            ),
            &[&store.project(), &agent],
        )?
        .map(|r| from_row(&r)))
}

impl SessionStore for PgStore {
    fn create_session(&self, draft: &SessionDraft) -> StoreResult<Session> {
        self.write(|db| insert_in(db, self, draft))
    }

    fn session(&self, id: &str) -> StoreResult<Session> {
        let db = self.db()?;
        let full = resolve_id(&db, "sessions", "session", self.project(), id)?;
        by_id(&db, &full)
    }

    fn sessions(&self, limit: usize) -> StoreResult<Vec<Session>> {
        let rows = self.db()?.query(
            &format!(
                "SELECT {COLUMNS} FROM sessions WHERE project_id = $1 ORDER BY last_activity DESC, started_at DESC LIMIT $2"
            ),
            &[&self.project(), &crate::limit(Some(limit))],
        )?;
        Ok(rows.iter().map(from_row).collect())
    }

    fn update_session(&self, id: &str, c: &SessionChange) -> StoreResult<Session> {
        self.write(|db| update_in(db, self, id, c))
    }

    fn active_session(&self, agent: &str) -> StoreResult<Option<Session>> {
        active_in(&self.db()?, self, agent)
    }

    fn active_or_new_session(&self, agent: &str, at: Timestamp) -> StoreResult<Session> {
        // The write lock is taken before the read, so a second server
        // waits here and then finds the first one's session.
        self.write(|db| match active_in(db, self, agent)? {
            Some(s) => Ok(s),
            None => insert_in(db, self, &SessionDraft::untitled(agent, at)),
        })
    }
}
