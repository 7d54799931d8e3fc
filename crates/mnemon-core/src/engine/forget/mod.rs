//! Forgetting: a record, message, hot-context item, decision or whole
//! session leaves every place that holds it.
//!
//! A fact lives in more places than its row. A hot item was logged by a
//! `note_added` operation; a decision by a `decision` operation and a key
//! decision in the hot context; any record may have been copied into a
//! session summary or a compaction, referenced by a checkpoint, archived
//! by the optimizer or rendered into an episodic document. Forgetting
//! follows those links (the backend applies a [`ForgetRequest`] in one
//! transaction) and the functions here clean what refers to it:
//! - summary lines carry provenance ids (`[o12,m7]`), so a line that came
//!   from a forgotten record goes and the others stay as they were;
//! - checkpoints name log positions and hot-item versions, so those are
//!   dropped and the checkpoint sealed again (it still resumes);
//! - the optimizer's archives hold whole operations, which are removed;
//! - texts that cannot be traced by id (resume instructions, documents)
//!   are matched against the forgotten texts ("needles").
//!
//! The audit keeps what was forgotten (ids and counts) and when, never
//! the content.

use std::collections::{BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod rows;
mod walk;

pub use rows::{Cell, ForgetRows, ForgetSql, ForgetWrites, Held, HeldKind, Matched};
pub use walk::forget;

use super::checkpoint::Checkpoint;
use crate::compress::Line;
use crate::memory::Timestamp;

/// One thing to forget, as a user names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum ForgetTarget {
    /// A log position, as summaries cite it (`o12`).
    OperationAt(i64),
    /// A message position (`m7`).
    MessageAt(i64),
    Decision(String),
    /// An id or unique prefix of an operation, message, hot item or
    /// session; the backend finds which.
    Id(String),
    /// Every operation, message, hot item and decision whose text holds
    /// this phrase (ASCII letters in either case): a fact said in several
    /// places, forgotten from all of them.
    Matching(String),
}

/// The shortest phrase `Matching` takes: a shorter one would match too
/// much by accident.
pub const MATCHING_MIN_CHARS: usize = 4;

impl ForgetTarget {
    /// A phrase to forget wherever it is held.
    pub fn matching(text: &str) -> Result<ForgetTarget, String> {
        let t = text.trim();
        if t.chars().filter(|c| !c.is_whitespace()).count() < MATCHING_MIN_CHARS {
            return Err(format!(
                "--matching `{t}` is too short: give at least {MATCHING_MIN_CHARS} characters of the text to forget, and check with --dry-run"
            ));
        }
        Ok(ForgetTarget::Matching(t.to_string()))
    }

    /// As the audit keeps it: a phrase is content, so only its length.
    pub fn audited(&self) -> ForgetTarget {
        match self {
            ForgetTarget::Matching(t) => {
                ForgetTarget::Matching(format!("[{} characters]", t.chars().count()))
            }
            other => other.clone(),
        }
    }

    /// `o12`, `m7`, `DR-a3f8b2c1`, or any other id (or unique prefix).
    pub fn parse(text: &str) -> Result<ForgetTarget, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("an empty id: name a record (`o12`, `m7`, an id shown by `mnemon log`), a hot item, a decision (`DR-…`) or a session".into());
        }
        let position = |rest: &str| rest.parse::<i64>().ok().filter(|n| *n > 0);
        if let Some(n) = t.strip_prefix('o').and_then(position) {
            return Ok(ForgetTarget::OperationAt(n));
        }
        if let Some(n) = t.strip_prefix('m').and_then(position) {
            return Ok(ForgetTarget::MessageAt(n));
        }
        if t.len() > 3 && t[..3].eq_ignore_ascii_case("DR-") {
            return Ok(ForgetTarget::Decision(t.to_string()));
        }
        Ok(ForgetTarget::Id(t.to_string()))
    }
}

/// What [`forget`] is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgetRequest {
    pub targets: Vec<ForgetTarget>,
    /// Write nothing; report what would go.
    pub dry_run: bool,
    pub agent: String,
    pub at: Timestamp,
}

/// What was forgotten (or would be, in a dry run). Ids only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Forgotten {
    /// Log positions.
    pub operations: Vec<i64>,
    pub messages: Vec<i64>,
    pub hot_items: Vec<String>,
    /// The hot items' handles (`h3`), in the order of `hot_items`, as the
    /// user saw them.
    #[serde(default)]
    pub hot_handles: Vec<String>,
    pub decisions: Vec<String>,
    pub sessions: Vec<String>,
    /// Session summaries and compactions that lost lines.
    pub summaries_rewritten: usize,
    /// Checkpoints that referenced what went, sealed again.
    pub checkpoints_rewritten: Vec<String>,
    /// Checkpoints of forgotten sessions.
    pub checkpoints_removed: Vec<String>,
    /// The optimizer's files that held what went.
    pub artifacts_rewritten: Vec<String>,
    pub artifacts_removed: Vec<String>,
    /// Versions of episodic documents that showed what went; the current
    /// one is rendered again.
    pub document_versions_removed: usize,
    pub dry_run: bool,
}

