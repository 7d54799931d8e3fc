//! Decision records. The full record is stored as JSON, with its status and
//! supersession as columns so lifecycle changes are checked in SQL.

use mnemon_core::memory::{DecisionRecord, DecisionStore, StatusWrite, StoreResult, decision_id};
use mnemon_core::store::sql;
use rusqlite::{Connection, params};

use crate::{SqliteStore, new_id, resolve_id};

fn read(conn: &Connection, path: &str, project: &str, id: &str) -> StoreResult<DecisionRecord> {
    let full = resolve_id(
        conn,
        path,
        "decisions",
        "decision record",
        project,
        &decision_id(id),
    )?;
    let (record, status, superseded_by): (String, String, Option<String>) = conn
        .query_row(
            "SELECT record, status, superseded_by FROM decisions WHERE id = ?1",
            [&full],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| crate::error::map_err(path, e))?;
    DecisionRecord::from_stored(&record, &status, superseded_by)
}

impl SqliteStore {
    fn insert(&self, tx: &Connection, draft: &DecisionRecord) -> StoreResult<DecisionRecord> {
        // A taken id breaks the UNIQUE constraint, and core draws again.
        sql::insert_drawn_decision(draft, new_id, |r, json| {
            let res = tx.execute(
                "INSERT INTO decisions (id, project_id, title, record, status, superseded_by, agent, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![r.id, self.project_id, r.title, json, r.status.name(), r.superseded_by, r.agent, r.timestamp.0],
            );
            match res {
                Ok(_) => Ok(true),
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
                {
                    Ok(false)
                }
                Err(e) => Err(self.err(e)),
            }
        })
    }
}

impl DecisionStore for SqliteStore {
    fn insert_decision(&self, draft: &DecisionRecord) -> StoreResult<DecisionRecord> {
        self.write(|tx| self.insert(tx, draft))
    }

    fn decision(&self, id: &str) -> StoreResult<DecisionRecord> {
        read(&self.conn(), &self.path, &self.project_id, id)
    }

    fn decisions(&self, limit: Option<usize>) -> StoreResult<Vec<DecisionRecord>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT record, status, superseded_by FROM decisions WHERE project_id = ?1 ORDER BY seq DESC LIMIT ?2")
            .map_err(|e| self.err(e))?;
        let rows: Vec<(String, String, Option<String>)> = stmt
            .query_map(
                params![self.project_id, limit.map_or(-1, |l| l as i64)],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|(r, s, by)| DecisionRecord::from_stored(&r, &s, by))
            .collect()
    }

    fn write_decision_status(&self, w: &StatusWrite<'_>) -> StoreResult<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE decisions SET status = ?2, superseded_by = coalesce(?3, superseded_by) WHERE id = ?1",
                params![w.id, w.status.name(), w.superseded_by],
            )
            .map_err(|e| self.err(e))
        })?;
        Ok(())
    }
}
