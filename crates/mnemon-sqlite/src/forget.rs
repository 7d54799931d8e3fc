//! Forgetting, in one transaction with secure deletion: the rows, what
//! follows them, and every place that held their text (see
//! `mnemon_core::engine::forget`).

use std::collections::{BTreeSet, HashSet};

use mnemon_core::engine::EngineState;
use mnemon_core::engine::forget::{
    ArtifactFate, ForgetAudit, ForgetRequest, ForgetTarget, Forgotten, Needles, scrub_artifact,
    scrub_audit, scrub_checkpoint, scrub_summary,
};
use mnemon_core::memory::{
    DecisionStore, HotStore, OperationLog, SessionStore, StoreError, Timestamp,
};
use rusqlite::{Connection, OptionalExtension, params};

use crate::{SqliteStore, resolve_id};

/// What the targets name, resolved before the transaction.
#[derive(Default)]
struct Named {
    ops: BTreeSet<i64>,
    msgs: BTreeSet<i64>,
    hot: BTreeSet<String>,
    decisions: BTreeSet<String>,
    sessions: BTreeSet<String>,
}

impl SqliteStore {
    fn name_targets(&self, targets: &[ForgetTarget]) -> Result<Named, StoreError> {
        let mut n = Named::default();
        for t in targets {
            match t {
                ForgetTarget::OperationAt(seq) => {
                    n.ops
                        .insert(self.position("operations", "operation", 'o', *seq)?);
                }
                ForgetTarget::MessageAt(seq) => {
                    n.msgs
                        .insert(self.position("messages", "message", 'm', *seq)?);
                }
                ForgetTarget::Decision(id) => {
                    n.decisions.insert(self.decision(id)?.id);
                }
                ForgetTarget::Id(id) => self.name_any(id, &mut n)?,
                ForgetTarget::Matching(phrase) => self.name_matching(phrase, &mut n)?,
            }
        }
        Ok(n)
    }

    fn position(
        &self,
        table: &str,
        what: &'static str,
        prefix: char,
        seq: i64,
    ) -> Result<i64, StoreError> {
        let conn = self.conn();
        conn.query_row(
            &format!("SELECT seq FROM {table} WHERE project_id = ?1 AND seq = ?2"),
            params![self.project_id, seq],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| self.err(e))?
        .ok_or_else(|| StoreError::NotFound {
            what,
            id: format!("{prefix}{seq}"),
        })
    }

