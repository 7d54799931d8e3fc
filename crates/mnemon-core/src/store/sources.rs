//! What full-text search and retrieval read from each source, written once
//! for every SQL backend: the table, its key, the columns a hit is made of
//! and which rows count. A backend renders these in its [`Dialect`] and
//! adds only its text index (SQLite's FTS5 tables, PostgreSQL's `tsv`
//! columns), so two backends cannot disagree on what a search may return.

use crate::assemble::retrieve::{Hit, HitSource};
use crate::memory::{StoreResult, Timestamp};
use crate::store::sql::Columns;

/// What SQL dialects write differently in a source's expressions.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// The column that is a table's own row key (SQLite's `rowid`).
    pub row_id: &'static str,
    /// The text of field `field` of the JSON text in `column`.
    pub json_text: fn(column: &str, field: &str) -> String,
}

/// A source in one dialect.
#[derive(Debug, Clone)]
pub struct SqlSource {
    pub kind: HitSource,
    /// The content table and its alias (`operations o`).
    pub table: &'static str,
    pub alias: &'static str,
    /// The key a text index's row ids are (`o.seq`).
    pub key: String,
    /// A hit's columns before its score: id, label and body.
    pub id_label_body: String,
    /// A hit's columns after its score: time and importance.
    pub at_importance: String,
    /// Which rows retrieval may return, with `{project}` for the project.
    filter: String,
}

impl SqlSource {
    /// The filter with the project as the statement's parameter `project`
    /// (`?2`, `$1`, `:project`).
    pub fn filter(&self, project: &str) -> String {
        self.filter.replace("{project}", project)
    }

    /// `select` over the records of this source that retrieval can return,
    /// above a position, with no vector of a model; `tail` ends the
    /// statement (an order and a limit). Only the logs have vectors.
    /// Parameter 1 (as `mark` writes it: `?1`, `$1`) is the project, 2 the
    /// position, 3 the model.
    pub fn unembedded_sql(
        &self,
        select: &str,
        tail: &str,
        mark: fn(usize) -> String,
    ) -> StoreResult<String> {
        let name = self.kind.vector_name()?;
        Ok(format!(
            "SELECT {select} FROM {table} WHERE {key} > {after} AND {filter} AND NOT EXISTS
               (SELECT 1 FROM vectors v WHERE v.model = {model} AND v.source = '{name}' AND v.record = {key})
             {tail}",
            table = self.table,
            key = self.key,
            after = mark(2),
            model = mark(3),
            filter = self.filter(&mark(1)),
        ))
    }
}

/// Every source in one dialect, rendered once.
#[derive(Debug, Clone)]
pub struct Sources([SqlSource; 6]);

impl Sources {
    pub fn new(dialect: &Dialect) -> Self {
        Self(sources(dialect))
    }

    pub fn of(&self, kind: HitSource) -> &SqlSource {
        &self.0[index(kind)]
    }

    /// In the order hits of several sources are returned.
    pub fn all(&self) -> &[SqlSource; 6] {
        &self.0
    }
}

/// One source as both dialects read it; `{row_id}` and `{decision}` are
/// where they differ.
struct Template {
    kind: HitSource,
    table: &'static str,
    alias: &'static str,
    key: &'static str,
    id_label_body: &'static str,
    at: &'static str,
    importance: Weight,
    /// Beyond the project.
    only: Option<&'static str>,
}

