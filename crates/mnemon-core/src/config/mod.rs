//! The configuration schema, its defaults, and how a file and the
//! environment combine into one validated [`Config`].
//!
//! Keys follow the seeds' names (`context_window.max_tokens`,
//! `working_memory.max_operations`, `checkpoint.time_interval_hours`, ...).
//! Precedence, lowest first: compiled-in defaults, `.mnemon/config.toml`,
//! `MNEMON_SECTION__KEY` environment variables. The caller reads the file
//! and the environment and hands their text to [`load`]; this module never
//! does IO itself.

pub mod edit;
mod llm;
mod load;
mod plan;
mod proxy;
mod schema;
mod validate;

pub use llm::{LlmEndpoint, LlmProvider, LlmSection};
pub use load::{ConfigError, ConfigErrors, ConfigFile, Loaded, Origin, load};
pub use plan::*;
pub use proxy::{CompactionSummary, Inject, ProxySection};
pub use schema::*;

/// The commented default configuration that `mnemon init` writes and
/// `mnemon config default` prints. A test keeps it equal to
/// [`Config::default`].
pub const DEFAULT_TOML: &str = include_str!("default.toml");
