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

use mnemon_core::chat::{Command, CommandParser, Parsed};
use mnemon_core::compress::{SourceItem, Summarizer};
use mnemon_core::config::{LlmEndpoint, LlmProvider};
use mnemon_core::tokens::Heuristic;
use mnemon_llm::{ChatMessage, ChatRequest, Client, Limits, LlmError, LlmParser, LlmSummarizer};
use serde_json::{Value, json};

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

/// A summarizer double: answers every map call with `reply`.
fn summarizer_server(reply: &'static str) -> Double {
    Double::start(move |_, path, _| match path {
        "/v1/chat/completions" => Answer::Raw(
            200,
            "text/event-stream",
            sse(&[
                json!({"choices": [{"delta": {"content": reply}, "finish_reason": null}]}),
                json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
            ]),
        ),
        _ => Answer::Json(404, json!({})),
    })
}

fn items() -> Vec<SourceItem> {
    let mut v: Vec<SourceItem> = (0..40)
        .map(|i| SourceItem {
            sources: vec![format!("o{i}")],
            order: i,
            text: format!("task_execution: step {i} moved table t{i} to the new cluster"),
            pinned: false,
            importance: 0.4,
        })
        .collect();
    v[7].pinned = true;
    v[7].text = "decision: never run migrations on Fridays".into();
    v
}

#[test]
fn the_llm_summary_keeps_pinned_items_verbatim_and_fits_even_when_the_model_rambles() {
    let counter = Heuristic::default();
    // A model that answers far more than asked: trimmed to the target.
    let d = summarizer_server(
        "- tables were moved to the new cluster in many steps with checks\n- row counts verified after each move, everything matched nicely\n- the migration went on all day long and nobody complained at all",
    );
    let client: Arc<dyn Client> = Arc::from(connect(
        &endpoint(LlmProvider::Openai, &d.addr, None),
        fast(),
    ));
    let s = LlmSummarizer::new(client, 512, 700_000);
    let target = 120;
    let out = s.summarize(&items(), target, &counter).unwrap();
    assert!(out.tokens <= target, "{} > {target}", out.tokens);
    assert!(
        out.text
            .contains("- decision: never run migrations on Fridays [pinned o7]"),
        "{}",
        out.text
    );
    assert!(
        out.audit
            .stages
            .iter()
            .any(|st| st.by.starts_with("openai:") && st.fell_back.is_none())
    );
    // With a 512-token window, 40 items need more than one map call.
    assert!(d.count("/v1/chat/completions") >= 2, "mapped in chunks");
    // Every call fitted the summarizer's window: chunk plus answer.
    for (_, _, body) in d.requests.lock().unwrap().iter() {
        let prompt: usize = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().len() / 4)
            .sum();
        let answer = body["max_tokens"].as_u64().unwrap() as usize;
        assert!(
            prompt + answer <= 512,
            "a call of {prompt} + {answer} tokens"
        );
    }
}

#[test]
fn an_empty_or_failing_summarizer_falls_back_to_extractive_and_says_why() {
    let counter = Heuristic::default();
    let d = summarizer_server("   ");
    let client: Arc<dyn Client> = Arc::from(connect(
        &endpoint(LlmProvider::Openai, &d.addr, None),
        fast(),
    ));
    let out = LlmSummarizer::new(client, 2048, 700_000)
        .summarize(&items(), 200, &counter)
        .unwrap();
    assert!(out.tokens <= 200);
    assert!(out.text.contains("never run migrations on Fridays"));
    let stage = &out.audit.stages[0];
    assert_eq!(stage.by, "extractive");
    assert!(
        stage.fell_back.as_ref().unwrap().contains("no lines"),
        "{stage:?}"
    );

    // A server that is gone: one attempt, then every stage is extractive
    // without calling again.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client: Arc<dyn Client> = Arc::from(connect(
        &endpoint(
            LlmProvider::Openai,
            &format!("http://127.0.0.1:{port}"),
            None,
        ),
        Limits {
            retries: 0,
            ..fast()
        },
    ));
    let out = LlmSummarizer::new(client, 256, 700_000)
        .summarize(&items(), 200, &counter)
        .unwrap();
    assert!(out.audit.stages.len() >= 2);
    assert!(
        out.audit
            .stages
            .iter()
            .all(|s| s.by == "extractive" && s.fell_back.is_some())
    );
    assert!(
        out.audit.stages[1]
            .fell_back
            .as_ref()
            .unwrap()
            .contains("an earlier call failed")
    );
    assert!(out.text.contains("never run migrations on Fridays"));
}

