//! The rows forgetting takes, as SQL (`mnemon_core::engine::forget` decides
//! which, in one unit of work), with secure deletion: deleted rows and the
//! pages they leave are overwritten with zeros (`secure_delete` is on for
//! every connection), so the text is not left in the file's free space.

use mnemon_core::engine::forget::{
    Cell, ForgetAudit, ForgetRows, Forgotten, Held, HeldKind, Matched,
};
use mnemon_core::memory::{StoreError, Timestamp};
use rusqlite::{ToSql, params};

use crate::{SqliteStore, resolve_id};

impl SqliteStore {
    /// The first column of every row of `sql`, whose `?1` is the project and
    /// `?2` (if any) `arg`.
    fn forget_column<T: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        arg: Option<&dyn ToSql>,
    ) -> Result<Vec<T>, StoreError> {
        self.forget_rows(sql, arg, |r| r.get(0))
    }

    fn forget_rows<T>(
        &self,
        sql: &str,
        arg: Option<&dyn ToSql>,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
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
    fn forget_exec(&self, statements: &[&str], args: &[&dyn ToSql]) -> Result<(), StoreError> {
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

    pub(crate) fn forget_audit(&self, limit: usize) -> Result<Vec<ForgetAudit>, StoreError> {
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

impl ForgetRows for SqliteStore {
    fn message_seq(&self, id: &str) -> Result<i64, StoreError> {
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
    fn matching(&self, phrase: &str) -> Result<Matched, StoreError> {
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

    fn session_logs(&self, id: &str) -> Result<(Vec<i64>, Vec<i64>), StoreError> {
        Ok((
            self.forget_column(
                "SELECT seq FROM operations WHERE project_id = ?1 AND session_id = ?2",
                Some(&id),
            )?,
            self.forget_column(
                "SELECT seq FROM messages WHERE project_id = ?1 AND session_id = ?2",
                Some(&id),
            )?,
        ))
    }

    fn decision_hot_items(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.forget_column(
            "SELECT id FROM hot_items WHERE project_id = ?1 AND kind = 'decision' AND text LIKE '%(' || ?2 || ')'",
            Some(&id),
        )
    }

    fn hot_texts(&self, id: &str) -> Result<Vec<String>, StoreError> {
        let pairs: Vec<(String, String)> = self.forget_rows(
            "SELECT h.text, coalesce(h.detail, '') FROM hot_history h JOIN hot_items i ON i.id = h.item_id
             WHERE i.project_id = ?1 AND h.item_id = ?2",
            Some(&id),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(pairs.into_iter().flat_map(|(t, d)| [t, d]).collect())
    }

    fn operations_logging(&self, id: &str) -> Result<Vec<i64>, StoreError> {
        self.forget_column(
            "SELECT seq FROM operations WHERE project_id = ?1 AND json_extract(data, '$.id') = ?2",
            Some(&id),
        )
    }

    fn delete_operation(&self, seq: i64) -> Result<(), StoreError> {
        self.forget_exec(
            &[
                "DELETE FROM substitutions WHERE project_id = ?1 AND op_seq = ?2",
                "DELETE FROM operations WHERE project_id = ?1 AND seq = ?2",
            ],
            &[&seq],
        )
    }

    fn delete_message(&self, seq: i64) -> Result<(), StoreError> {
        self.forget_exec(
            &["DELETE FROM messages WHERE project_id = ?1 AND seq = ?2"],
            &[&seq],
        )
    }

    fn delete_hot_item(&self, id: &str) -> Result<(), StoreError> {
        self.forget_exec(
            &[
                "UPDATE hot_items SET parent_id = NULL WHERE project_id = ?1 AND parent_id = ?2",
                "DELETE FROM hot_history WHERE item_id = ?2 AND item_id IN (SELECT id FROM hot_items WHERE project_id = ?1)",
                "DELETE FROM hot_items WHERE project_id = ?1 AND id = ?2",
            ],
            &[&id],
        )?;
        self.forget_exec(
            &["UPDATE hot_versions SET version = version + 1 WHERE project_id = ?1"],
            &[],
        )
    }

    fn delete_decision(&self, id: &str) -> Result<(), StoreError> {
        self.forget_exec(
            &[
                "UPDATE decisions SET superseded_by = NULL WHERE project_id = ?1 AND superseded_by = ?2",
                "DELETE FROM decisions WHERE project_id = ?1 AND id = ?2",
            ],
            &[&id],
        )
    }

    fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        self.forget_exec(
            &["DELETE FROM sessions WHERE project_id = ?1 AND id = ?2"],
            &[&id],
        )
    }

    fn held(&self, kind: HeldKind) -> Result<Vec<Held>, StoreError> {
        match kind {
            HeldKind::Compactions => self.forget_rows(
                "SELECT seq, session_id, summary, audit FROM compactions WHERE project_id = ?1",
                None,
                |r| {
                    Ok(Held::Compaction {
                        seq: r.get(0)?,
                        session: r.get(1)?,
                        summary: r.get(2)?,
                        audit: r.get(3)?,
                    })
                },
            ),
            HeldKind::SessionSummaries => self.forget_rows(
                "SELECT id, summary FROM sessions WHERE project_id = ?1 AND summary IS NOT NULL",
                None,
                |r| {
                    Ok(Held::SessionSummary {
                        id: r.get(0)?,
                        summary: r.get(1)?,
                    })
                },
            ),
            HeldKind::Checkpoints => self.forget_rows(
                "SELECT id, session_id, json FROM checkpoints WHERE project_id = ?1",
                None,
                |r| {
                    Ok(Held::Checkpoint {
                        id: r.get(0)?,
                        session: r.get(1)?,
                        json: r.get(2)?,
                    })
                },
            ),
            HeldKind::EngineStates => self.forget_rows(
                "SELECT agent, state FROM engine_state WHERE project_id = ?1",
                None,
                |r| {
                    Ok(Held::EngineState {
                        agent: r.get(0)?,
                        state: r.get(1)?,
                    })
                },
            ),
            HeldKind::Substitutions => self.forget_rows(
                "SELECT op_seq, text FROM substitutions WHERE project_id = ?1 AND text IS NOT NULL",
                None,
                |r| {
                    Ok(Held::Substitution {
                        op_seq: r.get(0)?,
                        text: r.get(1)?,
                    })
                },
            ),
            HeldKind::Artifacts => self.forget_rows(
                "SELECT path, content FROM artifacts WHERE project_id = ?1",
                None,
                |r| {
                    Ok(Held::Artifact {
                        path: r.get(0)?,
                        content: r.get(1)?,
                    })
                },
            ),
            HeldKind::Documents => self.forget_rows(
                "SELECT kind, version, content FROM documents WHERE project_id = ?1",
                None,
                |r| {
                    Ok(Held::Document {
                        kind: r.get(0)?,
                        version: r.get(1)?,
                        content: r.get(2)?,
                    })
                },
            ),
        }
    }

    fn rewrite_held(&self, row: &Held) -> Result<(), StoreError> {
        let (sql, values) = row.update_statement(|n| format!("?{n}"));
        self.forget_exec(&[&sql], &sql_values(&values))
    }

    fn remove_held(&self, row: &Held) -> Result<(), StoreError> {
        let (sql, values) = row.delete_statement(|n| format!("?{n}"));
        self.forget_exec(&[&sql], &sql_values(&values))
    }

    fn record_forgetting(&self, audit: &ForgetAudit) -> Result<(), StoreError> {
        let targets = serde_json::to_string(&audit.targets)
            .map_err(|e| StoreError::Invalid(format!("cannot encode the audit: {e}")))?;
        self.forget_exec(
            &["INSERT INTO forgettings (project_id, at, agent, targets, operations, messages, hot_items, decisions, sessions)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"],
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
