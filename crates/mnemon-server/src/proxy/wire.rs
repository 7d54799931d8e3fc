//! The two wire formats the proxy speaks, OpenAI Chat Completions and
//! Anthropic Messages, read only as far as managing a window needs: the
//! messages as text to count and record, which turns open an exchange (a
//! cut may fall before them), the answer's room, and the reply. Everything
//! else in a request is carried as the client wrote it, byte for byte.

mod answer;

use std::fmt::Write as _;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mnemon::Role;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

pub use answer::{Events, Reply, is_length_refusal, length_cap};

/// Which wire format a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

impl Wire {
    /// The upstream's path for this format, below its root.
    pub fn path(self) -> &'static str {
        match self {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
        }
    }

    /// An error body in this format: what the client's SDK parses into
    /// its own exception, with the message shown to the user.
    pub fn error_body(self, kind: &str, code: Option<&str>, message: &str) -> Value {
        match self {
            Wire::OpenAi => json!({"error": {
                "message": message, "type": kind, "param": null, "code": code.unwrap_or(kind)
            }}),
            Wire::Anthropic => {
                json!({"type": "error", "error": {"type": kind, "message": message}})
            }
        }
    }

    /// An error as one server-sent event, for a stream already begun.
    pub fn stream_error(self, message: &str) -> Bytes {
        let body = self.error_body("api_error", None, message);
        Bytes::from(match self {
            Wire::OpenAi => format!("data: {body}\n\n"),
            Wire::Anthropic => format!("event: error\ndata: {body}\n\n"),
        })
    }

    /// The message that carries a block of memory: a system message for
    /// OpenAI; for Anthropic, whose system prompt is a field of its own
    /// and stays as sent, a user turn.
    pub fn memory_message(self, block: &str) -> Box<RawValue> {
        let role = match self {
            Wire::OpenAi => "system",
            Wire::Anthropic => "user",
        };
        raw(&json!({"role": role, "content": block}))
    }
}

/// A request the proxy refuses or cannot serve, answered in the client's
/// format so that its SDK raises its usual exception.
#[derive(Debug, Clone)]
pub struct ProxyError {
    pub status: StatusCode,
    /// The error's type (`invalid_request_error`, `authentication_error`).
    pub kind: &'static str,
    /// OpenAI's `code`, when it differs from the type.
    pub code: Option<&'static str>,
    pub message: String,
}

impl ProxyError {
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ProxyError {
        ProxyError {
            status,
            kind,
            code: None,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> ProxyError {
        ProxyError::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    /// The request cannot fit the window however it is compacted.
    pub fn too_long(message: impl Into<String>) -> ProxyError {
        ProxyError {
            code: Some("context_length_exceeded"),
            ..ProxyError::invalid(message)
        }
    }

    pub fn upstream(message: impl Into<String>) -> ProxyError {
        ProxyError::new(StatusCode::BAD_GATEWAY, "api_error", message)
    }

    pub fn render(&self, wire: Wire) -> Response {
        if self.status.is_server_error() {
            tracing::error!(kind = self.kind, error = %self.message, "proxy request failed");
        }
        (
            self.status,
            axum::Json(wire.error_body(self.kind, self.code, &self.message)),
        )
            .into_response()
    }
}

/// A JSON object's fields in the order written, each value as its text:
/// what is not rewritten goes upstream exactly as the client sent it.
#[derive(Debug, Default)]
pub struct Fields(pub Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fields, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Fields(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Fields {
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }

    fn value(&self, key: &str) -> Option<Value> {
        self.get(key)
            .and_then(|r| serde_json::from_str(r.get()).ok())
    }

    /// Replaces `key`'s value where it stands, or adds it at the end.
    pub fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// The object, every untouched value as it was written.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{}", Value::String(k.clone()), v.get());
        }
        out.push('}');
        out.into_bytes()
    }
}

/// A JSON value as raw text.
pub fn raw(v: &Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).unwrap_or_else(|_| {
        RawValue::from_string("null".into()).unwrap_or_else(|_| unreachable!("null is JSON"))
    })
}

/// A list of raw values as one raw JSON array.
pub fn raw_array(items: &[&RawValue]) -> Box<RawValue> {
    let mut s = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(item.get());
    }
    s.push(']');
    RawValue::from_string(s).unwrap_or_else(|_| unreachable!("an array of JSON values is JSON"))
}

