//! Existing histories brought into memory with their real times and
//! speakers (`mnemon import`): the evaluation format (BRIEF §8),
//! OpenAI-style message JSONL and a ChatGPT `conversations.json` export.
//!
//! Parsing is pure: text in, sessions of dated turns out. The front door
//! replays them through the engine with a clock set to each turn's time,
//! so sessions, messages and the operations a refresh writes carry the
//! dates the conversation happened on.

pub mod eval;

use std::collections::BTreeMap;

use serde::Deserialize;

use mnemon_core::importance::Role;
use mnemon_core::memory::Timestamp;

/// A file format `mnemon import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    /// `{"conversations": [{"sessions": [{"date", "turns": [...]}]}]}`.
    Eval,
    /// One `{"role", "content", "name"?, "timestamp"?, "session"?}` per line.
    Jsonl,
    /// ChatGPT's export: a list of conversations with a `mapping` tree.
    ChatGpt,
}

impl ImportFormat {
    pub const NAMES: &'static str = "eval, jsonl or chatgpt";

    pub fn parse(name: &str) -> Option<ImportFormat> {
        match name {
            "eval" => Some(ImportFormat::Eval),
            "jsonl" | "openai" => Some(ImportFormat::Jsonl),
            "chatgpt" => Some(ImportFormat::ChatGpt),
            _ => None,
        }
    }

    /// The format `text` is in: a JSON array is a ChatGPT export; an
    /// object holding `conversations` (or spread over several lines) the
    /// evaluation format; anything else JSONL.
    pub fn detect(text: &str) -> ImportFormat {
        let t = text.trim_start();
        if t.starts_with('[') {
            return ImportFormat::ChatGpt;
        }
        let first = t.lines().next().unwrap_or_default();
        match serde_json::from_str::<serde_json::Value>(first) {
            Ok(v) if v.get("conversations").is_none() => ImportFormat::Jsonl,
            Ok(_) => ImportFormat::Eval,
            Err(_) if t.starts_with('{') => ImportFormat::Eval,
            Err(_) => ImportFormat::Jsonl,
        }
    }
}

/// How JSONL lines without a `session` field are grouped into sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionBy {
    /// A new session each calendar day (UTC) of the turns' timestamps.
    Day,
    /// The whole file is one session.
    File,
}

/// One turn to store.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportTurn {
    pub role: Role,
    /// As stored: `Speaker: text` when the source names its speakers.
    pub content: String,
    /// When it was said; `None` when the source does not say.
    pub at: Option<Timestamp>,
}

/// A session's turns, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportSession {
    pub title: Option<String>,
    pub turns: Vec<ImportTurn>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{source_name} line {line}: {reason}")]
    Line {
        source_name: String,
        line: usize,
        reason: String,
    },
    #[error("{source_name}: {reason}")]
    File { source_name: String, reason: String },
}

/// Sessions in `text`, in the order they happened.
pub fn parse(
    text: &str,
    format: ImportFormat,
    by: SessionBy,
    source_name: &str,
) -> Result<Vec<ImportSession>, ImportError> {
    let sessions = match format {
        ImportFormat::Eval => eval(text, source_name)?,
        ImportFormat::Jsonl => jsonl(text, by, source_name)?,
        ImportFormat::ChatGpt => chatgpt(text, source_name)?,
    };
    Ok(sessions
        .into_iter()
        .filter(|s| !s.turns.is_empty())
        .collect())
}

/// Seconds between the turns of an evaluation session, which dates only
/// the session: the turns keep their order and stay within its day.
const EVAL_TURN_GAP_MS: i64 = 30_000;

