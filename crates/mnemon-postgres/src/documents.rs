//! Versioned episodic documents with `keep_versions` retention.

use mnemon_core::memory::episodic::NextVersion;
use mnemon_core::memory::{DocKind, Document, DocumentDraft, DocumentStore, StoreResult};
use mnemon_core::store::sql::{self, DOCUMENT_COLUMNS};
use tokio_postgres::Row;

use crate::PgStore;
use crate::client::Db;
use crate::row::{Cols, sure};
use crate::text::words;

fn from_row(kind: DocKind, r: &Row) -> Document {
    sure(sql::document(kind, &Cols(r)))
}

fn current(db: &Db, store: &PgStore, kind: DocKind) -> StoreResult<Option<Document>> {
    Ok(db
        .opt(
            &format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE project_id = $1 AND kind = $2 ORDER BY version DESC LIMIT 1"),
            &[&store.project(), &kind.stem()],
        )?
        .map(|r| from_row(kind, &r)))
}

/// Saves a document version inside the caller's transaction.
pub(crate) fn save_in(db: &Db, store: &PgStore, d: &DocumentDraft<'_>) -> StoreResult<Document> {
    let kind = d.kind;
    let now = current(db, store, kind)?;
    let doc = match Document::next(now, kind, d.content, d.at) {
        NextVersion::Same(doc) => return Ok(doc),
        NextVersion::New(doc) => doc,
    };
    db.exec(
        "INSERT INTO documents (project_id, kind, version, content, created_at, tsv) VALUES ($1, $2, $3, $4, $5, strip(to_tsvector('simple', $6)))",
        &[
            &store.project(),
            &kind.stem(),
            &(doc.version as i64),
            &d.content,
            &d.at.0,
            &words(d.content),
        ],
    )?;
    db.exec(
        "DELETE FROM documents WHERE project_id = $1 AND kind = $2 AND version < $3",
        &[
            &store.project(),
            &kind.stem(),
            &(doc.oldest_kept(d.keep_versions) as i64),
        ],
    )?;
    Ok(doc)
}

impl DocumentStore for PgStore {
    fn save_document(&self, draft: &DocumentDraft<'_>) -> StoreResult<Document> {
        self.write(|db| save_in(db, self, draft))
    }

    fn document(&self, kind: DocKind, version: Option<u64>) -> StoreResult<Document> {
        let db = self.db()?;
        let found = match version {
            None => current(&db, self, kind)?,
            Some(v) => db
                .opt(
                    &format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE project_id = $1 AND kind = $2 AND version = $3"),
                    &[&self.project(), &kind.stem(), &(v as i64)],
                )?
                .map(|r| from_row(kind, &r)),
        };
        found.ok_or_else(|| Document::not_found(kind, version))
    }

    fn document_versions(&self, kind: DocKind) -> StoreResult<Vec<Document>> {
        let rows = self.db()?.query(
            &format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE project_id = $1 AND kind = $2 ORDER BY version DESC"),
            &[&self.project(), &kind.stem()],
        )?;
        Ok(rows.iter().map(|r| from_row(kind, r)).collect())
    }
}
