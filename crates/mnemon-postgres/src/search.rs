//! Full-text search over every tier, for retrieval and `mnemon search`.

use mnemon_core::assemble::retrieve::{Hit, HitSource, LOG_SOURCES, SearchStore};
use mnemon_core::memory::{StoreError, StoreResult, Timestamp};
use tokio_postgres::Row;

use crate::PgStore;
use crate::text::{any_word, literal};

/// One index: the table, its key, what to select (id, label, body, then
/// time and importance) and which rows count.
pub(crate) struct Source {
    kind: HitSource,
    pub(crate) table: &'static str,
    pub(crate) key: &'static str,
    id_label_body: &'static str,
    at_importance: &'static str,
    /// Which rows retrieval may return; `$1` is the project.
    pub(crate) filter: &'static str,
}

const SOURCES: [Source; 6] = [
    Source {
        kind: HitSource::Operation,
        table: "operations o",
        key: "o.seq",
        id_label_body: "'o' || o.seq, o.kind, o.data",
        at_importance: "o.created_at, o.importance",
        filter: "o.project_id = $1 AND o.kind <> 'context_action'",
    },
    Source {
        kind: HitSource::Message,
        table: "messages m",
        key: "m.seq",
        id_label_body: "'m' || m.seq, m.role, m.content",
        at_importance: "m.created_at, m.importance",
        filter: "m.project_id = $1",
    },
    Source {
        kind: HitSource::Decision,
        table: "decisions d",
        key: "d.seq",
        id_label_body: "d.id, d.title, (d.record::jsonb) ->> 'decision'",
        at_importance: "d.created_at, 1.0::float8",
        filter: "d.project_id = $1",
    },
    Source {
        kind: HitSource::Hot,
        table: "hot_items h",
        key: "h.seq",
        id_label_body: "'h' || h.seq, h.kind, h.text || coalesce(' — ' || h.detail, '')",
        at_importance: "h.updated_at, 1.0::float8",
        filter: "h.project_id = $1 AND h.status NOT IN ('complete', 'removed')",
    },
    Source {
        kind: HitSource::Entity,
        table: "entities e",
        key: "e.row_id",
        id_label_body: "'#' || e.number, e.kind, e.title || coalesce(': ' || e.description, '') || ' (' || e.status || ')'",
        at_importance: "e.updated_at, 0.6::float8",
        filter: "e.project_id = $1 AND e.deleted_at IS NULL",
    },
    Source {
        kind: HitSource::Document,
        table: "documents d",
        key: "d.row_id",
        id_label_body: "'doc:' || d.kind, d.kind, d.content",
        at_importance: "d.created_at, 0.6::float8",
        filter: "d.project_id = $1 AND d.version = (SELECT max(version) FROM documents x WHERE x.project_id = d.project_id AND x.kind = d.kind)",
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

    fn alias(&self) -> &'static str {
        self.key.split('.').next().unwrap_or("")
    }

    /// `$1` the project, `$2` the query, `$3` the limit; the last column
    /// is `tag`, which source in a union the row came from. The score is
    /// PostgreSQL's `ts_rank`, negated so that lower is better, as
    /// SQLite's `bm25()` orders.
    fn sql(&self, tag: usize) -> String {
        let a = self.alias();
        format!(
            "(SELECT {}, -ts_rank({a}.tsv, q)::float8 AS score, {}, {key}, {tag}
             FROM {}, to_tsquery('simple', $2) q
             WHERE {a}.tsv @@ q AND {} ORDER BY score, {key} DESC LIMIT $3)",
            self.id_label_body,
            self.at_importance,
            self.table,
            self.filter,
            key = self.key,
        )
    }

    /// The newest `cap` keys holding `query` (a `tsquery`), with the values
    /// written in: planned for this word, since a plan made for any word
    /// walks a common word's whole posting list to sort it (48 ms for a
    /// word in all of 100,000 records, against 0.2 ms by walking the keys
    /// backwards), and one made for a common word walks everything for a
    /// rare one.
    fn postings_sql(&self, query: &str, cap: usize) -> String {
        format!(
            "SELECT {key} FROM {} WHERE {a}.tsv @@ to_tsquery('simple', {}) ORDER BY {key} DESC LIMIT {cap}",
            self.table,
            literal(query),
            key = self.key,
            a = self.alias(),
        )
    }

    fn records_sql(&self) -> String {
        format!(
            "SELECT {}, 0.0::float8, {}, {key} FROM {} WHERE {key} = ANY($2) AND {}",
            self.id_label_body,
            self.at_importance,
            self.table,
            self.filter,
            key = self.key,
        )
    }

    /// One row as a hit, its text as retrieval shows it.
    fn hit(&self, r: &Row) -> Hit {
        let id: String = r.get(0);
        let label: String = r.get(1);
        let body: Option<String> = r.get(2);
        let body = body.unwrap_or_default();
        let text = self.kind.hit_text(&label, body);
        Hit {
            source: self.kind,
            id,
            text,
            bm25: r.get(3),
            at: Timestamp(r.get(4)),
            importance: r.get(5),
            row: r.get(6),
        }
    }
}

impl SearchStore for PgStore {
    fn last_row(&self, source: HitSource) -> StoreResult<u64> {
        let src = Source::of(source);
        let last: Option<i64> = self
            .db()?
            .one(&format!("SELECT max({}) FROM {}", src.key, src.table), &[])?
            .get(0);
        Ok(last.unwrap_or(0).max(0) as u64)
    }

    fn search(&self, query: &str, limit: usize, sources: &[HitSource]) -> StoreResult<Vec<Hit>> {
        let Some(q) = any_word(query) else {
            return Ok(Vec::new());
        };
        let wanted: Vec<(usize, &Source)> = SOURCES
            .iter()
            .enumerate()
            .filter(|(_, s)| sources.contains(&s.kind))
            .collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        // Every index in one statement: one round trip, one plan.
        let sql = wanted
            .iter()
            .map(|(tag, s)| s.sql(*tag))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self.db()?.query(&sql, &[&self.project(), &q, &n])?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let tag: i32 = r.get(7);
                let src = SOURCES.get(usize::try_from(tag).ok()?)?;
                Some(src.hit(r))
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
    /// its own word (see [`Source::postings_sql`]).
    fn postings_many(&self, asks: &[(HitSource, &str)], cap: usize) -> StoreResult<Vec<Vec<i64>>> {
        let mut out = vec![Vec::new(); asks.len()];
        let mut sql = String::new();
        let mut sent = Vec::new();
        for (i, (source, term)) in asks.iter().enumerate() {
            if let Some(q) = any_word(term) {
                sql.push_str(&Source::of(*source).postings_sql(&q, cap));
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
        let [o, m] = LOG_SOURCES.map(Source::of);
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

    fn records(&self, source: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let src = Source::of(source);
        let found = self
            .db()?
            .query(&src.records_sql(), &[&self.project(), &rows])?;
        Ok(found.iter().map(|r| src.hit(r)).collect())
    }
}
