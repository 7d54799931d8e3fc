//! The upstream: the project's `[llm]` server, reached in the client's own
//! wire format with the project's key (never the client's mnemon token).
//! Answers are relayed as they come, streamed ones chunk by chunk.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use mnemon::Mnemon;
use mnemon::mnemon_core::config::{LlmProvider, LlmSection};
use serde_json::Value;

use super::Finish;
use super::wire::{Events, ProxyError, Reply, Wire};

/// Where a project's requests go.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server's root, without `/v1`.
    root: String,
    wire: Wire,
    provider: LlmProvider,
    /// The model `[llm]` names, if any.
    model: Option<String>,
    key: Option<String>,
    connect: Duration,
}

impl Target {
    pub fn of(llm: &LlmSection, wire: Wire) -> Result<Target, ProxyError> {
        let Some(provider) = llm.provider else {
            return Err(ProxyError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                "this project has no model server to pass requests on to: set [llm] provider, base_url and model in .mnemon/config.toml",
            ));
        };
        let base = llm
            .base_url
            .clone()
            .unwrap_or_else(|| provider.default_base_url().to_string());
        let base = base.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base).to_string();
        let key = llm
            .api_key_env
            .as_deref()
            .and_then(|var| std::env::var(var).ok())
            .filter(|k| !k.trim().is_empty());
        Ok(Target {
            root,
            wire,
            provider,
            model: llm.model.clone(),
            key,
            connect: Duration::from_millis(llm.connect_timeout_ms),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }

    fn authorize(
        &self,
        mut b: reqwest::RequestBuilder,
        client: &HeaderMap,
    ) -> reqwest::RequestBuilder {
        if let Some(key) = &self.key {
            b = match self.wire {
                Wire::Anthropic if self.provider == LlmProvider::Anthropic => {
                    b.header("x-api-key", key)
                }
                _ => b.bearer_auth(key),
            };
        }
        if self.wire == Wire::Anthropic {
            let version = client
                .get("anthropic-version")
                .cloned()
                .unwrap_or_else(|| axum::http::HeaderValue::from_static("2023-06-01"));
            b = b.header("anthropic-version", version);
            if let Some(beta) = client.get("anthropic-beta") {
                b = b.header("anthropic-beta", beta.clone());
            }
        }
        b
    }
}

/// An upstream's answer, or its refusal with the body that says why.
pub enum Sent {
    Answer(reqwest::Response),
    Refused { status: u16, body: String },
}

/// Clients by connect timeout, and each project's model list for a minute.
#[derive(Debug, Default)]
pub struct Upstreams {
    clients: Mutex<HashMap<Duration, reqwest::Client>>,
    models: Mutex<HashMap<String, (Instant, Vec<String>)>>,
}

/// How long a project's list of models is trusted.
const MODELS_TTL: Duration = Duration::from_secs(60);

impl Upstreams {
    fn client(&self, t: &Target) -> Result<reqwest::Client, ProxyError> {
        let mut all = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = all.get(&t.connect) {
            return Ok(c.clone());
        }
        mnemon::mnemon_llm::ensure_crypto();
        let c = reqwest::Client::builder()
            .connect_timeout(t.connect)
            .user_agent(concat!("mnemon/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ProxyError::upstream(format!("cannot set up HTTP: {e}")))?;
        all.insert(t.connect, c.clone());
        Ok(c)
    }

    /// Sends `body` to the upstream; a transport failure is an error in
    /// the client's format naming the server.
    pub async fn send(
        &self,
        t: &Target,
        client: &HeaderMap,
        body: Vec<u8>,
    ) -> Result<Sent, ProxyError> {
        let url = t.url(t.wire.path());
        let req = t
            .authorize(self.client(t)?.post(&url), client)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body);
        let resp = req.send().await.map_err(|e| {
            ProxyError::upstream(format!(
                "the model server at {url} could not be reached ({e}); is it running, and is [llm] base_url right?"
            ))
        })?;
        let status = resp.status().as_u16();
        if resp.status().is_success() {
            return Ok(Sent::Answer(resp));
        }
        let body = resp.text().await.unwrap_or_default();
        Ok(Sent::Refused { status, body })
    }

    /// The models a client may name: `[llm]`'s and those the upstream
    /// lists (asked at most once a minute per project).
    pub async fn models(&self, m: &Mnemon, t: &Target) -> Vec<String> {
        let key = m.settings().root().display().to_string();
        if let Some((at, ids)) = self
            .models
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            && at.elapsed() < MODELS_TTL
        {
            return ids.clone();
        }
        let mut ids: Vec<String> = t.model.iter().cloned().collect();
        if let Ok(c) = self.client(t) {
            let asked = t
                .authorize(c.get(t.url("/v1/models")), &HeaderMap::new())
                .timeout(Duration::from_secs(5))
                .send()
                .await;
            if let Ok(resp) = asked
                && resp.status().is_success()
                && let Ok(v) = resp.json::<Value>().await
            {
                for m in v["data"].as_array().into_iter().flatten() {
                    if let Some(id) = m["id"].as_str()
                        && !ids.iter().any(|x| x == id)
                    {
                        ids.push(id.to_string());
                    }
                }
            }
        }
        self.models
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, (Instant::now(), ids.clone()));
        ids
    }

