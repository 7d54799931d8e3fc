//! Hot context with per-item optimistic concurrency.

use mnemon_core::memory::{
    HotContext, HotItem, HotItemDraft, HotItemUpdate, HotStatus, HotStore, Priority, StoreResult,
};
use mnemon_core::store::sql::{self, HOT_COLUMNS as COLUMNS, hot_conflict};
use rusqlite::{Connection, Row, params};

use crate::row::Cols;
use crate::{SqliteStore, new_id, resolve_id};

pub(crate) fn from_row(r: &Row<'_>) -> rusqlite::Result<HotItem> {
    sql::hot_item(&Cols(r))
}

pub(crate) fn bump(conn: &Connection, project: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO hot_versions (project_id, version) VALUES (?1, 1) ON CONFLICT (project_id) DO UPDATE SET version = version + 1",
        [project],
    )
    .map(|_| ())
}

impl HotStore for SqliteStore {
    fn hot_context(&self) -> StoreResult<HotContext> {
        let mut conn = self.conn();
        // One read transaction, so the version matches the items: a
        // savepoint starts one, or nests in a unit of work's.
        let tx = conn.savepoint().map_err(|e| self.err(e))?;
        let version: i64 = tx
            .query_row(
                "SELECT coalesce((SELECT version FROM hot_versions WHERE project_id = ?1), 0)",
                [&self.project_id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        let items = tx
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM hot_items WHERE project_id = ?1 AND status NOT IN ('complete', 'removed') ORDER BY seq"
            ))
            .and_then(|mut s| s.query_map([&self.project_id], from_row)?.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.err(e))?;
        Ok(HotContext {
            version: version as u64,
            items,
        })
    }

    fn add_hot_item(&self, d: &HotItemDraft) -> StoreResult<HotItem> {
        let id = new_id();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO hot_items (id, project_id, kind, text, detail, parent_id, priority, status, agent, version, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10)",
                params![id, self.project_id, d.kind.name(), d.text, d.detail, d.parent_id, d.priority.map(Priority::name), d.status.name(), d.agent, d.created_at.0],
            )
            .map_err(|e| self.err(e))?;
            bump(tx, &self.project_id).map_err(|e| self.err(e))?;
            tx.query_row(&format!("SELECT {COLUMNS} FROM hot_items WHERE id = ?1"), [&id], from_row).map_err(|e| self.err(e))
        })
    }

    fn update_hot_item(&self, u: &HotItemUpdate<'_>) -> StoreResult<HotItem> {
        let (c, expected) = (u.change, u.expected_version);
        self.write(|tx| {
            let full = resolve_id(tx, &self.path, "hot_items", "hot-context item", &self.project_id, u.id)?;
            let changed = tx
                .execute(
                    "UPDATE hot_items SET text = coalesce(?3, text), detail = coalesce(?4, detail), priority = coalesce(?5, priority),
                     status = coalesce(?6, status), agent = coalesce(?7, agent), version = version + 1, updated_at = ?8
                     WHERE id = ?1 AND version = ?2",
                    params![full, expected as i64, c.text, c.detail, c.priority.map(Priority::name), c.status.map(HotStatus::name), c.agent, u.at.0],
                )
                .map_err(|e| self.err(e))?;
            let item = tx.query_row(&format!("SELECT {COLUMNS} FROM hot_items WHERE id = ?1"), [&full], from_row).map_err(|e| self.err(e))?;
            if changed == 0 {
                return Err(hot_conflict(item, expected));
            }
            bump(tx, &self.project_id).map_err(|e| self.err(e))?;
            Ok(item)
        })
    }

    fn hot_item(&self, id: &str) -> StoreResult<HotItem> {
        let conn = self.conn();
        let full = resolve_id(
            &conn,
            &self.path,
            "hot_items",
            "hot-context item",
            &self.project_id,
            id,
        )?;
        conn.query_row(
            &format!("SELECT {COLUMNS} FROM hot_items WHERE id = ?1"),
            [full],
            from_row,
        )
        .map_err(|e| self.err(e))
    }
}
