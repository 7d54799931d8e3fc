//! The optimizer (design v2 §1.2): five techniques that shrink the live
//! context without losing anything. Each one replaces operations in the
//! epoch with something smaller (a phase summary, a registry entry, a state
//! delta, a reference to an external file) or hides them (pruning, states a
//! newer delta covers). Originals stay in the log; what leaves the context
//! is written whole to an [`Artifact`] the orchestrator can load back.
//!
//! Planning is pure: the engine supplies the epoch's operations and applies
//! the plan in one transaction.

mod diff;
mod techniques;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

pub use diff::{apply as apply_diff, diff};

use crate::compress::{CompressError, Summarizer};
use crate::memory::{Operation, Phase, Timestamp};
use crate::profile::ProfileParams;
use crate::tokens::TokenCounter;

/// Items above this many tokens are moved to `artifacts/<key>.json`.
pub const EXTERNALIZE_TOKENS: u64 = 2_000;
/// Debug traces older than this are pruned.
pub const DEBUG_TRACE_MAX_AGE_MS: i64 = 3_600_000;
pub const KEEP_VALIDATIONS: usize = 5;
pub const KEEP_RESOLVED_ERRORS: usize = 10;
/// Registry summaries are this short: a line, not a précis.
pub const REGISTRY_SUMMARY_TOKENS: u64 = 60;
/// Where the artifact registry lives, relative to `.mnemon/`.
pub const REGISTRY_PATH: &str = "artifacts/registry.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Technique {
    PhaseSummaries,
    ArtifactRegistry,
    DifferentialState,
    Externalize,
    Pruning,
}

impl Technique {
    /// In the order they run.
    pub const ALL: [Technique; 5] = [
        Technique::PhaseSummaries,
        Technique::ArtifactRegistry,
        Technique::DifferentialState,
        Technique::Externalize,
        Technique::Pruning,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Technique::PhaseSummaries => "phase_summaries",
            Technique::ArtifactRegistry => "artifact_registry",
            Technique::DifferentialState => "differential_state",
            Technique::Externalize => "externalize",
            Technique::Pruning => "pruning",
        }
    }

    pub fn parse(s: &str) -> Option<Technique> {
        Technique::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// What the live context shows in place of an operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replacement {
    pub kind: String,
    pub text: String,
    /// Counted the way operations are: `"<kind> <text>"`.
    pub tokens: u64,
}

/// One operation changed by the optimizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Substitution {
    pub op_seq: i64,
    pub technique: Technique,
    /// `None`: the operation leaves the live context.
    pub replacement: Option<Replacement>,
    /// Why, for reports: `debug trace older than 1 h`, `superseded by o40`.
    pub reason: String,
    /// The operation's own tokens, which the live context no longer holds.
    pub original_tokens: u64,
}

impl Substitution {
    pub fn tokens_after(&self) -> u64 {
        self.replacement.as_ref().map_or(0, |r| r.tokens)
    }

    /// `op` as the live context now shows it, or `None` if hidden.
    pub fn apply(&self, op: &Operation) -> Option<Operation> {
        self.replacement.as_ref().map(|r| Operation {
            kind: r.kind.clone(),
            data: serde_json::Value::String(r.text.clone()),
            tokens: r.tokens,
            ..op.clone()
        })
    }
}

/// A file the optimizer writes under `.mnemon/`, holding in full what left
/// the live context. Stored in the database too, so the file can always
/// be written again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Relative to `.mnemon/`: `archive/phases/<id>.json`,
    /// `artifacts/<key>.json` or [`REGISTRY_PATH`].
    pub path: String,
    pub technique: Technique,
    pub content: serde_json::Value,
}

/// Tokens saved by one technique.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TechniqueReport {
    pub technique: Technique,
    /// Operations it replaced or hid.
    pub items: usize,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub tokens_saved: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct OptimizePlan {
    pub substitutions: Vec<Substitution>,
    pub artifacts: Vec<Artifact>,
}

impl OptimizePlan {
    pub fn is_empty(&self) -> bool {
        self.substitutions.is_empty()
    }