fn eval(text: &str, source_name: &str) -> Result<Vec<ImportSession>, ImportError> {
    let d = crate::eval::Dataset::from_json(text, source_name).map_err(|e| ImportError::File {
        source_name: source_name.to_string(),
        reason: e.to_string(),
    })?;
    let mut out = Vec::new();
    for c in &d.conversations {
        // The first speaker is the user, as `mnemon eval recall` has it.
        let first = c
            .sessions
            .iter()
            .flat_map(|s| s.turns.first())
            .map(|t| t.speaker.clone())
            .next();
        for s in &c.sessions {
            let start = parse_time(&s.date).ok_or_else(|| ImportError::File {
                source_name: source_name.to_string(),
                reason: format!(
                    "session {} of conversation {} has date `{}`, which is not a time mnemon reads: use RFC 3339 such as 2023-05-08T13:56:00Z",
                    s.id, c.id, s.date
                ),
            })?;
            let turns = s
                .turns
                .iter()
                .enumerate()
                .map(|(i, t)| ImportTurn {
                    role: if Some(&t.speaker) == first.as_ref() {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    content: format!("{}: {}", t.speaker, t.text),
                    at: Some(Timestamp(start.0 + i as i64 * EVAL_TURN_GAP_MS)),
                })
                .collect();
            out.push(ImportSession {
                title: Some(format!("{} {}", c.id, s.id)),
                turns,
            });
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
struct JsonlLine {
    role: String,
    content: serde_json::Value,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    timestamp: Option<serde_json::Value>,
    #[serde(default)]
    session: Option<serde_json::Value>,
}

fn jsonl(text: &str, by: SessionBy, source_name: &str) -> Result<Vec<ImportSession>, ImportError> {
    let mut out: Vec<ImportSession> = Vec::new();
    let mut named: BTreeMap<String, usize> = BTreeMap::new();
    let mut last_day: Option<i64> = None;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let bad = |reason: String| ImportError::Line {
            source_name: source_name.to_string(),
            line: line_no,
            reason,
        };
        if line.trim().is_empty() {
            continue;
        }
        let l: JsonlLine = serde_json::from_str(line).map_err(|e| {
            bad(format!(
                "{e}; each line must be an object such as {{\"role\": \"user\", \"content\": \"hello\", \"timestamp\": \"2025-01-15T14:30:00Z\"}}"
            ))
        })?;
        let role: Role = l.role.parse().map_err(|e: String| bad(e))?;
        let body = content_text(&l.content)
            .ok_or_else(|| bad("`content` must be a string or a list of text parts".into()))?;
        if body.trim().is_empty() {
            continue;
        }
        let at = match &l.timestamp {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(timestamp(v).ok_or_else(|| {
                bad(format!(
                    "`timestamp` {v} is neither an RFC 3339 time such as 2025-01-15T14:30:00Z nor seconds since 1970"
                ))
            })?),
        };
        let content = match l.name.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => format!("{name}: {body}"),
            _ => body,
        };
        let turn = ImportTurn { role, content, at };
        let index = match &l.session {
            Some(v) if !v.is_null() => {
                let key = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                *named.entry(key.clone()).or_insert_with(|| {
                    out.push(ImportSession {
                        title: Some(key),
                        turns: Vec::new(),
                    });
                    out.len() - 1
                })
            }
            _ => {
                let day = at.map(|t| t.0.div_euclid(86_400_000));
                let new = match by {
                    SessionBy::File => out.is_empty(),
                    SessionBy::Day => out.is_empty() || (day.is_some() && day != last_day),
                };
                if day.is_some() {
                    last_day = day;
                }
                if new {
                    out.push(ImportSession {
                        title: at.map(|t| t.rfc3339()[..10].to_string()),
                        turns: Vec::new(),
                    });
                }
                out.len() - 1
            }
        };
        out[index].turns.push(turn);
    }
    if out.is_empty() {
        return Err(ImportError::File {
            source_name: source_name.to_string(),
            reason: "holds no message; give one JSON object per line with `role` and `content`"
                .into(),
        });
    }
    Ok(out)
}

/// A message body: a string, or OpenAI's list of parts (`{"type": "text",
/// "text": ...}`) whose text parts are joined.
fn content_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| match p {
                    serde_json::Value::String(s) => Some(s.as_str()),
                    serde_json::Value::Object(o) => o.get("text").and_then(|t| t.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// RFC 3339 text, or seconds since 1970 (ChatGPT's `create_time`).
fn timestamp(v: &serde_json::Value) -> Option<Timestamp> {
    match v {
        serde_json::Value::String(s) => parse_time(s),
        serde_json::Value::Number(n) => {
            let secs = n.as_f64()?;
            (0.0..1e11)
                .contains(&secs)
                .then(|| Timestamp((secs * 1000.0).round() as i64))
        }
        _ => None,
    }
}

/// A time as histories write it: RFC 3339 first, then the common shapes
/// of exported chats, read as UTC: `2023-05-08 13:56[:00]`, `2023-05-08`,
/// `1:56 pm on 8 May, 2023`, `8 May 2023`, `May 8, 2023`, `March-15-2024`.
pub fn parse_time(s: &str) -> Option<Timestamp> {
    use chrono::{NaiveDate, NaiveDateTime};
    let s = s.trim();
    if let Some(t) = Timestamp::parse(s) {
        return Some(t);
    }
    let at = |dt: NaiveDateTime| Some(Timestamp(dt.and_utc().timestamp_millis()));
    for f in [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, f) {
            return at(dt);
        }
    }
    let lower = s.to_lowercase();
    for f in [
        "%I:%M %P on %d %B, %Y",
        "%I:%M %P on %d %b, %Y",
        "%I:%M %P on %B %d, %Y",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(&lower, f) {
            return at(dt);
        }
    }
    for f in [
        "%Y-%m-%d",
        "%d %B %Y",
        "%d %B, %Y",
        "%B %d, %Y",
        "%B %d %Y",
        "%d %b %Y",
        "%b %d, %Y",
        "%B-%d-%Y",
        "%b-%d-%Y",
        "%Y/%m/%d",
    ] {
        if let Ok(d) = NaiveDate::parse_from_str(&lower, f) {
            return d.and_hms_opt(0, 0, 0).and_then(at);
        }
    }
    None
}

fn chatgpt(text: &str, source_name: &str) -> Result<Vec<ImportSession>, ImportError> {
    let bad = |reason: String| ImportError::File {
        source_name: source_name.to_string(),
        reason,
    };
    let convs: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "is not a ChatGPT export (a JSON list of conversations): {e}"
        ))
    })?;
    let mut out = Vec::new();
    for (i, c) in convs.iter().enumerate() {
        let mapping = c
            .get("mapping")
            .and_then(|m| m.as_object())
            .ok_or_else(|| bad(format!("conversation {} has no `mapping` object", i + 1)))?;
        // The conversation as shown: from the current node up to the root,
        // so edited-away branches are left out.
        let mut chain = Vec::new();
        let mut node = c
            .get("current_node")
            .and_then(|n| n.as_str())
            .map(str::to_string)
            .or_else(|| {
                // No current node: the last leaf in time.
                mapping
                    .iter()
                    .filter(|(_, n)| {
                        n.get("children")
                            .and_then(|c| c.as_array())
                            .is_none_or(Vec::is_empty)
                    })
                    .max_by(|a, b| {
                        let t = |n: &serde_json::Value| {
                            n.pointer("/message/create_time")
                                .and_then(|t| t.as_f64())
                                .unwrap_or(0.0)
                        };
                        t(a.1).total_cmp(&t(b.1))
                    })
                    .map(|(k, _)| k.clone())
            });
        while let Some(id) = node {
            if chain.len() > mapping.len() {
                return Err(bad(format!(
                    "conversation {} has a cycle in its `mapping`",
                    i + 1
                )));
            }
            let Some(n) = mapping.get(&id) else { break };
            chain.push(n);
            node = n.get("parent").and_then(|p| p.as_str()).map(str::to_string);
        }
        chain.reverse();
        let fallback = c.get("create_time").and_then(timestamp_opt);
        let mut turns = Vec::new();
        for n in chain {
            let Some(m) = n.get("message").filter(|m| !m.is_null()) else {
                continue;
            };
            let role = match m.pointer("/author/role").and_then(|r| r.as_str()) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("tool") => Role::Tool,
                // System prompts and hidden context are not conversation.
                _ => continue,
            };
            if m.pointer("/metadata/is_visually_hidden_from_conversation")
                .and_then(|v| v.as_bool())
                == Some(true)
            {
                continue;
            }
            let parts = m
                .pointer("/content/parts")
                .and_then(content_text)
                .or_else(|| {
                    m.pointer("/content/text")
                        .and_then(|t| t.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_default();
            if parts.trim().is_empty() {
                continue;
            }
            let at = m.get("create_time").and_then(timestamp_opt).or(fallback);
            turns.push(ImportTurn {
                role,
                content: parts,
                at,
            });
        }
        out.push(ImportSession {
            title: c.get("title").and_then(|t| t.as_str()).map(str::to_string),
            turns,
        });
    }
    Ok(out)
}

fn timestamp_opt(v: &serde_json::Value) -> Option<Timestamp> {
    (!v.is_null()).then(|| timestamp(v)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_sessions_follow_days_and_explicit_fields() {
        let text = r#"{"role":"user","content":"hi","name":"Ann","timestamp":"2024-03-01T10:00:00Z"}
{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":"2024-03-01T10:01:00Z"}

{"role":"user","content":"next day","timestamp":1709373600}
{"role":"user","content":"tagged","session":"s9"}
"#;
        let s = parse(text, ImportFormat::Jsonl, SessionBy::Day, "t.jsonl").unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].turns.len(), 2);
        assert_eq!(s[0].turns[0].content, "Ann: hi");
        assert_eq!(s[0].turns[1].content, "hello");
        assert_eq!(s[0].title.as_deref(), Some("2024-03-01"));
        assert_eq!(s[1].turns[0].at, Some(Timestamp(1_709_373_600_000)));
        assert_eq!(s[2].title.as_deref(), Some("s9"));
        let one = parse(text, ImportFormat::Jsonl, SessionBy::File, "t.jsonl").unwrap();
        assert_eq!(one.len(), 2);
    }

    #[test]
    fn a_bad_line_is_named() {
        let e = parse(
            "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"boss\",\"content\":\"x\"}\n",
            ImportFormat::Jsonl,
            SessionBy::Day,
            "t.jsonl",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("t.jsonl line 2: "), "{e}");
        let e = parse(
            "{\"role\":\"user\",\"content\":\"x\",\"timestamp\":\"May\"}",
            ImportFormat::Jsonl,
            SessionBy::Day,
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("RFC 3339"), "{e}");
    }

    #[test]
    fn chatgpt_follows_the_current_branch() {
        let text = r#"[{"title":"Trip","create_time":1700000000.5,"current_node":"c","mapping":{
          "r":{"id":"r","message":null,"parent":null,"children":["a"]},
          "a":{"id":"a","message":{"author":{"role":"user"},"create_time":1700000001,"content":{"content_type":"text","parts":["Where to?"]}},"parent":"r","children":["b","x"]},
          "x":{"id":"x","message":{"author":{"role":"assistant"},"create_time":1700000002,"content":{"parts":["old branch"]}},"parent":"a","children":[]},
          "b":{"id":"b","message":{"author":{"role":"assistant"},"create_time":1700000003,"content":{"parts":["Lisbon."]}},"parent":"a","children":["c"]},
          "c":{"id":"c","message":{"author":{"role":"system"},"content":{"parts":["hidden"]}},"parent":"b","children":[]}}}]"#;
        let s = parse(text, ImportFormat::detect(text), SessionBy::Day, "c.json").unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].title.as_deref(), Some("Trip"));
        let texts: Vec<&str> = s[0].turns.iter().map(|t| t.content.as_str()).collect();
        assert_eq!(texts, ["Where to?", "Lisbon."]);
        assert_eq!(s[0].turns[1].at, Some(Timestamp(1_700_000_003_000)));
    }

    #[test]
    fn dates_are_read_in_the_shapes_exports_use() {
        let day = |s: &str| parse_time(s).map(|t| t.rfc3339()[..16].to_string());
        assert_eq!(
            day("2023-05-08T13:56:00Z").as_deref(),
            Some("2023-05-08T13:56")
        );
        assert_eq!(day("2023-05-08 13:56").as_deref(), Some("2023-05-08T13:56"));
        assert_eq!(
            day("1:56 pm on 8 May, 2023").as_deref(),
            Some("2023-05-08T13:56")
        );
        assert_eq!(day("8 May 2023").as_deref(), Some("2023-05-08T00:00"));
        assert_eq!(day("May 8, 2023").as_deref(), Some("2023-05-08T00:00"));
        assert_eq!(day("March-15-2024").as_deref(), Some("2024-03-15T00:00"));
        assert_eq!(day("2024-03-15").as_deref(), Some("2024-03-15T00:00"));
        assert_eq!(day("soon"), None);
    }

    #[test]
    fn formats_are_detected() {
        assert_eq!(ImportFormat::detect("[{}]"), ImportFormat::ChatGpt);
        assert_eq!(
            ImportFormat::detect("{\"conversations\": []}"),
            ImportFormat::Eval
        );
        assert_eq!(
            ImportFormat::detect("{\n  \"conversations\": []\n}"),
            ImportFormat::Eval
        );
        assert_eq!(
            ImportFormat::detect("{\"role\":\"user\",\"content\":\"x\"}\n"),
            ImportFormat::Jsonl
        );
    }
}
