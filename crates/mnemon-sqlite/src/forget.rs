//! The rows forgetting takes, as SQL (`mnemon_core::engine::forget` decides
//! which, in one unit of work), with secure deletion: deleted rows and the
//! pages they leave are overwritten with zeros (`secure_delete` is on for
//! every connection), so the text is not left in the file's free space.

use mnemon_core::engine::forget::{
    Cell, ForgetAudit, ForgetRows, ForgetSql, Forgotten, Held, HeldKind, Matched,
};
use mnemon_core::memory::{StoreError, StoreResult, Timestamp};
use rusqlite::{ToSql, params};

use crate::row::Cols;
use crate::{SqliteStore, resolve_id};

impl SqliteStore {
    /// The first column of every row of `sql`, whose `?1` is the project and
    /// `?2` (if any) `arg`.
    fn forget_column<T: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        arg: Option<&dyn ToSql>,
    ) -> StoreResult<Vec<T>> {
        self.forget_rows(sql, arg, |r| r.get(0))
    }

    fn forget_rows<T>(
        &self,
        sql: &str,
        arg: Option<&dyn ToSql>,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> StoreResult<Vec<T>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = match arg {
            Some(a) => stmt.query_map(params![self.project_id, a], row),
            None => stmt.query_map(params![self.project_id], row),
        };
        rows.and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// Runs each statement with `?1` the project and `?2`, `?3` … `args`.
    fn forget_exec(&self, statements: &[String], args: &[&dyn ToSql]) -> StoreResult<()> {
        self.write(|tx| {
            for sql in statements {
                let mut all: Vec<&dyn ToSql> = vec![&self.project_id];
                all.extend_from_slice(args);
                tx.prepare_cached(sql)
                    .and_then(|mut s| s.execute(all.as_slice()))
                    .map_err(|e| self.err(e))?;
            }
            Ok(())
        })
    }

    pub(crate) fn forget_audit(&self, limit: usize) -> StoreResult<Vec<ForgetAudit>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT at, agent, targets, operations, messages, hot_items, decisions, sessions
                 FROM forgettings WHERE project_id = ?1 ORDER BY seq DESC LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![self.project_id, i64::try_from(limit).unwrap_or(-1)],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        [
                            r.get::<_, i64>(3)?,
                            r.get::<_, i64>(4)?,
                            r.get::<_, i64>(5)?,
                            r.get::<_, i64>(6)?,
                            r.get::<_, i64>(7)?,
                        ],
                    ))
                },
            )
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|(at, agent, targets, c)| {
                Ok(ForgetAudit {
                    at: Timestamp(at),
                    agent,
                    targets: serde_json::from_str(&targets).map_err(|e| StoreError::Corrupt {
                        path: self.path.clone(),
                        reason: format!("an audit entry of forgetting does not parse: {e}"),
                    })?,
                    operations: c[0] as u64,
                    messages: c[1] as u64,
                    hot_items: c[2] as u64,
                    decisions: c[3] as u64,
                    sessions: c[4] as u64,
                })
            })
            .collect()
    }
}

impl ForgetSql for SqliteStore {
    fn mark(&self) -> fn(usize) -> String {
        |n| format!("?{n}")
    }

    fn execute(&self, statements: &[String], args: &[Cell<'_>]) -> StoreResult<()> {
        self.forget_exec(statements, &sql_values(args))
    }

    fn positions(&self, sql: &str, arg: Cell<'_>) -> StoreResult<Vec<i64>> {
        self.forget_column(sql, Some(&sql_values(&[arg])[0]))
    }
}

impl ForgetRows for SqliteStore {
    fn message_seq(&self, id: &str) -> StoreResult<i64> {
        let full = resolve_id(
            &self.conn(),
            &self.path,
            "messages",
            "message",
            &self.project_id,
            id,
        )?;
        self.conn()
            .query_row("SELECT seq FROM messages WHERE id = ?1", [full], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))
    }

