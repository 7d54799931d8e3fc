//! Project entities, numbered from one sequence per project.

use mnemon_core::memory::{
    Entity, EntityChange, EntityDraft, EntityQuery, EntityStatus, EntityStore, StatusCount,
    StoreError, StoreResult, Timestamp,
};
use mnemon_core::store::sql::{self, ENTITY_COLUMNS as COLUMNS};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::SqliteStore;
use crate::row::Cols;

fn from_row(r: &Row<'_>) -> rusqlite::Result<Entity> {
    sql::entity(&Cols(r))
}

fn get(conn: &Connection, store: &SqliteStore, number: u64) -> StoreResult<Entity> {
    let row = conn
        .query_row(
            &format!(
                "SELECT {COLUMNS}, deleted_at FROM entities WHERE project_id = ?1 AND number = ?2"
            ),
            params![store.project_id, number as i64],
            |r| Ok((from_row(r)?, r.get::<_, Option<i64>>(9)?)),
        )
        .optional()
        .map_err(|e| store.err(e))?;
    if let Some((e, Some(at))) = &row {
        return Err(e.deleted(Timestamp(*at)));
    }
    row.map(|(e, _)| e).ok_or_else(|| StoreError::NotFound {
        what: "entity",
        id: format!("#{number}"),
    })
}

impl EntityStore for SqliteStore {
    fn create_entity(&self, d: &EntityDraft) -> StoreResult<Entity> {
        self.write(|tx| {
            // BEGIN IMMEDIATE holds the write lock, so max + 1 cannot race;
            // the primary key would refuse a duplicate anyway.
            let number: i64 = tx
                .query_row("SELECT coalesce(max(number), 0) + 1 FROM entities WHERE project_id = ?1", [&self.project_id], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            tx.execute(
                "INSERT INTO entities (project_id, number, kind, title, description, status, priority, parent, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
                params![
                    self.project_id,
                    number,
                    d.kind.name(),
                    d.title,
                    d.description,
                    d.status.name(),
                    d.priority as i64,
                    d.parent.map(|p| p as i64),
                    d.at.0
                ],
            )
            .map_err(|e| self.err(e))?;
            get(tx, self, number as u64)
        })
    }

    fn entity(&self, number: u64) -> StoreResult<Entity> {
        get(&self.conn(), self, number)
    }

    fn update_entity(&self, number: u64, c: &EntityChange, at: Timestamp) -> StoreResult<Entity> {
        self.write(|tx| {
            let current = get(tx, self, number)?;
            current.check_change(c)?;
            tx.execute(
                "UPDATE entities SET title = coalesce(?3, title), description = coalesce(?4, description), status = coalesce(?5, status),
                 priority = coalesce(?6, priority), updated_at = ?7 WHERE project_id = ?1 AND number = ?2",
                params![
                    self.project_id,
                    number as i64,
                    c.title,
                    c.description,
                    c.status.map(EntityStatus::name),
                    c.priority.map(|p| p as i64),
                    at.0
                ],
            )
            .map_err(|e| self.err(e))?;
            get(tx, self, number)
        })
    }

    fn delete_entity(&self, number: u64, at: Timestamp) -> StoreResult<Entity> {
        self.write(|tx| {
            let current = get(tx, self, number)?;
            let mut stmt = tx
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM entities WHERE project_id = ?1 AND parent = ?2 AND deleted_at IS NULL ORDER BY number LIMIT 6"
                ))
                .map_err(|e| self.err(e))?;
            let children: Vec<Entity> = stmt
                .query_map(params![self.project_id, number as i64], from_row)
                .and_then(|rows| rows.collect())
                .map_err(|e| self.err(e))?;
            current.check_deletable(&children)?;
            tx.execute(
                "UPDATE entities SET deleted_at = ?3, updated_at = ?3 WHERE project_id = ?1 AND number = ?2",
                params![self.project_id, number as i64, at.0],
            )
            .map_err(|e| self.err(e))?;
            Ok(Entity {
                updated_at: at,
                ..current
            })
        })
    }

    fn entities(&self, q: &EntityQuery) -> StoreResult<Vec<Entity>> {
        let mut sql =
            format!("SELECT {COLUMNS} FROM entities WHERE project_id = ? AND deleted_at IS NULL");
        let mut args = vec![Value::Text(self.project_id.clone())];
        if let Some(k) = q.kind {
            sql.push_str(" AND kind = ?");
            args.push(Value::Text(k.name().into()));
        }
        if let Some(s) = q.status {
            sql.push_str(" AND status = ?");
            args.push(Value::Text(s.name().into()));
        }
        if let Some(p) = q.parent {
            sql.push_str(" AND parent = ?");
            args.push(Value::Integer(p as i64));
        }
        sql.push_str(" ORDER BY priority, number LIMIT ?");
        args.push(Value::Integer(q.limit.map_or(-1, |l| l as i64)));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_map(rusqlite::params_from_iter(args), from_row)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn status_counts(&self) -> StoreResult<Vec<StatusCount>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached("SELECT kind, status, count(*) FROM entities WHERE project_id = ?1 AND deleted_at IS NULL GROUP BY kind, status ORDER BY kind, status")
            .map_err(|e| self.err(e))?;
        let rows: Vec<(String, String, i64)> = stmt
            .query_map([&self.project_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(k, s, n)| {
                Some(StatusCount {
                    kind: k.parse().ok()?,
                    status: s.parse().ok()?,
                    count: n as u64,
                })
            })
            .collect())
    }
}
