//! mnemon's model-server clients. The core never does IO; this crate is
//! where mnemon talks to an LLM:
//!
//! - [`Client`]: one trait, three providers ([`Ollama`], [`OpenAi`] for
//!   any OpenAI-compatible server, [`Anthropic`]), each over blocking HTTP
//!   with bounded timeouts and retries;
//! - [`Client::probe`]: the window a server really serves, for the
//!   core's window resolution;
//! - [`LlmSummarizer`]: summaries on the core's `Summarizer` seam, staged
//!   so every call fits the summarizer's own window, checked, and falling
//!   back to extractive on any failure;
//! - [`LlmParser`]: chat lines the rule parser does not understand, on the
//!   `CommandParser` seam.

mod anthropic;
mod client;
mod embed;
mod error;
mod http;
mod ollama;
mod openai;
mod parser;
mod summarizer;

use std::time::Duration;

use mnemon_core::config::{LlmEndpoint, LlmProvider, LlmSection};

pub use anthropic::Anthropic;
pub use client::{ChatMessage, ChatReply, ChatRequest, Client, Probe, Usage};
pub use embed::HttpEmbedder;
pub use error::LlmError;
pub use http::{Http, Limits, ensure_crypto};
pub use ollama::Ollama;
pub use openai::OpenAi;
pub use parser::LlmParser;
pub use summarizer::LlmSummarizer;

/// The timeouts and retries `[llm]` sets.
pub fn limits(section: &LlmSection) -> Limits {
    Limits {
        connect: Duration::from_millis(section.connect_timeout_ms),
        request: Duration::from_secs(section.timeout_secs),
        retries: section.retries,
    }
}

/// A client for `endpoint`. `key` looks up an environment variable (the
/// one `api_key_env` names), so that keys are read where they are used and
/// never stored.
pub fn connect(
    endpoint: &LlmEndpoint,
    limits: Limits,
    key: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Client>, LlmError> {
    let provider = endpoint.provider.ok_or_else(|| {
        LlmError::Config(
            "no LLM is configured: set llm.provider (\"ollama\", \"openai\" or \"anthropic\") in .mnemon/config.toml".into(),
        )
    })?;
    let base = endpoint
        .base_url
        .clone()
        .unwrap_or_else(|| provider.default_base_url().to_string());
    let key = match &endpoint.api_key_env {
        Some(var) => Some(key(var).ok_or_else(|| LlmError::MissingKey { var: var.clone() })?),
        None => None,
    };
    let http = Http::new(limits)?;
    let model = endpoint.model.clone();
    let need_model = |p: LlmProvider| {
        model.clone().ok_or_else(|| {
            LlmError::Config(format!(
                "llm.model is not set; {} needs the model's name",
                p.name()
            ))
        })
    };
    Ok(match provider {
        LlmProvider::Ollama => Box::new(Ollama::new(http, &base, need_model(provider)?)),
        LlmProvider::Openai => Box::new(OpenAi::new(http, &base, model, key)),
        LlmProvider::Anthropic => Box::new(Anthropic::new(http, &base, need_model(provider)?, key)),
    })
}
