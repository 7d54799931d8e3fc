//! The arguments of each MCP tool. Their doc comments become the JSON
//! schema's descriptions, which is what an LLM reads to call the tool, so
//! they say what a value means and what to pass, in the model's terms.

use schemars::JsonSchema;
use serde::Deserialize;

/// `status` takes nothing.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// One operation to log.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordArgs {
    /// What happened, as a short snake_case type: `file_edited`, `test_run`,
    /// `command_run`, `error`, `task_completed`, `note`...
    #[serde(rename = "type")]
    pub kind: String,
    /// Details as a JSON object (paths, commands, results, errors).
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    /// Tokens this step added to your context window, when you know them.
    pub tokens: Option<u64>,
    /// The work phase: planning, execution or validation.
    pub phase: Option<String>,
    /// The outcome: success, failure, partial...
    pub status: Option<String>,
}

/// Text to keep.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    /// The fact, goal or constraint, in one or two sentences.
    pub text: String,
    /// low, medium, high or critical.
    pub priority: Option<String>,
}

/// Which operations to list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecentArgs {
    /// How many, newest first (1 to 500; default 20).
    pub limit: Option<usize>,
    /// Only operations of this type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// What to search for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to look for across operations, messages, decisions, the hot
    /// context and tasks.
    pub query: String,
    /// How many results, best first (1 to 100; default 10).
    pub limit: Option<usize>,
}

/// What context to assemble.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// Most tokens the context may take (default 4000). It never exceeds it.
    pub budget: Option<u64>,
    /// What the next step is about; relevant memories are retrieved for it.
    pub query: Option<String>,
    /// tiers (default), qa, conversation, router, planner, phase:planning,
    /// phase:execution or phase:validation.
    pub preset: Option<String>,
    /// markdown (default; what to send a model), json (the markdown and each
    /// item with its id, as `forget` takes it), or messages (an OpenAI chat
    /// list).
    pub format: Option<String>,
}

/// An option considered and not taken.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlternativeArg {
    /// The option.
    pub option: String,
    /// Why it was not chosen.
    pub rejected_because: String,
}

/// An architecture decision record.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionArgs {
    /// A short title: "Use SQLite for the local store".
    pub title: String,
    /// The situation and forces that called for a decision.
    pub context: String,
    /// What was decided.
    pub decision: String,
    /// Good consequences.
    #[serde(default)]
    pub positive: Vec<String>,
    /// Bad consequences.
    #[serde(default)]
    pub negative: Vec<String>,
    /// How the bad ones are contained.
    #[serde(default)]
    pub mitigations: Vec<String>,
    /// Options considered and rejected.
    #[serde(default)]
    pub alternatives: Vec<AlternativeArg>,
    /// What must stay true for the decision to hold.
    #[serde(default)]
    pub assumptions: Vec<String>,
    /// Proposed (default) or Accepted.
    pub status: Option<String>,
}

/// The goal to complete.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalArgs {
    /// The goal's id as `set_goal` returned it (a unique prefix will do).
    pub id: String,
    /// The version you last read; the call fails if someone changed the
    /// goal since (read it again, then retry).
    pub version: Option<u64>,
}

/// The checkpoint to resume from.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeArgs {
    /// A checkpoint id (`CP-20260101-120000`); the latest when omitted.
    pub checkpoint: Option<String>,
}

/// What to forget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetArgs {
    /// Ids as search shows them and context's json format lists them (each
    /// item's `id`): `o12` (an operation), `m7` (a message), `DR-a3f8b2c1`
    /// (a decision), or a hot item's or ended session's id.
    #[serde(default)]
    pub targets: Vec<String>,
    /// Phrases (4 characters or more): everything whose text holds one is
    /// forgotten, wherever it was said.
    #[serde(default)]
    pub matching: Vec<String>,
    /// List what would be forgotten without forgetting it. Use it first
    /// with `matching`.
    #[serde(default)]
    pub dry_run: bool,
}
