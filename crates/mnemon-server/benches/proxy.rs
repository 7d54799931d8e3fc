//! What the context proxy adds to a request, excluding the model's time: a
//! loopback upstream that answers at once, called directly and through
//! `mnemon serve` in the same run, alternating.
//!
//! `cargo bench -p mnemon-server --bench proxy [-- REQUESTS]` (default 300)
//!
//! Reports p50/p95/p99 of the added latency (through mnemon minus direct)
//! for three cases: a pass-through request of a conversation of about 8K
//! tokens that grows by one exchange a request (each request records its
//! new turn and the answer); the same streamed, time to the first chunk;
//! and a managed request of a conversation four times the window, which
//! sends the compaction in force with the retrieval for its last turn
//! (with how long the compactions themselves took).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

mod common;

use std::time::Instant;

use axum::routing::{get, post};
use common::percentiles;
use futures_util::StreamExt;
use serde_json::{Value, json};

/// The upstream: an answer at once, whole or as three streamed chunks.
async fn upstream() -> String {
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            post(|axum::Json(v): axum::Json<Value>| async move {
                if v["stream"].as_bool() == Some(true) {
                    let chunk = |t: &str, fin: Value| {
                        format!(
                            "data: {}\n\n",
                            json!({"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": fin}]})
                        )
                    };
                    let body = format!(
                        "{}{}{}data: [DONE]\n\n",
                        chunk("It ", Value::Null),
                        chunk("is ", Value::Null),
                        chunk("done.", json!("stop"))
                    );
                    axum::response::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(axum::body::Body::from(body))
                        .unwrap()
                } else {
                    axum::response::IntoResponse::into_response(axum::Json(json!({
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "It is done."}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 4}
                    })))
                }
            }),
        )
        .route(
            "/v1/models",
            get(|| async { axum::Json(json!({"data": [{"id": "bench"}]})) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// A project whose `[llm]` is `up`, with a window of `window` tokens.
fn project(up: &str, window: u64) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    mnemon::init(
        dir.path(),
        &mnemon::InitOptions {
            model: None,
            window: Some(window),
        },
    )
    .unwrap();
    let path = dir.path().join(".mnemon/config.toml");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "# provider = \"openai\"",
        &format!("provider = \"openai\"\nbase_url = \"{up}/v1\"\nmodel = \"bench\"\n#"),
        1,
    );
    std::fs::write(&path, text).unwrap();
    let token = mnemon_server::create_token(dir.path(), "default", "2026-01-01T00:00:00Z").unwrap();
    (dir, token)
}

async fn serve(dir: &std::path::Path) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let opts = mnemon_server::ServeOptions {
        root: dir.to_path_buf(),
        open: mnemon::OpenOptions::new(),
    };
    tokio::spawn(async move {
        mnemon_server::serve(listener, opts, std::future::pending())
            .await
            .unwrap()
    });
    base
}

/// About `tokens` tokens of earlier conversation.
fn history(tokens: usize) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": "You are a careful assistant."})];
    let mut i = 0;
    while out.len() * 80 < tokens {
        out.push(json!({"role": "user", "content": format!("Question {i}: what did the deploy of service {i} change in the cache layer, and which of the two regions saw errors first after it went out?")}));
        out.push(json!({"role": "assistant", "content": format!("Answer {i}: the deploy moved the cache of service {i} to the new cluster; the western region saw timeouts first, for about four minutes, until the pool was warmed.")}));
        i += 1;
    }
    out
}

struct Case {
    direct: Vec<f64>,
    proxied: Vec<f64>,
}

impl Case {
    fn report(&self, name: &str) {
        let added: Vec<f64> = self
            .proxied
            .iter()
            .zip(&self.direct)
            .map(|(p, d)| p - d)
            .collect();
        let (d50, d95, d99) = percentiles(self.direct.clone());
        let (p50, p95, p99) = percentiles(self.proxied.clone());
        let (a50, a95, a99) = percentiles(added);
        println!(
            "{name}: direct p50/p95/p99 {d50:.2}/{d95:.2}/{d99:.2} ms; through mnemon {p50:.2}/{p95:.2}/{p99:.2} ms; added {a50:.2}/{a95:.2}/{a99:.2} ms"
        );
    }
}

