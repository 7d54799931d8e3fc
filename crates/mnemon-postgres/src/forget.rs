//! The rows forgetting takes, as SQL (`mnemon_core::engine::forget` decides
//! which, in one unit of work).
//!
//! PostgreSQL keeps a deleted row's bytes in its page until VACUUM reclaims
//! the space; mnemon vacuums the tables it deleted from once the forgetting
//! committed (outside a unit of work), so search, indexes and the tables'
//! live data lose the text at once and the free space is reused.

use mnemon_core::engine::forget::{
    Cell, ForgetAudit, ForgetRows, ForgetSql, Forgotten, Held, HeldKind, Matched,
};
use mnemon_core::memory::{StoreError, StoreResult, Timestamp};
use tokio_postgres::Row;
use tokio_postgres::types::{FromSqlOwned, ToSql};

use crate::row::{Cols, sure};
use crate::{PgStore, resolve_id};

type Arg<'a> = &'a (dyn ToSql + Sync);

impl PgStore {
    /// Rows of `sql`, whose `$1` is the project and `$2` (if any) `arg`.
    fn forget_rows(&self, sql: &str, arg: Option<Arg<'_>>) -> StoreResult<Vec<Row>> {
        let project = self.project();
        match arg {
            Some(a) => self.db()?.query(sql, &[&project, a]),
            None => self.db()?.query(sql, &[&project]),
        }
    }

