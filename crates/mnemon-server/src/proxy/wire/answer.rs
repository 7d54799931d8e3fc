//! What the upstream answered, read from a whole body or from a stream of
//! events as it passes, and what a refusal for length says about the window.

use serde_json::Value;

use super::{Wire, call_text, with_calls};

/// What the upstream answered, as far as it is recorded and reported.
#[derive(Debug, Default, Clone)]
pub struct Reply {
    pub text: String,
    /// Tool calls: name and arguments (JSON text).
    pub calls: Vec<(String, String)>,
    /// The prompt as the upstream counted it (cached parts included).
    pub prompt_tokens: Option<u64>,
    /// The answer ended (a finish reason, `[DONE]`, `message_stop`).
    pub complete: bool,
    /// The stream carried an error event.
    pub error: Option<String>,
}

impl Reply {
    /// The reply as text, written as the same message is when the client
    /// sends it back in its next request, so that it is recognized there
    /// and not recorded twice.
    pub fn recorded_text(&self, wire: Wire) -> String {
        let calls: Vec<String> = self
            .calls
            .iter()
            .map(|(name, args)| match wire {
                // Anthropic sends `input` back as an object.
                Wire::Anthropic => call_text(
                    name,
                    &serde_json::from_str::<Value>(args)
                        .map(|v| v.to_string())
                        .unwrap_or_else(|_| "{}".into()),
                ),
                Wire::OpenAi => call_text(name, args),
            })
            .collect();
        with_calls(&self.text, &calls)
    }

    /// A whole (not streamed) answer.
    pub fn of(wire: Wire, body: &Value) -> Reply {
        let mut r = Reply {
            complete: true,
            ..Reply::default()
        };
        match wire {
            Wire::OpenAi => {
                let m = &body["choices"][0]["message"];
                r.text = m["content"].as_str().unwrap_or("").to_string();
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    r.calls.push((
                        c["function"]["name"].as_str().unwrap_or("").into(),
                        c["function"]["arguments"].as_str().unwrap_or("").into(),
                    ));
                }
                r.prompt_tokens = body["usage"]["prompt_tokens"].as_u64();
            }
            Wire::Anthropic => {
                let mut texts = Vec::new();
                for b in body["content"].as_array().into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("text") => texts.push(b["text"].as_str().unwrap_or("").to_string()),
                        Some("tool_use") => r.calls.push((
                            b["name"].as_str().unwrap_or("").into(),
                            b["input"].to_string(),
                        )),
                        _ => {}
                    }
                }
                r.text = texts.join("\n");
                r.prompt_tokens = anthropic_input(&body["usage"]);
            }
        }
        r
    }
}

/// Anthropic's prompt: the uncached part and both cached parts.
fn anthropic_input(usage: &Value) -> Option<u64> {
    let input = usage["input_tokens"].as_u64()?;
    Some(
        input
            + usage["cache_creation_input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_read_input_tokens"].as_u64().unwrap_or(0),
    )
}

/// Reads a server-sent event stream as it passes, chunk by chunk, into a
/// [`Reply`]. The bytes themselves go on to the client untouched.
#[derive(Debug)]
pub struct Events {
    wire: Wire,
    buf: Vec<u8>,
    pub reply: Reply,
    /// Anthropic's content blocks by index: tool calls are assembled from
    /// their pieces of JSON.
    blocks: Vec<Option<usize>>,
}

impl Events {
    pub fn new(wire: Wire) -> Events {
        Events {
            wire,
            buf: Vec::new(),
            reply: Reply::default(),
            blocks: Vec::new(),
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
        while let Some(end) = event_end(&self.buf) {
            let event: Vec<u8> = self.buf.drain(..end.1).collect();
            let text = String::from_utf8_lossy(&event[..end.0]).into_owned();
            self.event(&text);
        }
    }

    fn event(&mut self, text: &str) {
        let mut data = String::new();
        for line in text.lines() {
            if let Some(d) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        }
        if data.is_empty() {
            return;
        }
        if data.trim() == "[DONE]" {
            self.reply.complete = true;
            return;
        }
        let Ok(v) = serde_json::from_str::<Value>(&data) else {
            return;
        };
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            self.reply.error = Some(
                e.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("an error")
                    .to_string(),
            );
            return;
        }
        match self.wire {
            Wire::OpenAi => self.openai(&v),
            Wire::Anthropic => self.anthropic(&v),
        }
    }

