//! Sessions (tier 2).

use mnemon_core::memory::{
    Session, SessionChange, SessionDraft, SessionStatus, SessionStore, StoreResult, Timestamp,
};
use mnemon_core::store::sql::{self, SESSION_COLUMNS as COLUMNS};
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::row::Cols;
use crate::{SqliteStore, new_id, resolve_id};

fn from_row(r: &Row<'_>) -> rusqlite::Result<Session> {
    sql::session(&Cols(r))
}

/// Updates a session inside the caller's transaction.
pub(crate) fn update_in(
    tx: &rusqlite::Connection,
    store: &SqliteStore,
    id: &str,
    c: &SessionChange,
) -> StoreResult<Session> {
    let full = resolve_id(
        tx,
        &store.path,
        "sessions",
        "session",
        &store.project_id,
        id,
    )?;
    tx.execute(
                "UPDATE sessions SET status = coalesce(?2, status), title = coalesce(?3, title), summary = coalesce(?4, summary),
                 ended_at = CASE WHEN ?2 = 'active' THEN NULL ELSE coalesce(?5, ended_at) END WHERE id = ?1",
                params![full, c.status.map(SessionStatus::name), c.title, c.summary, c.ended_at.map(|t| t.0)],
            )
            .map_err(|e| store.err(e))?;
    tx.query_row(
        &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
        [&full],
        from_row,
    )
    .map_err(|e| store.err(e))
}

impl SessionStore for SqliteStore {
    fn create_session(&self, draft: &SessionDraft) -> StoreResult<Session> {
        self.write(|tx| insert_in(tx, self, draft))
    }

    fn session(&self, id: &str) -> StoreResult<Session> {
        let conn = self.conn();
        let full = resolve_id(
            &conn,
            &self.path,
            "sessions",
            "session",
            &self.project_id,
            id,
        )?;
        conn.query_row(
            &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
            [full],
            from_row,
        )
        .map_err(|e| self.err(e))
    }

    fn sessions(&self, limit: usize) -> StoreResult<Vec<Session>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sessions WHERE project_id = ?1 ORDER BY last_activity DESC, started_at DESC LIMIT ?2"
            ))
            .map_err(|e| self.err(e))?;
        stmt.query_map(params![self.project_id, limit as i64], from_row)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn update_session(&self, id: &str, c: &SessionChange) -> StoreResult<Session> {
        self.write(|tx| update_in(tx, self, id, c))
    }

    fn active_session(&self, agent: &str) -> StoreResult<Option<Session>> {
        active_in(&self.conn(), self, agent)
    }

    fn active_or_new_session(&self, agent: &str, at: Timestamp) -> StoreResult<Session> {
        // The write transaction is taken before the read (BEGIN IMMEDIATE),
        // so a second process waits here and then finds the first one's
        // session.
        self.write(|tx| match active_in(tx, self, agent)? {
            Some(s) => Ok(s),
            None => insert_in(tx, self, &SessionDraft::untitled(agent, at)),
        })
    }
}

/// Starts a session inside the caller's transaction.
fn insert_in(tx: &Connection, store: &SqliteStore, d: &SessionDraft) -> StoreResult<Session> {
    let id = new_id();
    tx.execute(
        "INSERT INTO sessions (id, project_id, title, agent, status, started_at, last_activity) VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?5)",
        params![id, store.project_id, d.title, d.agent, d.started_at.0],
    )
    .map_err(|e| store.err(e))?;
    tx.query_row(
        &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
        [id],
        from_row,
    )
    .map_err(|e| store.err(e))
}

/// The agent's newest active session; read before every record, so the
/// statement is cached.
fn active_in(
    conn: &rusqlite::Connection,
    store: &SqliteStore,
    agent: &str,
) -> StoreResult<Option<Session>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions WHERE project_id = ?1 AND agent = ?2 AND status = 'active' ORDER BY started_at DESC, rowid DESC LIMIT 1"
    ))
    .and_then(|mut s| s.query_row(params![store.project_id, agent], from_row).optional())
    .map_err(|e| store.err(e))
}
