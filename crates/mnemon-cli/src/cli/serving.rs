//! Arguments of what serves or talks to others: the server, tokens, the LLM,
//! `ask`, chat and embeddings.

use clap::{Args, Subcommand};

use super::AgentArg;

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

/// `--listen`: an address, or a host name resolved now (an IPv4 address
/// first, as clients given "localhost" usually try it first).
pub(super) fn listen_addr(s: &str) -> Result<std::net::SocketAddr, String> {
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

#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// Ask the server now: provider, model, the model's window, the served window, whether
    /// counts are exact, the latency of a one-token request, and the window mnemon will use.
    Probe,
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
