//! Full-text search over every tier, for retrieval and `mnemon search`.

use mnemon_core::assemble::retrieve::{Hit, HitSource, LOG_SOURCES, SearchStore};
use std::sync::LazyLock;

use mnemon_core::memory::{StoreError, StoreResult};
use mnemon_core::store::sources::{self, Dialect, Sources, SqlSource};
use tokio_postgres::Row;

use crate::PgStore;
use crate::row::{Cols, sure};
use crate::text::{any_word, literal};

/// Where PostgreSQL's SQL differs from core's sources. JSON is stored as
/// text, so it is read as `jsonb` first.
const POSTGRES: Dialect = Dialect {
    row_id: "row_id",
    json_text: |column, field| format!("({column}::jsonb) ->> '{field}'"),
};

pub(crate) static SOURCES: LazyLock<Sources> = LazyLock::new(|| Sources::new(&POSTGRES));

/// `$1` the project, `$2` the query, `$3` the limit; the last column
/// is `tag`, which source in a union the row came from. The score is
/// PostgreSQL's `ts_rank`, negated so that lower is better, as
/// SQLite's `bm25()` orders.
fn search_sql(src: &SqlSource, tag: usize) -> String {
    let a = src.alias;
    format!(
        "(SELECT {}, -ts_rank({a}.tsv, q)::float8 AS score, {}, {key}, {tag}
         FROM {}, to_tsquery('simple', $2) q
         WHERE {a}.tsv @@ q AND {} ORDER BY score, {key} DESC LIMIT $3)",
        src.id_label_body,
        src.at_importance,
        src.table,
        src.filter("$1"),
        key = src.key,
    )
}

/// The newest `cap` keys holding `query` (a `tsquery`), with the values
/// written in: planned for this word, since a plan made for any word
/// walks a common word's whole posting list to sort it (48 ms for a
/// word in all of 100,000 records, against 0.2 ms by walking the keys
/// backwards), and one made for a common word walks everything for a
/// rare one.
fn postings_sql(src: &SqlSource, query: &str, cap: usize) -> String {
    format!(
        "SELECT {key} FROM {} WHERE {a}.tsv @@ to_tsquery('simple', {}) ORDER BY {key} DESC LIMIT {cap}",
        src.table,
        literal(query),
        key = src.key,
        a = src.alias,
    )
}

/// `$1` the project, `$2` the keys.
fn records_sql(src: &SqlSource) -> String {
    format!(
        "SELECT {}, 0.0::float8, {}, {key} FROM {} WHERE {key} = ANY($2) AND {}",
        src.id_label_body,
        src.at_importance,
        src.table,
        src.filter("$1"),
        key = src.key,
    )
}

fn hit(kind: HitSource, r: &Row) -> Hit {
    sure(sources::hit(kind, &Cols(r)))
}

impl SearchStore for PgStore {
    fn last_row(&self, kind: HitSource) -> StoreResult<u64> {
        let src = SOURCES.of(kind);
        let last: Option<i64> = self
            .db()?
            .one(&format!("SELECT max({}) FROM {}", src.key, src.table), &[])?
            .get(0);
        Ok(last.unwrap_or(0).max(0) as u64)
    }

    fn search(&self, query: &str, limit: usize, kinds: &[HitSource]) -> StoreResult<Vec<Hit>> {
        let Some(q) = any_word(query) else {
            return Ok(Vec::new());
        };
        let wanted: Vec<(usize, &SqlSource)> = SOURCES
            .all()
            .iter()
            .enumerate()
            .filter(|(_, s)| kinds.contains(&s.kind))
            .collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        // Every index in one statement: one round trip, one plan.
        let sql = wanted
            .iter()
            .map(|(tag, s)| search_sql(s, *tag))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.db()?.query(&sql, &[&self.project(), &q, &n])?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let tag: i32 = r.get(7);
                let src = SOURCES.all().get(usize::try_from(tag).ok()?)?;
                Some(hit(src.kind, r))
            })
            .collect())
    }

    fn postings(&self, source: HitSource, term: &str, cap: usize) -> StoreResult<Vec<i64>> {
        Ok(self
            .postings_many(&[(source, term)], cap)?
            .pop()
            .unwrap_or_default())
    }

    /// Every word's postings in one round trip, each statement planned for
    /// its own word (see `postings_sql`).
    fn postings_many(&self, asks: &[(HitSource, &str)], cap: usize) -> StoreResult<Vec<Vec<i64>>> {
        let mut out = vec![Vec::new(); asks.len()];
        let mut sql = String::new();
        let mut sent = Vec::new();
        for (i, (kind, term)) in asks.iter().enumerate() {
            if let Some(q) = any_word(term) {
                sql.push_str(&postings_sql(SOURCES.of(*kind), &q, cap));
                sql.push_str(";\n");
                sent.push(i);
            }
        }
        if sent.is_empty() {
            return Ok(out);
        }
        let answers = self.db()?.simple_rows(&sql)?;
        if answers.len() != sent.len() {
            return Err(StoreError::Backend(format!(
                "PostgreSQL answered {} of {} postings statements",
                answers.len(),
                sent.len()
            )));
        }
        for (i, rows) in sent.into_iter().zip(answers) {
            out[i] = rows
                .iter()
                .map(|r| {
                    r.get(0).and_then(|k| k.parse::<i64>().ok()).ok_or_else(|| {
                        StoreError::Backend(format!("a posting that is not a key: {:?}", r.get(0)))
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(out)
    }

    fn last_rows(&self) -> StoreResult<[u64; 2]> {
        let [o, m] = LOG_SOURCES.map(|k| SOURCES.of(k));
        let row = self.db()?.one(
            &format!(
                "SELECT (SELECT max({}) FROM {}), (SELECT max({}) FROM {})",
                o.key, o.table, m.key, m.table
            ),
            &[],
        )?;
        let at = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0).max(0) as u64;
        Ok([at(0), at(1)])
    }

    fn records(&self, kind: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let src = SOURCES.of(kind);
        let found = self
            .db()?
            .query(&records_sql(src), &[&self.project(), &rows])?;
        Ok(found.iter().map(|r| hit(kind, r)).collect())
    }
}
