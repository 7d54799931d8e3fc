//! Reading a whole project out (`mnemon migrate --to`), as one snapshot.

use mnemon_core::memory::transfer::{Cell, Table};
use mnemon_core::memory::{StoreError, StoreResult};
use rusqlite::types::ValueRef;

use crate::SqliteStore;

/// Tables stored without a rowid: read in key order instead of insertion
/// order.
const WITHOUT_ROWID: [&str; 3] = ["hot_history", "substitutions", "artifacts"];

impl SqliteStore {
    /// Every row of `tables` (this project's, where a table says whose
    /// rows are whose), in insertion order, all read in one transaction so
    /// writers meanwhile change none of it.
    pub fn export(&self, tables: &[Table]) -> StoreResult<Vec<Vec<Vec<Cell>>>> {
        let conn = self.conn();
        conn.execute_batch("SAVEPOINT mnemon_export")
            .map_err(|e| self.err(e))?;
        let out = (|| {
            let mut all = Vec::with_capacity(tables.len());
            for t in tables {
                let cols: Vec<&str> = t.columns.iter().map(|(c, _)| *c).collect();
                let order = if WITHOUT_ROWID.contains(&t.name) {
                    t.key
                        .iter()
                        .map(|&k| t.columns[k].0)
                        .collect::<Vec<_>>()
                        .join(", ")
                } else {
                    "rowid".to_string()
                };
                let filter = if t.per_project {
                    "WHERE project_id = ?1"
                } else {
                    "WHERE ?1 IS NOT NULL"
                };
                let sql = format!(
                    "SELECT {} FROM {} {filter} ORDER BY {order}",
                    cols.join(", "),
                    t.name
                );
                let mut stmt = conn.prepare(&sql).map_err(|e| self.err(e))?;
                let mut rows = stmt.query([&self.project_id]).map_err(|e| self.err(e))?;
                let mut got = Vec::new();
                while let Some(r) = rows.next().map_err(|e| self.err(e))? {
                    let mut row = Vec::with_capacity(cols.len());
                    for i in 0..cols.len() {
                        row.push(cell(r.get_ref(i).map_err(|e| self.err(e))?, t.name)?);
                    }
                    got.push(row);
                }
                all.push(got);
            }
            Ok(all)
        })();
        let _ = conn.execute_batch("RELEASE mnemon_export");
        out
    }
}

fn cell(v: ValueRef<'_>, table: &str) -> StoreResult<Cell> {
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) => Cell::Text(
            String::from_utf8(t.to_vec())
                .map_err(|_| StoreError::Invalid(format!("a text in {table} is not UTF-8")))?,
        ),
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    })
}
