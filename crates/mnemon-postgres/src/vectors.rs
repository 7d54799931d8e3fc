//! Stored sentence-embedding vectors, for retrieval by meaning.

use mnemon_core::assemble::retrieve::HitSource;
use mnemon_core::assemble::semantic::{Quantized, StoredVector, VectorStore};
use mnemon_core::memory::{Page, StoreResult};

use crate::PgStore;
use crate::search::SOURCES;

/// PostgreSQL's numbered parameters.
fn mark(n: usize) -> String {
    format!("${n}")
}

impl VectorStore for PgStore {
    fn put_vectors(&self, model: &str, vectors: &[StoredVector]) -> StoreResult<()> {
        self.write(|db| {
            for v in vectors {
                let source = v.source.vector_name()?;
                let chunk = i64::from(v.chunk);
                // Deleted and inserted again, so a replaced vector gets a
                // new `seq` and readers see it as new.
                db.exec(
                    "DELETE FROM vectors WHERE model = $1 AND source = $2 AND record = $3 AND chunk = $4",
                    &[&model, &source, &v.row, &chunk],
                )?;
                db.exec(
                    "INSERT INTO vectors (model, source, record, chunk, scale, vector) VALUES ($1, $2, $3, $4, $5, $6)",
                    &[
                        &model,
                        &source,
                        &v.row,
                        &chunk,
                        &f64::from(v.vector.scale),
                        &v.vector.bytes(),
                    ],
                )?;
            }
            Ok(())
        })
    }

    fn vectors_since(&self, model: &str, page: Page) -> StoreResult<Vec<(i64, StoredVector)>> {
        let Page { after, limit } = page;
        let rows = self.db()?.query(
            "SELECT seq, source, record, chunk, scale, vector FROM vectors
             WHERE model = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            &[&model, &after, &i64::try_from(limit).unwrap_or(i64::MAX)],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let source = HitSource::from_vector_name(&r.get::<_, String>(1))?;
                let scale: f64 = r.get(4);
                let bytes: &[u8] = r.get(5);
                Some((
                    r.get::<_, i64>(0),
                    StoredVector {
                        source,
                        row: r.get(2),
                        chunk: u32::try_from(r.get::<_, i64>(3)).ok()?,
                        vector: Quantized::from_bytes(scale as f32, bytes),
                    },
                ))
            })
            .collect())
    }

    fn unembedded(&self, model: &str, kind: HitSource, page: Page) -> StoreResult<Vec<i64>> {
        let Page { after, limit } = page;
        let src = SOURCES.of(kind);
        let tail = format!("ORDER BY {} LIMIT $4", src.key);
        let sql = src.unembedded_sql(&src.key, &tail, mark)?;
        let rows = self.db()?.query(
            &sql,
            &[
                &self.project(),
                &after,
                &model,
                &i64::try_from(limit).unwrap_or(i64::MAX),
            ],
        )?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn unembedded_count(&self, model: &str, kind: HitSource) -> StoreResult<u64> {
        let sql = SOURCES.of(kind).unembedded_sql("count(*)", "", mark)?;
        let n: i64 = self
            .db()?
            .one(&sql, &[&self.project(), &0i64, &model])?
            .get(0);
        Ok(n.max(0) as u64)
    }
}
