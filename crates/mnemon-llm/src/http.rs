//! One blocking HTTP client for every provider: bounded connect and
//! request timeouts, retries with backoff on 429 and 5xx, errors that name
//! the server, and line-by-line reading of streamed replies.

use std::io::{BufRead, BufReader};
use std::sync::Once;
use std::time::Duration;

use reqwest::blocking::{Client, RequestBuilder, Response};
use serde_json::Value;

use crate::client::ChatReply;
use crate::error::{LlmError, excerpt};

/// Timeouts and retries, from `[llm]`.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect: Duration,
    pub request: Duration,
    pub retries: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect: Duration::from_millis(1_000),
            request: Duration::from_secs(120),
            retries: 2,
        }
    }
}

/// The transport shared by a provider's calls.
#[derive(Debug, Clone)]
pub struct Http {
    client: Client,
    limits: Limits,
}

static CRYPTO: Once = Once::new();

/// Installs rustls's ring provider for the process, once. reqwest is built
/// here without a default provider (see Cargo.toml), and Cargo unifies
/// that feature for every reqwest in the build: a program that makes its
/// own reqwest client next to mnemon calls this first. A provider
/// installed already by someone else is kept.
pub fn ensure_crypto() {
    CRYPTO.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Http {
    pub fn new(limits: Limits) -> Result<Http, LlmError> {
        ensure_crypto();
        let client = Client::builder()
            .connect_timeout(limits.connect)
            .timeout(limits.request)
            .user_agent(concat!("mnemon/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot set up HTTP: {e}")))?;
        Ok(Http { client, limits })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub fn get(&self, url: &str) -> RequestBuilder {
        self.client.get(url)
    }

    pub fn post(&self, url: &str) -> RequestBuilder {
        self.client.post(url)
    }

    /// Sends `build()` until it succeeds, retrying 429 and 5xx answers and
    /// refused connections with exponential backoff (250 ms, 500 ms, ...;
    /// a `Retry-After` of up to 10 s is honoured). The answer is returned
    /// with a success status; any other becomes an [`LlmError`] through
    /// `classify`.
    pub fn send(
        &self,
        url: &str,
        build: impl Fn() -> RequestBuilder,
        classify: &dyn Fn(u16, &str) -> LlmError,
    ) -> Result<Response, LlmError> {
        let mut attempt = 0;
        loop {
            let outcome = build().send();
            let wait = match outcome {
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    let body = resp.text().unwrap_or_default();
                    let err = classify(status, &body);
                    if !(status == 429 || status >= 500) || attempt >= self.limits.retries {
                        return Err(err);
                    }
                    retry_after
                        .map(|s| Duration::from_secs(s.min(10)))
                        .unwrap_or_else(|| backoff(attempt))
                }
                Err(e) => {
                    let err = transport_error(url, &e, self.limits);
                    // A timeout after the request was sent is not retried:
                    // the server may still be working on it.
                    if !matches!(err, LlmError::Unreachable { .. })
                        || attempt >= self.limits.retries
                    {
                        return Err(err);
                    }
                    backoff(attempt)
                }
            };
            attempt += 1;
            std::thread::sleep(wait);
        }
    }

    /// [`Http::send`], then the body as JSON.
    pub fn json(
        &self,
        url: &str,
        build: impl Fn() -> RequestBuilder,
        classify: &dyn Fn(u16, &str) -> LlmError,
    ) -> Result<Value, LlmError> {
        let resp = self.send(url, build, classify)?;
        let text = resp
            .text()
            .map_err(|e| transport_error(url, &e, self.limits))?;
        serde_json::from_str(&text).map_err(|e| LlmError::BadReply {
            url: url.to_string(),
            reason: format!("not JSON: {e}"),
            excerpt: excerpt(&text, 300),
        })
    }
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250u64.saturating_mul(1 << attempt.min(6)))
}

/// A transport failure as an [`LlmError`].
pub fn transport_error(url: &str, e: &reqwest::Error, limits: Limits) -> LlmError {
    if e.is_connect() {
        return LlmError::Unreachable {
            url: url.to_string(),
            reason: root_cause(e),
        };
    }
    if e.is_timeout() {
        return LlmError::Timeout {
            url: url.to_string(),
            secs: limits.request.as_secs(),
        };
    }
    if e.is_body() || e.is_decode() {
        return LlmError::Cut {
            url: url.to_string(),
            received: 0,
            reason: root_cause(e),
        };
    }
    LlmError::Unreachable {
        url: url.to_string(),
        reason: root_cause(e),
    }
}

/// The innermost message of an error chain ("Connection refused (os
/// error 111)" rather than "error sending request").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The message a server put in its error body: OpenAI's and llama.cpp's
/// `{"error": {"message": ...}}`, Ollama's `{"error": "..."}`, or the
/// body itself.
pub fn error_message(body: &str) -> String {
    let v: Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => return excerpt(body, 300),
    };
    let e = &v["error"];
    if let Some(m) = e["message"].as_str() {
        return excerpt(m, 300);
    }
    if let Some(m) = e.as_str() {
        return excerpt(m, 300);
    }
    if let Some(m) = v["message"].as_str() {
        return excerpt(m, 300);
    }
    excerpt(body, 300)
}

/// Reads a streamed answer line by line into a [`ChatReply`]: `f` handles
/// one non-empty line and returns false once the stream says it is done.
/// A body that breaks off is a [`LlmError::Cut`] naming how much of the
/// answer had arrived.
pub fn read_stream(
    url: &str,
    resp: Response,
    mut f: impl FnMut(&str, &mut ChatReply) -> Result<bool, LlmError>,
) -> Result<ChatReply, LlmError> {
    let mut reply = ChatReply::default();
    let mut reader = BufReader::new(resp);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return Ok(reply),
            Ok(_) => {
                let t = line.trim();
                if !t.is_empty() && !f(t, &mut reply)? {
                    return Ok(reply);
                }
            }
            Err(e) => {
                return Err(LlmError::Cut {
                    url: url.to_string(),
                    received: reply.text.len(),
                    reason: e.to_string(),
                });
            }
        }
    }
}

/// Adds a streamed piece of the answer, handing it on as it arrives.
pub fn push_text(reply: &mut ChatReply, on_text: &mut dyn FnMut(&str), text: &str) {
    on_text(text);
    reply.text.push_str(text);
}
