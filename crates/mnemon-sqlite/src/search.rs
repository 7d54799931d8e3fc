//! Full-text search over every tier, for retrieval and `mnemon search`.

use mnemon_core::assemble::retrieve::{Hit, HitSource, SearchStore};
use mnemon_core::memory::{StoreResult, Timestamp};
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

/// One index: its FTS5 table, the row it points at, what to select (id,
/// label, body, then time and importance) and which rows count.
pub(crate) struct Source {
    kind: HitSource,
    fts: &'static str,
    join: &'static str,
    /// The content table and the column the index's rowid is.
    pub(crate) table: &'static str,
    pub(crate) key: &'static str,
    id_label_body: &'static str,
    at_importance: &'static str,
    /// Which rows retrieval may return; `?2` is the project.
    pub(crate) filter: &'static str,
}

const SOURCES: [Source; 6] = [
    Source {
        kind: HitSource::Operation,
        fts: "operations_fts",
        join: "operations o ON o.seq = f.id",
        table: "operations o",
        key: "o.seq",
        id_label_body: "'o' || o.seq, o.kind, o.data",
        at_importance: "o.created_at, o.importance",
        filter: "o.project_id = ?2 AND o.kind != 'context_action'",
    },
    Source {
        kind: HitSource::Message,
        fts: "messages_fts",
        join: "messages m ON m.seq = f.id",
        table: "messages m",
        key: "m.seq",
        id_label_body: "'m' || m.seq, m.role, m.content",
        at_importance: "m.created_at, m.importance",
        filter: "m.project_id = ?2",
    },
    Source {
        kind: HitSource::Decision,
        fts: "decisions_fts",
        join: "decisions d ON d.seq = f.id",
        table: "decisions d",
        key: "d.seq",
        id_label_body: "d.id, d.title, json_extract(d.record, '$.decision')",
        at_importance: "d.created_at, 1.0",
        filter: "d.project_id = ?2",
    },
    Source {
        kind: HitSource::Hot,
        fts: "hot_fts",
        join: "hot_items h ON h.seq = f.id",
        table: "hot_items h",
        key: "h.seq",
        id_label_body: "'h' || h.seq, h.kind, h.text || coalesce(' — ' || h.detail, '')",
        at_importance: "h.updated_at, 1.0",
        filter: "h.project_id = ?2 AND h.status NOT IN ('complete', 'removed')",
    },
    Source {
        kind: HitSource::Entity,
        fts: "entities_fts",
        join: "entities e ON e.rowid = f.id",
        table: "entities e",
        key: "e.rowid",
        id_label_body: "'#' || e.number, e.kind, e.title || coalesce(': ' || e.description, '') || ' (' || e.status || ')'",
        at_importance: "e.updated_at, 0.6",
        filter: "e.project_id = ?2",
    },
    Source {
        kind: HitSource::Document,
        fts: "documents_fts",
        join: "documents d ON d.rowid = f.id",
        table: "documents d",
        key: "d.rowid",
        id_label_body: "'doc:' || d.kind, d.kind, d.content",
        at_importance: "d.created_at, 0.6",
        filter: "d.project_id = ?2 AND d.version = (SELECT max(version) FROM documents x WHERE x.project_id = d.project_id AND x.kind = d.kind)",
    },
];

impl Source {
    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: every source has an index"
    )]
    pub(crate) fn of(kind: HitSource) -> &'static Source {
        SOURCES
            .iter()
            .find(|s| s.kind == kind)
            .expect("every source has an index")
    }

    /// `?1` the match, `?2` the project, `?3` the limit.
    ///
    /// The best matches are chosen inside the index before any row is
    /// joined, so a query matching thousands of records reads only the
    /// few it returns; `?3` is over-fetched a little for the rows the
    /// filter then leaves out (other projects, the engine's own records).
    fn sql(&self) -> String {
        format!(
            "WITH m AS MATERIALIZED (SELECT rowid AS id, bm25({fts}) AS score FROM {fts} WHERE {fts} MATCH ?1)
             SELECT {}, f.score, {}, f.id FROM (SELECT id, score FROM m ORDER BY score LIMIT ?3) f
             CROSS JOIN {} WHERE {} ORDER BY f.score",
            self.id_label_body,
            self.at_importance,
            self.join,
            self.filter,
            fts = self.fts,
        )
    }

    /// The rows behind `keys`, written into the SQL: they are integers
    /// mnemon read from the index, and one statement per call beats
    /// hundreds of single-row lookups.
    fn records_sql(&self, keys: &[i64]) -> String {
        let list = keys
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        format!(
            "SELECT {}, 0.0, {}, {key} FROM {} WHERE {key} IN ({list}) AND {}",
            self.id_label_body,
            self.at_importance,
            self.table,
            self.filter.replace("?2", "?1"),
            key = self.key,
        )
    }

    /// One row as a hit, its text as retrieval shows it.
    fn hit(&self, r: &rusqlite::Row<'_>) -> rusqlite::Result<Hit> {
        let id: String = r.get(0)?;
        let label: String = r.get(1)?;
        let body: Option<String> = r.get(2)?;
        let body = body.unwrap_or_default();
        let text = self.kind.hit_text(&label, body);
        Ok(Hit {
            source: self.kind,
            id,
            text,
            bm25: r.get(3)?,
            at: Timestamp(r.get(4)?),
            importance: r.get(5)?,
            row: r.get(6)?,
        })
    }
}

impl SearchStore for SqliteStore {
    fn last_row(&self, source: HitSource) -> StoreResult<u64> {
        let src = Source::of(source);
        // The largest key: O(1) on the table's B-tree, where count(*) is
        // O(n).
        let last: Option<i64> = self
            .conn()
            .prepare_cached(&format!("SELECT max({}) FROM {}", src.key, src.table))
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(|e| self.err(e))?;
        Ok(last.unwrap_or(0).max(0) as u64)
    }

    fn search(&self, query: &str, limit: usize, sources: &[HitSource]) -> StoreResult<Vec<Hit>> {
        let Some(q) = any_word(query) else {
            return Ok(Vec::new());
        };
        let conn = self.conn();
        let n = i64::try_from(limit + limit / 4 + 16).unwrap_or(i64::MAX);
        let mut hits = Vec::new();
        for src in SOURCES.iter().filter(|s| sources.contains(&s.kind)) {
            let mut stmt = conn.prepare_cached(&src.sql()).map_err(|e| self.err(e))?;
            let rows: Vec<Hit> = stmt
                .query_map(params![q, self.project_id, n], |r| src.hit(r))
                .and_then(|rows| rows.collect())
                .map_err(|e| self.err(e))?;
            hits.extend(rows.into_iter().take(limit));
        }
        Ok(hits)
    }

    fn postings(&self, source: HitSource, term: &str, cap: usize) -> StoreResult<Vec<i64>> {
        let Some(q) = any_word(term) else {
            return Ok(Vec::new());
        };
        let fts = Source::of(source).fts;
        // Only row ids: the index answers from its posting lists without
        // reading a record, its length or its positions.
        let sql =
            format!("SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 ORDER BY rowid DESC LIMIT {cap}");
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_map([q], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn records(&self, source: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let src = Source::of(source);
        let conn = self.conn();
        // Not cached: the list makes every statement different.
        let mut stmt = conn
            .prepare(&src.records_sql(rows))
            .map_err(|e| self.err(e))?;
        stmt.query_map([&self.project_id], |r| src.hit(r))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }
}
