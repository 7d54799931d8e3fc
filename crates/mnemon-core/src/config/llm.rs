//! The `[llm]` section: which model server mnemon talks to, if any. Only
//! data lives here; the clients that use it are in `mnemon-llm`.

use serde::{Deserialize, Serialize};

/// The API a model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmProvider {
    /// Ollama's native API (`/api/chat`, `/api/show`, `/api/ps`).
    Ollama,
    /// Any OpenAI-compatible server: llama.cpp's `llama-server`, vLLM, LM
    /// Studio, OpenAI itself. Which one it is is found out by probing.
    #[serde(alias = "openai-compatible")]
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

impl LlmProvider {
    pub fn name(self) -> &'static str {
        match self {
            LlmProvider::Ollama => "ollama",
            LlmProvider::Openai => "openai",
            LlmProvider::Anthropic => "anthropic",
        }
    }

    /// Where the provider listens when `base_url` is not set.
    pub fn default_base_url(self) -> &'static str {
        match self {
            LlmProvider::Ollama => "http://localhost:11434",
            LlmProvider::Openai => "http://localhost:8080/v1",
            LlmProvider::Anthropic => "https://api.anthropic.com",
        }
    }
}

/// One model on one server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmEndpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<LlmProvider>,
    /// As for the OpenAI SDK (`http://localhost:8080/v1`); without `/v1`
    /// is accepted too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The environment variable holding the API key. The key itself is
    /// never written to config, so it cannot reach disk, logs or
    /// checkpoints through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// `[llm]`: the orchestrator's model server, and optionally another one
/// for summaries (`[llm.summarizer]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSection {
    /// Unset: no LLM; mnemon works on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<LlmProvider>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// A whole request, in seconds (streamed answers: between chunks).
    pub timeout_secs: u64,
    /// Connecting, in milliseconds: an unreachable server costs no more.
    pub connect_timeout_ms: u64,
    /// Retries after a 429 or 5xx, with exponential backoff.
    pub retries: u32,
    /// How long a served-window probe is trusted, in seconds.
    pub probe_cache_secs: u64,
    /// Tokens kept free for the answer of `mnemon ask`.
    pub answer_tokens: u64,
    /// Send lines the rule parser does not understand to the LLM.
    pub command_parser: bool,
    /// Summaries from another model (a small local one, say); unset: the
    /// main one. No `[llm]` at all: extractive summaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<LlmEndpoint>,
}

impl Default for LlmSection {
    fn default() -> Self {
        LlmSection {
            provider: None,
            base_url: None,
            model: None,
            api_key_env: None,
            timeout_secs: 120,
            connect_timeout_ms: 1_000,
            retries: 2,
            probe_cache_secs: 60,
            answer_tokens: 512,
            command_parser: true,
            summarizer: None,
        }
    }
}

impl LlmSection {
    /// Whether an LLM is configured at all.
    pub fn enabled(&self) -> bool {
        self.provider.is_some()
    }

    /// The main model's endpoint.
    pub fn endpoint(&self) -> LlmEndpoint {
        LlmEndpoint {
            provider: self.provider,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
        }
    }

    /// The summarizer's endpoint: `[llm.summarizer]` over `[llm]`, key by
    /// key; `None` without an LLM.
    pub fn summarizer_endpoint(&self) -> Option<LlmEndpoint> {
        let main = self.endpoint();
        let s = self.summarizer.clone().unwrap_or_default();
        let provider = s.provider.or(main.provider)?;
        let same = s.provider.is_none() || s.provider == main.provider;
        Some(LlmEndpoint {
            provider: Some(provider),
            base_url: s
                .base_url
                .or_else(|| same.then(|| main.base_url.clone()).flatten()),
            model: s
                .model
                .or_else(|| same.then(|| main.model.clone()).flatten()),
            api_key_env: s
                .api_key_env
                .or_else(|| same.then(|| main.api_key_env.clone()).flatten()),
        })
    }
}
