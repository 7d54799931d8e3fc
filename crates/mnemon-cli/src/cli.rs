//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod memory;
mod serving;
mod setup;

pub use memory::*;
pub use serving::*;
pub use setup::*;

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

#[cfg(test)]
mod tests;
