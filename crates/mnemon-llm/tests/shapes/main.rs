//! What the real llama.cpp server in `mnemon-cli/tests/llm.rs` cannot
//! show: Ollama's, LM Studio's, vLLM's and Anthropic's JSON shapes, 429s,
//! 500s, timeouts, replies that are not JSON and streams cut half-way.
//!
//! These are test doubles: a scripted HTTP server on loopback that answers
//! with the documented shapes of those servers. They prove the parsing
//! and the error paths, not compatibility with a live server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mnemon_chat::{Command, CommandParser, Parsed};
use mnemon_core::compress::{SourceItem, Summarizer};
use mnemon_core::config::{LlmEndpoint, LlmProvider};
use mnemon_core::tokens::Heuristic;
use mnemon_llm::{ChatMessage, ChatRequest, Client, Limits, LlmError, LlmParser, LlmSummarizer};
use serde_json::{Value, json};

mod models;

/// One scripted answer.
#[derive(Clone)]
enum Answer {
    Json(u16, Value),
    Raw(u16, &'static str, String),
    /// Headers and part of a body, then the connection closes.
    Cut(String),
    /// Waits this long before answering.
    Slow(Duration, Box<Answer>),
}

type Script = Arc<dyn Fn(&str, &str, &Value) -> Answer + Send + Sync>;

/// A scripted server; `requests` holds every (method, path, body) seen.
struct Double {
    addr: String,
    requests: Arc<Mutex<Vec<(String, String, Value)>>>,
}

impl Double {
    fn start(script: impl Fn(&str, &str, &Value) -> Answer + Send + Sync + 'static) -> Double {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let script: Script = Arc::new(script);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = Arc::clone(&script);
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || handle(stream, &*script, &seen));
            }
        });
        Double { addr, requests }
    }

    fn count(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, p, _)| p == path)
            .count()
    }

    fn body_of(&self, path: &str) -> Value {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find(|(_, p, _)| p == path)
            .map(|(_, _, b)| b.clone())
            .unwrap()
    }
}

fn handle(
    stream: TcpStream,
    script: &(dyn Fn(&str, &str, &Value) -> Answer + Send + Sync),
    seen: &Mutex<Vec<(String, String, Value)>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut length = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        if h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock()
        .unwrap()
        .push((method.clone(), path.clone(), body.clone()));
    let answer = script(&method, &path, &body);
    respond(stream, answer);
}

fn respond(mut stream: TcpStream, answer: Answer) {
    let (status, kind, text) = match answer {
        Answer::Json(s, v) => (s, "application/json", v.to_string()),
        Answer::Raw(s, kind, text) => (s, kind, text),
        Answer::Cut(part) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                part.len() + 500
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(part.as_bytes());
            let _ = stream.flush();
            return;
        }
        Answer::Slow(d, inner) => {
            std::thread::sleep(d);
            return respond(stream, *inner);
        }
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(text.as_bytes());
}

fn endpoint(provider: LlmProvider, base: &str, model: Option<&str>) -> LlmEndpoint {
    LlmEndpoint {
        provider: Some(provider),
        base_url: Some(base.to_string()),
        model: model.map(str::to_string),
        api_key_env: None,
    }
}

fn fast() -> Limits {
    Limits {
        connect: Duration::from_millis(500),
        request: Duration::from_secs(5),
        retries: 2,
    }
}

fn connect(e: &LlmEndpoint, limits: Limits) -> Box<dyn Client> {
    mnemon_llm::connect(e, limits, &|_| Some("k".into())).unwrap()
}

fn ask(c: &dyn Client) -> Result<mnemon_llm::ChatReply, LlmError> {
    c.chat(
        &ChatRequest {
            messages: vec![ChatMessage::user("hi")],
            max_tokens: 16,
            window: Some(4096),
            ..ChatRequest::default()
        },
        &mut |_| {},
    )
}

fn ndjson(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn sse(events: &[Value]) -> String {
    let mut s: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

#[test]
fn ollama_reports_its_loaded_window_and_is_sent_num_ctx_without_truncation() {
    let d = Double::start(|_, path, _| match path {
        "/api/show" => Answer::Json(
            200,
            json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
                   "parameters": "stop \"<|im_end|>\"\nnum_ctx 8192"}),
        ),
        "/api/ps" => Answer::Json(
            200,
            json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "context_length": 4096}]}),
        ),
        "/api/chat" => Answer::Raw(
            200,
            "application/x-ndjson",
            ndjson(&[
                json!({"message": {"role": "assistant", "content": "Hel"}, "done": false}),
                json!({"message": {"role": "assistant", "content": "lo"}, "done": false}),
                json!({"message": {"role": "assistant", "content": ""}, "done": true,
                       "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 2}),
            ]),
        ),
        _ => Answer::Json(404, json!({"error": "not found"})),
    });
    let c = connect(
        &endpoint(LlmProvider::Ollama, &d.addr, Some("qwen2.5-coder:7b")),
        fast(),
    );
    let p = c.probe().unwrap();
    assert_eq!(
        (p.server.as_str(), p.model_max, p.served),
        ("ollama", Some(32_768), Some(4_096))
    );
    assert!(p.fix.unwrap().contains("num_ctx"));
    let mut streamed = String::new();
    let r = c
        .chat(
            &ChatRequest {
                messages: vec![ChatMessage::user("hi")],
                max_tokens: 16,
                window: Some(4096),
                ..ChatRequest::default()
            },
            &mut |t| streamed.push_str(t),
        )
        .unwrap();
    assert_eq!((r.text.as_str(), streamed.as_str()), ("Hello", "Hello"));
    assert_eq!(r.usage.prompt_tokens, Some(26));
    let sent = d.body_of("/api/chat");
    assert_eq!(sent["options"]["num_ctx"], 4096, "{sent}");
    assert_eq!(sent["truncate"], false);
    assert_eq!(sent["shift"], false);
}