    /// Everything whose text holds `phrase`: any string in an operation's
    /// data, a message, any version of a hot item, a decision's title or
    /// record. SQLite's `lower` folds ASCII letters only.
    fn name_matching(&self, phrase: &str, n: &mut Named) -> Result<(), StoreError> {
        let conn = self.conn();
        let ids = |sql: &str| -> Result<Vec<String>, StoreError> {
            let mut stmt = conn.prepare_cached(sql).map_err(|e| self.err(e))?;
            stmt.query_map(params![self.project_id, phrase], |r| r.get::<_, String>(0))
                .and_then(|rows| rows.collect())
                .map_err(|e| self.err(e))
        };
        let seqs = |sql: &str| -> Result<Vec<i64>, StoreError> {
            let mut stmt = conn.prepare_cached(sql).map_err(|e| self.err(e))?;
            stmt.query_map(params![self.project_id, phrase], |r| r.get::<_, i64>(0))
                .and_then(|rows| rows.collect())
                .map_err(|e| self.err(e))
        };
        n.ops.extend(seqs(
            "SELECT o.seq FROM operations o WHERE o.project_id = ?1 AND EXISTS (
                 SELECT 1 FROM json_tree(o.data) t
                 WHERE t.type = 'text' AND instr(lower(t.value), lower(?2)) > 0)",
        )?);
        n.msgs.extend(seqs(
            "SELECT seq FROM messages WHERE project_id = ?1 AND instr(lower(content), lower(?2)) > 0",
        )?);
        n.hot.extend(ids(
            "SELECT DISTINCT i.id FROM hot_items i JOIN hot_history h ON h.item_id = i.id
             WHERE i.project_id = ?1
               AND (instr(lower(h.text), lower(?2)) > 0 OR instr(lower(coalesce(h.detail, '')), lower(?2)) > 0)",
        )?);
        n.decisions.extend(ids(
            "SELECT id FROM decisions WHERE project_id = ?1
               AND (instr(lower(title), lower(?2)) > 0 OR instr(lower(record), lower(?2)) > 0)",
        )?);
        Ok(())
    }

    /// An id of any kind: it must name exactly one thing.
    fn name_any(&self, id: &str, n: &mut Named) -> Result<(), StoreError> {
        let found = |r: Result<String, StoreError>| match r {
            Ok(full) => Ok(Some(full)),
            Err(StoreError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        let op = found(self.operation(id).map(|o| o.seq.to_string()))?;
        let msg = found(resolve_id(
            &self.conn(),
            &self.path,
            "messages",
            "message",
            &self.project_id,
            id,
        ))?;
        let hot = found(self.hot_item(id).map(|h| h.id))?;
        let session = found(self.session(id).map(|s| s.id))?;
        // Ids made in one millisecond share their first digits: a hot
        // item's and the operation that logged it usually do. Forgetting
        // the item takes that operation too, so the item is meant.
        let op = match (&hot, &op) {
            (Some(h), Some(seq)) if self.logs_item(seq, h)? => None,
            _ => op,
        };
        let kinds: Vec<&str> = [
            (op.is_some(), "an operation"),
            (msg.is_some(), "a message"),
            (hot.is_some(), "a hot item"),
            (session.is_some(), "a session"),
        ]
        .iter()
        .filter(|(found, _)| *found)
        .map(|(_, k)| *k)
        .collect();
        if kinds.len() > 1 {
            return Err(StoreError::Invalid(format!(
                "`{id}` starts the ids of {}; give more of the id",
                kinds.join(" and ")
            )));
        }
        if let Some(seq) = op.and_then(|s| s.parse().ok()) {
            n.ops.insert(seq);
        } else if let Some(full) = msg {
            let seq: i64 = self
                .conn()
                .query_row("SELECT seq FROM messages WHERE id = ?1", [full], |r| {
                    r.get(0)
                })
                .map_err(|e| self.err(e))?;
            n.msgs.insert(seq);
        } else if let Some(h) = hot {
            n.hot.insert(h);
        } else if let Some(s) = session {
            n.sessions.insert(s);
        } else {
            return Err(StoreError::NotFound {
                what: "record, message, hot item, decision or session",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// Whether the operation at `seq` logged the hot item `item`.
    fn logs_item(&self, seq: &str, item: &str) -> Result<bool, StoreError> {
        self.conn()
            .query_row(
                "SELECT count(*) FROM operations WHERE project_id = ?1 AND seq = ?2 AND json_extract(data, '$.id') = ?3",
                params![self.project_id, seq, item],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.err(e))
    }

    pub(crate) fn forget_targets(&self, req: &ForgetRequest) -> Result<Forgotten, StoreError> {
        let named = self.name_targets(&req.targets)?;
        let outer_unit = !self.conn().is_autocommit();
        // Deleted rows and the pages they leave are overwritten with zeros
        // (`secure_delete` is on for every connection), so the text is not
        // left in the file's free space.
        let out = self.write(|tx| Forgetting::new(self, tx, req).run(named));
        if !req.dry_run && out.is_ok() && !outer_unit {
            let conn = self.conn();
            // A database an earlier mnemon wrote may hold old text in space
            // freed before `secure_delete` was always on: rewritten once.
            // The forget has committed, so this is never its failure: a
            // vacuum that cannot run now (another writer) runs at the next.
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
            // Moves the committed pages out of the write-ahead log and
            // empties it; best effort: a reader holding an old snapshot
            // keeps the log until it finishes, and the next checkpoint
            // then overwrites it.
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        out
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

/// One forgetting, inside its transaction.
struct Forgetting<'a> {
    store: &'a SqliteStore,
    tx: &'a Connection,
    req: &'a ForgetRequest,
    apply: bool,
}

impl<'a> Forgetting<'a> {
    fn new(store: &'a SqliteStore, tx: &'a Connection, req: &'a ForgetRequest) -> Self {
        Forgetting {
            store,
            tx,
            req,
            apply: !req.dry_run,
        }
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        self.store.err(e)
    }

    fn project(&self) -> &str {
        &self.store.project_id
    }

    /// Rows of `sql`, whose `?1` is the project and `?2` (if any) `arg`.
    fn rows<T>(
        &self,
        sql: &str,
        arg: Option<&dyn rusqlite::ToSql>,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.tx.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = match arg {
            Some(a) => stmt.query_map(params![self.project(), a], row),
            None => stmt.query_map(params![self.project()], row),
        };
        rows.and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    /// The first column of every row.
    fn column<T: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        arg: &dyn rusqlite::ToSql,
    ) -> Result<Vec<T>, StoreError> {
        self.rows(sql, Some(arg), |r| r.get(0))
    }

    /// The first two columns of every row.
    fn pairs<A: rusqlite::types::FromSql, B: rusqlite::types::FromSql>(
        &self,
        sql: &str,
        arg: Option<&dyn rusqlite::ToSql>,
    ) -> Result<Vec<(A, B)>, StoreError> {
        self.rows(sql, arg, |r| Ok((r.get(0)?, r.get(1)?)))
    }

    fn exec(&self, sql: &str, arg: &dyn rusqlite::ToSql) -> Result<usize, StoreError> {
        if !self.apply {
            return Ok(0);
        }
        self.tx
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(params![self.project(), arg]))
            .map_err(|e| self.err(e))
    }

    fn run(&self, mut n: Named) -> Result<Forgotten, StoreError> {
        let mut needles = Needles::default();
        for s in &n.sessions {
            let status: Option<String> = self
                .tx
                .query_row(
                    "SELECT status FROM sessions WHERE project_id = ?1 AND id = ?2",
                    params![self.project(), s],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.err(e))?;
            if status.as_deref() == Some("active") {
                return Err(StoreError::Invalid(format!(
                    "session `{s}` is active; end it first (`mnemon session end`), then forget it"
                )));
            }
            n.ops.extend(self.column::<i64>(
                "SELECT seq FROM operations WHERE project_id = ?1 AND session_id = ?2",
                s,
            )?);
            n.msgs.extend(self.column::<i64>(
                "SELECT seq FROM messages WHERE project_id = ?1 AND session_id = ?2",
                s,
            )?);
            if let Some(title) = self
                .column::<Option<String>>(
                    "SELECT title FROM sessions WHERE project_id = ?1 AND id = ?2",
                    s,
                )?
                .into_iter()
                .flatten()
                .next()
            {
                needles.add(&title);
            }
        }
        for d in &n.decisions {
            for (title, record) in self.pairs::<String, String>(
                "SELECT title, record FROM decisions WHERE project_id = ?1 AND id = ?2",
                Some(d),
            )? {
                needles.add(&title);
                if let Ok(v) = serde_json::from_str(&record) {
                    needles.add_json(&v);
                }
            }
            // The key decision the hot context carries for it.
            n.hot.extend(self.column::<String>(
                "SELECT id FROM hot_items WHERE project_id = ?1 AND kind = 'decision' AND text LIKE '%(' || ?2 || ')'",
                d,
            )?);
        }
        for h in &n.hot {
            for (text, detail) in self.pairs::<String, String>(
                "SELECT h.text, coalesce(h.detail, '') FROM hot_history h JOIN hot_items i ON i.id = h.item_id
                 WHERE i.project_id = ?1 AND h.item_id = ?2",
                Some(h),
            )? {
                needles.add(&text);
                needles.add(&detail);
            }
        }
        // The log lines that recorded the items and decisions.
        for id in n.hot.iter().chain(&n.decisions) {
            n.ops.extend(self.column::<i64>(
                "SELECT seq FROM operations WHERE project_id = ?1 AND json_extract(data, '$.id') = ?2",
                id,
            )?);
        }
        for seq in &n.ops {
            for data in self.column::<String>(
                "SELECT data FROM operations WHERE project_id = ?1 AND seq = ?2",
                seq,
            )? {
                if let Ok(v) = serde_json::from_str(&data) {
                    needles.add_json(&v);
                }
            }
        }
        for seq in &n.msgs {
            for content in self.column::<String>(
                "SELECT content FROM messages WHERE project_id = ?1 AND seq = ?2",
                seq,
            )? {
                needles.add(&content);
            }
        }
        let mut hot_handles = Vec::with_capacity(n.hot.len());
        for id in &n.hot {
            hot_handles.extend(self.column::<String>(
                "SELECT 'h' || seq FROM hot_items WHERE project_id = ?1 AND id = ?2",
                id,
            )?);
        }
        let mut f = Forgotten {
            operations: n.ops.into_iter().collect(),
            messages: n.msgs.into_iter().collect(),
            hot_items: n.hot.into_iter().collect(),
            hot_handles,
            decisions: n.decisions.into_iter().collect(),
            sessions: n.sessions.into_iter().collect(),
            dry_run: !self.apply,
            ..Forgotten::default()
        };
        self.delete_rows(&f)?;
        self.scrub(&mut f, &needles)?;
        if self.apply && !f.is_empty() {
            let audit = ForgetAudit::of(self.req, &f);
            let targets = serde_json::to_string(&audit.targets)
                .map_err(|e| StoreError::Invalid(format!("cannot encode the audit: {e}")))?;
            self.tx
                .execute(
                    "INSERT INTO forgettings (project_id, at, agent, targets, operations, messages, hot_items, decisions, sessions)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        self.project(),
                        audit.at.0,
                        audit.agent,
                        targets,
                        audit.operations as i64,
                        audit.messages as i64,
                        audit.hot_items as i64,
                        audit.decisions as i64,
                        audit.sessions as i64
                    ],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(f)
    }

    fn delete_rows(&self, f: &Forgotten) -> Result<(), StoreError> {
        for seq in &f.operations {
            self.exec(
                "DELETE FROM substitutions WHERE project_id = ?1 AND op_seq = ?2",
                seq,
            )?;
            self.exec(
                "DELETE FROM operations WHERE project_id = ?1 AND seq = ?2",
                seq,
            )?;
        }
        for seq in &f.messages {
            self.exec(
                "DELETE FROM messages WHERE project_id = ?1 AND seq = ?2",
                seq,
            )?;
        }
        for id in &f.hot_items {
            self.exec(
                "UPDATE hot_items SET parent_id = NULL WHERE project_id = ?1 AND parent_id = ?2",
                id,
            )?;
            self.exec(
                "DELETE FROM hot_history WHERE item_id = ?2 AND item_id IN (SELECT id FROM hot_items WHERE project_id = ?1)",
                id,
            )?;
            self.exec(
                "DELETE FROM hot_items WHERE project_id = ?1 AND id = ?2",
                id,
            )?;
        }
        if !f.hot_items.is_empty() {
            // Readers that cached the hot context see that it changed.
            if self.apply {
                self.tx
                    .execute(
                        "UPDATE hot_versions SET version = version + 1 WHERE project_id = ?1",
                        [self.project()],
                    )
                    .map_err(|e| self.err(e))?;
            }
        }
        for id in &f.decisions {
            self.exec(
                "UPDATE decisions SET superseded_by = NULL WHERE project_id = ?1 AND superseded_by = ?2",
                id,
            )?;
            self.exec(
                "DELETE FROM decisions WHERE project_id = ?1 AND id = ?2",
                id,
            )?;
        }
        Ok(())
    }

    /// Everything that refers to what went: summaries, audits, checkpoints,
    /// engine states, substitutions, archives, documents; then the sessions.
    fn scrub(&self, f: &mut Forgotten, needles: &Needles) -> Result<(), StoreError> {
        let gone = f.provenance();
        let sessions: HashSet<String> = f.sessions.iter().cloned().collect();
        // Compactions.
        let rows: Vec<(i64, Option<String>, String, String)> = self.rows(
            "SELECT seq, session_id, summary, audit FROM compactions WHERE project_id = ?1",
            None,
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        for (seq, session, summary, audit) in rows {
            if session.as_deref().is_some_and(|s| sessions.contains(s)) {
                self.exec(
                    "DELETE FROM compactions WHERE project_id = ?1 AND seq = ?2",
                    &seq,
                )?;
                continue;
            }
            let new_summary = scrub_summary(&summary, &gone);
            let mut audit: serde_json::Value = serde_json::from_str(&audit).unwrap_or_default();
            let audit_changed = scrub_audit(&mut audit, &gone);
            if new_summary.is_some() || audit_changed {
                f.summaries_rewritten += 1;
                if self.apply {
                    self.tx
                        .execute(
                            "UPDATE compactions SET summary = ?2, audit = ?3 WHERE seq = ?1",
                            params![seq, new_summary.unwrap_or(summary), audit.to_string()],
                        )
                        .map_err(|e| self.err(e))?;
                }
            }
        }
        // Session summaries.
        let summaries: Vec<(String, String)> = self.pairs(
            "SELECT id, summary FROM sessions WHERE project_id = ?1 AND summary IS NOT NULL",
            None,
        )?;
        for (id, summary) in summaries {
            if sessions.contains(id.as_str()) {
                continue;
            }
            if let Some(text) = scrub_summary(&summary, &gone) {
                f.summaries_rewritten += 1;
                if self.apply {
                    self.tx
                        .execute(
                            "UPDATE sessions SET summary = ?2 WHERE id = ?1",
                            params![id, text],
                        )
                        .map_err(|e| self.err(e))?;
                }
            }
        }
        self.scrub_checkpoints(f, needles, &sessions)?;
        self.scrub_states(f)?;
        self.scrub_optimizer(f, &gone)?;
        // Document versions that showed a forgotten text; the current one
        // is rendered again by the caller.
        let docs: Vec<(String, i64, String)> = self.rows(
            "SELECT kind, version, content FROM documents WHERE project_id = ?1",
            None,
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        for (kind, version, content) in docs {
            if needles.touch(&content) {
                f.document_versions_removed += 1;
                if self.apply {
                    self.tx
                        .execute(
                            "DELETE FROM documents WHERE project_id = ?1 AND kind = ?2 AND version = ?3",
                            params![self.project(), kind, version],
                        )
                        .map_err(|e| self.err(e))?;
                }
            }
        }
        for s in &f.sessions {
            self.exec("DELETE FROM sessions WHERE project_id = ?1 AND id = ?2", s)?;
        }
        Ok(())
    }

    fn scrub_checkpoints(
        &self,
        f: &mut Forgotten,
        needles: &Needles,
        sessions: &HashSet<String>,
    ) -> Result<(), StoreError> {
        let rows: Vec<(String, Option<String>, String)> = self.rows(
            "SELECT id, session_id, json FROM checkpoints WHERE project_id = ?1",
            None,
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        for (id, session, json) in rows {
            if session.as_deref().is_some_and(|s| sessions.contains(s)) {
                self.exec(
                    "DELETE FROM checkpoints WHERE project_id = ?1 AND id = ?2",
                    &id,
                )?;
                f.checkpoints_removed.push(id);
                continue;
            }
            if let Some(text) = scrub_checkpoint(&json, f, needles) {
                if self.apply {
                    self.tx
                        .execute(
                            "UPDATE checkpoints SET json = ?2 WHERE id = ?1",
                            params![id, text],
                        )
                        .map_err(|e| self.err(e))?;
                }
                f.checkpoints_rewritten.push(id);
            }
        }
        Ok(())
    }

    /// Engine states stop naming forgotten log positions and sessions. The
    /// version moves on, so an engine holding the old state re-reads it.
    fn scrub_states(&self, f: &Forgotten) -> Result<(), StoreError> {
        let ops: HashSet<i64> = f.operations.iter().copied().collect();
        let msgs: HashSet<i64> = f.messages.iter().copied().collect();
        let rows: Vec<(String, String)> = self.pairs(
            "SELECT agent, state FROM engine_state WHERE project_id = ?1",
            None,
        )?;
        for (agent, text) in rows {
            let Ok(mut st) = serde_json::from_str::<EngineState>(&text) else {
                continue;
            };
            let before = (st.seed_ops.len(), st.seed_msgs.len(), st.session_id.clone());
            st.seed_ops.retain(|s| !ops.contains(s));
            st.seed_msgs.retain(|s| !msgs.contains(s));
            if st
                .session_id
                .as_ref()
                .is_some_and(|s| f.sessions.contains(s))
            {
                st.session_id = None;
            }
            if before == (st.seed_ops.len(), st.seed_msgs.len(), st.session_id.clone()) {
                continue;
            }
            if self.apply {
                let text = serde_json::to_string(&st)
                    .map_err(|e| StoreError::Invalid(format!("cannot encode engine state: {e}")))?;
                self.tx
                    .execute(
                        "UPDATE engine_state SET version = version + 1, state = ?3 WHERE project_id = ?1 AND agent = ?2",
                        params![self.project(), agent, text],
                    )
                    .map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    fn scrub_optimizer(&self, f: &mut Forgotten, gone: &HashSet<String>) -> Result<(), StoreError> {
        let subs: Vec<(i64, String)> = self.pairs(
            "SELECT op_seq, text FROM substitutions WHERE project_id = ?1 AND text IS NOT NULL",
            None,
        )?;
        for (seq, text) in subs {
            if let Some(t) = scrub_summary(&text, gone)
                && self.apply
            {
                self.tx
                    .execute(
                        "UPDATE substitutions SET text = ?3 WHERE project_id = ?1 AND op_seq = ?2",
                        params![self.project(), seq, t],
                    )
                    .map_err(|e| self.err(e))?;
            }
        }
        let artifacts: Vec<(String, String)> = self.pairs(
            "SELECT path, content FROM artifacts WHERE project_id = ?1",
            None,
        )?;
        for (path, content) in artifacts {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&content) else {
                continue;
            };
            match scrub_artifact(&value, f) {
                ArtifactFate::Keep => {}
                ArtifactFate::Remove => {
                    self.exec(
                        "DELETE FROM artifacts WHERE project_id = ?1 AND path = ?2",
                        &path,
                    )?;
                    f.artifacts_removed.push(path);
                }
                ArtifactFate::Rewrite(v) => {
                    if self.apply {
                        self.tx
                            .execute(
                                "UPDATE artifacts SET content = ?3 WHERE project_id = ?1 AND path = ?2",
                                params![self.project(), path, v.to_string()],
                            )
                            .map_err(|e| self.err(e))?;
                    }
                    f.artifacts_rewritten.push(path);
                }
            }
        }
        Ok(())
    }
}
