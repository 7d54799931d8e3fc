//! Hot context with per-item optimistic concurrency.

use mnemon_core::memory::{
    HotContext, HotItem, HotItemDraft, HotItemUpdate, HotStatus, HotStore, Priority, StoreError,
    StoreResult,
};
use mnemon_core::store::sql::{self, HOT_COLUMNS as COLUMNS, Shifted, hot_conflict};
use tokio_postgres::Row;

use crate::client::Db;
use crate::row::{Cols, sure};
use crate::text::words;
use crate::{PgStore, new_id, resolve_id};

pub(crate) fn from_row(r: &Row) -> HotItem {
    sure(sql::hot_item(&Cols(r)))
}

/// An item from the row's columns `at..`, in [`COLUMNS`]' order.
fn from_row_at(r: &Row, at: usize) -> HotItem {
    sure(sql::hot_item(&Shifted(&Cols(r), at)))
}

pub(crate) fn bump(db: &Db, project: &str) -> StoreResult<()> {
    db.exec(
        "INSERT INTO hot_versions (project_id, version) VALUES ($1, 1) ON CONFLICT (project_id) DO UPDATE SET version = hot_versions.version + 1",
        &[&project],
    )
    .map(|_| ())
}

/// Sets the item's index entry from its text as it now is.
pub(crate) fn reindex(db: &Db, id: &str) -> StoreResult<Option<HotItem>> {
    let Some(row) = db.opt(
        &format!("SELECT {COLUMNS} FROM hot_items WHERE id = $1"),
        &[&id],
    )?
    else {
        return Ok(None);
    };
    let item = from_row(&row);
    let indexed = words(&format!(
        "{} {}",
        item.text,
        item.detail.as_deref().unwrap_or("")
    ));
    db.exec(
        "UPDATE hot_items SET tsv = strip(to_tsvector('simple', $2)) WHERE id = $1",
        &[&id, &indexed],
    )?;
    Ok(Some(item))
}

impl HotStore for PgStore {
    fn hot_context(&self) -> StoreResult<HotContext> {
        // One statement is one snapshot, so the version matches the items,
        // in one round trip.
        let rows = self.db()?.query(
            &format!(
                "SELECT v.version, {cols} FROM
                   (SELECT coalesce((SELECT version FROM hot_versions WHERE project_id = $1), 0) AS version) v
                 LEFT JOIN LATERAL (SELECT * FROM hot_items WHERE project_id = $1 AND status NOT IN ('complete', 'removed')) h ON true
                 ORDER BY h.seq",
                cols = COLUMNS
                    .split(", ")
                    .map(|c| format!("h.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            &[&self.project()],
        )?;
        let version: i64 = rows.first().map_or(0, |r| r.get(0));
        let items = rows
            .iter()
            .filter(|r| r.get::<_, Option<String>>(1).is_some())
            .map(|r| from_row_at(r, 1))
            .collect();
        Ok(HotContext {
            version: version as u64,
            items,
        })
    }

    fn add_hot_item(&self, d: &HotItemDraft) -> StoreResult<HotItem> {
        let id = new_id();
        let indexed = words(&format!("{} {}", d.text, d.detail.as_deref().unwrap_or("")));
        self.write(|db| {
            db.exec(
                "INSERT INTO hot_items (id, project_id, kind, text, detail, parent_id, priority, status, agent, version, created_at, updated_at, tsv)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $10, strip(to_tsvector('simple', $11)))",
                &[
                    &id,
                    &self.project(),
                    &d.kind.name(),
                    &d.text,
                    &d.detail,
                    &d.parent_id,
                    &d.priority.map(Priority::name),
                    &d.status.name(),
                    &d.agent,
                    &d.created_at.0,
                    &indexed,
                ],
            )?;
            bump(db, self.project())?;
            db.one(&format!("SELECT {COLUMNS} FROM hot_items WHERE id = $1"), &[&id])
                .map(|r| from_row(&r))
        })
    }

    fn update_hot_item(&self, u: &HotItemUpdate<'_>) -> StoreResult<HotItem> {
        let (c, expected) = (u.change, u.expected_version);
        self.write(|db| {
            let full = resolve_id(db, "hot_items", "hot-context item", self.project(), u.id)?;
            let changed = db.exec(
                "UPDATE hot_items SET text = coalesce($3, text), detail = coalesce($4, detail), priority = coalesce($5, priority),
                 status = coalesce($6, status), agent = coalesce($7, agent), version = version + 1, updated_at = $8
                 WHERE id = $1 AND version = $2",
                &[
                    &full,
                    &(expected as i64),
                    &c.text,
                    &c.detail,
                    &c.priority.map(Priority::name),
                    &c.status.map(HotStatus::name),
                    &c.agent,
                    &u.at.0,
                ],
            )?;
            if changed == 0 {
                let item = from_row(
                    &db.one(&format!("SELECT {COLUMNS} FROM hot_items WHERE id = $1"), &[&full])?,
                );
                return Err(hot_conflict(item, expected));
            }
            let item = reindex(db, &full)?.ok_or_else(|| StoreError::NotFound {
                what: "hot-context item",
                id: full.clone(),
            })?;
            bump(db, self.project())?;
            Ok(item)
        })
    }

    fn hot_item(&self, id: &str) -> StoreResult<HotItem> {
        let db = self.db()?;
        let full = resolve_id(&db, "hot_items", "hot-context item", self.project(), id)?;
        db.one(
            &format!("SELECT {COLUMNS} FROM hot_items WHERE id = $1"),
            &[&full],
        )
        .map(|r| from_row(&r))
    }
}
