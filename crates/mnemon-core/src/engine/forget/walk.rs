//! What follows what when something is forgotten, decided once for every
//! backend: the targets are named, then one unit of work takes the rows,
//! what logged them, and every copy of their text.

use std::collections::{BTreeSet, HashSet};

use super::rows::{Held, HeldKind};
use super::{
    ArtifactFate, ForgetAudit, ForgetRequest, ForgetTarget, Forgotten, Needles, scrub_artifact,
    scrub_audit, scrub_checkpoint, scrub_summary,
};
use crate::engine::{EngineState, EngineStore};
use crate::memory::{Atomically, HandleKind, SessionStatus, StoreError, StoreResult};

/// What the targets name.
#[derive(Default)]
struct Named {
    ops: BTreeSet<i64>,
    msgs: BTreeSet<i64>,
    hot: BTreeSet<String>,
    decisions: BTreeSet<String>,
    sessions: BTreeSet<String>,
}

/// Forgets what `req` names and everything that holds it, in one unit of
/// work of `store`: a hot item takes the operations that logged it, a
/// decision its operation and its key-decision hot item, a session (never
/// an active one) its operations, messages, compactions and checkpoints.
/// Summaries, checkpoints, engine states, the optimizer's substitutions
/// and archives, and document versions lose what came from them; the
/// backend's full-text index and vectors lose their entries with the rows.
/// An unknown target is an error and nothing is forgotten. An audit entry
/// is recorded, and the backend then frees the space the rows held, unless
/// `dry_run`, which only reports what would go.
pub fn forget<S: EngineStore + ?Sized>(store: &S, req: &ForgetRequest) -> StoreResult<Forgotten> {
    let named = name_targets(store, &req.targets)?;
    let f = store.atomically(|| {
        Walk {
            store,
            apply: !req.dry_run,
        }
        .run(req, named)
    })?;
    if !f.dry_run {
        store.after_forgetting(&f);
    }
    Ok(f)
}

fn name_targets<S: EngineStore + ?Sized>(
    store: &S,
    targets: &[ForgetTarget],
) -> StoreResult<Named> {
    let mut n = Named::default();
    for t in targets {
        match t {
            ForgetTarget::OperationAt(seq) => {
                let found = !store.operations_at(&[*seq])?.is_empty();
                n.ops
                    .insert(position(found, "operation", HandleKind::Operation, *seq)?);
            }
            ForgetTarget::MessageAt(seq) => {
                let found = !store.messages_at(&[*seq])?.is_empty();
                n.msgs
                    .insert(position(found, "message", HandleKind::Message, *seq)?);
            }
            ForgetTarget::Decision(id) => {
                n.decisions.insert(store.decision(id)?.id);
            }
            ForgetTarget::Id(id) => name_any(store, id, &mut n)?,
            ForgetTarget::Matching(phrase) => {
                let m = store.matching(phrase)?;
                n.ops.extend(m.operations);
                n.msgs.extend(m.messages);
                n.hot.extend(m.hot_items);
                n.decisions.extend(m.decisions);
            }
        }
    }
    Ok(n)
}

/// `seq` when a row is at it, else the error naming its handle (`o12`).
fn position(found: bool, what: &'static str, kind: HandleKind, seq: i64) -> StoreResult<i64> {
    if found {
        Ok(seq)
    } else {
        Err(StoreError::NotFound {
            what,
            id: kind.handle(seq),
        })
    }
}

