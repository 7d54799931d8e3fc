use super::*;

#[test]
fn untouched_fields_keep_their_bytes_and_order() {
    let body = br#"{"model":"m", "temperature":0.70,"messages":[{"role":"user","content":"hi"}],"x_unknown":{"b":1,"a":2}}"#;
    let mut f: Fields = serde_json::from_slice(body).unwrap();
    f.set("messages", raw(&json!([])));
    let out = String::from_utf8(f.to_bytes()).unwrap();
    assert_eq!(
        out,
        r#"{"model":"m","temperature":0.70,"messages":[],"x_unknown":{"b":1,"a":2}}"#
    );
}

#[test]
fn tool_calls_and_results_are_text_and_results_do_not_open_an_exchange() {
    let body = json!({"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    ]});
    let r = parse(Wire::OpenAi, body.to_string().as_bytes()).unwrap();
    let t: Vec<(&str, bool, bool)> = r
        .turns
        .iter()
        .map(|t| (t.text.as_str(), t.standing, t.opens))
        .collect();
    assert_eq!(
        t,
        vec![
            ("Be brief.", true, false),
            ("Weather?\n[image]", false, true),
            ("[tool call weather({\"city\":\"Paris\"})]", false, false),
            ("[tool result c1] sunny", false, false),
        ]
    );
    assert_eq!(r.turns[1].media, 1);
}

#[test]
fn a_streamed_anthropic_reply_reads_as_the_same_message_sent_back() {
    let mut e = Events::new(Wire::Anthropic);
    let events = [
        r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"weather","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let stream: String = events
        .iter()
        .map(|d| format!("event: x\r\ndata: {d}\r\n\r\n"))
        .collect();
    for chunk in stream.as_bytes().chunks(7) {
        e.feed(chunk);
    }
    assert!(e.reply.complete);
    assert_eq!(e.reply.prompt_tokens, Some(15));
    let sent_back = json!({"messages": [{"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}
    ]}]});
    let r = parse(Wire::Anthropic, sent_back.to_string().as_bytes()).unwrap();
    assert_eq!(e.reply.recorded_text(Wire::Anthropic), r.turns[0].text);
}

#[test]
fn a_refusal_for_length_says_how_much_the_upstream_takes() {
    let llama = r#"{"error":{"code":400,"message":"request (2104 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error"}}"#;
    assert_eq!(length_cap(llama, 1_000), 1_000 * 2_048 / 2_104 * 9 / 10);
    let openai = "This model's maximum context length is 8,192 tokens. However, your messages resulted in 9,000 tokens.";
    assert_eq!(length_cap(openai, 9_500), 9_500 * 8_192 / 9_000 * 9 / 10);
    assert_eq!(length_cap("prompt is too long", 3_000), 1_500);
}

#[test]
fn bad_requests_say_what_is_wrong() {
    let cases = [
        (Wire::OpenAi, "not json", "not a JSON object"),
        (Wire::OpenAi, r#"{"model":"m"}"#, "has no `messages`"),
        (Wire::OpenAi, r#"{"messages":[]}"#, "`messages` is empty"),
        (
            Wire::OpenAi,
            r#"{"messages":[{"role":"wizard","content":"x"}]}"#,
            "role `wizard`",
        ),
        (
            Wire::Anthropic,
            r#"{"messages":[{"role":"system","content":"x"}]}"#,
            "`system` field",
        ),
    ];
    for (wire, body, want) in cases {
        let e = parse(wire, body.as_bytes()).unwrap_err();
        assert!(e.message.contains(want), "{body}: {}", e.message);
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }
}