/// Milliseconds to the whole answer, or to the first chunk when streamed.
async fn timed(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    session: &str,
    body: &Value,
) -> f64 {
    let start = Instant::now();
    let resp = client
        .post(url)
        .bearer_auth(token)
        .header("x-mnemon-session", session)
        .json(body)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    if body["stream"].as_bool() == Some(true) {
        let mut s = resp.bytes_stream();
        s.next().await;
        let first = start.elapsed().as_secs_f64() * 1e3;
        while s.next().await.is_some() {}
        return first;
    }
    resp.bytes().await.unwrap();
    start.elapsed().as_secs_f64() * 1e3
}

#[allow(clippy::too_many_arguments)]
async fn conversation(
    client: &reqwest::Client,
    up: &str,
    mnemon: &str,
    token: &str,
    start_tokens: usize,
    requests: usize,
    stream: bool,
    session: &str,
) -> Case {
    let mut messages = history(start_tokens);
    let mut case = Case {
        direct: Vec::new(),
        proxied: Vec::new(),
    };
    for i in 0..requests {
        messages.push(json!({"role": "user", "content": format!("And the deploy number {i}: did it touch the cache?")}));
        let body =
            json!({"model": "bench", "messages": messages, "max_tokens": 64, "stream": stream});
        case.direct.push(
            timed(
                client,
                &format!("{up}/v1/chat/completions"),
                "none",
                session,
                &body,
            )
            .await,
        );
        case.proxied.push(
            timed(
                client,
                &format!("{mnemon}/v1/chat/completions"),
                token,
                session,
                &body,
            )
            .await,
        );
        messages.push(json!({"role": "assistant", "content": "It is done."}));
    }
    case
}

fn main() {
    mnemon::mnemon_llm::ensure_crypto();
    let requests: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let up = upstream().await;
        let client = reqwest::Client::new();
        // Pass-through: a 128K window, a conversation of about 8K tokens.
        let (dir, token) = project(&up, 131_072);
        let mnemon = serve(dir.path()).await;
        // One request first, so the project is opened and the model listed.
        conversation(&client, &up, &mnemon, &token, 8_000, 5, false, "warm").await;
        let case = conversation(&client, &up, &mnemon, &token, 8_000, requests, false, "pass").await;
        case.report(&format!("pass-through, 8K tokens, {requests} requests"));
        let case =
            conversation(&client, &up, &mnemon, &token, 8_000, requests, true, "pass-stream").await;
        case.report(&format!("pass-through streamed, time to first chunk, {requests} requests"));
        // Managed: an 8K window and a conversation of about 32K tokens.
        let (small, token) = project(&up, 8_192);
        let mnemon = serve(small.path()).await;
        let start = Instant::now();
        let first = conversation(&client, &up, &mnemon, &token, 32_000, 1, false, "managed").await;
        println!(
            "first request of a 32K-token conversation at an 8K window (records ~800 turns, compacts): {:.1} ms (direct {:.2} ms; {:.1} s in all)",
            first.proxied[0],
            first.direct[0],
            start.elapsed().as_secs_f64()
        );
        let case =
            conversation(&client, &up, &mnemon, &token, 32_000, requests, false, "managed").await;
        case.report(&format!("managed (compacted), {requests} requests"));
        let audit = mnemon::Mnemon::open(small.path())
            .unwrap()
            .recent(&mnemon::OperationQuery {
                kind: Some("proxy_compaction".into()),
                limit: Some(10_000),
                ..mnemon::OperationQuery::default()
            })
            .unwrap();
        println!("compactions made: {}", audit.len());
    });
}