impl Forgotten {
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
            && self.messages.is_empty()
            && self.hot_items.is_empty()
            && self.decisions.is_empty()
            && self.sessions.is_empty()
    }

    /// Provenance ids of the forgotten records, as summaries cite them.
    pub fn provenance(&self) -> HashSet<String> {
        self.operations
            .iter()
            .map(|s| format!("o{s}"))
            .chain(self.messages.iter().map(|s| format!("m{s}")))
            .collect()
    }
}

/// One entry of the audit: what was forgotten and when, never its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForgetAudit {
    pub at: Timestamp,
    pub agent: String,
    /// The targets as given: ids, and a phrase only as its length.
    pub targets: Vec<ForgetTarget>,
    pub operations: u64,
    pub messages: u64,
    pub hot_items: u64,
    pub decisions: u64,
    pub sessions: u64,
}

impl ForgetAudit {
    pub fn of(req: &ForgetRequest, f: &Forgotten) -> ForgetAudit {
        ForgetAudit {
            at: req.at,
            agent: req.agent.clone(),
            targets: req.targets.iter().map(ForgetTarget::audited).collect(),
            operations: f.operations.len() as u64,
            messages: f.messages.len() as u64,
            hot_items: f.hot_items.len() as u64,
            decisions: f.decisions.len() as u64,
            sessions: f.sessions.len() as u64,
        }
    }
}

/// Texts shorter than this are not matched as needles: a short word would
/// take unrelated lines with it.
pub const NEEDLE_MIN_CHARS: usize = 12;

/// The texts of what is forgotten, for places that hold text without ids.
#[derive(Debug, Clone, Default)]
pub struct Needles(BTreeSet<String>);

impl Needles {
    /// Adds `text` if it is prose: ids, timestamps and single words are
    /// shared with unrelated text and would take it along.
    pub fn add(&mut self, text: &str) {
        let t = text.trim();
        if t.chars().count() >= NEEDLE_MIN_CHARS && t.contains(char::is_whitespace) {
            self.0.insert(t.to_lowercase());
        }
    }