/// A source's importance: its records' own, or one weight for all of them.
#[derive(Clone, Copy)]
enum Weight {
    Column(&'static str),
    Fixed(&'static str),
}

/// In the order hits of several sources are returned; [`index`] follows it.
const TEMPLATES: [Template; 6] = [
    Template {
        kind: HitSource::Operation,
        table: "operations o",
        alias: "o",
        key: "seq",
        id_label_body: "'o' || o.seq, o.kind, o.data",
        at: "o.created_at",
        importance: Weight::Column("o.importance"),
        // The engine's own records are not memory.
        only: Some("o.kind <> 'context_action'"),
    },
    Template {
        kind: HitSource::Message,
        table: "messages m",
        alias: "m",
        key: "seq",
        id_label_body: "'m' || m.seq, m.role, m.content",
        at: "m.created_at",
        importance: Weight::Column("m.importance"),
        only: None,
    },
    Template {
        kind: HitSource::Decision,
        table: "decisions d",
        alias: "d",
        key: "seq",
        id_label_body: "d.id, d.title, {decision}",
        at: "d.created_at",
        importance: Weight::Fixed("1.0"),
        only: None,
    },
    Template {
        kind: HitSource::Hot,
        table: "hot_items h",
        alias: "h",
        key: "seq",
        id_label_body: "'h' || h.seq, h.kind, h.text || coalesce(' — ' || h.detail, '')",
        at: "h.updated_at",
        importance: Weight::Fixed("1.0"),
        only: Some("h.status NOT IN ('complete', 'removed')"),
    },
    Template {
        kind: HitSource::Entity,
        table: "entities e",
        alias: "e",
        key: "{row_id}",
        id_label_body: "'#' || e.number, e.kind, e.title || coalesce(': ' || e.description, '') || ' (' || e.status || ')'",
        at: "e.updated_at",
        importance: Weight::Fixed("0.6"),
        // A deleted entity keeps its number, not its place in search.
        only: Some("e.deleted_at IS NULL"),
    },
    Template {
        kind: HitSource::Document,
        table: "documents d",
        alias: "d",
        key: "{row_id}",
        id_label_body: "'doc:' || d.kind, d.kind, d.content",
        at: "d.created_at",
        importance: Weight::Fixed("0.6"),
        // Only the current version of each document.
        only: Some(
            "d.version = (SELECT max(version) FROM documents x WHERE x.project_id = d.project_id AND x.kind = d.kind)",
        ),
    },
];

/// Every source, rendered in `dialect`, in [`index`]'s order.
fn sources(dialect: &Dialect) -> [SqlSource; 6] {
    TEMPLATES.map(|t| {
        let importance = match t.importance {
            Weight::Column(c) => c.to_string(),
            // A float in every dialect: PostgreSQL reads `1.0` as numeric.
            Weight::Fixed(w) => format!("CAST({w} AS DOUBLE PRECISION)"),
        };
        let filter = match t.only {
            Some(only) => format!("{}.project_id = {{project}} AND {only}", t.alias),
            None => format!("{}.project_id = {{project}}", t.alias),
        };
        SqlSource {
            kind: t.kind,
            table: t.table,
            alias: t.alias,
            key: format!("{}.{}", t.alias, t.key.replace("{row_id}", dialect.row_id)),
            id_label_body: t
                .id_label_body
                .replace("{decision}", &(dialect.json_text)("d.record", "decision")),
            at_importance: format!("{}, {importance}", t.at),
            filter,
        }
    })
}

/// Where `kind` stands in [`TEMPLATES`], and so in [`sources`]' answer.
fn index(kind: HitSource) -> usize {
    match kind {
        HitSource::Operation => 0,
        HitSource::Message => 1,
        HitSource::Decision => 2,
        HitSource::Hot => 3,
        HitSource::Entity => 4,
        HitSource::Document => 5,
    }
}

/// A hit read from a row of [`SqlSource::id_label_body`], score,
/// [`SqlSource::at_importance`] and key, in that order.
pub fn hit<C: Columns + ?Sized>(kind: HitSource, r: &C) -> Result<Hit, C::Error> {
    let label = r.text(1)?;
    let body = r.maybe_text(2)?.unwrap_or_default();
    Ok(Hit {
        source: kind,
        id: r.text(0)?,
        text: kind.hit_text(&label, body),
        bm25: r.real(3)?,
        at: Timestamp(r.int(4)?),
        importance: r.real(5)?,
        row: r.int(6)?,
        role: kind.role_of(&label),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_stands_where_its_index_says() {
        for (i, t) in TEMPLATES.iter().enumerate() {
            assert_eq!(index(t.kind), i, "{:?}", t.kind);
        }
    }
}
