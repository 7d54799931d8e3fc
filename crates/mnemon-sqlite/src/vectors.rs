//! Stored sentence-embedding vectors (migration 0012), for retrieval by
//! meaning.

use mnemon_core::assemble::retrieve::HitSource;
use mnemon_core::assemble::semantic::{Quantized, StoredVector, VectorStore};
use mnemon_core::memory::{Page, StoreResult};
use rusqlite::params;

use crate::SqliteStore;
use crate::search::SOURCES;

/// SQLite's numbered parameters.
fn mark(n: usize) -> String {
    format!("?{n}")
}

impl VectorStore for SqliteStore {
    fn put_vectors(&self, model: &str, vectors: &[StoredVector]) -> StoreResult<()> {
        self.write(|conn| {
            let e = |err| crate::error::map_err(self.path(), err);
            // REPLACE deletes the old row and inserts a new one, so a
            // replaced vector gets a new `seq` and readers see it as new.
            let mut stmt = conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO vectors (model, source, record, chunk, scale, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(e)?;
            for v in vectors {
                stmt.execute(params![
                    model,
                    v.source.vector_name()?,
                    v.row,
                    v.chunk,
                    f64::from(v.vector.scale),
                    v.vector.bytes(),
                ])
                .map_err(e)?;
            }
            Ok(())
        })
    }

    fn vectors_since(&self, model: &str, page: Page) -> StoreResult<Vec<(i64, StoredVector)>> {
        let Page { after, limit } = page;
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(VECTORS_SINCE)
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![model, after, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| {
                    let source: String = r.get(1)?;
                    let scale: f64 = r.get(4)?;
                    let bytes: Vec<u8> = r.get(5)?;
                    Ok((
                        r.get::<_, i64>(0)?,
                        HitSource::from_vector_name(&source),
                        r.get::<_, i64>(2)?,
                        r.get::<_, u32>(3)?,
                        Quantized::from_bytes(scale as f32, &bytes),
                    ))
                },
            )
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(seq, source, row, chunk, vector)| {
                Some((
                    seq,
                    StoredVector {
                        source: source?,
                        row,
                        chunk,
                        vector,
                    },
                ))
            })
            .collect())
    }

    fn unembedded(&self, model: &str, kind: HitSource, page: Page) -> StoreResult<Vec<i64>> {
        let Page { after, limit } = page;
        let src = SOURCES.of(kind);
        let tail = format!("ORDER BY {} LIMIT ?4", src.key);
        let sql = src.unembedded_sql(&src.key, &tail, mark)?;
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_map(
            params![
                self.project_id,
                after,
                model,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| r.get(0),
        )
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(e))
    }

    fn unembedded_count(&self, model: &str, kind: HitSource) -> StoreResult<u64> {
        let sql = SOURCES.of(kind).unembedded_sql("count(*)", "", mark)?;
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_row(params![self.project_id, 0i64, model], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
        .map_err(|e| self.err(e))
    }
}

/// Read on every query by meaning, to top up the vectors in memory: it
/// must find the few new rows by `seq`, the primary key. Without `+`,
/// SQLite (no statistics gathered) walks the whole `(model, …)` index and
/// sorts it: 6 ms at 100,000 vectors to return nothing.
const VECTORS_SINCE: &str = "SELECT seq, source, record, chunk, scale, vector FROM vectors
     WHERE +model = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

    #[test]
    fn new_vectors_are_found_by_their_key_without_sorting() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::SqliteStore::open(&dir.path().join("mnemon.db")).unwrap();
        let conn = store.conn();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", super::VECTORS_SINCE))
            .unwrap()
            .query_map(rusqlite::params!["m", 0, 10], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let plan = plan.join("; ");
        assert!(plan.contains("PRIMARY KEY"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }
}