/// An id of any kind: it must name exactly one thing.
fn name_any<S: EngineStore + ?Sized>(store: &S, id: &str, n: &mut Named) -> StoreResult<()> {
    fn found<T>(r: StoreResult<T>) -> StoreResult<Option<T>> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(StoreError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
    let op = found(store.operation(id))?;
    let msg = found(store.message_seq(id))?;
    let hot = found(store.hot_item(id).map(|h| h.id))?;
    let session = found(store.session(id).map(|s| s.id))?;
    // Ids made in one millisecond share their first digits: a hot item's
    // and the operation that logged it usually do. Forgetting the item
    // takes that operation too, so the item is meant.
    let op = match (&hot, op) {
        (Some(h), Some(o)) if o.data.get("id").and_then(|v| v.as_str()) == Some(h.as_str()) => None,
        (_, op) => op,
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
    if let Some(o) = op {
        n.ops.insert(o.seq);
    } else if let Some(seq) = msg {
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

/// One forgetting, inside its unit of work. With `apply` off (a dry run)
/// it reads everything and writes nothing.
struct Walk<'a, S: ?Sized> {
    store: &'a S,
    apply: bool,
}

impl<S: EngineStore + ?Sized> Walk<'_, S> {
    fn run(&self, req: &ForgetRequest, mut n: Named) -> StoreResult<Forgotten> {
        let s = self.store;
        let mut needles = Needles::default();
        for id in &n.sessions {
            let session = s.session(id)?;
            if session.status == SessionStatus::Active {
                return Err(StoreError::Invalid(format!(
                    "session `{id}` is active; end it first (`mnemon session end`), then forget it"
                )));
            }
            let (ops, msgs) = s.session_logs(id)?;
            n.ops.extend(ops);
            n.msgs.extend(msgs);
            if let Some(title) = &session.title {
                needles.add(title);
            }
        }
        for id in &n.decisions {
            let d = s.decision(id)?;
            needles.add(&d.title);
            if let Ok(v) = serde_json::to_value(&d) {
                needles.add_json(&v);
            }
            // The key decision the hot context carries for it.
            n.hot.extend(s.decision_hot_items(id)?);
        }
        for id in &n.hot {
            for text in s.hot_texts(id)? {
                needles.add(&text);
            }
        }
        // The log lines that recorded the items and decisions.
        for id in n.hot.iter().chain(&n.decisions) {
            n.ops.extend(s.operations_logging(id)?);
        }
        let seqs: Vec<i64> = n.ops.iter().copied().collect();
        for op in s.operations_at(&seqs)? {
            needles.add_json(&op.data);
        }
        let seqs: Vec<i64> = n.msgs.iter().copied().collect();
        for m in s.messages_at(&seqs)? {
            needles.add(&m.content);
        }
        let mut hot_handles = Vec::with_capacity(n.hot.len());
        for id in &n.hot {
            hot_handles.push(s.hot_item(id)?.handle());
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
        if self.apply {
            self.delete_rows(&f)?;
        }
        self.scrub(&mut f, &needles)?;
        if self.apply && !f.is_empty() {
            s.record_forgetting(&ForgetAudit::of(req, &f))?;
        }
        Ok(f)
    }

    fn delete_rows(&self, f: &Forgotten) -> StoreResult<()> {
        let s = self.store;
        for &seq in &f.operations {
            s.delete_operation(seq)?;
        }
        for &seq in &f.messages {
            s.delete_message(seq)?;
        }
        for id in &f.hot_items {
            s.delete_hot_item(id)?;
        }
        for id in &f.decisions {
            s.delete_decision(id)?;
        }
        Ok(())
    }

    fn rewrite(&self, row: &Held) -> StoreResult<()> {
        if self.apply {
            self.store.rewrite_held(row)?;
        }
        Ok(())
    }

    fn remove(&self, row: &Held) -> StoreResult<()> {
        if self.apply {
            self.store.remove_held(row)?;
        }
        Ok(())
    }

    /// Everything that refers to what went: summaries, audits, checkpoints,
    /// engine states, substitutions, archives, documents; then the sessions.
    fn scrub(&self, f: &mut Forgotten, needles: &Needles) -> StoreResult<()> {
        let s = self.store;
        let gone = f.provenance();
        let sessions: HashSet<String> = f.sessions.iter().cloned().collect();
        let of_gone =
            |session: &Option<String>| session.as_ref().is_some_and(|s| sessions.contains(s));
        for row in s.held(HeldKind::Compactions)? {
            let Held::Compaction {
                seq,
                session,
                summary,
                audit,
            } = &row
            else {
                continue;
            };
            if of_gone(session) {
                self.remove(&row)?;
                continue;
            }
            let new_summary = scrub_summary(summary, &gone);
            let mut audit_value: serde_json::Value =
                serde_json::from_str(audit).unwrap_or_default();
            if scrub_audit(&mut audit_value, &gone) || new_summary.is_some() {
                f.summaries_rewritten += 1;
                self.rewrite(&Held::Compaction {
                    seq: *seq,
                    session: session.clone(),
                    summary: new_summary.unwrap_or_else(|| summary.clone()),
                    audit: audit_value.to_string(),
                })?;
            }
        }
        for row in s.held(HeldKind::SessionSummaries)? {
            let Held::SessionSummary { id, summary } = &row else {
                continue;
            };
            if sessions.contains(id) {
                continue;
            }
            if let Some(summary) = scrub_summary(summary, &gone) {
                f.summaries_rewritten += 1;
                self.rewrite(&Held::SessionSummary {
                    id: id.clone(),
                    summary,
                })?;
            }
        }
        for row in s.held(HeldKind::Checkpoints)? {
            let Held::Checkpoint { id, session, json } = &row else {
                continue;
            };
            if of_gone(session) {
                self.remove(&row)?;
                f.checkpoints_removed.push(id.clone());
                continue;
            }
            if let Some(json) = scrub_checkpoint(json, f, needles) {
                self.rewrite(&Held::Checkpoint {
                    id: id.clone(),
                    session: session.clone(),
                    json,
                })?;
                f.checkpoints_rewritten.push(id.clone());
            }
        }
        self.scrub_states(f)?;
        self.scrub_optimizer(f, &gone)?;
        // Document versions that showed a forgotten text; the current one
        // is rendered again by the caller.
        for row in s.held(HeldKind::Documents)? {
            if let Held::Document { content, .. } = &row
                && needles.touch(content)
            {
                f.document_versions_removed += 1;
                self.remove(&row)?;
            }
        }
        if self.apply {
            for id in &f.sessions {
                s.delete_session(id)?;
            }
        }
        Ok(())
    }

    /// Engine states stop naming forgotten log positions and sessions.
    fn scrub_states(&self, f: &Forgotten) -> StoreResult<()> {
        let ops: HashSet<i64> = f.operations.iter().copied().collect();
        let msgs: HashSet<i64> = f.messages.iter().copied().collect();
        for row in self.store.held(HeldKind::EngineStates)? {
            let Held::EngineState { agent, state } = row else {
                continue;
            };
            let Ok(mut st) = serde_json::from_str::<EngineState>(&state) else {
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
                let state = serde_json::to_string(&st)
                    .map_err(|e| StoreError::Invalid(format!("cannot encode engine state: {e}")))?;
                self.store
                    .rewrite_held(&Held::EngineState { agent, state })?;
            }
        }
        Ok(())
    }

    /// The optimizer's stand-in texts and archived files.
    fn scrub_optimizer(&self, f: &mut Forgotten, gone: &HashSet<String>) -> StoreResult<()> {
        for row in self.store.held(HeldKind::Substitutions)? {
            let Held::Substitution { op_seq, text } = row else {
                continue;
            };
            if let Some(text) = scrub_summary(&text, gone) {
                self.rewrite(&Held::Substitution { op_seq, text })?;
            }
        }
        for row in self.store.held(HeldKind::Artifacts)? {
            let Held::Artifact { path, content } = &row else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(content) else {
                continue;
            };
            match scrub_artifact(&value, f) {
                ArtifactFate::Keep => {}
                ArtifactFate::Remove => {
                    self.remove(&row)?;
                    f.artifacts_removed.push(path.clone());
                }
                ArtifactFate::Rewrite(v) => {
                    self.rewrite(&Held::Artifact {
                        path: path.clone(),
                        content: v.to_string(),
                    })?;
                    f.artifacts_rewritten.push(path.clone());
                }
            }
        }
        Ok(())
    }
}
