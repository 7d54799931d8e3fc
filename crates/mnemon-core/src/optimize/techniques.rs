//! The five techniques, each over the operations no earlier one touched.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{
    Artifact, OptimizeInput, OptimizePlan, REGISTRY_PATH, REGISTRY_SUMMARY_TOKENS, Substitution,
    Technique, diff, preview, replacement,
};
use crate::compress::{CompressError, SourceItem, Summarizer, compress_within};
use crate::memory::Operation;
use crate::memory::data_text;
use crate::tokens::TokenCounter;

pub(super) struct Ctx<'a> {
    pub input: &'a OptimizeInput<'a>,
    pub summarizer: &'a dyn Summarizer,
    pub counter: &'a dyn TokenCounter,
    /// Pinned operations and those already changed.
    pub touched: BTreeSet<i64>,
    pub plan: OptimizePlan,
}

fn item(op: &Operation) -> SourceItem {
    SourceItem {
        sources: vec![format!("o{}", op.seq)],
        order: op.seq,
        text: format!("{}: {}", op.kind, data_text(&op.data)),
        pinned: false,
        importance: op.importance,
    }
}

/// A file read: an object with a string `path` and string `content`.
fn file_of(op: &Operation) -> Option<(&str, &str)> {
    let path = op.data.get("path")?.as_str()?;
    let content = op.data.get("content")?.as_str()?;
    Some((path, content))
}

fn is_resolved(op: &Operation) -> bool {
    matches!(
        op.status.as_deref(),
        Some("resolved" | "fixed" | "closed" | "done")
    ) || op.data.get("resolved").and_then(Value::as_bool) == Some(true)
}