    /// The first column of every row.
    fn forget_column<T: FromSqlOwned>(&self, sql: &str, arg: Arg<'_>) -> StoreResult<Vec<T>> {
        Ok(self
            .forget_rows(sql, Some(arg))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// Runs each statement with `$1` the project and `$2`, `$3` … `args`.
    fn forget_exec(&self, statements: &[String], args: &[Arg<'_>]) -> StoreResult<()> {
        let project = self.project();
        let mut all: Vec<Arg<'_>> = vec![&project];
        all.extend_from_slice(args);
        self.write(|db| {
            for sql in statements {
                db.exec(sql, &all)?;
            }
            Ok(())
        })
    }

    pub(crate) fn forget_audit(&self, limit: usize) -> StoreResult<Vec<ForgetAudit>> {
        let rows = self.db()?.query(
            "SELECT at, agent, targets, operations, messages, hot_items, decisions, sessions
             FROM forgettings WHERE project_id = $1 ORDER BY seq DESC LIMIT $2",
            &[&self.project(), &i64::try_from(limit).unwrap_or(i64::MAX)],
        )?;
        rows.iter()
            .map(|r| {
                let targets: String = r.get(2);
                Ok(ForgetAudit {
                    at: Timestamp(r.get(0)),
                    agent: r.get(1),
                    targets: serde_json::from_str(&targets).map_err(|e| StoreError::Corrupt {
                        path: self.shown().to_string(),
                        reason: format!("an audit entry of forgetting does not parse: {e}"),
                    })?,
                    operations: r.get::<_, i64>(3) as u64,
                    messages: r.get::<_, i64>(4) as u64,
                    hot_items: r.get::<_, i64>(5) as u64,
                    decisions: r.get::<_, i64>(6) as u64,
                    sessions: r.get::<_, i64>(7) as u64,
                })
            })
            .collect()
    }
}

impl ForgetSql for PgStore {
    fn mark(&self) -> fn(usize) -> String {
        |n| format!("${n}")
    }

    fn execute(&self, statements: &[String], args: &[Cell<'_>]) -> StoreResult<()> {
        self.forget_exec(statements, &sql_values(args))
    }

    fn positions(&self, sql: &str, arg: Cell<'_>) -> StoreResult<Vec<i64>> {
        self.forget_column(sql, sql_values(&[arg])[0])
    }
}

impl ForgetRows for PgStore {
    fn message_seq(&self, id: &str) -> StoreResult<i64> {
        let db = self.db()?;
        let full = resolve_id(&db, "messages", "message", self.project(), id)?;
        Ok(db
            .one("SELECT seq FROM messages WHERE id = $1", &[&full])?
            .get(0))
    }

    /// PostgreSQL's `lower` folds every letter its locale knows.
    fn matching(&self, phrase: &str) -> StoreResult<Matched> {
        Ok(Matched {
            operations: self.forget_column(
                "SELECT o.seq FROM operations o WHERE o.project_id = $1 AND EXISTS (
                     SELECT 1 FROM jsonb_path_query(o.data::jsonb, 'strict $.** ? (@.type() == \"string\")') v
                     WHERE strpos(lower(v #>> '{}'), lower($2)) > 0)",
                &phrase,
            )?,
            messages: self.forget_column(
                "SELECT seq FROM messages WHERE project_id = $1 AND strpos(lower(content), lower($2)) > 0",
                &phrase,
            )?,
            hot_items: self.forget_column(
                "SELECT DISTINCT i.id FROM hot_items i JOIN hot_history h ON h.item_id = i.id
                 WHERE i.project_id = $1
                   AND (strpos(lower(h.text), lower($2)) > 0 OR strpos(lower(coalesce(h.detail, '')), lower($2)) > 0)",
                &phrase,
            )?,
            decisions: self.forget_column(
                "SELECT id FROM decisions WHERE project_id = $1
                   AND (strpos(lower(title), lower($2)) > 0 OR strpos(lower(record), lower($2)) > 0)",
                &phrase,
            )?,
        })
    }

    fn decision_hot_items(&self, id: &str) -> StoreResult<Vec<String>> {
        self.forget_column(
            "SELECT id FROM hot_items WHERE project_id = $1 AND kind = 'decision' AND text LIKE '%(' || $2 || ')'",
            &id,
        )
    }

    fn hot_texts(&self, id: &str) -> StoreResult<Vec<String>> {
        Ok(self
            .forget_rows(
                "SELECT h.text, coalesce(h.detail, '') FROM hot_history h JOIN hot_items i ON i.id = h.item_id
                 WHERE i.project_id = $1 AND h.item_id = $2",
                Some(&id),
            )?
            .iter()
            .flat_map(|r| [r.get::<_, String>(0), r.get::<_, String>(1)])
            .collect())
    }

    fn operations_logging(&self, id: &str) -> StoreResult<Vec<i64>> {
        self.forget_column(
            "SELECT seq FROM operations WHERE project_id = $1 AND data LIKE '{%' AND (data::jsonb) ->> 'id' = $2",
            &id,
        )
    }

    fn held(&self, kind: HeldKind) -> StoreResult<Vec<Held>> {
        let mut sql = kind.select_statement(self.mark());
        // The order SQLite reads them in: as written, and paths bytewise.
        match kind {
            HeldKind::Checkpoints => sql.push_str(" ORDER BY row_id"),
            HeldKind::Artifacts => sql.push_str(" ORDER BY path COLLATE \"C\""),
            _ => {}
        }
        Ok(self
            .forget_rows(&sql, None)?
            .iter()
            .map(|r| sure(kind.read(&Cols(r))))
            .collect())
    }

    /// Best effort: the forgetting committed; vacuuming only frees the dead
    /// rows' space sooner. Inside a caller's unit nothing has committed yet.
    fn after_forgetting(&self, forgotten: &Forgotten) {
        if self.unit().is_some() || forgotten.is_empty() {
            return;
        }
        if let Ok(db) = self.db() {
            let _ = db.batch(
                "VACUUM operations, messages, hot_items, hot_history, decisions, sessions, compactions, checkpoints, documents, vectors",
            );
        }
    }
}

fn sql_values<'a>(cells: &'a [Cell<'a>]) -> Vec<Arg<'a>> {
    cells
        .iter()
        .map(|c| match c {
            Cell::Int(n) => n as Arg<'a>,
            Cell::Text(t) => t as Arg<'a>,
        })
        .collect()
}
