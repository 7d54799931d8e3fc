//! Tokens a chat request costs beyond its message texts.
//!
//! Providers wrap every message in control tokens and prime the reply, so a
//! list of messages costs more than the sum of its contents. Budgets that
//! ignore this overflow by a few tokens a message.

use serde::{Deserialize, Serialize};

use super::TokenCounter;

/// The per-message framing of one model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatFormat {
    /// Added for every message (role markers, separators).
    pub tokens_per_message: usize,
    /// Added when a message carries a `name`.
    pub tokens_per_name: usize,
    /// Added once per request: the tokens that open the assistant's reply.
    pub reply_priming: usize,
}

impl ChatFormat {
    /// OpenAI chat models (gpt-3.5-turbo-0613 onward, gpt-4, gpt-4o, gpt-4.1,
    /// gpt-5 and the o-series), as OpenAI's own counting recipe gives them.
    pub const OPENAI: ChatFormat = ChatFormat {
        tokens_per_message: 3,
        tokens_per_name: 1,
        reply_priming: 3,
    };
    /// ChatML (Qwen, many local models): `<|im_start|>role\n … <|im_end|>\n`
    /// costs five tokens around the content; the reply opens with
    /// `<|im_start|>assistant\n`.
    pub const CHATML: ChatFormat = ChatFormat {
        tokens_per_message: 5,
        tokens_per_name: 1,
        reply_priming: 3,
    };
    /// Llama 3: `<|start_header_id|>role<|end_header_id|>\n\n … <|eot_id|>`.
    pub const LLAMA3: ChatFormat = ChatFormat {
        tokens_per_message: 5,
        tokens_per_name: 1,
        reply_priming: 4,
    };

    /// Phi-3: `<|role|>\n … <|end|>\n`; the reply opens with `<|assistant|>\n`.
    pub const PHI3: ChatFormat = ChatFormat {
        tokens_per_message: 4,
        tokens_per_name: 1,
        reply_priming: 2,
    };
    /// Anthropic does not publish its framing; OpenAI's numbers are the
    /// starting estimate, and calibration against reported usage corrects it.
    pub const ANTHROPIC: ChatFormat = ChatFormat::OPENAI;

    /// The families built in, by the name config uses.
    pub const BUILT_IN: [(&'static str, ChatFormat); 5] = [
        ("openai", ChatFormat::OPENAI),
        ("chatml", ChatFormat::CHATML),
        ("llama3", ChatFormat::LLAMA3),
        ("phi3", ChatFormat::PHI3),
        ("anthropic", ChatFormat::ANTHROPIC),
    ];
}

/// One chat message as a provider receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Tokens the whole request costs: every message's role, content, name and
/// framing, plus the reply priming.
pub fn count_chat(
    counter: &dyn TokenCounter,
    format: ChatFormat,
    messages: &[ChatMessage],
) -> usize {
    let body: usize = messages
        .iter()
        .map(|m| {
            let name = m
                .name
                .as_deref()
                .map_or(0, |n| format.tokens_per_name + counter.count(n));
            format.tokens_per_message + counter.count(&m.role) + counter.count(&m.content) + name
        })
        .sum();
    body + format.reply_priming
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{Encoding, OpenAiBpe};

    fn msg(role: &str, content: &str, name: Option<&str>) -> ChatMessage {
        ChatMessage {
            role: role.into(),
            content: content.into(),
            name: name.map(Into::into),
        }
    }

    #[test]
    fn matches_openais_published_example() {
        // The example conversation from OpenAI's "How to count tokens with
        // tiktoken" recipe, which the API reports as 129 prompt tokens for
        // gpt-4 (cl100k_base) and 124 for gpt-4o (o200k_base).
        let messages = vec![
            msg(
                "system",
                "You are a helpful, pattern-following assistant that translates corporate jargon into plain English.",
                None,
            ),
            msg(
                "system",
                "New synergies will help drive top-line growth.",
                Some("example_user"),
            ),
            msg(
                "system",
                "Things working well together will increase revenue.",
                Some("example_assistant"),
            ),
            msg(
                "system",
                "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
                Some("example_user"),
            ),
            msg(
                "system",
                "Let's talk later when we're less busy about how to do better.",
                Some("example_assistant"),
            ),
            msg(
                "user",
                "This late pivot means we don't have time to boil the ocean for the client deliverable.",
                None,
            ),
        ];
        let cl = OpenAiBpe::new(Encoding::Cl100kBase);
        assert_eq!(count_chat(&cl, ChatFormat::OPENAI, &messages), 129);
        let o2 = OpenAiBpe::new(Encoding::O200kBase);
        assert_eq!(count_chat(&o2, ChatFormat::OPENAI, &messages), 124);
    }

    #[test]
    fn empty_request_costs_only_the_priming() {
        let cl = OpenAiBpe::new(Encoding::Cl100kBase);
        assert_eq!(count_chat(&cl, ChatFormat::CHATML, &[]), 3);
    }
}