impl Ctx<'_> {
    fn untouched(&self) -> impl Iterator<Item = &Operation> {
        self.input
            .ops
            .iter()
            .filter(|o| !self.touched.contains(&o.seq))
    }

    fn push(&mut self, op: &Operation, t: Technique, r: Option<super::Replacement>, why: String) {
        self.touched.insert(op.seq);
        self.plan.substitutions.push(Substitution {
            op_seq: op.seq,
            technique: t,
            replacement: r,
            reason: why,
            original_tokens: op.tokens,
        });
    }

    /// Runs of one phase that a later phase followed (or that are not the
    /// current phase) are collapsed to one summary of at most the
    /// profile's phase cap, the full run archived.
    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: filtered above"
    )]
    pub fn phase_summaries(&mut self) -> Result<(), CompressError> {
        let mut runs: Vec<(crate::memory::Phase, Vec<&Operation>)> = Vec::new();
        for op in self.input.ops.iter().filter(|o| o.phase.is_some()) {
            let p = op.phase.expect("filtered above");
            match runs.last_mut() {
                Some((rp, members)) if *rp == p => members.push(op),
                _ => runs.push((p, vec![op])),
            }
        }
        let last = runs.len().saturating_sub(1);
        let max = self.input.thresholds.phase_summary_max;
        for (i, (phase, members)) in runs.into_iter().enumerate() {
            let completed = i < last || Some(phase) != self.input.current_phase;
            let members: Vec<&Operation> = members
                .into_iter()
                .filter(|o| !self.touched.contains(&o.seq))
                .collect();
            let tokens: u64 = members.iter().map(|o| o.tokens).sum();
            if !completed || members.len() < 2 || tokens <= max {
                continue;
            }
            let first = members[0].seq;
            // Log positions are unique in a project, so this names the run.
            let id = format!("{}-o{first}", phase.name());
            let path = format!("archive/phases/{id}.json");
            let header = format!(
                "{} phase completed: {} operations, {tokens} tokens in full at {path}.",
                phase.name(),
                members.len()
            );
            let kind = "phase_summary";
            let items: Vec<SourceItem> = members.iter().map(|o| item(o)).collect();
            // The cap applies to the whole replacement; shrink the target by
            // any overshoot until it fits (token counts are not additive).
            let mut target =
                max.saturating_sub(replacement(kind, header.clone(), self.counter).tokens + 1);
            let r = loop {
                let s = compress_within(self.summarizer, &items, target, self.counter)?;
                let r = replacement(kind, format!("{header}\n{}", s.text), self.counter);
                if r.tokens <= max || target == 0 {
                    break r;
                }
                target = target.saturating_sub(r.tokens - max);
            };
            if r.tokens > max || r.tokens >= tokens {
                continue;
            }
            self.plan.artifacts.push(Artifact {
                path: path.clone(),
                technique: Technique::PhaseSummaries,
                content: json!({
                    "phase_id": id,
                    "phase": phase.name(),
                    "session_id": self.input.session_id,
                    "tokens": tokens,
                    "summary": r.text,
                    "operations": members,
                }),
            });
            let why = format!("{} phase completed", phase.name());
            self.push(members[0], Technique::PhaseSummaries, Some(r), why.clone());
            for op in &members[1..] {
                self.push(
                    op,
                    Technique::PhaseSummaries,
                    None,
                    format!("{why}: in o{first}'s summary"),
                );
            }
        }
        Ok(())
    }

    /// File reads above the registry threshold become `path → summary,
    /// mtime, size`; the registry file maps every path to its newest entry.
    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: filtered above"
    )]
    pub fn artifact_registry(&mut self) -> Result<(), CompressError> {
        let Some(threshold) = self.input.thresholds.artifact_registry else {
            return Ok(());
        };
        let files: Vec<Operation> = self
            .untouched()
            .filter(|o| o.tokens > threshold && file_of(o).is_some())
            .cloned()
            .collect();
        if files.is_empty() {
            return Ok(());
        }
        let mut registry = self.input.registry.clone();
        for op in &files {
            let (path, content) = file_of(op).expect("filtered above");
            let summary = compress_within(
                self.summarizer,
                &[SourceItem {
                    sources: vec![format!("o{}", op.seq)],
                    order: op.seq,
                    text: content.to_string(),
                    pinned: false,
                    importance: op.importance,
                }],
                REGISTRY_SUMMARY_TOKENS,
                self.counter,
            )?;
            let summary: Vec<&str> = summary.lines.iter().map(|l| l.text.as_str()).collect();
            let summary = summary.join(" ");
            let modified = ["mtime", "last_modified", "modified"]
                .iter()
                .find_map(|k| op.data.get(*k))
                .map(data_text)
                .unwrap_or_else(|| op.created_at.rfc3339());
            let size = self.counter.count(content) as u64;
            registry.insert(
                path.to_string(),
                json!({
                    "path": path,
                    "summary": summary,
                    "last_modified": modified,
                    "size_tokens": size,
                    "operation": format!("o{}", op.seq),
                }),
            );
            let text = format!(
                "{path} ({size} tokens, modified {modified}; registered in {REGISTRY_PATH}): {summary}"
            );
            let r = replacement(&op.kind, text, self.counter);
            if r.tokens < op.tokens {
                self.push(
                    op,
                    Technique::ArtifactRegistry,
                    Some(r),
                    format!("file {path} above {threshold} tokens"),
                );
            }
        }
        self.plan.artifacts.push(Artifact {
            path: REGISTRY_PATH.to_string(),
            technique: Technique::ArtifactRegistry,
            content: Value::Object(registry),
        });
        Ok(())
    }

    /// `state` operations since the last checkpoint: the newest becomes its
    /// changes against the checkpoint's state; older ones are covered by it.
    pub fn differential_state(&mut self) {
        let Some(base) = &self.input.state_base else {
            return;
        };
        if !self.input.thresholds.differential_state {
            return;
        }
        let states: Vec<Operation> = self
            .untouched()
            .filter(|o| o.kind == "state" && o.seq > base.op_seq && o.data.is_object())
            .cloned()
            .collect();
        let Some((newest, older)) = states.split_last() else {
            return;
        };
        let delta = diff(&base.state, &newest.data);
        let text = format!(
            "changes since checkpoint {} (state of o{}): {delta}",
            base.checkpoint_id, base.op_seq
        );
        let r = replacement(&newest.kind, text, self.counter);
        if r.tokens < newest.tokens {
            let why = format!("delta against checkpoint {}", base.checkpoint_id);
            self.push(newest, Technique::DifferentialState, Some(r), why);
        }
        for op in older {
            let why = format!("superseded by o{}", newest.seq);
            self.push(op, Technique::DifferentialState, None, why);
        }
    }

    /// Anything still above the externalize threshold moves to its own
    /// file, leaving a reference, a 200-character preview and its size.
    pub fn externalize(&mut self) {
        let Some(limit) = self.input.thresholds.externalize else {
            return;
        };
        let big: Vec<Operation> = self
            .untouched()
            .filter(|o| o.tokens > limit)
            .cloned()
            .collect();
        for op in &big {
            let path = format!("artifacts/o{}.json", op.seq);
            let text = format!(
                "externalized to {path} ({} tokens): {}",
                op.tokens,
                preview(&data_text(&op.data), 200)
            );
            let r = replacement(&op.kind, text, self.counter);
            if r.tokens >= op.tokens {
                continue;
            }
            self.plan.artifacts.push(Artifact {
                path,
                technique: Technique::Externalize,
                content: json!({"key": format!("o{}", op.seq), "tokens": op.tokens, "operation": op}),
            });
            self.push(
                op,
                Technique::Externalize,
                Some(r),
                format!("above {limit} tokens"),
            );
        }
    }

    /// Debug traces older than an hour, validations but the last few,
    /// resolved errors but the last few; unresolved errors always stay.
    pub fn prune(&mut self) {
        let t = self.input.thresholds;
        if !t.pruning {
            return;
        }
        let now = self.input.now.0;
        let mut validations = 0;
        let mut resolved = 0;
        let mut out: Vec<(Operation, String)> = Vec::new();
        // Newest first, so "the last N" are the first N seen.
        for op in self.untouched().collect::<Vec<_>>().into_iter().rev() {
            let kind = op.kind.as_str();
            let why = if (kind.contains("debug") || kind.contains("trace"))
                && now - op.created_at.0 > t.debug_trace_max_age_ms
            {
                Some(format!(
                    "debug trace older than {} h",
                    t.debug_trace_max_age_ms as f64 / 3_600_000.0
                ))
            } else if kind == "validation" {
                validations += 1;
                (validations > t.keep_validations)
                    .then(|| format!("older than the last {} validations", t.keep_validations))
            } else if kind.contains("error") && (is_resolved(op) || !t.keep_unresolved_errors) {
                resolved += 1;
                (resolved > t.keep_resolved_errors).then(|| {
                    format!(
                        "older than the last {} resolved errors",
                        t.keep_resolved_errors
                    )
                })
            } else {
                None
            };
            if let Some(why) = why {
                out.push((op.clone(), why));
            }
        }
        for (op, why) in out.into_iter().rev() {
            self.push(&op, Technique::Pruning, None, why);
        }
    }
}