    /// SQLite's `lower` folds ASCII letters only.
    fn matching(&self, phrase: &str) -> StoreResult<Matched> {
        Ok(Matched {
            operations: self.forget_column(
                "SELECT o.seq FROM operations o WHERE o.project_id = ?1 AND EXISTS (
                     SELECT 1 FROM json_tree(o.data) t
                     WHERE t.type = 'text' AND instr(lower(t.value), lower(?2)) > 0)",
                Some(&phrase),
            )?,
            messages: self.forget_column(
                "SELECT seq FROM messages WHERE project_id = ?1 AND instr(lower(content), lower(?2)) > 0",
                Some(&phrase),
            )?,
            hot_items: self.forget_column(
                "SELECT DISTINCT i.id FROM hot_items i JOIN hot_history h ON h.item_id = i.id
                 WHERE i.project_id = ?1
                   AND (instr(lower(h.text), lower(?2)) > 0 OR instr(lower(coalesce(h.detail, '')), lower(?2)) > 0)",
                Some(&phrase),
            )?,
            decisions: self.forget_column(
                "SELECT id FROM decisions WHERE project_id = ?1
                   AND (instr(lower(title), lower(?2)) > 0 OR instr(lower(record), lower(?2)) > 0)",
                Some(&phrase),
            )?,
        })
    }

    fn decision_hot_items(&self, id: &str) -> StoreResult<Vec<String>> {
        self.forget_column(
            "SELECT id FROM hot_items WHERE project_id = ?1 AND kind = 'decision' AND text LIKE '%(' || ?2 || ')'",
            Some(&id),
        )
    }

    fn hot_texts(&self, id: &str) -> StoreResult<Vec<String>> {
        let pairs: Vec<(String, String)> = self.forget_rows(
            "SELECT h.text, coalesce(h.detail, '') FROM hot_history h JOIN hot_items i ON i.id = h.item_id
             WHERE i.project_id = ?1 AND h.item_id = ?2",
            Some(&id),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(pairs.into_iter().flat_map(|(t, d)| [t, d]).collect())
    }

    fn operations_logging(&self, id: &str) -> StoreResult<Vec<i64>> {
        self.forget_column(
            "SELECT seq FROM operations WHERE project_id = ?1 AND json_extract(data, '$.id') = ?2",
            Some(&id),
        )
    }

    fn held(&self, kind: HeldKind) -> StoreResult<Vec<Held>> {
        self.forget_rows(&kind.select_statement(self.mark()), None, |r| {
            kind.read(&Cols(r))
        })
    }

    fn after_forgetting(&self, _forgotten: &Forgotten) {
        let conn = self.conn();
        // Inside a caller's unit of work nothing has committed yet.
        if !conn.is_autocommit() {
            return;
        }
        // A database an earlier mnemon wrote may hold old text in space
        // freed before `secure_delete` was always on: rewritten once. The
        // forget has committed, so this is never its failure: a vacuum that
        // cannot run now (another writer) runs at the next.
        let zeroed = conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM meta WHERE key = '{}'",
                    crate::migrate::ZEROED
                ),
                [],
                |r| r.get::<_, i64>(0),
            )
            .is_ok_and(|n| n > 0);
        if !zeroed && conn.execute_batch("VACUUM").is_ok() {
            let _ = conn.execute_batch(&format!(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('{}', '1')",
                crate::migrate::ZEROED
            ));
        }
        // Moves the committed pages out of the write-ahead log and empties
        // it; best effort: a reader holding an old snapshot keeps the log
        // until it finishes, and the next checkpoint then overwrites it.
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
}

fn sql_values<'a>(cells: &'a [Cell<'a>]) -> Vec<&'a dyn ToSql> {
    cells
        .iter()
        .map(|c| match c {
            Cell::Int(n) => n as &dyn ToSql,
            Cell::Text(t) => t as &dyn ToSql,
        })
        .collect()
}
