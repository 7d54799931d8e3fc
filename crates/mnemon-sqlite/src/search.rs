//! Full-text search over every tier, for retrieval and `mnemon search`.

use mnemon_core::assemble::retrieve::{Hit, HitSource, SearchStore};
use mnemon_core::memory::{StoreError, Timestamp, data_text};
use rusqlite::params;

use crate::SqliteStore;

/// Any word may match; each is quoted, so no input is FTS5 syntax. A word
/// ending in `*` matches as a prefix (`live*` finds "lives", "lived").
fn any_word(query: &str) -> Option<String> {
    let terms: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '*')
        .filter(|w| !w.trim_matches('*').is_empty())
        .map(|w| {
            let prefix = w.ends_with('*');
            let w = w.trim_matches('*');
            format!(
                "\"{}\"{}",
                w.replace('"', "\"\""),
                if prefix { "*" } else { "" }
            )
        })
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

const OPS: &str =
    "SELECT 'o' || o.seq, o.kind, o.data, bm25(operations_fts), o.created_at, o.importance
    FROM operations_fts JOIN operations o ON o.seq = operations_fts.rowid
    WHERE operations_fts MATCH ?1 AND o.project_id = ?2 AND o.kind != 'context_action'
    ORDER BY bm25(operations_fts) LIMIT ?3";
const MSGS: &str =
    "SELECT 'm' || m.seq, m.role, m.content, bm25(messages_fts), m.created_at, m.importance
    FROM messages_fts JOIN messages m ON m.seq = messages_fts.rowid
    WHERE messages_fts MATCH ?1 AND m.project_id = ?2 ORDER BY bm25(messages_fts) LIMIT ?3";
const DECISIONS: &str = "SELECT d.id, d.title, json_extract(d.record, '$.decision'), bm25(decisions_fts), d.created_at, 1.0
    FROM decisions_fts JOIN decisions d ON d.seq = decisions_fts.rowid
    WHERE decisions_fts MATCH ?1 AND d.project_id = ?2 ORDER BY bm25(decisions_fts) LIMIT ?3";
const HOT: &str = "SELECT 'hot:' || h.id, h.kind, h.text || coalesce(' — ' || h.detail, ''), bm25(hot_fts), h.updated_at, 1.0
    FROM hot_fts JOIN hot_items h ON h.seq = hot_fts.rowid
    WHERE hot_fts MATCH ?1 AND h.project_id = ?2 AND h.status NOT IN ('complete', 'removed')
    ORDER BY bm25(hot_fts) LIMIT ?3";
const ENTITIES: &str = "SELECT '#' || e.number, e.kind, e.title || coalesce(': ' || e.description, '') || ' (' || e.status || ')',
    bm25(entities_fts), e.updated_at, 0.6
    FROM entities_fts JOIN entities e ON e.rowid = entities_fts.rowid
    WHERE entities_fts MATCH ?1 AND e.project_id = ?2 ORDER BY bm25(entities_fts) LIMIT ?3";
const DOCS: &str = "SELECT 'doc:' || d.kind, d.kind, d.content, bm25(documents_fts), d.created_at, 0.6
    FROM documents_fts JOIN documents d ON d.rowid = documents_fts.rowid
    WHERE documents_fts MATCH ?1 AND d.project_id = ?2
      AND d.version = (SELECT max(version) FROM documents x WHERE x.project_id = d.project_id AND x.kind = d.kind)
    ORDER BY bm25(documents_fts) LIMIT ?3";

impl SearchStore for SqliteStore {
    fn term_share(&self, term: &str) -> Result<(u64, u64), StoreError> {
        let conn = self.conn();
        let (prefix, t) = match term.strip_suffix('*') {
            Some(t) => (true, t.to_lowercase()),
            None => (false, term.to_lowercase()),
        };
        let upper = format!("{t}\u{10FFFF}");
        let mut docs = 0i64;
        let mut rows = 0i64;
        for (vocab, table) in [
            ("operations_vocab", "operations"),
            ("messages_vocab", "messages"),
        ] {
            let sql = if prefix {
                format!("SELECT coalesce(sum(doc), 0) FROM {vocab} WHERE term >= ?1 AND term < ?2")
            } else {
                format!("SELECT coalesce(sum(doc), 0) FROM {vocab} WHERE term = ?1 AND ?2 = ?2")
            };
            docs += conn
                .prepare_cached(&sql)
                .and_then(|mut s| s.query_row(params![t, upper], |r| r.get::<_, i64>(0)))
                .map_err(|e| self.err(e))?;
            // The largest position stands in for the row count: exact
            // enough for a share, and O(1) where count(*) is O(n).
            rows += conn
                .prepare_cached(&format!("SELECT coalesce(max(seq), 0) FROM {table}"))
                .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
                .map_err(|e| self.err(e))?;
        }
        Ok((docs.max(0) as u64, rows.max(0) as u64))
    }

    fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, StoreError> {
        let Some(q) = any_word(query) else {
            return Ok(Vec::new());
        };
        let conn = self.conn();
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut hits = Vec::new();
        for (sql, source) in [
            (OPS, HitSource::Operation),
            (MSGS, HitSource::Message),
            (DECISIONS, HitSource::Decision),
            (HOT, HitSource::Hot),
            (ENTITIES, HitSource::Entity),
            (DOCS, HitSource::Document),
        ] {
            let mut stmt = conn.prepare_cached(sql).map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map(params![q, self.project_id, n], |r| {
                    let id: String = r.get(0)?;
                    let label: String = r.get(1)?;
                    let body: Option<String> = r.get(2)?;
                    let body = body.unwrap_or_default();
                    let text = match source {
                        HitSource::Operation => {
                            let data = serde_json::from_str(&body)
                                .unwrap_or(serde_json::Value::String(body));
                            format!("{label}: {}", data_text(&data))
                        }
                        HitSource::Message => body,
                        HitSource::Decision => format!("{label}: {body}"),
                        HitSource::Document => body,
                        HitSource::Hot | HitSource::Entity => format!("{label}: {body}"),
                    };
                    Ok(Hit {
                        source,
                        id,
                        text,
                        bm25: r.get(3)?,
                        at: Timestamp(r.get(4)?),
                        importance: r.get(5)?,
                    })
                })
                .map_err(|e| self.err(e))?;
            for h in rows {
                hits.push(h.map_err(|e| self.err(e))?);
            }
        }
        Ok(hits)
    }
}
