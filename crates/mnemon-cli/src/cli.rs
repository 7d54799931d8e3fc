//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// mnemon: context-window manager and tiered memory for LLM orchestrators.
///
/// Knows exactly how full a model's context window is, which zone that puts
/// it in and what to do about it; counts tokens exactly for the model's own
/// tokenizer.
#[derive(Debug, Parser)]
#[command(
    name = "mnemon",
    version,
    propagate_version = true,
    max_term_width = 100
)]
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
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The orchestrator's model (see `mnemon models list`).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The context window in tokens, when it differs from the model's.
    #[arg(long, value_name = "TOKENS")]
    pub window: Option<u64>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Report for another model than the configured one.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Evaluate the window as if this many tokens were in the live context.
    #[arg(long, value_name = "TOKENS")]
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
    #[arg(long, value_name = "TOKENS")]
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
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the commented default config.toml.
    Default,
    /// Print the settings in force (defaults, file, environment).
    Show,
    /// Check the configuration; exits 1 with every problem found.
    Validate,
}
