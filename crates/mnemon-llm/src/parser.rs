//! Chat lines the rule parser does not understand, understood by an LLM.
//!
//! The model does not produce commands itself: it rewrites the line into
//! one of the rule parser's supported forms (a JSON reply with a schema),
//! and the rule parser parses that. So every command an LLM yields has
//! passed the same validation as a typed one, and a reply that is not
//! JSON, not a supported form, or no reply at all, falls back to the rule
//! parser's own answer (its closest forms).

use std::sync::Arc;

use mnemon_chat::{CommandParser, FORMS, Parsed, RuleParser};
use serde_json::{Value, json};

use crate::client::{ChatMessage, ChatRequest, Client};

#[derive(Debug, Clone)]
pub struct LlmParser {
    client: Arc<dyn Client>,
    name: String,
}

impl LlmParser {
    pub fn new(client: Arc<dyn Client>) -> LlmParser {
        LlmParser {
            name: format!("llm:{}", client.name()),
            client,
        }
    }

    /// The model's rewriting of `line`, or `None` when it says there is
    /// none or fails.
    fn rewrite(&self, line: &str) -> Option<String> {
        let mut forms = String::new();
        for f in FORMS {
            forms.push_str("- ");
            forms.push_str(f);
            forms.push('\n');
        }
        let schema = json!({
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        });
        let req = ChatRequest {
            messages: vec![
                ChatMessage::system(format!(
                    "You turn a project-management request into one command in the exact style of these examples:\n{forms}Answer with JSON {{\"command\": \"...\"}}. If the request matches none of them, answer {{\"command\": \"\"}}."
                )),
                ChatMessage::user(line.to_string()),
            ],
            max_tokens: 64,
            window: None,
            temperature: Some(0.0),
            json_schema: Some(schema),
            expected_prompt_tokens: None,
        };
        let reply = self.client.chat(&req, &mut |_| {}).ok()?;
        let text = reply.text.trim();
        let start = text.find('{')?;
        let end = text.rfind('}')?;
        let v: Value = serde_json::from_str(text.get(start..=end)?).ok()?;
        let command = v["command"].as_str()?.trim();
        (!command.is_empty() && command.len() <= 500).then(|| command.to_string())
    }
}

impl CommandParser for LlmParser {
    fn name(&self) -> &str {
        &self.name
    }

    fn parse(&self, line: &str) -> Parsed {
        let first = RuleParser.parse(line);
        if !matches!(first, Parsed::Unknown { .. }) {
            return first;
        }
        match self.rewrite(line).map(|c| RuleParser.parse(&c)) {
            Some(Parsed::Command(c)) => Parsed::Command(c),
            Some(Parsed::Incomplete(what)) => Parsed::Incomplete(what),
            _ => first,
        }
    }
}
