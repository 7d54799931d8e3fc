//! The memory commands' arguments: operations, messages, import, sessions,
//! the hot context, decisions, documents and checkpoints.

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Operation type: nl_command, task_execution, validation, decision, error, ...
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: String,
    /// The operation's data as JSON.
    #[arg(long, value_name = "JSON")]
    pub data: Option<String>,
    /// Its size in tokens; counted with the project's tokenizer if omitted.
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::tokens_or_zero)]
    pub tokens: Option<u64>,
    /// planning, execution or validation.
    #[arg(long, value_name = "PHASE")]
    pub phase: Option<String>,
    /// Status, such as completed or failed (failures are pinned).
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// When it happened (RFC 3339, such as 2025-01-15T14:30:00Z), for
    /// recording what happened earlier; default now.
    #[arg(long, value_name = "TIMESTAMP", value_parser = crate::numbers::timestamp)]
    pub at: Option<mnemon_core::memory::Timestamp>,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct MessageArgs {
    /// Who wrote it.
    #[arg(long, value_name = "ROLE", value_parser = ["user", "assistant", "system", "tool"])]
    pub role: String,
    /// The text; `-` or nothing reads standard input.
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,
    /// When it happened (RFC 3339, such as 2025-01-15T14:30:00Z), for
    /// recording what happened earlier; default now.
    #[arg(long, value_name = "TIMESTAMP", value_parser = crate::numbers::timestamp)]
    pub at: Option<mnemon_core::memory::Timestamp>,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file; `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,
    /// eval, jsonl (OpenAI-style messages) or chatgpt (conversations.json);
    /// detected from the content if omitted.
    #[arg(long, value_name = "FORMAT", value_parser = ["eval", "jsonl", "openai", "chatgpt"])]
    pub format: Option<String>,
    /// How JSONL lines without a `session` field form sessions: a session
    /// per calendar day (UTC) of their timestamps, or the whole file as one.
    #[arg(long, value_name = "BY", default_value = "day", value_parser = ["day", "file"])]
    pub sessions: String,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct RecentArgs {
    /// Only this operation type.
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: Option<String>,
    /// How many.
    #[arg(long, default_value_t = mnemon::LIST_LIMIT, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
    pub limit: usize,
    /// Only operations whose type or data contain every word.
    #[arg(long, value_name = "WORDS")]
    pub search: Option<String>,
    /// Only this session (id or prefix).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct AgentArg {
    /// The agent acting (default: $MNEMON_AGENT, else "orchestrator").
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Start a new session for this agent.
    Start {
        /// A title for the session, shown in listings and its summary.
        #[arg(long, value_name = "TITLE")]
        title: Option<String>,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// End a session (default: this agent's active one).
    End {
        /// The session's id or its start; default: this agent's active one.
        id: Option<String>,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Sessions, most recently active first.
    List {
        /// How many to list.
        #[arg(long, default_value_t = mnemon::LIST_LIMIT, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
        limit: usize,
    },
    /// One session (default: this agent's active one).
    Show {
        /// The session's id or its start; default: this agent's active one.
        id: Option<String>,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Archive a session with a title (default: this agent's active one).
    Archive {
        /// The session's id or its start; default: this agent's active one.
        id: Option<String>,
        /// The title it is archived under.
        #[arg(long, value_name = "TITLE")]
        title: Option<String>,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Make a session active again: hot context, last 10 messages, summary.
    Restore {
        /// The session's id or its start (`session list` shows them).
        id: String,
        #[command(flatten)]
        agent: AgentArg,
    },
}

#[derive(Debug, Args)]
pub struct VersionArg {
    /// The version you read; the change is refused if the item changed since.
    /// Without it the change applies to the item as it is now.
    #[arg(long = "if-version", value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::version)]
    pub if_version: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum GoalCommand {
    /// Add a goal.
    Add {
        /// What the goal is, in your words.
        text: String,
        /// high, medium or low.
        #[arg(long, value_name = "PRIORITY")]
        priority: Option<String>,
        /// A parent goal's id or prefix.
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Change a goal's status, priority or text.
    Update {
        /// The goal's handle (`h3`, as `goal list` shows it), or its id or
        /// the start of it.
        id: String,
        /// pending, in-progress or complete.
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        /// high, medium or low.
        #[arg(long, value_name = "PRIORITY")]
        priority: Option<String>,
        /// The goal's new text.
        #[arg(long, value_name = "TEXT")]
        text: Option<String>,
        #[command(flatten)]
        version: VersionArg,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Mark a goal complete; it leaves the hot context.
    Complete {
        /// The goal: its number or its handle (`h3`) in `goal list`, its id
        /// (or the start of it), or words of its text that only one open
        /// goal holds.
        #[arg(value_name = "GOAL")]
        id: String,
        #[command(flatten)]
        version: VersionArg,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Active goals.
    List,
}

#[derive(Debug, Subcommand)]
pub enum ConstraintCommand {
    /// Add a constraint.
    Add {
        /// The constraint, in your words (e.g. "No new runtime dependencies").
        text: String,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Remove a constraint.
    Remove {
        /// The constraint's handle (`h3`, as `constraint list` shows it), or
        /// its id or the start of it.
        id: String,
        #[command(flatten)]
        version: VersionArg,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Active constraints.
    List,
}

#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The fact to keep.
    pub text: String,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Subcommand)]
pub enum DocCommand {
    /// Print a document, regenerated from the store (or an old version).
    Show {
        /// Which document: project_state, work_plan or decision_log.
        #[arg(value_parser = ["project_state", "work_plan", "decision_log"])]
        kind: String,
        /// An older kept version.
        #[arg(long, value_name = "N")]
        version: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DecisionCommand {
    /// Record a decision; writes .mnemon/decisions/DR-<id>_<slug>.md.
    Add(DecisionInput),
    /// Decision records, most recent first.
    List {
        /// How many to list (default: all).
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
        limit: Option<usize>,
    },
    /// One decision record as ADR markdown.
    Show {
        /// The decision's id (`DR-…`) or its start.
        id: String,
    },
    /// Replace a decision with a new one; the old one becomes Superseded.
    Supersede {
        /// The decision being replaced.
        id: String,
        #[command(flatten)]
        input: DecisionInput,
    },
    /// Move a decision through its lifecycle (Accepted, Deprecated).
    Status {
        /// The decision's id (`DR-…`) or its start.
        id: String,
        /// Proposed, Accepted, Deprecated or Superseded.
        status: String,
    },
}

#[derive(Debug, Args)]
pub struct DecisionInput {
    /// The decision's title, one line (e.g. "Use argon2id for passwords").
    #[arg(long, value_name = "TEXT", required_unless_present = "from_json")]
    pub title: Option<String>,
    /// The problem being decided.
    #[arg(long, value_name = "TEXT", required_unless_present = "from_json")]
    pub context: Option<String>,
    /// What was decided.
    #[arg(long, value_name = "TEXT", required_unless_present = "from_json")]
    pub decision: Option<String>,
    /// A good consequence; give the flag again for each.
    #[arg(long, value_name = "TEXT")]
    pub positive: Vec<String>,
    /// A bad consequence or cost; give the flag again for each.
    #[arg(long, value_name = "TEXT")]
    pub negative: Vec<String>,
    /// How a negative consequence is contained; give the flag again for each.
    #[arg(long, value_name = "TEXT")]
    pub mitigation: Vec<String>,
    /// An option not taken, as "OPTION: why it was rejected".
    #[arg(long, value_name = "OPTION: REASON")]
    pub alternative: Vec<String>,
    /// Something the decision takes for granted; give the flag again for each.
    #[arg(long, value_name = "TEXT")]
    pub assumption: Vec<String>,
    /// Proposed (default) or Accepted.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Read the whole record as JSON (design v2's fields) from a file or `-`.
    #[arg(long = "from-json", value_name = "FILE", conflicts_with_all = ["title", "context", "decision"])]
    pub from_json: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Subcommand)]
pub enum CheckpointCommand {
    /// Create a checkpoint now.
    Create {
        /// What triggered it (letters, digits and `_`).
        #[arg(long, default_value = "manual", value_parser = trigger_name)]
        trigger: String,
        #[command(flatten)]
        agent: AgentArg,
    },
    /// Checkpoints, newest first.
    List {
        /// How many to list.
        #[arg(long, default_value_t = mnemon::LIST_LIMIT, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
        limit: usize,
    },
    /// One checkpoint's JSON.
    Show {
        /// The checkpoint's id (`CP-20260101-103600`, `checkpoint list` shows them).
        id: String,
    },
    /// Restore working memory, hot context, session and window state from a
    /// checkpoint. Reads `.mnemon/checkpoints/<ID>.json` (or a file path),
    /// refusing one that is damaged or was edited.
    Resume {
        /// A checkpoint id, or the path of a checkpoint file.
        id: String,
        #[command(flatten)]
        agent: AgentArg,
    },
}

fn trigger_name(s: &str) -> Result<String, String> {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(s.to_string())
    } else {
        Err(format!(
            "`{s}` is not a trigger name: use letters, digits and `_`, such as manual"
        ))
    }
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Tokens the context may use (default: the preset's, else what the window has left).
    #[arg(long, value_name = "TOKENS", allow_hyphen_values = true, value_parser = crate::numbers::tokens)]
    pub budget: Option<u64>,
    /// tiers, qa, conversation, router, planner, phase:planning, phase:execution,
    /// phase:validation, or a plan of your own from config's [plans.<name>].
    #[arg(long, default_value = mnemon::DEFAULT_PRESET, value_name = "PRESET")]
    pub preset: String,
    /// Fill the fragments section with what best matches this.
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,
    /// markdown, json (sections, items, ids, tokens, scores) or messages (OpenAI chat).
    #[arg(long, default_value = "markdown", value_parser = ["markdown", "json", "messages"], value_name = "FORMAT")]
    pub format: String,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words to look for; any may match, more matches rank higher.
    #[arg(value_name = "QUERY")]
    pub query: String,
    /// How many matches to show.
    #[arg(long, default_value_t = mnemon::SEARCH_LIMIT, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Show what would be kept, summarized and dropped without saving.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct OptimizeArgs {
    /// Report what each technique would save without changing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Also list every operation replaced or pruned, with the reason.
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct ReportUsageArgs {
    /// The prompt tokens the provider reported for a call that sent mnemon's context.
    #[arg(value_name = "PROMPT_TOKENS", allow_hyphen_values = true, value_parser = crate::numbers::tokens_or_zero)]
    pub prompt_tokens: u64,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// What to forget, by the handle every command prints: `o12` (an operation), `m7` (a
    /// message), `h3` (a hot item), `DR-…` (a decision); or the id or unique id prefix of any of
    /// them or of an ended session.
    #[arg(required_unless_present_any = ["history", "matching"], value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Also forget every operation, message, hot item and decision whose text holds this phrase
    /// (ASCII letters in either case); repeatable. Try it with --dry-run first.
    #[arg(long, value_name = "TEXT")]
    pub matching: Vec<String>,
    /// Say what would be forgotten; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// List past forgettings (when, by whom, the ids named and how much went) instead.
    #[arg(long, conflicts_with_all = ["targets", "matching", "dry_run"])]
    pub history: bool,
    #[command(flatten)]
    pub agent: AgentArg,
}