    fn openai(&mut self, v: &Value) {
        if let Some(p) = v["usage"]["prompt_tokens"].as_u64() {
            self.reply.prompt_tokens = Some(p);
        }
        let choice = &v["choices"][0];
        if let Some(t) = choice["delta"]["content"].as_str() {
            self.reply.text.push_str(t);
        }
        for c in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = c["index"].as_u64().unwrap_or(0) as usize;
            while self.reply.calls.len() <= i {
                self.reply.calls.push((String::new(), String::new()));
            }
            if let Some(n) = c["function"]["name"].as_str() {
                self.reply.calls[i].0.push_str(n);
            }
            if let Some(a) = c["function"]["arguments"].as_str() {
                self.reply.calls[i].1.push_str(a);
            }
        }
        if choice["finish_reason"].is_string() {
            self.reply.complete = true;
        }
    }

    fn anthropic(&mut self, v: &Value) {
        match v["type"].as_str().unwrap_or("") {
            "message_start" => self.reply.prompt_tokens = anthropic_input(&v["message"]["usage"]),
            "content_block_start" => {
                let i = v["index"].as_u64().unwrap_or(0) as usize;
                while self.blocks.len() <= i {
                    self.blocks.push(None);
                }
                let b = &v["content_block"];
                match b["type"].as_str() {
                    Some("tool_use") => {
                        self.reply
                            .calls
                            .push((b["name"].as_str().unwrap_or("").into(), String::new()));
                        self.blocks[i] = Some(self.reply.calls.len() - 1);
                    }
                    Some("text") => {
                        if !self.reply.text.is_empty() {
                            self.reply.text.push('\n');
                        }
                        self.reply.text.push_str(b["text"].as_str().unwrap_or(""));
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let i = v["index"].as_u64().unwrap_or(0) as usize;
                let d = &v["delta"];
                match d["type"].as_str() {
                    Some("text_delta") => {
                        self.reply.text.push_str(d["text"].as_str().unwrap_or(""))
                    }
                    Some("input_json_delta") => {
                        if let Some(Some(c)) = self.blocks.get(i) {
                            self.reply.calls[*c]
                                .1
                                .push_str(d["partial_json"].as_str().unwrap_or(""));
                        }
                    }
                    _ => {}
                }
            }
            "message_stop" => self.reply.complete = true,
            _ => {}
        }
    }
}

/// Where the first complete event of `buf` ends: the end of its text and
/// the end of the blank line after it.
fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// An upstream's refusal for length, in any of the forms servers give it.
pub fn is_length_refusal(status: u16, body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    (status == 400 || status == 413)
        && [
            "exceed_context_size",
            "context_length_exceeded",
            "prompt is too long",
            "maximum context length",
            "context window",
            "too many tokens",
        ]
        .iter()
        .any(|p| b.contains(p))
}

/// From a refusal for length, the most tokens the upstream takes on
/// mnemon's count: its window (the smaller of the two counts its message
/// names, "request (2104 tokens) exceeds the available context size (2048
/// tokens)") scaled by how its count of the refused request (the larger)
/// compares with mnemon's (`sent`), less a tenth. Without two counts in
/// the message, half of what was sent.
pub fn length_cap(body: &str, sent: u64) -> u64 {
    let mut counts: Vec<u64> = Vec::new();
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b',') {
                i += 1;
            }
            let rest = body[i..].trim_start();
            if rest.starts_with("tokens")
                && let Ok(n) = body[start..i].replace(',', "").parse::<u64>()
            {
                counts.push(n);
            }
        } else {
            i += 1;
        }
    }
    match (counts.iter().min(), counts.iter().max()) {
        (Some(&window), Some(&asked)) if counts.len() >= 2 && asked > window => {
            (u128::from(sent) * u128::from(window) / u128::from(asked) * 9 / 10) as u64
        }
        _ => sent / 2,
    }
}