/// One message of a request.
#[derive(Debug)]
pub struct Turn {
    /// As recorded in mnemon.
    pub role: Role,
    /// As the client wrote it (`developer`, `tool`, `user`).
    pub wire_role: String,
    /// What the turn says as text: tool calls and results named, images
    /// as `[image]`. This is what is counted and recorded.
    pub text: String,
    /// The message as sent.
    pub raw: Box<RawValue>,
    /// A system or developer message: kept verbatim wherever it stands.
    pub standing: bool,
    /// A user's own turn (not tool results): a cut may fall before it
    /// without parting a tool call from its result.
    pub opens: bool,
    /// Images, audio and files, counted at [`MEDIA_TOKENS`] each.
    pub media: u64,
}

/// What an image or a file is counted as: the tokens of a 1024 x 1024
/// image at high detail for OpenAI's models. The model's own count is not
/// known to the proxy; the upstream's usage report calibrates the rest.
pub const MEDIA_TOKENS: u64 = 765;

/// A parsed request.
#[derive(Debug)]
pub struct Request {
    pub wire: Wire,
    /// The body as received, sent on as it is while nothing changes.
    pub body: Vec<u8>,
    pub fields: Fields,
    pub model: Option<String>,
    pub stream: bool,
    /// The room the client asks for the answer.
    pub max_tokens: Option<u64>,
    /// Anthropic's top-level system prompt, as text ("" when none).
    pub system: String,
    pub turns: Vec<Turn>,
    /// The tool definitions as sent (counted with the request).
    pub tools: String,
    /// OpenAI's `user`, Anthropic's `metadata.user_id`.
    pub user: Option<String>,
}

fn role_error(i: usize, role: &str, wire: Wire) -> ProxyError {
    let allowed = match wire {
        Wire::OpenAi => "system, developer, user, assistant or tool",
        Wire::Anthropic => "user or assistant (the system prompt is the `system` field)",
    };
    ProxyError::invalid(format!(
        "messages[{i}] has role `{role}`, which this API does not know: use {allowed}"
    ))
}

/// Reads a request body in `wire`'s format.
pub fn parse(wire: Wire, body: &[u8]) -> Result<Request, ProxyError> {
    let fields: Fields = serde_json::from_slice(body).map_err(|e| {
        ProxyError::invalid(format!(
            "the body is not a JSON object ({e}); send the request as JSON"
        ))
    })?;
    let messages = fields.get("messages").ok_or_else(|| {
        ProxyError::invalid("the request has no `messages`: send the conversation as a list")
    })?;
    let messages: Vec<Box<RawValue>> = serde_json::from_str(messages.get())
        .map_err(|_| ProxyError::invalid("`messages` must be a list of messages"))?;
    if messages.is_empty() {
        return Err(ProxyError::invalid(
            "`messages` is empty: send at least one message",
        ));
    }
    let mut turns = Vec::with_capacity(messages.len());
    for (i, raw) in messages.into_iter().enumerate() {
        let m: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
        let Some(role) = m.get("role").and_then(Value::as_str) else {
            return Err(ProxyError::invalid(format!(
                "messages[{i}] has no `role`: each message needs one"
            )));
        };
        let role = role.to_string();
        let turn = match wire {
            Wire::OpenAi => openai_turn(i, &role, &m, raw)?,
            Wire::Anthropic => anthropic_turn(i, &role, &m, raw)?,
        };
        turns.push(turn);
    }
    let system = match wire {
        Wire::Anthropic => match fields.value("system") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s,
            Some(Value::Array(blocks)) => blocks_text(&blocks).0,
            Some(_) => {
                return Err(ProxyError::invalid(
                    "`system` must be a string or a list of text blocks",
                ));
            }
        },
        Wire::OpenAi => String::new(),
    };
    let max_tokens = ["max_completion_tokens", "max_tokens"]
        .iter()
        .find_map(|k| fields.value(k).and_then(|v| v.as_u64()));
    let user = match wire {
        Wire::OpenAi => fields
            .value("user")
            .and_then(|v| v.as_str().map(str::to_string)),
        Wire::Anthropic => fields
            .value("metadata")
            .and_then(|m| m.get("user_id").and_then(Value::as_str).map(str::to_string)),
    }
    .filter(|u| !u.trim().is_empty());
    Ok(Request {
        wire,
        body: body.to_vec(),
        model: fields
            .value("model")
            .and_then(|v| v.as_str().map(str::to_string)),
        stream: fields
            .value("stream")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        max_tokens,
        system,
        tools: fields
            .get("tools")
            .map(|t| t.get().to_string())
            .unwrap_or_default(),
        user,
        turns,
        fields,
    })
}

