//! What can go wrong talking to a model server, each with what to do.

/// A failed call to a model server. Every message names the server and
/// says what to check.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// Nothing answered at the address (connection refused, no route,
    /// the connect timeout passed).
    #[error(
        "cannot reach the model server at {url}: {reason}. Is it running? Check llm.base_url (and `mnemon llm probe`)"
    )]
    Unreachable { url: String, reason: String },
    /// The server accepted the request but did not finish in time.
    #[error(
        "the model server at {url} did not answer within {secs} s; raise llm.timeout_secs or use a smaller model"
    )]
    Timeout { url: String, secs: u64 },
    /// The key was refused, or none was given where one is needed.
    #[error("the model server at {url} refused the key ({status}): {message}. {hint}")]
    Auth {
        url: String,
        status: u16,
        message: String,
        hint: String,
    },
    /// The environment variable that should hold the key is not set.
    #[error(
        "llm.api_key_env names {var}, but {var} is not set (or not UTF-8); export it with your key"
    )]
    MissingKey { var: String },
    /// The server does not have the model.
    #[error("the model server at {url} has no model {model:?}: {message}{available}")]
    ModelNotFound {
        url: String,
        model: String,
        message: String,
        /// ` (it has: a, b)` when the server lists its models.
        available: String,
    },
    /// The prompt does not fit the window the server serves.
    #[error(
        "the prompt ({}) does not fit the {} the server at {url} serves: {message}",
        prompt_tokens.map_or_else(|| "its size not reported".to_string(), |n| format!("{n} tokens")),
        window.map_or_else(|| "window".to_string(), |n| format!("{n}-token window"))
    )]
    ContextExceeded {
        url: String,
        prompt_tokens: Option<u64>,
        window: Option<u64>,
        message: String,
    },
    /// Any other refusal or failure (4xx, 5xx after retries).
    #[error("the model server at {url} answered {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    /// The reply could not be read: not JSON, or not the expected shape.
    #[error("the model server at {url} sent a reply mnemon cannot read ({reason}): {excerpt}")]
    BadReply {
        url: String,
        reason: String,
        excerpt: String,
    },
    /// A streamed reply stopped before its end.
    #[error(
        "the model server at {url} stopped streaming before the answer ended ({received} characters received): {reason}"
    )]
    Cut {
        url: String,
        received: usize,
        reason: String,
    },
    /// A setting cannot work (an unknown provider, an address that is not
    /// a URL).
    #[error("{0}")]
    Config(String),
}

impl LlmError {
    /// Whether trying again later may help (the server is down, busy or
    /// slow), as opposed to a request that will always fail.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            LlmError::Unreachable { .. }
                | LlmError::Timeout { .. }
                | LlmError::Cut { .. }
                | LlmError::Status {
                    status: 429 | 500..=599,
                    ..
                }
        )
    }
}

/// At most `max` characters of `text`, marked when cut, for error messages
/// that must not echo a whole reply.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}… ({} bytes in all)", text.len())
}
