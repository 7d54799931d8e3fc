//! Raw reasoning never reaches the store (ADR-018): `<think>` blocks are cut
//! from text, and reasoning or scratchpad fields are dropped from data.

/// Keys whose values are chain-of-thought, not records.
pub const REASONING_KEYS: &[&str] = &[
    "reasoning",
    "reasoning_content",
    "scratchpad",
    "chain_of_thought",
    "thinking",
    "thoughts",
    "internal_monologue",
];

const TAGS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<scratchpad>", "</scratchpad>"),
];

/// Removes every `<think>…</think>` (and `<thinking>`, `<scratchpad>`)
/// block; an unclosed block runs to the end of the text.
pub fn strip_reasoning(text: &str) -> String {
    let mut out = text.to_string();
    for (open, close) in TAGS {
        loop {
            let lower = out.to_ascii_lowercase();
            let Some(start) = lower.find(open) else { break };
            let end = lower[start..]
                .find(close)
                .map_or(out.len(), |e| start + e + close.len());
            out.replace_range(start..end, "");
        }
    }
    if out.len() != text.len() {
        out.trim().to_string()
    } else {
        out
    }
}

/// Drops reasoning keys at any depth and strips reasoning blocks from every
/// string. Returns the cleaned value and whether anything was removed.
pub fn strip_reasoning_fields(value: &serde_json::Value) -> (serde_json::Value, bool) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            let clean = strip_reasoning(s);
            let changed = clean != *s;
            (Value::String(clean), changed)
        }
        Value::Array(items) => {
            let mut changed = false;
            let items = items
                .iter()
                .map(|v| {
                    let (v, c) = strip_reasoning_fields(v);
                    changed |= c;
                    v
                })
                .collect();
            (Value::Array(items), changed)
        }
        Value::Object(map) => {
            let mut changed = false;
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                if REASONING_KEYS.contains(&k.to_ascii_lowercase().as_str()) {
                    changed = true;
                    continue;
                }
                let (v, c) = strip_reasoning_fields(v);
                changed |= c;
                out.insert(k.clone(), v);
            }
            (Value::Object(out), changed)
        }
        other => (other.clone(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn think_blocks_are_cut() {
        assert_eq!(
            strip_reasoning("<think>maybe X? no, Y</think>Use Y."),
            "Use Y."
        );
        assert_eq!(
            strip_reasoning("A <THINK>hmm</THINK> B <thinking>x</thinking>C"),
            "A  B C"
        );
        assert_eq!(strip_reasoning("answer <think>never closed"), "answer");
        assert_eq!(strip_reasoning("plain text  "), "plain text  ");
    }

    #[test]
    fn reasoning_fields_are_dropped_at_any_depth() {
        let data = json!({"decision": "RS256", "reasoning": "long", "nested": {"scratchpad": "x", "why": "<think>a</think>b"}});
        let (clean, changed) = strip_reasoning_fields(&data);
        assert!(changed);
        assert_eq!(clean, json!({"decision": "RS256", "nested": {"why": "b"}}));
        assert!(!strip_reasoning_fields(&json!({"a": [1, "b"]})).1);
    }
}
