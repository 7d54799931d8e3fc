//! The context proxy: `POST /v1/chat/completions` (OpenAI) and
//! `POST /v1/messages` (Anthropic) on `mnemon serve`, so that any agent
//! whose base URL points at mnemon has its window managed.
//!
//! The client's mnemon token picks the project; the project's `[llm]` is
//! the upstream, reached with its own key. Each conversation is a mnemon
//! agent with its own session: every turn is recorded once, the answer
//! when it completes, and the upstream's usage is reported. While a
//! request fits, it goes on as sent; when it would reach
//! `[proxy] compact_at`, its older turns are replaced by one fenced block
//! (summary, standing facts, the older turns the question needs), which
//! stays the same until the next compaction so the prefix stays cacheable.

mod manage;
mod turns;
mod upstream;
pub mod wire;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mnemon::Mnemon;
use serde_json::{Value, json};

use crate::AppState;
use manage::Conversation;
use wire::{ProxyError, Request, Wire};

/// Times a request the upstream refused for length is compacted again and
/// resent, each within what the last refusal showed.
const LENGTH_RETRIES: usize = 2;

/// A conversation by project and name.
type Conversations = HashMap<(String, String), Arc<tokio::sync::Mutex<Conversation>>>;

/// What the proxy keeps between requests.
#[derive(Debug, Default)]
pub struct ProxyState {
    conversations: Mutex<Conversations>,
    upstream: upstream::Upstreams,
}

impl ProxyState {
    /// A conversation's state. Its lock is async so that it can be held
    /// from a request's recording until its answer is recorded, past the
    /// response: the next request of the conversation waits for it.
    fn conversation(&self, project: &str, id: &str) -> Arc<tokio::sync::Mutex<Conversation>> {
        let mut all = self.conversations.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(
            all.entry((project.to_string(), id.to_string()))
                .or_default(),
        )
    }
}

/// The wire-format routes. They answer in the client's own format, errors
/// included, and read their body with their own limit.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route("/v1/models", get(models))
}

async fn openai(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    handle(Wire::OpenAi, state, headers, body).await
}

async fn anthropic(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    handle(Wire::Anthropic, state, headers, body).await
}

async fn handle(wire: Wire, state: Arc<AppState>, headers: HeaderMap, body: Body) -> Response {
    match proxied(wire, state, headers, body).await {
        Ok(r) => r,
        Err(e) => e.render(wire),
    }
}

/// The client's mnemon token: a bearer token, or Anthropic's `x-api-key`.
fn token(headers: &HeaderMap) -> Option<String> {
    crate::auth::bearer(headers)
        .map(str::to_string)
        .or_else(|| {
            headers
                .get("x-api-key")
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().to_string())
        })
        .filter(|t| !t.is_empty())
}

/// The project the token opens, with the server's errors in wire form.
async fn project(state: &Arc<AppState>, headers: &HeaderMap) -> Result<Mnemon, ProxyError> {
    let token = token(headers).ok_or_else(|| {
        ProxyError::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "no token: use a mnemon token (`mnemon token create --project P`) as the API key",
        )
    })?;
    crate::auth::open_for(state, token, None)
        .await
        .map_err(|e| match e {
            crate::ServerError::Unauthorized(m) => {
                ProxyError::new(StatusCode::UNAUTHORIZED, "authentication_error", m)
            }
            crate::ServerError::NotFound(m) => {
                ProxyError::new(StatusCode::NOT_FOUND, "not_found_error", m)
            }
            other => ProxyError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                other.to_string(),
            ),
        })
}

async fn read_body(body: Body) -> Result<bytes::Bytes, ProxyError> {
    axum::body::to_bytes(body, crate::MAX_BODY)
        .await
        .map_err(|_| {
            ProxyError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                format!(
                    "the request is larger than {} MiB, the most mnemon accepts; send large files by reference",
                    crate::MAX_BODY / (1024 * 1024)
                ),
            )
        })
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ProxyError> + Send + 'static,
) -> Result<T, ProxyError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        ProxyError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            e.to_string(),
        )
    })?
}

