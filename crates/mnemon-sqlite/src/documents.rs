//! Versioned episodic documents with `keep_versions` retention.

use mnemon_core::memory::episodic::NextVersion;
use mnemon_core::memory::{DocKind, Document, DocumentDraft, DocumentStore, StoreResult};
use mnemon_core::store::sql::{self, DOCUMENT_COLUMNS};
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::SqliteStore;
use crate::row::Cols;

fn from_row(kind: DocKind) -> impl Fn(&Row<'_>) -> rusqlite::Result<Document> {
    move |r| sql::document(kind, &Cols(r))
}

fn current(conn: &Connection, store: &SqliteStore, kind: DocKind) -> StoreResult<Option<Document>> {
    conn.query_row(
        &format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE project_id = ?1 AND kind = ?2 ORDER BY version DESC LIMIT 1"),
        params![store.project_id, kind.stem()],
        from_row(kind),
    )
    .optional()
    .map_err(|e| store.err(e))
}

/// Saves a document version inside the caller's transaction.
pub(crate) fn save_in(
    tx: &Connection,
    store: &SqliteStore,
    d: &DocumentDraft<'_>,
) -> StoreResult<Document> {
    let kind = d.kind;
    let now = current(tx, store, kind)?;
    let doc = match Document::next(now, kind, d.content, d.at) {
        NextVersion::Same(doc) => return Ok(doc),
        NextVersion::New(doc) => doc,
    };
    tx.execute(
        "INSERT INTO documents (project_id, kind, version, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![store.project_id, kind.stem(), doc.version as i64, d.content, d.at.0],
    )
    .map_err(|e| store.err(e))?;
    tx.execute(
        "DELETE FROM documents WHERE project_id = ?1 AND kind = ?2 AND version < ?3",
        params![
            store.project_id,
            kind.stem(),
            doc.oldest_kept(d.keep_versions) as i64
        ],
    )
    .map_err(|e| store.err(e))?;
    Ok(doc)
}

impl DocumentStore for SqliteStore {
    fn save_document(&self, draft: &DocumentDraft<'_>) -> StoreResult<Document> {
        self.write(|tx| save_in(tx, self, draft))
    }

    fn document(&self, kind: DocKind, version: Option<u64>) -> StoreResult<Document> {
        let conn = self.conn();
        let found = match version {
            None => current(&conn, self, kind)?,
            Some(v) => conn
                .query_row(
                    &format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE project_id = ?1 AND kind = ?2 AND version = ?3"),
                    params![self.project_id, kind.stem(), v as i64],
                    from_row(kind),
                )
                .optional()
                .map_err(|e| self.err(e))?,
        };
        found.ok_or_else(|| Document::not_found(kind, version))
    }

    fn document_versions(&self, kind: DocKind) -> StoreResult<Vec<Document>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!("SELECT {DOCUMENT_COLUMNS} FROM documents WHERE project_id = ?1 AND kind = ?2 ORDER BY version DESC"))
            .map_err(|e| self.err(e))?;
        stmt.query_map(params![self.project_id, kind.stem()], from_row(kind))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }
}
