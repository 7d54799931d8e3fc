//! Receiving a whole project (`mnemon migrate --to`): every table copied
//! in one transaction, positions kept, search entries made, then read back
//! and compared with the source's counts and hashes before it commits.

use mnemon_core::memory::transfer::{Cell, Kind, Table, TableSum};
use mnemon_core::memory::{StoreError, StoreResult};
use mnemon_core::store::sql::RECORD_TABLES;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::PgStore;
use crate::client::{Db, Tx};
use crate::text::words;

fn param(cell: &Cell, kind: Kind) -> Box<dyn ToSql + Sync + Send> {
    match (cell, kind) {
        (Cell::Null, Kind::Int) => Box::new(None::<i64>),
        (Cell::Null, Kind::Real) => Box::new(None::<f64>),
        (Cell::Null, Kind::Text) => Box::new(None::<String>),
        (Cell::Null, Kind::Bool) => Box::new(None::<bool>),
        (Cell::Null, Kind::Blob) => Box::new(None::<Vec<u8>>),
        (Cell::Int(v), Kind::Bool) => Box::new(*v != 0),
        (Cell::Int(v), Kind::Real) => Box::new(*v as f64),
        (Cell::Int(v), _) => Box::new(*v),
        (Cell::Real(v), _) => Box::new(*v),
        (Cell::Text(t), _) => Box::new(t.clone()),
        (Cell::Blob(b), _) => Box::new(b.clone()),
    }
}

fn read_cell(r: &Row, i: usize, kind: Kind) -> Cell {
    let or_null = |c: Option<Cell>| c.unwrap_or(Cell::Null);
    match kind {
        Kind::Int => or_null(r.get::<_, Option<i64>>(i).map(Cell::Int)),
        Kind::Real => or_null(r.get::<_, Option<f64>>(i).map(Cell::Real)),
        Kind::Text => or_null(r.get::<_, Option<String>>(i).map(Cell::Text)),
        Kind::Bool => or_null(r.get::<_, Option<bool>>(i).map(|b| Cell::Int(i64::from(b)))),
        Kind::Blob => or_null(r.get::<_, Option<Vec<u8>>>(i).map(Cell::Blob)),
    }
}

impl PgStore {
    /// Copies `rows` (one list per table of `tables`) of the project
    /// `project_id` into this store, which must hold no memory yet, and
    /// takes that project's id. Commits only if every table read back
    /// matches `expected`; returns the sums read back.
    pub fn import(
        &self,
        project_id: &str,
        tables: &[Table],
        rows: &[Vec<Vec<Cell>>],
        expected: &[TableSum],
    ) -> StoreResult<Vec<TableSum>> {
        let db = self.db()?;
        let tx = Tx::begin(&db, Some(self.shared.lock_key))?;
        // A copy goes only where no memory is, summaries of it included.
        for t in RECORD_TABLES.iter().chain(&["compactions"]) {
            let n: i64 = db.one(&format!("SELECT count(*) FROM {t}"), &[])?.get(0);
            if n > 0 {
                return Err(StoreError::Invalid(format!(
                    "{} already holds memory ({n} rows in {t}); mnemon migrate never writes over a project. Name an empty database or schema",
                    self.shown()
                )));
            }
        }
        db.batch("SET CONSTRAINTS ALL DEFERRED")?;
        db.exec(
            "UPDATE meta SET value = $1 WHERE key = 'project_id'",
            &[&project_id],
        )?;
        for (t, rows) in tables.iter().zip(rows) {
            copy_table(&db, t, rows)?;
        }
        let mut sums = Vec::with_capacity(tables.len());
        for t in tables {
            sums.push(read_back(&db, t, project_id)?);
        }
        for (got, want) in sums.iter().zip(expected) {
            if got != want {
                return Err(StoreError::Backend(format!(
                    "the copy of {} does not match its source ({} rows, sha256 {} against {} rows, {}); nothing was written",
                    got.table, got.rows, got.sha256, want.rows, want.sha256
                )));
            }
        }
        tx.commit()?;
        // The planner's statistics of the new rows, so the first queries
        // choose between the search index and a scan by position well
        // (autovacuum would gather them only later). Best effort.
        // VACUUM marks the pages all-visible too, so the covering indexes
        // answer the window's running totals without visiting the rows.
        let _ = db.batch("VACUUM ANALYZE");
        Ok(sums)
    }
}

fn copy_table(db: &Db, t: &Table, rows: &[Vec<Cell>]) -> StoreResult<()> {
    let cols: Vec<&str> = t.columns.iter().map(|(c, _)| *c).collect();
    let n = cols.len();
    let mut marks: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
    let mut names = cols.join(", ");
    let indexed = !t.indexed.is_empty();
    if indexed {
        names.push_str(", tsv");
        marks.push(format!("strip(to_tsvector('simple', ${}))", n + 1));
    }
    let overriding = if t.identity.is_some() {
        "OVERRIDING SYSTEM VALUE"
    } else {
        ""
    };
    let sql = format!(
        "INSERT INTO {} ({names}) {overriding} VALUES ({})",
        t.name,
        marks.join(", ")
    );
    for row in rows {
        let mut params: Vec<Box<dyn ToSql + Sync + Send>> = row
            .iter()
            .zip(t.columns)
            .map(|(c, (_, kind))| param(c, *kind))
            .collect();
        if indexed {
            // A deleted entity leaves search.
            let deleted = t
                .columns
                .iter()
                .position(|(c, _)| *c == "deleted_at")
                .is_some_and(|i| !matches!(row[i], Cell::Null));
            let text = if deleted {
                String::new()
            } else {
                words(&t.indexed_text(row).unwrap_or_default())
            };
            params.push(Box::new(text));
        }
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        db.exec(&sql, &refs)?;
    }
    if t.name == "hot_items" {
        // The trigger kept each item's current version; the source's
        // history, copied next, is the whole of it.
        db.batch("DELETE FROM hot_history")?;
    }
    if let Some(col) = t.identity {
        db.query(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{0}', '{col}'), coalesce((SELECT max({col}) FROM {0}), 0) + 1, false)",
                t.name
            ),
            &[],
        )?;
    }
    Ok(())
}

fn read_back(db: &Db, t: &Table, project_id: &str) -> StoreResult<TableSum> {
    let cols: Vec<&str> = t.columns.iter().map(|(c, _)| *c).collect();
    let rows = if t.per_project {
        db.query(
            &format!(
                "SELECT {} FROM {} WHERE project_id = $1",
                cols.join(", "),
                t.name
            ),
            &[&project_id],
        )?
    } else {
        db.query(&format!("SELECT {} FROM {}", cols.join(", "), t.name), &[])?
    };
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .map(|r| {
            t.columns
                .iter()
                .enumerate()
                .map(|(i, (_, kind))| read_cell(r, i, *kind))
                .collect()
        })
        .collect();
    Ok(t.sum(&cells))
}
