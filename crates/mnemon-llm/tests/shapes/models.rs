//! The LLM's own jobs against the doubles (summaries that keep pinned items
//! and fit, a chat line parsed into a command) and a usage report that
//! reads far fewer prompt tokens than were sent.

use super::*;

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
