//! Forgetting, in one transaction: the rows, what follows them, and every
//! place that held their text (see `mnemon_core::engine::forget`).
//!
//! PostgreSQL keeps a deleted row's bytes in its page until VACUUM reclaims
//! the space; mnemon vacuums the tables it deleted from once the forgetting
//! committed (outside a unit of work), so search, indexes and the tables'
//! live data lose the text at once and the free space is reused.

use std::collections::{BTreeSet, HashSet};

use mnemon_core::engine::EngineState;
use mnemon_core::engine::forget::{
    ArtifactFate, ForgetAudit, ForgetRequest, ForgetTarget, Forgotten, Needles, scrub_artifact,
    scrub_audit, scrub_checkpoint, scrub_summary,
};
use mnemon_core::memory::{
    DecisionStore, HotStore, OperationLog, SessionStore, StoreError, Timestamp,
};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::client::Db;
use crate::{PgStore, resolve_id};

/// What the targets name, resolved before the transaction.
#[derive(Default)]
struct Named {
    ops: BTreeSet<i64>,
    msgs: BTreeSet<i64>,
    hot: BTreeSet<String>,
    decisions: BTreeSet<String>,
    sessions: BTreeSet<String>,
}

impl PgStore {
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
        self.db()?
            .opt(
                &format!("SELECT seq FROM {table} WHERE project_id = $1 AND seq = $2"),
                &[&self.project(), &seq],
            )?
            .map(|r| r.get(0))
            .ok_or_else(|| StoreError::NotFound {
                what,
                id: format!("{prefix}{seq}"),
            })
    }

    /// Everything whose text holds `phrase`: any string in an operation's
    /// data, a message, any version of a hot item, a decision's title or
    /// record, compared case-insensitively.
    fn name_matching(&self, phrase: &str, n: &mut Named) -> Result<(), StoreError> {
        let db = self.db()?;
        let p: &[&(dyn ToSql + Sync)] = &[&self.project(), &phrase];
        n.ops.extend(
            db.query(
                "SELECT o.seq FROM operations o WHERE o.project_id = $1 AND EXISTS (
                     SELECT 1 FROM jsonb_path_query(o.data::jsonb, 'strict $.** ? (@.type() == \"string\")') v
                     WHERE strpos(lower(v #>> '{}'), lower($2)) > 0)",
                p,
            )?
            .iter()
            .map(|r| r.get::<_, i64>(0)),
        );
        n.msgs.extend(
            db.query(
                "SELECT seq FROM messages WHERE project_id = $1 AND strpos(lower(content), lower($2)) > 0",
                p,
            )?
            .iter()
            .map(|r| r.get::<_, i64>(0)),
        );
        n.hot.extend(
            db.query(
                "SELECT DISTINCT i.id FROM hot_items i JOIN hot_history h ON h.item_id = i.id
                 WHERE i.project_id = $1
                   AND (strpos(lower(h.text), lower($2)) > 0 OR strpos(lower(coalesce(h.detail, '')), lower($2)) > 0)",
                p,
            )?
            .iter()
            .map(|r| r.get::<_, String>(0)),
        );
        n.decisions.extend(
            db.query(
                "SELECT id FROM decisions WHERE project_id = $1
                   AND (strpos(lower(title), lower($2)) > 0 OR strpos(lower(record), lower($2)) > 0)",
                p,
            )?
            .iter()
            .map(|r| r.get::<_, String>(0)),
        );
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
            &self.db()?,
            "messages",
            "message",
            self.project(),
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
                .db()?
                .one("SELECT seq FROM messages WHERE id = $1", &[&full])?
                .get(0);
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
        let Ok(seq) = seq.parse::<i64>() else {
            return Ok(false);
        };
        let n: i64 = self
            .db()?
            .one(
                "SELECT count(*) FROM operations WHERE project_id = $1 AND seq = $2
                   AND data LIKE '{%' AND (data::jsonb) ->> 'id' = $3",
                &[&self.project(), &seq, &item],
            )?
            .get(0);
        Ok(n > 0)
    }

    pub(crate) fn forget_targets(&self, req: &ForgetRequest) -> Result<Forgotten, StoreError> {
        let named = self.name_targets(&req.targets)?;
        let outer_unit = self.unit().is_some();
        let out = self.write(|db| {
            Forgetting {
                store: self,
                db,
                req,
                apply: !req.dry_run,
            }
            .run(named)
        })?;
        if !req.dry_run && !outer_unit && !out.is_empty() {
            // Best effort: the forgetting committed; vacuuming only frees
            // the dead rows' space sooner.
            if let Ok(db) = self.db() {
                let _ = db.batch(
                    "VACUUM operations, messages, hot_items, hot_history, decisions, sessions, compactions, checkpoints, documents, vectors",
                );
            }
        }
        Ok(out)
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

/// One forgetting, inside its transaction.
struct Forgetting<'a> {
    store: &'a PgStore,
    db: &'a Db,
    req: &'a ForgetRequest,
    apply: bool,
}

impl Forgetting<'_> {
    fn project(&self) -> &str {
        self.store.project()
    }

    /// Rows of `sql`, whose `$1` is the project and `$2` (if any) `arg`.
    fn rows(&self, sql: &str, arg: Option<&(dyn ToSql + Sync)>) -> Result<Vec<Row>, StoreError> {
        let project = self.project();
        match arg {
            Some(a) => self.db.query(sql, &[&project, a]),
            None => self.db.query(sql, &[&project]),
        }
    }

    fn ints(&self, sql: &str, arg: &(dyn ToSql + Sync)) -> Result<Vec<i64>, StoreError> {
        Ok(self
            .rows(sql, Some(arg))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn texts(&self, sql: &str, arg: &(dyn ToSql + Sync)) -> Result<Vec<String>, StoreError> {
        Ok(self
            .rows(sql, Some(arg))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// Writes only when applying (a dry run reports what would go).
    fn exec(&self, sql: &str, args: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        if !self.apply {
            return Ok(0);
        }
        self.db.exec(sql, args)
    }

    fn run(&self, mut n: Named) -> Result<Forgotten, StoreError> {
        let mut needles = Needles::default();
        for s in &n.sessions {
            let status: Option<String> = self
                .rows(
                    "SELECT status FROM sessions WHERE project_id = $1 AND id = $2",
                    Some(s),
                )?
                .first()
                .map(|r| r.get(0));
            if status.as_deref() == Some("active") {
                return Err(StoreError::Invalid(format!(
                    "session `{s}` is active; end it first (`mnemon session end`), then forget it"
                )));
            }
            n.ops.extend(self.ints(
                "SELECT seq FROM operations WHERE project_id = $1 AND session_id = $2",
                s,
            )?);
            n.msgs.extend(self.ints(
                "SELECT seq FROM messages WHERE project_id = $1 AND session_id = $2",
                s,
            )?);
            for r in self.rows(
                "SELECT title FROM sessions WHERE project_id = $1 AND id = $2 AND title IS NOT NULL",
                Some(s),
            )? {
                needles.add(&r.get::<_, String>(0));
            }
        }
        for d in &n.decisions {
            for r in self.rows(
                "SELECT title, record FROM decisions WHERE project_id = $1 AND id = $2",
                Some(d),
            )? {
                needles.add(&r.get::<_, String>(0));
                if let Ok(v) = serde_json::from_str(&r.get::<_, String>(1)) {
                    needles.add_json(&v);
                }
            }
            // The key decision the hot context carries for it.
            n.hot.extend(self.texts(
                "SELECT id FROM hot_items WHERE project_id = $1 AND kind = 'decision' AND text LIKE '%(' || $2 || ')'",
                d,
            )?);
        }
        for h in &n.hot {
            for r in self.rows(
                "SELECT h.text, coalesce(h.detail, '') FROM hot_history h JOIN hot_items i ON i.id = h.item_id
                 WHERE i.project_id = $1 AND h.item_id = $2",
                Some(h),
            )? {
                needles.add(&r.get::<_, String>(0));
                needles.add(&r.get::<_, String>(1));
            }
        }
        // The log lines that recorded the items and decisions.
        for id in n.hot.iter().chain(&n.decisions) {
            n.ops.extend(self.ints(
                "SELECT seq FROM operations WHERE project_id = $1 AND data LIKE '{%' AND (data::jsonb) ->> 'id' = $2",
                id,
            )?);
        }
        for seq in &n.ops {
            for data in self.texts(
                "SELECT data FROM operations WHERE project_id = $1 AND seq = $2",
                seq,
            )? {
                if let Ok(v) = serde_json::from_str(&data) {
                    needles.add_json(&v);
                }
            }
        }
        for seq in &n.msgs {
            for content in self.texts(
                "SELECT content FROM messages WHERE project_id = $1 AND seq = $2",
                seq,
            )? {
                needles.add(&content);
            }
        }
        let mut hot_handles = Vec::with_capacity(n.hot.len());
        for id in &n.hot {
            hot_handles.extend(self.texts(
                "SELECT 'h' || seq FROM hot_items WHERE project_id = $1 AND id = $2",
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
            self.db.exec(
                "INSERT INTO forgettings (project_id, at, agent, targets, operations, messages, hot_items, decisions, sessions)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &self.project(),
                    &audit.at.0,
                    &audit.agent,
                    &targets,
                    &(audit.operations as i64),
                    &(audit.messages as i64),
                    &(audit.hot_items as i64),
                    &(audit.decisions as i64),
                    &(audit.sessions as i64),
                ],
            )?;
        }
        Ok(f)
    }

    fn delete_rows(&self, f: &Forgotten) -> Result<(), StoreError> {
        let p = self.project();
        let ops: &[i64] = &f.operations;
        let msgs: &[i64] = &f.messages;
        self.exec(
            "DELETE FROM substitutions WHERE project_id = $1 AND op_seq = ANY($2)",
            &[&p, &ops],
        )?;
        self.exec(
            "DELETE FROM vectors WHERE source = 'operation' AND record = ANY($1)",
            &[&ops],
        )?;
        self.exec(
            "DELETE FROM operations WHERE project_id = $1 AND seq = ANY($2)",
            &[&p, &ops],
        )?;
        self.exec(
            "DELETE FROM vectors WHERE source = 'message' AND record = ANY($1)",
            &[&msgs],
        )?;
        self.exec(
            "DELETE FROM messages WHERE project_id = $1 AND seq = ANY($2)",
            &[&p, &msgs],
        )?;
        for id in &f.hot_items {
            self.exec(
                "UPDATE hot_items SET parent_id = NULL WHERE project_id = $1 AND parent_id = $2",
                &[&p, id],
            )?;
            self.exec(
                "DELETE FROM hot_history WHERE item_id = $2 AND item_id IN (SELECT id FROM hot_items WHERE project_id = $1)",
                &[&p, id],
            )?;
            self.exec(
                "DELETE FROM hot_items WHERE project_id = $1 AND id = $2",
                &[&p, id],
            )?;
        }
        if !f.hot_items.is_empty() {
            // Readers that cached the hot context see that it changed.
            self.exec(
                "UPDATE hot_versions SET version = version + 1 WHERE project_id = $1",
                &[&p],
            )?;
        }
        for id in &f.decisions {
            self.exec(
                "UPDATE decisions SET superseded_by = NULL WHERE project_id = $1 AND superseded_by = $2",
                &[&p, id],
            )?;
            self.exec(
                "DELETE FROM decisions WHERE project_id = $1 AND id = $2",
                &[&p, id],
            )?;
        }
        Ok(())
    }

    /// Everything that refers to what went: summaries, audits, checkpoints,
    /// engine states, substitutions, archives, documents; then the sessions.
    fn scrub(&self, f: &mut Forgotten, needles: &Needles) -> Result<(), StoreError> {
        let p = self.project();
        let gone = f.provenance();
        let sessions: HashSet<String> = f.sessions.iter().cloned().collect();
        for r in self.rows(
            "SELECT seq, session_id, summary, audit FROM compactions WHERE project_id = $1",
            None,
        )? {
            let seq: i64 = r.get(0);
            let session: Option<String> = r.get(1);
            let summary: String = r.get(2);
            let audit: String = r.get(3);
            if session.as_deref().is_some_and(|s| sessions.contains(s)) {
                self.exec(
                    "DELETE FROM compactions WHERE project_id = $1 AND seq = $2",
                    &[&p, &seq],
                )?;
                continue;
            }
            let new_summary = scrub_summary(&summary, &gone);
            let mut audit: serde_json::Value = serde_json::from_str(&audit).unwrap_or_default();
            let audit_changed = scrub_audit(&mut audit, &gone);
            if new_summary.is_some() || audit_changed {
                f.summaries_rewritten += 1;
                self.exec(
                    "UPDATE compactions SET summary = $2, audit = $3 WHERE seq = $1",
                    &[&seq, &new_summary.unwrap_or(summary), &audit.to_string()],
                )?;
            }
        }
        for r in self.rows(
            "SELECT id, summary FROM sessions WHERE project_id = $1 AND summary IS NOT NULL",
            None,
        )? {
            let id: String = r.get(0);
            if sessions.contains(id.as_str()) {
                continue;
            }
            if let Some(text) = scrub_summary(&r.get::<_, String>(1), &gone) {
                f.summaries_rewritten += 1;
                self.exec(
                    "UPDATE sessions SET summary = $2 WHERE id = $1",
                    &[&id, &text],
                )?;
            }
        }
        self.scrub_checkpoints(f, needles, &sessions)?;
        self.scrub_states(f)?;
        self.scrub_optimizer(f, &gone)?;
        // Document versions that showed a forgotten text; the current one
        // is rendered again by the caller.
        for r in self.rows(
            "SELECT kind, version, content FROM documents WHERE project_id = $1",
            None,
        )? {
            if needles.touch(&r.get::<_, String>(2)) {
                f.document_versions_removed += 1;
                self.exec(
                    "DELETE FROM documents WHERE project_id = $1 AND kind = $2 AND version = $3",
                    &[&p, &r.get::<_, String>(0), &r.get::<_, i64>(1)],
                )?;
            }
        }
        for s in &f.sessions {
            self.exec(
                "DELETE FROM sessions WHERE project_id = $1 AND id = $2",
                &[&p, s],
            )?;
        }
        Ok(())
    }

    fn scrub_checkpoints(
        &self,
        f: &mut Forgotten,
        needles: &Needles,
        sessions: &HashSet<String>,
    ) -> Result<(), StoreError> {
        let p = self.project();
        for r in self.rows(
            "SELECT id, session_id, json FROM checkpoints WHERE project_id = $1 ORDER BY row_id",
            None,
        )? {
            let id: String = r.get(0);
            let session: Option<String> = r.get(1);
            let json: String = r.get(2);
            if session.as_deref().is_some_and(|s| sessions.contains(s)) {
                self.exec(
                    "DELETE FROM checkpoints WHERE project_id = $1 AND id = $2",
                    &[&p, &id],
                )?;
                f.checkpoints_removed.push(id);
                continue;
            }
            if let Some(text) = scrub_checkpoint(&json, f, needles) {
                self.exec(
                    "UPDATE checkpoints SET json = $2 WHERE id = $1",
                    &[&id, &text],
                )?;
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
        for r in self.rows(
            "SELECT agent, state FROM engine_state WHERE project_id = $1",
            None,
        )? {
            let agent: String = r.get(0);
            let Ok(mut st) = serde_json::from_str::<EngineState>(&r.get::<_, String>(1)) else {
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
            let text = serde_json::to_string(&st)
                .map_err(|e| StoreError::Invalid(format!("cannot encode engine state: {e}")))?;
            self.exec(
                "UPDATE engine_state SET version = version + 1, state = $3 WHERE project_id = $1 AND agent = $2",
                &[&self.project(), &agent, &text],
            )?;
        }
        Ok(())
    }

    fn scrub_optimizer(&self, f: &mut Forgotten, gone: &HashSet<String>) -> Result<(), StoreError> {
        let p = self.project();
        for r in self.rows(
            "SELECT op_seq, text FROM substitutions WHERE project_id = $1 AND text IS NOT NULL",
            None,
        )? {
            if let Some(t) = scrub_summary(&r.get::<_, String>(1), gone) {
                self.exec(
                    "UPDATE substitutions SET text = $3 WHERE project_id = $1 AND op_seq = $2",
                    &[&p, &r.get::<_, i64>(0), &t],
                )?;
            }
        }
        for r in self.rows(
            "SELECT path, content FROM artifacts WHERE project_id = $1 ORDER BY path COLLATE \"C\"",
            None,
        )? {
            let path: String = r.get(0);
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&r.get::<_, String>(1))
            else {
                continue;
            };
            match scrub_artifact(&value, f) {
                ArtifactFate::Keep => {}
                ArtifactFate::Remove => {
                    self.exec(
                        "DELETE FROM artifacts WHERE project_id = $1 AND path = $2",
                        &[&p, &path],
                    )?;
                    f.artifacts_removed.push(path);
                }
                ArtifactFate::Rewrite(v) => {
                    self.exec(
                        "UPDATE artifacts SET content = $3 WHERE project_id = $1 AND path = $2",
                        &[&p, &path, &v.to_string()],
                    )?;
                    f.artifacts_rewritten.push(path);
                }
            }
        }
        Ok(())
    }
}