async fn proxied(
    wire: Wire,
    state: Arc<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ProxyError> {
    let m = project(&state, &headers).await?;
    let bytes = read_body(body).await?;
    let req = Arc::new(wire::parse(wire, &bytes)?);
    let config = m.settings().loaded().config.clone();
    let target = upstream::Target::of(&config.llm, wire)?;
    state
        .proxy
        .upstream
        .check_model(&m, &target, req.model.as_deref())
        .await?;
    let named = headers
        .get("x-mnemon-session")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.user.clone());
    let first_user = req
        .turns
        .iter()
        .find(|t| t.opens)
        .map(|t| t.text.as_str())
        .unwrap_or("");
    let system: String = req
        .turns
        .iter()
        .filter(|t| t.standing)
        .map(|t| t.text.as_str())
        .chain([req.system.as_str()])
        .collect();
    let conversation = turns::conversation_id(named.as_deref(), &system, first_user);
    let agent = m.for_agent(turns::agent_name(&conversation));
    let project_key = m.settings().root().display().to_string();
    let conv = state.proxy.conversation(&project_key, &conversation);
    let prepare = |harder: Option<u64>| {
        let (agent, conv, req, config, conversation) = (
            agent.clone(),
            Arc::clone(&conv),
            Arc::clone(&req),
            config.clone(),
            conversation.clone(),
        );
        async move {
            let mut c = conv.lock_owned().await;
            blocking(move || {
                let talk: Vec<&wire::Turn> = req.turns.iter().filter(|t| !t.standing).collect();
                let seqs =
                    manage::record_new(&agent, &format!("proxy {conversation}"), &mut c, &talk)?;
                manage::outgoing(
                    &agent,
                    &config.proxy,
                    config.llm.answer_tokens,
                    &mut c,
                    &req,
                    &seqs,
                    &conversation,
                    harder,
                )
            })
            .await
        }
    };
    let mut out = prepare(None).await?;
    let mut sent = state
        .proxy
        .upstream
        .send(&target, &headers, out.body.clone())
        .await?;
    // The upstream counts differently (another tokenizer, a smaller
    // window than configured): again, within what it showed. A compacted
    // request is mostly mnemon's memory block (labels, dates, markup), whose
    // tokens an estimating tokenizer undercounts more than plain turns, so
    // the first retry can still be over: the second learns from it.
    for _ in 0..LENGTH_RETRIES {
        let upstream::Sent::Refused { status, body } = &sent else {
            break;
        };
        if !wire::is_length_refusal(*status, body) {
            break;
        }
        let cap = wire::length_cap(body, out.tokens + out.answer);
        out = prepare(Some(cap)).await?;
        sent = state
            .proxy
            .upstream
            .send(&target, &headers, out.body.clone())
            .await?;
    }
    let finish = Finish {
        agent,
        conv: Arc::clone(&conv).lock_owned().await,
        request_hash: out.request_hash,
        sent_tokens: out.tokens,
        wire,
    };
    let mut response = match sent {
        upstream::Sent::Refused { status, body } => {
            return Err(upstream::refusal(status, &body, &target));
        }
        upstream::Sent::Answer(resp) if req.stream && upstream::is_event_stream(&resp) => {
            upstream::relay_stream(resp, wire, config.llm.timeout_secs, finish)
        }
        upstream::Sent::Answer(resp) => {
            upstream::relay_whole(resp, wire, config.llm.timeout_secs, finish).await?
        }
    };
    let h = response.headers_mut();
    for (name, value) in [
        ("x-mnemon-zone", out.zone.name().to_string()),
        ("x-mnemon-tokens", out.tokens.to_string()),
        (
            "x-mnemon-managed",
            if out.compacted { "compacted" } else { "pass" }.to_string(),
        ),
        ("x-mnemon-conversation", conversation.clone()),
    ] {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    Ok(response)
}

/// What is done once the answer is complete: it is recorded (once per
/// request) and the upstream's count reported.
pub(crate) struct Finish {
    agent: Mnemon,
    /// Held until the answer is recorded.
    conv: tokio::sync::OwnedMutexGuard<Conversation>,
    request_hash: u64,
    sent_tokens: u64,
    wire: Wire,
}

impl Finish {
    /// Runs on the blocking pool. A failure here cannot reach the client,
    /// which has its answer: it is logged.
    async fn run(mut self, reply: wire::Reply) {
        let done = tokio::task::spawn_blocking(move || {
            manage::record_answer(
                &self.agent,
                &mut self.conv,
                self.request_hash,
                &reply.recorded_text(self.wire),
                reply.prompt_tokens,
                self.sent_tokens,
            )
        })
        .await;
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "the proxied answer was not recorded"),
            Err(e) => tracing::warn!(error = %e, "the proxied answer was not recorded"),
        }
    }
}

/// `POST /v1/messages/count_tokens`: the request counted as the proxy
/// counts it (the project's tokenizer and chat framing).
async fn count_tokens(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let run = async {
        let m = project(&state, &headers).await?;
        let bytes = read_body(body).await?;
        let req: Request = wire::parse(Wire::Anthropic, &bytes)?;
        blocking(move || {
            let n = manage::request_tokens(&m, &req)?;
            Ok(axum::Json(json!({"input_tokens": n})).into_response())
        })
        .await
    };
    run.await.unwrap_or_else(|e| e.render(Wire::Anthropic))
}

/// `GET /v1/models`: the models a client may name, in the format its
/// headers say it speaks (Anthropic's SDK sends `anthropic-version`).
async fn models(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let wire = if headers.contains_key("anthropic-version") {
        Wire::Anthropic
    } else {
        Wire::OpenAi
    };
    let run = async {
        let m = project(&state, &headers).await?;
        let config = m.settings().loaded().config.clone();
        let target = upstream::Target::of(&config.llm, wire)?;
        let ids = state.proxy.upstream.models(&m, &target).await;
        let body = match wire {
            Wire::OpenAi => json!({"object": "list", "data": ids.iter().map(|id| json!({
                "id": id, "object": "model", "created": 0, "owned_by": "mnemon"
            })).collect::<Vec<Value>>()}),
            Wire::Anthropic => json!({
                "data": ids.iter().map(|id| json!({
                    "type": "model", "id": id, "display_name": id, "created_at": "1970-01-01T00:00:00Z"
                })).collect::<Vec<Value>>(),
                "has_more": false,
                "first_id": ids.first(),
                "last_id": ids.last(),
            }),
        };
        Ok::<_, ProxyError>(axum::Json(body).into_response())
    };
    run.await.unwrap_or_else(|e| e.render(wire))
}