/// A parser double: answers every request with `reply` as the content.
fn parser_with(reply: &'static str) -> (Double, LlmParser) {
    let d = summarizer_server(reply);
    let client: Arc<dyn Client> = Arc::from(connect(
        &endpoint(LlmProvider::Openai, &d.addr, None),
        fast(),
    ));
    (d, LlmParser::new(client))
}

#[test]
fn the_llm_parser_rewrites_into_a_supported_form_and_the_rules_validate_it() {
    let (d, p) = parser_with(r#"{"command": "create an epic for billing"}"#);
    match p.parse("billing deserves its own big chunk of work") {
        Parsed::Command(Command::Create { titles, .. }) => assert_eq!(titles, vec!["billing"]),
        other => panic!("{other:?}"),
    }
    let sent = d.body_of("/v1/chat/completions");
    assert!(
        sent["response_format"]["json_schema"]["schema"].is_object(),
        "{sent}"
    );
    // A line the rules understand never reaches the model.
    let before = d.count("/v1/chat/completions");
    assert!(matches!(p.parse("list epics"), Parsed::Command(_)));
    assert_eq!(d.count("/v1/chat/completions"), before);
}

#[test]
fn an_invalid_llm_rewrite_falls_back_to_the_rules_help() {
    for reply in [
        "not json at all",
        r#"{"command": ""}"#,
        r#"{"command": "launch the rockets"}"#,
        r#"{"other": 1}"#,
    ] {
        let (_d, p) = parser_with(reply);
        match p.parse("billing deserves its own big chunk of work") {
            Parsed::Unknown { closest } => assert!(!closest.is_empty(), "{reply}"),
            other => panic!("{reply}: {other:?}"),
        }
    }
    // A server that is down is the same as no rewrite.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client: Arc<dyn Client> = Arc::from(connect(
        &endpoint(
            LlmProvider::Openai,
            &format!("http://127.0.0.1:{port}"),
            None,
        ),
        Limits {
            retries: 0,
            ..fast()
        },
    ));
    let p = LlmParser::new(client);
    assert!(matches!(p.parse("do the thing"), Parsed::Unknown { .. }));
}

#[test]
fn ollama_reading_far_fewer_prompt_tokens_than_sent_is_reported() {
    let d = Double::start(|_, path, _| match path {
        "/api/chat" => Answer::Raw(
            200,
            "application/x-ndjson",
            ndjson(&[
                json!({"message": {"content": "ok"}, "done": true, "done_reason": "stop",
                           "prompt_eval_count": 1500, "eval_count": 1}),
            ]),
        ),
        _ => Answer::Json(404, json!({"error": "not found"})),
    });
    let c = connect(&endpoint(LlmProvider::Ollama, &d.addr, Some("m")), fast());
    let req = |expected| ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        max_tokens: 8,
        window: Some(8192),
        expected_prompt_tokens: Some(expected),
        ..ChatRequest::default()
    };
    let r = c.chat(&req(6000), &mut |_| {}).unwrap();
    assert!(
        r.truncated
            .as_deref()
            .unwrap()
            .contains("1500 of about 6000"),
        "{r:?}"
    );
    let r = c.chat(&req(1600), &mut |_| {}).unwrap();
    assert!(r.truncated.is_none());
}