#[test]
fn ollama_without_a_loaded_model_falls_back_to_the_modelfile_and_names_a_missing_model() {
    let d = Double::start(|_, path, body| match path {
        "/api/show" if body["model"] == "qwen2.5-coder:7b" => Answer::Json(
            200,
            json!({"model_info": {"llama.context_length": 131072}, "parameters": "num_ctx 16384"}),
        ),
        "/api/show" => Answer::Json(404, json!({"error": "model 'nope' not found"})),
        "/api/ps" => Answer::Json(200, json!({"models": []})),
        _ => Answer::Json(404, json!({"error": "not found"})),
    });
    let p = connect(
        &endpoint(LlmProvider::Ollama, &d.addr, Some("qwen2.5-coder:7b")),
        fast(),
    )
    .probe()
    .unwrap();
    assert_eq!((p.model_max, p.served), (Some(131_072), Some(16_384)));
    let err = connect(
        &endpoint(LlmProvider::Ollama, &d.addr, Some("nope")),
        fast(),
    )
    .probe()
    .unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err}");
    assert!(err.to_string().contains("ollama pull"), "{err}");
}

#[test]
fn lm_studio_and_vllm_windows_are_read_from_their_own_fields() {
    let lms = Double::start(|_, path, _| match path {
        "/v1/models" => Answer::Json(
            200,
            json!({"data": [{"id": "qwen2.5-7b-instruct", "object": "model"}]}),
        ),
        "/api/v1/models" => Answer::Json(
            200,
            json!({"models": [{"key": "qwen2.5-7b-instruct", "max_context_length": 32768,
                               "loaded_instances": [{"id": "qwen2.5-7b-instruct", "config": {"context_length": 4096}}]}]}),
        ),
        _ => Answer::Json(404, json!({"error": {"message": "no route"}})),
    });
    let p = connect(&endpoint(LlmProvider::Openai, &lms.addr, None), fast())
        .probe()
        .unwrap();
    assert_eq!(
        (p.server.as_str(), p.model_max, p.served),
        ("lmstudio", Some(32_768), Some(4_096))
    );

    let vllm = Double::start(|_, path, _| match path {
        "/v1/models" => Answer::Json(
            200,
            json!({"data": [{"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 16384}]}),
        ),
        _ => Answer::Json(404, json!({"error": {"message": "no route"}})),
    });
    // Written as for the OpenAI SDK, with /v1, or without: the same.
    for base in [format!("{}/v1", vllm.addr), vllm.addr.clone()] {
        let p = connect(
            &endpoint(LlmProvider::Openai, &base, Some("Qwen/Qwen2.5-7B")),
            fast(),
        )
        .probe()
        .unwrap();
        assert_eq!((p.server.as_str(), p.served), ("vllm", Some(16_384)));
    }
    let err = connect(
        &endpoint(LlmProvider::Openai, &vllm.addr, Some("gpt-5")),
        fast(),
    )
    .probe()
    .unwrap_err();
    assert!(err.to_string().contains("it has: Qwen/Qwen2.5-7B"), "{err}");
}

#[test]
fn a_429_and_a_500_are_retried_with_backoff_then_reported() {
    let calls = Arc::new(Mutex::new(0));
    let n = Arc::clone(&calls);
    let d = Double::start(move |_, path, _| {
        if path != "/v1/chat/completions" {
            return Answer::Json(404, json!({}));
        }
        let mut n = n.lock().unwrap();
        *n += 1;
        match *n {
            1 => Answer::Json(429, json!({"error": {"message": "slow down"}})),
            2 => Answer::Json(503, json!({"error": {"message": "loading model"}})),
            _ => Answer::Raw(
                200,
                "text/event-stream",
                sse(&[
                    json!({"choices": [{"delta": {"content": "ok"}, "finish_reason": null}]}),
                    json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
                    json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 1}}),
                ]),
            ),
        }
    });
    let c = connect(&endpoint(LlmProvider::Openai, &d.addr, None), fast());
    let r = ask(&*c).unwrap();
    assert_eq!((r.text.as_str(), r.usage.prompt_tokens), ("ok", Some(9)));
    assert_eq!(d.count("/v1/chat/completions"), 3);

    let always = Double::start(|_, _, _| Answer::Json(500, json!({"error": {"message": "boom"}})));
    let c = connect(&endpoint(LlmProvider::Openai, &always.addr, None), fast());
    let err = ask(&*c).unwrap_err();
    assert!(matches!(err, LlmError::Status { status: 500, .. }), "{err}");
    assert!(err.to_string().contains("boom"));
    assert_eq!(
        always.count("/v1/chat/completions"),
        3,
        "two retries, then the error"
    );
}

#[test]
fn a_slow_server_times_out_and_a_reply_that_is_not_json_is_named() {
    let slow = Double::start(|_, _, _| {
        Answer::Slow(
            Duration::from_secs(3),
            Box::new(Answer::Json(200, json!({}))),
        )
    });
    let limits = Limits {
        request: Duration::from_millis(500),
        ..fast()
    };
    let err = connect(&endpoint(LlmProvider::Openai, &slow.addr, None), limits)
        .probe()
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");

    let html =
        Double::start(|_, _, _| Answer::Raw(200, "text/html", "<html>a login page</html>".into()));
    let err = connect(&endpoint(LlmProvider::Openai, &html.addr, None), fast())
        .probe()
        .unwrap_err();
    assert!(matches!(err, LlmError::BadReply { .. }), "{err}");
    assert!(err.to_string().contains("a login page"), "{err}");
}

#[test]
fn a_stream_cut_half_way_is_an_error_not_a_short_answer() {
    let d = Double::start(|_, _, _| {
        Answer::Cut(
            "data: {\"choices\": [{\"delta\": {\"content\": \"The answer is\"}, \"finish_reason\": null}]}\n\n"
                .into(),
        )
    });
    let c = connect(&endpoint(LlmProvider::Openai, &d.addr, None), fast());
    let err = ask(&*c).unwrap_err();
    assert!(matches!(err, LlmError::Cut { .. }), "{err}");
}

#[test]
fn context_overflow_and_a_refused_key_are_told_apart() {
    let d = Double::start(|_, _, body| {
        if body["model"] == "big" {
            Answer::Json(
                400,
                json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}),
            )
        } else {
            Answer::Json(
                401,
                json!({"error": {"message": "Incorrect API key provided"}}),
            )
        }
    });
    let err = ask(&*connect(
        &endpoint(LlmProvider::Openai, &d.addr, Some("big")),
        fast(),
    ))
    .unwrap_err();
    assert!(matches!(err, LlmError::ContextExceeded { .. }), "{err}");
    let err = ask(&*connect(
        &endpoint(LlmProvider::Openai, &d.addr, Some("m")),
        fast(),
    ))
    .unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err}");
    let missing = mnemon_llm::connect(
        &LlmEndpoint {
            api_key_env: Some("NO_SUCH_KEY_VAR".into()),
            ..endpoint(LlmProvider::Openai, &d.addr, None)
        },
        fast(),
        &|_| None,
    )
    .unwrap_err();
    assert!(
        missing.to_string().contains("NO_SUCH_KEY_VAR is not set"),
        "{missing}"
    );
}

