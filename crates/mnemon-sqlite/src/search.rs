//! Full-text search over every tier, for retrieval and `mnemon search`.

use mnemon_core::assemble::retrieve::{Hit, HitSource, SearchStore};
use std::sync::LazyLock;

use mnemon_core::memory::StoreResult;
use mnemon_core::store::sources::{self, Dialect, Sources, SqlSource};
use rusqlite::params;

use crate::SqliteStore;
use crate::row::Cols;

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

/// Where SQLite's SQL differs from core's sources.
const SQLITE: Dialect = Dialect {
    row_id: "rowid",
    json_text: |column, field| format!("json_extract({column}, '$.{field}')"),
};

pub(crate) static SOURCES: LazyLock<Sources> = LazyLock::new(|| Sources::new(&SQLITE));

/// The FTS5 table that indexes `kind`'s records by their `key`.
fn fts(kind: HitSource) -> &'static str {
    match kind {
        HitSource::Operation => "operations_fts",
        HitSource::Message => "messages_fts",
        HitSource::Decision => "decisions_fts",
        HitSource::Hot => "hot_fts",
        HitSource::Entity => "entities_fts",
        HitSource::Document => "documents_fts",
    }
}

/// `?1` the match, `?2` the project, `?3` the limit.
///
/// The best matches are chosen inside the index before any row is
/// joined, so a query matching thousands of records reads only the
/// few it returns; `?3` is over-fetched a little for the rows the
/// filter then leaves out (other projects, the engine's own records).
fn search_sql(src: &SqlSource) -> String {
    format!(
        "WITH m AS MATERIALIZED (SELECT rowid AS id, bm25({fts}) AS score FROM {fts} WHERE {fts} MATCH ?1)
         SELECT {}, f.score, {}, f.id FROM (SELECT id, score FROM m ORDER BY score LIMIT ?3) f
         CROSS JOIN {} ON {} = f.id WHERE {} ORDER BY f.score",
        src.id_label_body,
        src.at_importance,
        src.table,
        src.key,
        src.filter("?2"),
        fts = fts(src.kind),
    )
}

/// The rows behind `keys`, written into the SQL: they are integers
/// mnemon read from the index, and one statement per call beats
/// hundreds of single-row lookups. `?1` is the project.
///
/// The project test (the filter's first term) is written `+project_id`,
/// which SQLite reads as "use no index for this". Without statistics it
/// otherwise took `operations_by_project (project_id, seq)` for the keys,
/// and each row cost a seek in that index and another in the table: a
/// third of the time of a context with retrieval by meaning at 100,000
/// operations went to reading the records found (BENCHMARKS.md,
/// 2026-11-29).
fn records_sql(src: &SqlSource, keys: &[i64]) -> String {
    let list = keys
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let filter = src.filter("?1");
    debug_assert!(filter.starts_with(&format!("{}.project_id ", src.alias)));
    format!(
        "SELECT {}, 0.0, {}, {key} FROM {} WHERE {key} IN ({list}) AND +{filter}",
        src.id_label_body,
        src.at_importance,
        src.table,
        key = src.key,
    )
}

fn hit(kind: HitSource) -> impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<Hit> {
    move |r| sources::hit(kind, &Cols(r))
}

impl SearchStore for SqliteStore {
    fn last_row(&self, kind: HitSource) -> StoreResult<u64> {
        let src = SOURCES.of(kind);
        // The largest key: O(1) on the table's B-tree, where count(*) is
        // O(n).
        let last: Option<i64> = self
            .conn()
            .prepare_cached(&format!("SELECT max({}) FROM {}", src.key, src.table))
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(|e| self.err(e))?;
        Ok(last.unwrap_or(0).max(0) as u64)
    }

    fn search(&self, query: &str, limit: usize, wanted: &[HitSource]) -> StoreResult<Vec<Hit>> {
        let Some(q) = any_word(query) else {
            return Ok(Vec::new());
        };
        let conn = self.conn();
        let n = i64::try_from(limit + limit / 4 + 16).unwrap_or(i64::MAX);
        let mut hits = Vec::new();
        for src in SOURCES.all().iter().filter(|s| wanted.contains(&s.kind)) {
            let mut stmt = conn
                .prepare_cached(&search_sql(src))
                .map_err(|e| self.err(e))?;
            let rows: Vec<Hit> = stmt
                .query_map(params![q, self.project_id, n], hit(src.kind))
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
        let fts = fts(source);
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

    fn records(&self, kind: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.conn();
        // Not cached: the list makes every statement different.
        let mut stmt = conn
            .prepare(&records_sql(SOURCES.of(kind), rows))
            .map_err(|e| self.err(e))?;
        stmt.query_map([&self.project_id], hit(kind))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

    use super::*;

    /// Records are read by their keys in the table itself, whatever
    /// indexes hold the project: one seek a row, not two. Short lists went
    /// by the key before the project test was unindexed; a list as long as
    /// a context's (hundreds) did not.
    #[test]
    fn records_are_read_by_their_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("mnemon.db")).unwrap();
        let conn = store.conn();
        for src in SOURCES.all() {
            let keys: Vec<i64> = (1..=500).rev().collect();
            let sql = records_sql(src, &keys);
            let plan: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map(["p"], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let outer = &plan[0];
            assert!(
                outer.contains("INTEGER PRIMARY KEY"),
                "{:?}: {}",
                src.kind,
                plan.join("; ")
            );
        }
    }
}