fn openai_turn(i: usize, role: &str, m: &Value, raw: Box<RawValue>) -> Result<Turn, ProxyError> {
    let (mut text, media) = match m.get("content") {
        None | Some(Value::Null) => (String::new(), 0),
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(parts)) => parts_text(parts),
        Some(_) => {
            return Err(ProxyError::invalid(format!(
                "messages[{i}].content must be a string or a list of content parts"
            )));
        }
    };
    let (recorded, standing) = match role {
        "system" | "developer" => (Role::System, true),
        "user" => (Role::User, false),
        "assistant" => (Role::Assistant, false),
        "tool" | "function" => (Role::Tool, false),
        other => return Err(role_error(i, other, Wire::OpenAi)),
    };
    if role == "assistant" {
        let mut calls = Vec::new();
        for c in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = c.get("function").unwrap_or(&Value::Null);
            calls.push(call_text(
                f.get("name").and_then(Value::as_str).unwrap_or(""),
                f.get("arguments").and_then(Value::as_str).unwrap_or(""),
            ));
        }
        if let Some(f) = m.get("function_call") {
            calls.push(call_text(
                f.get("name").and_then(Value::as_str).unwrap_or(""),
                f.get("arguments").and_then(Value::as_str).unwrap_or(""),
            ));
        }
        text = with_calls(&text, &calls);
    }
    if recorded == Role::Tool {
        let id = m
            .get("tool_call_id")
            .or_else(|| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        text = format!("[tool result {id}] {text}");
    }
    Ok(Turn {
        role: recorded,
        wire_role: role.to_string(),
        text,
        raw,
        standing,
        opens: role == "user",
        media,
    })
}

fn anthropic_turn(i: usize, role: &str, m: &Value, raw: Box<RawValue>) -> Result<Turn, ProxyError> {
    if role != "user" && role != "assistant" {
        return Err(role_error(i, role, Wire::Anthropic));
    }
    let (text, media, only_results) = match m.get("content") {
        Some(Value::String(s)) => (s.clone(), 0, false),
        Some(Value::Array(blocks)) => {
            let (text, media) = blocks_text(blocks);
            let only = !blocks.is_empty()
                && blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
            (text, media, only)
        }
        _ => {
            return Err(ProxyError::invalid(format!(
                "messages[{i}].content must be a string or a list of content blocks"
            )));
        }
    };
    let recorded = match (role, only_results) {
        ("user", true) => Role::Tool,
        ("user", false) => Role::User,
        _ => Role::Assistant,
    };
    Ok(Turn {
        role: recorded,
        wire_role: role.to_string(),
        text,
        raw,
        standing: false,
        opens: recorded == Role::User,
        media,
    })
}

/// OpenAI content parts as text; media counted apart.
fn parts_text(parts: &[Value]) -> (String, u64) {
    let mut out: Vec<String> = Vec::new();
    let mut media = 0;
    for p in parts {
        match p.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => out.push(p.get("text").and_then(Value::as_str).unwrap_or("").into()),
            "refusal" => out.push(
                p.get("refusal")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
            ),
            "image_url" => {
                media += 1;
                out.push("[image]".into());
            }
            "input_audio" => {
                media += 1;
                out.push("[audio]".into());
            }
            "file" => {
                media += 1;
                out.push("[file]".into());
            }
            other => out.push(format!("[{other}]")),
        }
    }
    (out.join("\n"), media)
}

/// Anthropic content blocks as text, in order; media counted apart.
/// Thinking is the model's scratch work, neither counted nor recorded.
fn blocks_text(blocks: &[Value]) -> (String, u64) {
    let mut out: Vec<String> = Vec::new();
    let mut media = 0;
    for b in blocks {
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => out.push(b.get("text").and_then(Value::as_str).unwrap_or("").into()),
            "image" => {
                media += 1;
                out.push("[image]".into());
            }
            "document" => {
                media += 1;
                out.push("[document]".into());
            }
            "tool_use" => out.push(call_text(
                b.get("name").and_then(Value::as_str).unwrap_or(""),
                &b.get("input").map(Value::to_string).unwrap_or_default(),
            )),
            "tool_result" => {
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                let (inner, m) = match b.get("content") {
                    Some(Value::String(s)) => (s.clone(), 0),
                    Some(Value::Array(inner)) => blocks_text(inner),
                    _ => (String::new(), 0),
                };
                media += m;
                out.push(format!("[tool result {id}] {inner}"));
            }
            "thinking" | "redacted_thinking" => {}
            other => out.push(format!("[{other}]")),
        }
    }
    (out.join("\n"), media)
}

fn call_text(name: &str, arguments: &str) -> String {
    format!("[tool call {name}({arguments})]")
}

fn with_calls(text: &str, calls: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if !text.is_empty() {
        parts.push(text);
    }
    parts.extend(calls.iter().map(String::as_str));
    parts.join("\n")
}

#[cfg(test)]
mod tests;