    /// Every string in `v`.
    pub fn add_json(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.add(s),
            Value::Array(a) => a.iter().for_each(|x| self.add_json(x)),
            Value::Object(o) => o.values().for_each(|x| self.add_json(x)),
            _ => {}
        }
    }

    /// True when `text` holds a forgotten text, or is a piece of one (a
    /// blocker quoted from an error, a title cut to fit).
    pub fn touch(&self, text: &str) -> bool {
        let t = text.trim().to_lowercase();
        self.0.iter().any(|n| {
            t.contains(n.as_str()) || (t.chars().count() >= NEEDLE_MIN_CHARS && n.contains(&t))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `text` without the summary lines that cite any of `gone`; `None` when
/// nothing changed. Lines that are not summary lines (headings) stay.
pub fn scrub_summary(text: &str, gone: &HashSet<String>) -> Option<String> {
    let mut changed = false;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let cites =
                Line::parse(l, 0).is_some_and(|p| p.sources.iter().any(|s| gone.contains(s)));
            changed |= cites;
            !cites
        })
        .collect();
    if !changed {
        return None;
    }
    let mut out = kept.join("\n");
    if text.ends_with('\n') && !out.is_empty() {
        out.push('\n');
    }
    Some(out)
}

/// A compaction's audit without the forgotten ids; `true` when it changed.
pub fn scrub_audit(audit: &mut Value, gone: &HashSet<String>) -> bool {
    let mut changed = false;
    if let Value::Object(o) = audit {
        for key in ["kept_verbatim", "summarized", "dropped", "pinned_deferred"] {
            if let Some(Value::Array(ids)) = o.get_mut(key) {
                let before = ids.len();
                ids.retain(|v| !v.as_str().is_some_and(|s| gone.contains(s)));
                changed |= ids.len() != before;
            }
        }
    }
    changed
}

/// A stored checkpoint without what is forgotten, sealed again so it
/// still verifies and resumes; `None` when it did not refer to any of it.
/// A checkpoint that does not parse is left alone (`doctor` reports it).
pub fn scrub_checkpoint(json: &str, f: &Forgotten, needles: &Needles) -> Option<String> {
    let Ok(mut cp) = Checkpoint::from_json(json, "stored") else {
        return None;
    };
    let ops: HashSet<i64> = f.operations.iter().copied().collect();
    let msgs: HashSet<i64> = f.messages.iter().copied().collect();
    let hot: HashSet<&str> = f.hot_items.iter().map(String::as_str).collect();
    let s = &mut cp.context_snapshot.working_memory_snapshot;
    let before = (
        s.operations.len(),
        s.messages.len(),
        s.hot_context.items.len(),
    );
    s.operations.retain(|p| !ops.contains(p));
    s.messages.retain(|p| !msgs.contains(p));
    s.hot_context
        .items
        .retain(|(id, _)| !hot.contains(id.as_str()));
    let mut changed = before
        != (
            s.operations.len(),
            s.messages.len(),
            s.hot_context.items.len(),
        );
    let r = &mut cp.resume_instructions;
    if r.next_task.as_deref().is_some_and(|t| needles.touch(t)) {
        r.next_task = None;
        changed = true;
    }
    for list in [&mut r.blockers, &mut r.context_to_load, &mut r.warnings] {
        let n = list.len();
        list.retain(|t| !needles.touch(t));
        changed |= list.len() != n;
    }
    changed.then(|| cp.seal().to_json())
}

/// What happens to one of the optimizer's archived files.
#[derive(Debug, Clone, PartialEq)]
pub enum ArtifactFate {
    Keep,
    Rewrite(Value),
    /// The file existed for a forgotten operation.
    Remove,
}

/// An archive without the forgotten operations: whole operation objects
/// (those with a `seq` and a `kind`) leave arrays, registry entries naming
/// a forgotten `oN` leave their map, summary lines citing one leave their
/// text. A file whose own `operation` is forgotten goes.
pub fn scrub_artifact(content: &Value, f: &Forgotten) -> ArtifactFate {
    let ops: HashSet<i64> = f.operations.iter().copied().collect();
    let gone = f.provenance();
    let names_gone = |v: &Value| match v {
        Value::String(s) => gone.contains(s),
        Value::Object(o) => o
            .get("seq")
            .and_then(Value::as_i64)
            .is_some_and(|s| ops.contains(&s)),
        _ => false,
    };
    if content.get("operation").is_some_and(names_gone) {
        return ArtifactFate::Remove;
    }
    let mut out = content.clone();
    if scrub_value(&mut out, &ops, &gone) {
        ArtifactFate::Rewrite(out)
    } else {
        ArtifactFate::Keep
    }
}

fn scrub_value(v: &mut Value, ops: &HashSet<i64>, gone: &HashSet<String>) -> bool {
    let is_gone_op = |x: &Value| {
        x.get("kind").is_some()
            && x.get("seq")
                .and_then(Value::as_i64)
                .is_some_and(|s| ops.contains(&s))
    };
    let entry_gone = |x: &Value| {
        x.get("operation")
            .and_then(Value::as_str)
            .is_some_and(|s| gone.contains(s))
    };
    match v {
        Value::String(s) => match scrub_summary(s, gone) {
            Some(t) => {
                *s = t;
                true
            }
            None => false,
        },
        Value::Array(a) => {
            let n = a.len();
            a.retain(|x| !is_gone_op(x) && !entry_gone(x));
            let mut changed = a.len() != n;
            for x in a.iter_mut() {
                changed |= scrub_value(x, ops, gone);
            }
            changed
        }
        Value::Object(o) => {
            let n = o.len();
            o.retain(|_, x| !is_gone_op(x) && !entry_gone(x));
            let mut changed = o.len() != n;
            for x in o.values_mut() {
                changed |= scrub_value(x, ops, gone);
            }
            changed
        }
        _ => false,
    }
}

impl<S: super::EngineStore + ?Sized> super::Engine<S> {
    /// Forgets `targets` and everything that holds them (see the module's
    /// documentation); with `dry_run`, only says what would go.
    pub fn forget(
        &self,
        targets: &[ForgetTarget],
        dry_run: bool,
    ) -> Result<Forgotten, super::EngineError> {
        if targets.is_empty() {
            return Err(crate::memory::StoreError::Invalid(
                "nothing to forget: name a record (`o12`), a message (`m7`), a hot item, a decision (`DR-…`) or a session".into(),
            )
            .into());
        }
        let _writing = self.lock();
        let req = ForgetRequest {
            targets: targets.to_vec(),
            dry_run,
            agent: self.memory().agent().to_string(),
            at: self.now(),
        };
        let f = forget(self.store(), &req)?;
        if !f.dry_run {
            self.recount_live();
            use crate::assemble::retrieve::HitSource;
            self.vectors.forget(
                f.operations
                    .iter()
                    .map(|&s| (HitSource::Operation, s))
                    .chain(f.messages.iter().map(|&s| (HitSource::Message, s))),
            );
        }
        Ok(f)
    }

    /// The audit of forgetting, newest first.
    pub fn forgettings(&self, limit: usize) -> Result<Vec<ForgetAudit>, super::EngineError> {
        Ok(self.store().forgettings(limit)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gone(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn targets_parse_by_shape() {
        assert_eq!(
            ForgetTarget::parse("o12"),
            Ok(ForgetTarget::OperationAt(12))
        );
        assert_eq!(ForgetTarget::parse(" m7 "), Ok(ForgetTarget::MessageAt(7)));
        assert_eq!(
            ForgetTarget::parse("dr-a3f8b2c1"),
            Ok(ForgetTarget::Decision("dr-a3f8b2c1".into()))
        );
        // Not a position: an id that starts with a letter o.
        assert_eq!(
            ForgetTarget::parse("o1a2"),
            Ok(ForgetTarget::Id("o1a2".into()))
        );
        assert_eq!(ForgetTarget::parse("o0"), Ok(ForgetTarget::Id("o0".into())));
        assert!(ForgetTarget::parse("  ").is_err());
        assert!(ForgetTarget::matching(" a b ").is_err());
        let m = ForgetTarget::matching("orange notebook").unwrap();
        assert_eq!(
            m.audited(),
            ForgetTarget::Matching("[15 characters]".into()),
            "the audit never keeps the phrase"
        );
    }

    #[test]
    fn summary_lines_citing_a_forgotten_record_go_and_the_rest_stay_verbatim() {
        let text = "Session summary\n- the key is hunter2 [pinned o12]\n- we chose Postgres [o13,m4]\n- both [o12,o14]\n";
        let out = scrub_summary(text, &gone(&["o12"])).unwrap();
        assert_eq!(out, "Session summary\n- we chose Postgres [o13,m4]\n");
        assert_eq!(scrub_summary(text, &gone(&["o99"])), None);
        assert_eq!(
            scrub_summary("- only [m1]", &gone(&["m1"])),
            Some(String::new())
        );
    }

    #[test]
    fn audits_lose_the_forgotten_ids() {
        let mut a = json!({"kept_verbatim": ["o1", "o2"], "summarized": ["m3"], "dropped": [], "duplicates_removed": 0});
        assert!(scrub_audit(&mut a, &gone(&["o2", "m3"])));
        assert_eq!(a["kept_verbatim"], json!(["o1"]));
        assert_eq!(a["summarized"], json!([]));
        assert!(!scrub_audit(&mut a, &gone(&["o2"])));
    }

    #[test]
    fn archives_lose_whole_operations_and_registry_entries() {
        let f = Forgotten {
            operations: vec![5],
            ..Forgotten::default()
        };
        let phase = json!({
            "summary": "- deploy at 5 [o5]\n- tests pass [o6]",
            "operations": [{"seq": 5, "kind": "note"}, {"seq": 6, "kind": "note"}],
        });
        let ArtifactFate::Rewrite(out) = scrub_artifact(&phase, &f) else {
            panic!("the phase archive holds o5")
        };
        assert_eq!(out["summary"], json!("- tests pass [o6]"));
        assert_eq!(out["operations"], json!([{"seq": 6, "kind": "note"}]));
        let registry = json!({"a.rs": {"operation": "o5"}, "b.rs": {"operation": "o6"}});
        assert_eq!(
            scrub_artifact(&registry, &f),
            ArtifactFate::Rewrite(json!({"b.rs": {"operation": "o6"}}))
        );
        let own = json!({"key": "o5", "operation": {"seq": 5, "kind": "file"}});
        assert_eq!(scrub_artifact(&own, &f), ArtifactFate::Remove);
        assert_eq!(
            scrub_artifact(&json!({"x": [1, 2]}), &f),
            ArtifactFate::Keep
        );
    }

    #[test]
    fn needles_match_texts_and_their_pieces_but_not_short_words() {
        let mut n = Needles::default();
        n.add("The deploy key is kept in vault path secret/ci");
        n.add("short");
        assert!(n.touch("Blocker: the deploy key is kept in vault path secret/ci!"));
        assert!(n.touch("deploy key is kept in vault"));
        assert!(!n.touch("short"));
        assert!(!n.touch("an unrelated blocker about the build"));
    }
}
