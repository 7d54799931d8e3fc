//! Project entities, numbered from one sequence per project.

use mnemon_core::memory::{
    Entity, EntityChange, EntityDraft, EntityQuery, EntityStatus, EntityStore, StatusCount,
    StoreError, StoreResult, Timestamp,
};
use mnemon_core::store::sql::{self, ENTITY_COLUMNS as COLUMNS};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::PgStore;
use crate::client::Db;
use crate::row::{Cols, sure};
use crate::text::words;

fn from_row(r: &Row) -> Entity {
    sure(sql::entity(&Cols(r)))
}

fn get(db: &Db, store: &PgStore, number: u64) -> StoreResult<Entity> {
    let row = db.opt(
        &format!(
            "SELECT {COLUMNS}, deleted_at FROM entities WHERE project_id = $1 AND number = $2"
        ),
        &[&store.project(), &(number as i64)],
    )?;
    let Some(row) = row else {
        return Err(StoreError::NotFound {
            what: "entity",
            id: format!("#{number}"),
        });
    };
    let e = from_row(&row);
    if let Some(at) = row.get::<_, Option<i64>>(9) {
        return Err(e.deleted(Timestamp(at)));
    }
    Ok(e)
}

impl EntityStore for PgStore {
    fn create_entity(&self, d: &EntityDraft) -> StoreResult<Entity> {
        let indexed = words(&format!(
            "{} {}",
            d.title,
            d.description.as_deref().unwrap_or("")
        ));
        self.write(|db| {
            // The project's write lock is held, so max + 1 cannot race; the
            // primary key would refuse a duplicate anyway.
            let number: i64 = db
                .one(
                    "SELECT coalesce(max(number), 0) + 1 FROM entities WHERE project_id = $1",
                    &[&self.project()],
                )?
                .get(0);
            db.exec(
                "INSERT INTO entities (project_id, number, kind, title, description, status, priority, parent, created_at, updated_at, tsv)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, strip(to_tsvector('simple', $10)))",
                &[
                    &self.project(),
                    &number,
                    &d.kind.name(),
                    &d.title,
                    &d.description,
                    &d.status.name(),
                    &i64::from(d.priority),
                    &d.parent.map(|p| p as i64),
                    &d.at.0,
                    &indexed,
                ],
            )?;
            get(db, self, number as u64)
        })
    }

    fn entity(&self, number: u64) -> StoreResult<Entity> {
        get(&self.db()?, self, number)
    }

    fn update_entity(&self, number: u64, c: &EntityChange, at: Timestamp) -> StoreResult<Entity> {
        self.write(|db| {
            let current = get(db, self, number)?;
            current.check_change(c)?;
            // The search entry from the entity as it will be, in the same
            // statement.
            let title = c.title.as_deref().unwrap_or(&current.title);
            let description = c.description.as_deref().or(current.description.as_deref());
            let indexed = words(&format!("{title} {}", description.unwrap_or("")));
            db.exec(
                "UPDATE entities SET title = coalesce($3, title), description = coalesce($4, description), status = coalesce($5, status),
                 priority = coalesce($6, priority), updated_at = $7, tsv = strip(to_tsvector('simple', $8))
                 WHERE project_id = $1 AND number = $2",
                &[
                    &self.project(),
                    &(number as i64),
                    &c.title,
                    &c.description,
                    &c.status.map(EntityStatus::name),
                    &c.priority.map(i64::from),
                    &at.0,
                    &indexed,
                ],
            )?;
            get(db, self, number)
        })
    }

    fn delete_entity(&self, number: u64, at: Timestamp) -> StoreResult<Entity> {
        self.write(|db| {
            let current = get(db, self, number)?;
            let children: Vec<Entity> = db
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM entities WHERE project_id = $1 AND parent = $2 AND deleted_at IS NULL ORDER BY number LIMIT 6"
                    ),
                    &[&self.project(), &(number as i64)],
                )?
                .iter()
                .map(from_row)
                .collect();
            current.check_deletable(&children)?;
            // The row stays (its number is never given out again) but
            // leaves every listing and the search index.
            db.exec(
                "UPDATE entities SET deleted_at = $3, updated_at = $3, tsv = ''::tsvector WHERE project_id = $1 AND number = $2",
                &[&self.project(), &(number as i64), &at.0],
            )?;
            Ok(Entity {
                updated_at: at,
                ..current
            })
        })
    }

    fn entities(&self, q: &EntityQuery) -> StoreResult<Vec<Entity>> {
        let mut sql =
            format!("SELECT {COLUMNS} FROM entities WHERE project_id = $1 AND deleted_at IS NULL");
        let mut args: Vec<Box<dyn ToSql + Sync + Send>> =
            vec![Box::new(self.project().to_string())];
        if let Some(k) = q.kind {
            args.push(Box::new(k.name().to_string()));
            sql.push_str(&format!(" AND kind = ${}", args.len()));
        }
        if let Some(s) = q.status {
            args.push(Box::new(s.name().to_string()));
            sql.push_str(&format!(" AND status = ${}", args.len()));
        }
        if let Some(p) = q.parent {
            args.push(Box::new(p as i64));
            sql.push_str(&format!(" AND parent = ${}", args.len()));
        }
        args.push(Box::new(crate::limit(q.limit)));
        sql.push_str(&format!(" ORDER BY priority, number LIMIT ${}", args.len()));
        let refs: Vec<&(dyn ToSql + Sync)> = args
            .iter()
            .map(|a| a.as_ref() as &(dyn ToSql + Sync))
            .collect();
        Ok(self
            .db()?
            .query(&sql, &refs)?
            .iter()
            .map(from_row)
            .collect())
    }

    fn status_counts(&self) -> StoreResult<Vec<StatusCount>> {
        let rows = self.db()?.query(
            "SELECT kind, status, count(*) FROM entities WHERE project_id = $1 AND deleted_at IS NULL GROUP BY kind, status ORDER BY kind COLLATE \"C\", status COLLATE \"C\"",
            &[&self.project()],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(StatusCount {
                    kind: r.get::<_, String>(0).parse().ok()?,
                    status: r.get::<_, String>(1).parse().ok()?,
                    count: r.get::<_, i64>(2) as u64,
                })
            })
            .collect())
    }
}