    /// A model the project does not serve is refused before anything is
    /// recorded. With nothing known of the upstream's models, any goes.
    pub async fn check_model(
        &self,
        m: &Mnemon,
        t: &Target,
        model: Option<&str>,
    ) -> Result<(), ProxyError> {
        let Some(model) = model else {
            return Ok(());
        };
        let known = self.models(m, t).await;
        if known.is_empty() || known.iter().any(|k| k == model) {
            return Ok(());
        }
        Err(ProxyError {
            code: Some("model_not_found"),
            ..ProxyError::new(
                StatusCode::NOT_FOUND,
                "not_found_error",
                format!(
                    "model `{model}` is not served here: use {} (GET /v1/models lists them)",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })
    }
}

/// An upstream's refusal in the client's format, its own message kept.
pub fn refusal(status: u16, body: &str, t: &Target) -> ProxyError {
    let said = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .or_else(|| v["message"].as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| excerpt(body));
    let (code, kind) = match status {
        400 | 413 | 422 => (status, "invalid_request_error"),
        401 | 403 => (status, "authentication_error"),
        404 => (404, "not_found_error"),
        429 => (429, "rate_limit_error"),
        _ => (502, "api_error"),
    };
    let mut message = format!("the model server at {} answered {status}: {said}", t.root);
    if status == 401 || status == 403 {
        message.push_str("; mnemon sends the key in the variable [llm] api_key_env names, not the client's token");
    }
    let mut e = ProxyError::new(
        StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_GATEWAY),
        kind,
        message,
    );
    if super::wire::is_length_refusal(status, body) {
        e.code = Some("context_length_exceeded");
    }
    e
}

fn excerpt(body: &str) -> String {
    let t: String = body.chars().take(200).collect();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.is_empty() {
        "an empty body".into()
    } else {
        t
    }
}

pub fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// A whole answer: read, checked to be JSON, recorded, relayed as sent.
pub async fn relay_whole(
    resp: reqwest::Response,
    wire: Wire,
    timeout_secs: u64,
    finish: Finish,
) -> Result<Response, ProxyError> {
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let body = tokio::time::timeout(Duration::from_secs(timeout_secs.max(1)), resp.bytes())
        .await
        .map_err(|_| {
            ProxyError::upstream(format!(
                "the model server sent no answer in {timeout_secs} s ([llm] timeout_secs)"
            ))
        })?
        .map_err(|e| ProxyError::upstream(format!("the model server's answer broke off: {e}")))?;
    let v: Value = serde_json::from_slice(&body).map_err(|_| {
        ProxyError::upstream(format!(
            "the model server answered something that is not JSON: {}",
            excerpt(&String::from_utf8_lossy(&body))
        ))
    })?;
    // Recorded after the answer is on its way; the conversation stays
    // locked until then, so its next request sees it.
    tokio::spawn(finish.run(Reply::of(wire, &v)));
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        content_type.unwrap_or_else(|| axum::http::HeaderValue::from_static("application/json")),
    );
    Ok(r)
}

/// A streamed answer, relayed chunk by chunk as it comes. The answer is
/// recorded only once the client has all of it: a client that goes away,
/// or an upstream that breaks off (the client gets an error event in its
/// format), leaves nothing half-recorded.
pub fn relay_stream(
    resp: reqwest::Response,
    wire: Wire,
    timeout_secs: u64,
    finish: Finish,
) -> Response {
    // A short queue: a client that goes away is noticed within a few
    // chunks, and the answer it did not read is not recorded.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let wait = Duration::from_secs(timeout_secs.max(1));
    tokio::spawn(async move {
        let mut events = Events::new(wire);
        let mut stream = resp.bytes_stream();
        let mut delivered = true;
        loop {
            match tokio::time::timeout(wait, stream.next()).await {
                Ok(Some(Ok(chunk))) => {
                    events.feed(&chunk);
                    if tx.send(Ok(chunk)).await.is_err() {
                        delivered = false;
                        break;
                    }
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    delivered = false;
                    let _ = tx
                        .send(Ok(wire.stream_error(&format!(
                            "the model server's stream broke off: {e}"
                        ))))
                        .await;
                    break;
                }
                Err(_) => {
                    delivered = false;
                    let _ = tx
                        .send(Ok(wire.stream_error(&format!(
                            "the model server sent nothing for {timeout_secs} s ([llm] timeout_secs)"
                        ))))
                        .await;
                    break;
                }
            }
        }
        let reply = events.reply;
        if delivered && reply.complete && reply.error.is_none() {
            finish.run(reply).await;
        } else if delivered && !reply.complete {
            let _ = tx
                .send(Ok(wire.stream_error(
                    "the model server ended the stream before the answer was complete",
                )))
                .await;
        }
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let mut r = Response::new(Body::from_stream(body));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-cache"),
    );
    r
}
