//! The one interface every provider implements, and the values that cross
//! it.

use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: "system".into(),
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: "user".into(),
            content: content.into(),
        }
    }
}

/// What to ask.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// Most tokens the answer may take.
    pub max_tokens: u64,
    /// The window to ask for, where the server takes one per request
    /// (Ollama's `num_ctx`): sent explicitly so that no server default
    /// silently cuts the prompt.
    pub window: Option<u64>,
    /// 0 for summaries and parsing, where the same input should give the
    /// same output.
    pub temperature: Option<f64>,
    /// A JSON schema the answer must follow, where the server can enforce
    /// one.
    pub json_schema: Option<serde_json::Value>,
    /// About how many tokens the prompt is (counted by the caller), so a
    /// server that reads far fewer can be caught cutting it.
    pub expected_prompt_tokens: Option<u64>,
}

/// What the server reported about a call's size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt as the model's own tokenizer counted them.
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// An answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatReply {
    pub text: String,
    pub usage: Usage,
    /// `stop`, `length`, ...
    pub finish_reason: Option<String>,
    /// The server counted fewer prompt tokens than were sent (Ollama drops
    /// the oldest messages of a prompt that does not fit): what it said it
    /// read, for the caller to report.
    pub truncated: Option<String>,
}

/// What a server says about itself and its window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// `ollama`, `openai` or `anthropic`: the API spoken.
    pub provider: String,
    /// The server found behind it: `llama.cpp`, `ollama`, `vllm`,
    /// `lmstudio`, `openai`, `anthropic`.
    pub server: String,
    pub base_url: String,
    /// The model requests go to.
    pub model: String,
    /// The model's trained maximum.
    pub model_max: Option<u64>,
    /// The window a request may really use.
    pub served: Option<u64>,
    /// Whether prompts can be counted exactly with the model's own
    /// tokenizer (llama.cpp's `/tokenize`, Anthropic's count endpoint).
    pub exact_tokens: bool,
    /// What raises a served window smaller than the model's.
    pub fix: Option<String>,
    /// Anything odd found on the way (an endpoint missing, a default
    /// window assumed).
    pub notes: Vec<String>,
}

/// A model server.
pub trait Client: Send + Sync + std::fmt::Debug {
    /// `server:model`, for audits and messages.
    fn name(&self) -> String;

    /// Asks the server what it serves. Bounded by the connect timeout when
    /// nothing answers.
    fn probe(&self) -> Result<Probe, LlmError>;

    /// Sends a chat request, handing the answer's text to `on_text` as it
    /// streams in.
    fn chat(&self, req: &ChatRequest, on_text: &mut dyn FnMut(&str))
    -> Result<ChatReply, LlmError>;

    /// The exact size of `text` in the model's own tokens, where the
    /// server can say; `None` where it cannot.
    fn count_tokens(&self, _text: &str) -> Result<Option<u64>, LlmError> {
        Ok(None)
    }
}
