//! Versioned episodic documents with `keep_versions` retention.

use mnemon_core::memory::episodic::body;
use mnemon_core::memory::{DocKind, Document, DocumentStore, StoreError, Timestamp};
use tokio_postgres::Row;

use crate::PgStore;
use crate::client::Db;
use crate::text::words;

fn from_row(kind: DocKind, r: &Row) -> Document {
    Document {
        kind,
        version: r.get::<_, i64>(0) as u64,
        content: r.get(1),
        created_at: Timestamp(r.get(2)),
    }
}

fn current(db: &Db, store: &PgStore, kind: DocKind) -> Result<Option<Document>, StoreError> {
    Ok(db
        .opt(
            "SELECT version, content, created_at FROM documents WHERE project_id = $1 AND kind = $2 ORDER BY version DESC LIMIT 1",
            &[&store.project(), &kind.stem()],
        )?
        .map(|r| from_row(kind, &r)))
}

/// Saves a document version inside the caller's transaction.
pub(crate) fn save_in(
    db: &Db,
    store: &PgStore,
    kind: DocKind,
    content: &str,
    at: Timestamp,
    keep_versions: u64,
) -> Result<Document, StoreError> {
    let now = current(db, store, kind)?;
    if let Some(doc) = &now
        && body(&doc.content) == body(content)
    {
        return Ok(doc.clone());
    }
    let version = now.map_or(1, |d| d.version + 1);
    db.exec(
        "INSERT INTO documents (project_id, kind, version, content, created_at, tsv) VALUES ($1, $2, $3, $4, $5, strip(to_tsvector('simple', $6)))",
        &[
            &store.project(),
            &kind.stem(),
            &(version as i64),
            &content,
            &at.0,
            &words(content),
        ],
    )?;
    // The current version plus `keep_versions` old ones.
    let oldest_kept = version.saturating_sub(keep_versions) as i64;
    db.exec(
        "DELETE FROM documents WHERE project_id = $1 AND kind = $2 AND version < $3",
        &[&store.project(), &kind.stem(), &oldest_kept],
    )?;
    Ok(Document {
        kind,
        version,
        content: content.to_string(),
        created_at: at,
    })
}

impl DocumentStore for PgStore {
    fn save_document(
        &self,
        kind: DocKind,
        content: &str,
        at: Timestamp,
        keep_versions: u64,
    ) -> Result<Document, StoreError> {
        self.write(|db| save_in(db, self, kind, content, at, keep_versions))
    }

    fn document(&self, kind: DocKind, version: Option<u64>) -> Result<Document, StoreError> {
        let db = self.db()?;
        let found = match version {
            None => current(&db, self, kind)?,
            Some(v) => db
                .opt(
                    "SELECT version, content, created_at FROM documents WHERE project_id = $1 AND kind = $2 AND version = $3",
                    &[&self.project(), &kind.stem(), &(v as i64)],
                )?
                .map(|r| from_row(kind, &r)),
        };
        found.ok_or_else(|| StoreError::NotFound {
            what: "document version",
            id: format!(
                "{kind}{}",
                version.map(|v| format!(" version {v}")).unwrap_or_default()
            ),
        })
    }

    fn document_versions(&self, kind: DocKind) -> Result<Vec<Document>, StoreError> {
        let rows = self.db()?.query(
            "SELECT version, content, created_at FROM documents WHERE project_id = $1 AND kind = $2 ORDER BY version DESC",
            &[&self.project(), &kind.stem()],
        )?;
        Ok(rows.iter().map(|r| from_row(kind, r)).collect())
    }
}