#[test]
fn anthropic_streams_and_counts_with_its_own_endpoint() {
    let d = Double::start(|_, path, _| {
        match path {
        "/v1/models/claude-x" => Answer::Json(200, json!({"id": "claude-x", "max_input_tokens": 200000})),
        "/v1/messages/count_tokens" => Answer::Json(200, json!({"input_tokens": 12})),
        "/v1/messages" => Answer::Raw(
            200,
            "text/event-stream",
            [
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 21}}}),
                json!({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hi"}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
                json!({"type": "message_stop"}),
            ]
            .iter()
            .map(|e| format!("event: x\ndata: {e}\n\n"))
            .collect(),
        ),
        _ => Answer::Json(404, json!({"error": {"type": "not_found_error", "message": "no"}})),
    }
    });
    let c = connect(
        &LlmEndpoint {
            api_key_env: Some("ANTHROPIC_API_KEY".into()),
            ..endpoint(LlmProvider::Anthropic, &d.addr, Some("claude-x"))
        },
        fast(),
    );
    let p = c.probe().unwrap();
    assert_eq!(p.model_max, Some(200_000));
    assert!(p.exact_tokens);
    assert_eq!(c.count_tokens("hello there").unwrap(), Some(12));
    let r = ask(&*c).unwrap();
    assert_eq!((r.text.as_str(), r.usage.prompt_tokens), ("Hi", Some(21)));
    let sent = d.body_of("/v1/messages");
    assert!(sent["system"].is_null(), "no system message was given");
}
