//! The rows forgetting takes, as SQL (`mnemon_core::engine::forget` decides
//! which, in one unit of work).
//!
//! PostgreSQL keeps a deleted row's bytes in its page until VACUUM reclaims
//! the space; mnemon vacuums the tables it deleted from once the forgetting
//! committed (outside a unit of work), so search, indexes and the tables'
//! live data lose the text at once and the free space is reused.

use mnemon_core::engine::forget::{
    Cell, ForgetAudit, ForgetRows, Forgotten, Held, HeldKind, Matched,
};
use mnemon_core::memory::{StoreError, Timestamp};
use tokio_postgres::Row;
use tokio_postgres::types::{FromSqlOwned, ToSql};

use crate::{PgStore, resolve_id};

type Arg<'a> = &'a (dyn ToSql + Sync);

impl PgStore {
    /// Rows of `sql`, whose `$1` is the project and `$2` (if any) `arg`.
    fn forget_rows(&self, sql: &str, arg: Option<Arg<'_>>) -> Result<Vec<Row>, StoreError> {
        let project = self.project();
        match arg {
            Some(a) => self.db()?.query(sql, &[&project, a]),
            None => self.db()?.query(sql, &[&project]),
        }
    }

    /// The first column of every row.
    fn forget_column<T: FromSqlOwned>(
        &self,
        sql: &str,
        arg: Arg<'_>,
    ) -> Result<Vec<T>, StoreError> {
        Ok(self
            .forget_rows(sql, Some(arg))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// Runs each statement with `$1` the project and `$2`, `$3` … `args`.
    fn forget_exec(&self, statements: &[&str], args: &[Arg<'_>]) -> Result<(), StoreError> {
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

    pub(crate) fn forget_audit(&self, limit: usize) -> Result<Vec<ForgetAudit>, StoreError> {
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

impl ForgetRows for PgStore {
    fn message_seq(&self, id: &str) -> Result<i64, StoreError> {
        let db = self.db()?;
        let full = resolve_id(&db, "messages", "message", self.project(), id)?;
        Ok(db
            .one("SELECT seq FROM messages WHERE id = $1", &[&full])?
            .get(0))
    }

    /// PostgreSQL's `lower` folds every letter its locale knows.
    fn matching(&self, phrase: &str) -> Result<Matched, StoreError> {
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

    fn session_logs(&self, id: &str) -> Result<(Vec<i64>, Vec<i64>), StoreError> {
        Ok((
            self.forget_column(
                "SELECT seq FROM operations WHERE project_id = $1 AND session_id = $2",
                &id,
            )?,
            self.forget_column(
                "SELECT seq FROM messages WHERE project_id = $1 AND session_id = $2",
                &id,
            )?,
        ))
    }

    fn decision_hot_items(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.forget_column(
            "SELECT id FROM hot_items WHERE project_id = $1 AND kind = 'decision' AND text LIKE '%(' || $2 || ')'",
            &id,
        )
    }

    fn hot_texts(&self, id: &str) -> Result<Vec<String>, StoreError> {
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

    fn operations_logging(&self, id: &str) -> Result<Vec<i64>, StoreError> {
        self.forget_column(
            "SELECT seq FROM operations WHERE project_id = $1 AND data LIKE '{%' AND (data::jsonb) ->> 'id' = $2",
            &id,
        )
    }

    /// The row's vectors go with it (SQLite's triggers do this; this
    /// table has no project column).
    fn delete_operation(&self, seq: i64) -> Result<(), StoreError> {
        let project = self.project();
        self.write(|db| {
            db.exec(
                "DELETE FROM vectors WHERE source = 'operation' AND record = $1",
                &[&seq],
            )?;
            db.exec(
                "DELETE FROM substitutions WHERE project_id = $1 AND op_seq = $2",
                &[&project, &seq],
            )?;
            db.exec(
                "DELETE FROM operations WHERE project_id = $1 AND seq = $2",
                &[&project, &seq],
            )?;
            Ok(())
        })
    }

    fn delete_message(&self, seq: i64) -> Result<(), StoreError> {
        let project = self.project();
        self.write(|db| {
            db.exec(
                "DELETE FROM vectors WHERE source = 'message' AND record = $1",
                &[&seq],
            )?;
            db.exec(
                "DELETE FROM messages WHERE project_id = $1 AND seq = $2",
                &[&project, &seq],
            )?;
            Ok(())
        })
    }

    fn delete_hot_item(&self, id: &str) -> Result<(), StoreError> {
        self.forget_exec(
            &[
                "UPDATE hot_items SET parent_id = NULL WHERE project_id = $1 AND parent_id = $2",
                "DELETE FROM hot_history WHERE item_id = $2 AND item_id IN (SELECT id FROM hot_items WHERE project_id = $1)",
                "DELETE FROM hot_items WHERE project_id = $1 AND id = $2",
            ],
            &[&id],
        )?;
        self.forget_exec(
            &["UPDATE hot_versions SET version = version + 1 WHERE project_id = $1"],
            &[],
        )
    }

    fn delete_decision(&self, id: &str) -> Result<(), StoreError> {
        self.forget_exec(
            &[
                "UPDATE decisions SET superseded_by = NULL WHERE project_id = $1 AND superseded_by = $2",
                "DELETE FROM decisions WHERE project_id = $1 AND id = $2",
            ],
            &[&id],
        )
    }

    fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        self.forget_exec(
            &["DELETE FROM sessions WHERE project_id = $1 AND id = $2"],
            &[&id],
        )
    }

    fn held(&self, kind: HeldKind) -> Result<Vec<Held>, StoreError> {
        let (sql, row): (&str, fn(&Row) -> Held) = match kind {
            HeldKind::Compactions => (
                "SELECT seq, session_id, summary, audit FROM compactions WHERE project_id = $1",
                |r| Held::Compaction {
                    seq: r.get(0),
                    session: r.get(1),
                    summary: r.get(2),
                    audit: r.get(3),
                },
            ),
            HeldKind::SessionSummaries => (
                "SELECT id, summary FROM sessions WHERE project_id = $1 AND summary IS NOT NULL",
                |r| Held::SessionSummary {
                    id: r.get(0),
                    summary: r.get(1),
                },
            ),
            HeldKind::Checkpoints => (
                "SELECT id, session_id, json FROM checkpoints WHERE project_id = $1 ORDER BY row_id",
                |r| Held::Checkpoint {
                    id: r.get(0),
                    session: r.get(1),
                    json: r.get(2),
                },
            ),
            HeldKind::EngineStates => (
                "SELECT agent, state FROM engine_state WHERE project_id = $1",
                |r| Held::EngineState {
                    agent: r.get(0),
                    state: r.get(1),
                },
            ),
            HeldKind::Substitutions => (
                "SELECT op_seq, text FROM substitutions WHERE project_id = $1 AND text IS NOT NULL",
                |r| Held::Substitution {
                    op_seq: r.get(0),
                    text: r.get(1),
                },
            ),
            HeldKind::Artifacts => (
                "SELECT path, content FROM artifacts WHERE project_id = $1 ORDER BY path COLLATE \"C\"",
                |r| Held::Artifact {
                    path: r.get(0),
                    content: r.get(1),
                },
            ),
            HeldKind::Documents => (
                "SELECT kind, version, content FROM documents WHERE project_id = $1",
                |r| Held::Document {
                    kind: r.get(0),
                    version: r.get(1),
                    content: r.get(2),
                },
            ),
        };
        Ok(self.forget_rows(sql, None)?.iter().map(row).collect())
    }

    fn rewrite_held(&self, row: &Held) -> Result<(), StoreError> {
        let (sql, values) = row.update_statement(|n| format!("${n}"));
        self.forget_exec(&[&sql], &sql_values(&values))
    }

    fn remove_held(&self, row: &Held) -> Result<(), StoreError> {
        let (sql, values) = row.delete_statement(|n| format!("${n}"));
        self.forget_exec(&[&sql], &sql_values(&values))
    }

    fn record_forgetting(&self, audit: &ForgetAudit) -> Result<(), StoreError> {
        let targets = serde_json::to_string(&audit.targets)
            .map_err(|e| StoreError::Invalid(format!("cannot encode the audit: {e}")))?;
        self.forget_exec(
            &["INSERT INTO forgettings (project_id, at, agent, targets, operations, messages, hot_items, decisions, sessions)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"],
            &[
                &audit.at.0,
                &audit.agent,
                &targets,
                &(audit.operations as i64),
                &(audit.messages as i64),
                &(audit.hot_items as i64),
                &(audit.decisions as i64),
                &(audit.sessions as i64),
            ],
        )
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