    /// Summed over the plan, not per item: a phase summary is carried by
    /// one member of its run and may be larger than that member alone.
    pub fn saved(&self) -> u64 {
        let before: u64 = self.substitutions.iter().map(|s| s.original_tokens).sum();
        let after: u64 = self.substitutions.iter().map(|s| s.tokens_after()).sum();
        before.saturating_sub(after)
    }

    /// One row per technique, all five, in the order they ran.
    pub fn reports(&self) -> Vec<TechniqueReport> {
        Technique::ALL
            .into_iter()
            .map(|t| {
                let subs = self.substitutions.iter().filter(|s| s.technique == t);
                let (mut items, mut before, mut after) = (0, 0, 0);
                for s in subs {
                    items += 1;
                    before += s.original_tokens;
                    after += s.tokens_after();
                }
                TechniqueReport {
                    technique: t,
                    items,
                    tokens_before: before,
                    tokens_after: after,
                    tokens_saved: before.saturating_sub(after),
                }
            })
            .collect()
    }
}

/// The numbers the techniques work to: the profile's, unless config's
/// `[optimization]` section sets them. `None` turns a technique off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub phase_summary_max: u64,
    pub artifact_registry: Option<u64>,
    pub differential_state: bool,
    pub externalize: Option<u64>,
    pub pruning: bool,
    pub debug_trace_max_age_ms: i64,
    pub keep_validations: usize,
    pub keep_resolved_errors: usize,
    /// Unresolved errors are never pruned unless this is false, in which
    /// case they are kept like resolved ones (the last few).
    pub keep_unresolved_errors: bool,
}

impl Thresholds {
    pub fn of(p: &ProfileParams) -> Thresholds {
        Thresholds {
            phase_summary_max: p.phase_summary_max_tokens.value,
            artifact_registry: Some(p.artifact_registry_threshold_tokens.value),
            differential_state: true,
            externalize: Some(EXTERNALIZE_TOKENS),
            pruning: true,
            debug_trace_max_age_ms: DEBUG_TRACE_MAX_AGE_MS,
            keep_validations: KEEP_VALIDATIONS,
            keep_resolved_errors: KEEP_RESOLVED_ERRORS,
            keep_unresolved_errors: true,
        }
    }
}

/// The state the orchestrator saw at the last checkpoint: the newest
/// `state` operation at or before its log position.
#[derive(Debug, Clone, PartialEq)]
pub struct StateBase {
    pub checkpoint_id: String,
    pub op_seq: i64,
    pub state: serde_json::Value,
}

#[derive(Debug)]
pub struct OptimizeInput<'a> {
    /// The epoch's operations, oldest first, none already substituted.
    pub ops: &'a [Operation],
    pub session_id: &'a str,
    pub current_phase: Option<Phase>,
    pub now: Timestamp,
    pub thresholds: Thresholds,
    pub state_base: Option<StateBase>,
    /// The registry as stored so far (a JSON object keyed by path).
    pub registry: serde_json::Map<String, serde_json::Value>,
}

/// Runs the five techniques in design v2's order. Pinned operations are
/// never touched, and each operation is changed by one technique at most.
pub fn plan(
    input: &OptimizeInput<'_>,
    summarizer: &dyn Summarizer,
    counter: &dyn TokenCounter,
) -> Result<OptimizePlan, CompressError> {
    let mut ctx = techniques::Ctx {
        input,
        summarizer,
        counter,
        touched: input
            .ops
            .iter()
            .filter(|o| o.pinned)
            .map(|o| o.seq)
            .collect::<BTreeSet<i64>>(),
        plan: OptimizePlan::default(),
    };
    ctx.phase_summaries()?;
    ctx.artifact_registry()?;
    ctx.differential_state();
    ctx.externalize();
    ctx.prune();
    Ok(ctx.plan)
}

/// Counted the way stored operations are.
pub(crate) fn replacement(kind: &str, text: String, counter: &dyn TokenCounter) -> Replacement {
    Replacement {
        tokens: counter.count(&format!("{kind} {text}")) as u64,
        kind: kind.to_string(),
        text,
    }
}

/// The first `max` characters of `s`, on a character boundary, with `…`
/// when cut.
pub fn preview(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
