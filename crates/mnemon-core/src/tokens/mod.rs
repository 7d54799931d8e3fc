//! Exact token counting.
//!
//! Every budget mnemon enforces is only as good as its token counts, so the
//! counters here are exact for the model's real tokenizer wherever one is
//! public (OpenAI's BPE vocabularies are compiled in as tables, see `vocab`; local models
//! bring their HuggingFace `tokenizer.json`). Only models with no public
//! tokenizer fall back to the calibrated characters/4 heuristic, and that
//! counter says so through [`TokenCounter::is_exact`].

mod chat;
mod heuristic;
#[cfg(feature = "hf-tokenizer")]
mod hf;
mod memo;
mod merge;
mod openai;
mod split;
mod vocab;

use std::fmt;
use std::str::FromStr;

pub use chat::{ChatFormat, ChatMessage, count_chat};
pub use heuristic::Heuristic;
#[cfg(feature = "hf-tokenizer")]
pub use hf::HfTokenizer;
pub use memo::{CountCache, Memo};
pub use openai::{Encoding, OpenAiBpe};

/// Counts tokens the way one model's tokenizer does.
///
/// This is a seam because the real tokenizer of a local model is a file the
/// caller loads; core never reads it itself.
pub trait TokenCounter: Send + Sync + fmt::Debug {
    /// A short name for reports: `cl100k_base`, `o200k_base`, `hf:<name>`, `heuristic`.
    fn name(&self) -> &str;

    /// True when counts equal the model's own tokenizer, token for token.
    fn is_exact(&self) -> bool;

    /// The number of tokens `text` encodes to.
    fn count(&self, text: &str) -> usize;

    /// `Some(count)` when `text` encodes to at most `limit` tokens, `None`
    /// otherwise. Implementations stop early where they can, so a "does this
    /// fit?" check on a huge input costs O(limit), not O(input).
    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        let n = self.count(text);
        (n <= limit).then_some(n)
    }

    /// True when no token spans a line start: for any `a`, any run of
    /// newlines `n` and any `b` that starts with neither whitespace nor `/`,
    /// `count(a + n + b) == count(a + n) + count(b)`. A rendered context is
    /// then counted exactly as the sum of its lines' counts, which can be
    /// remembered ([`Memo`]), instead of encoding the whole text again
    /// after every change. `tests/line_additivity.rs` checks the promise.
    fn splits_at_line_starts(&self) -> bool {
        false
    }
}

/// A shared counter counts as the one it shares: a vocabulary loaded once
/// serves every project and handle of a process.
impl<T: TokenCounter + ?Sized> TokenCounter for std::sync::Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn is_exact(&self) -> bool {
        (**self).is_exact()
    }

    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        (**self).count_up_to(text, limit)
    }

    fn splits_at_line_starts(&self) -> bool {
        (**self).splits_at_line_starts()
    }
}

/// Which tokenizer a model uses, as written in config and the model registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenizerSpec {
    /// An exact OpenAI BPE vocabulary.
    OpenAi(Encoding),
    /// A HuggingFace `tokenizer.json` at this path (relative paths are
    /// resolved against the project directory by the caller).
    HuggingFace(String),
    /// The published tokenizer of a family of local models, which mnemon
    /// fetches once per machine (`mnemon models fetch-tokenizer`); until
    /// then counts are estimates, and mnemon says so.
    Local(LocalTokenizer),
    /// Characters / 4, times a calibration factor.
    Heuristic,
}

impl TokenizerSpec {
    /// The accepted spellings, for error messages.
    pub const FORMS: &'static str = "cl100k_base, o200k_base, qwen2.5, qwen3, llama3, phi3 (fetched once with `mnemon models fetch-tokenizer`), heuristic, or hf:<path to tokenizer.json>";
}

/// Families of local models whose tokenizers are public: the registry's
/// Ollama models name one, so their counts can be exact without the user
/// finding a `tokenizer.json`. Where the file comes from is the caller's
/// business (core reads no files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LocalTokenizer {
    /// Qwen 2 and 2.5, Coder included: one 151,665-token vocabulary.
    Qwen25,
    /// Qwen 3.
    Qwen3,
    /// Llama 3.1, 3.2 and 3.3.
    Llama3,
    /// Phi-3 and Phi-3.5.
    Phi3,
}

impl LocalTokenizer {
    pub const ALL: [LocalTokenizer; 4] = [
        LocalTokenizer::Qwen25,
        LocalTokenizer::Qwen3,
        LocalTokenizer::Llama3,
        LocalTokenizer::Phi3,
    ];

    /// The spelling in config and on screen; also its directory name.
    pub fn name(self) -> &'static str {
        match self {
            LocalTokenizer::Qwen25 => "qwen2.5",
            LocalTokenizer::Qwen3 => "qwen3",
            LocalTokenizer::Llama3 => "llama3",
            LocalTokenizer::Phi3 => "phi3",
        }
    }

    pub fn parse(s: &str) -> Option<LocalTokenizer> {
        LocalTokenizer::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for TokenizerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerSpec::OpenAi(e) => f.write_str(e.name()),
            TokenizerSpec::HuggingFace(p) => write!(f, "hf:{p}"),
            TokenizerSpec::Local(t) => f.write_str(t.name()),
            TokenizerSpec::Heuristic => f.write_str("heuristic"),
        }
    }
}

/// A tokenizer name that is none of [`TokenizerSpec::FORMS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tokenizer `{0}`: expected {forms}", forms = TokenizerSpec::FORMS)]
pub struct UnknownTokenizer(pub String);

impl FromStr for TokenizerSpec {
    type Err = UnknownTokenizer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(path) = s.strip_prefix("hf:") {
            if path.is_empty() {
                return Err(UnknownTokenizer(s.to_string()));
            }
            return Ok(TokenizerSpec::HuggingFace(path.to_string()));
        }
        if s == "heuristic" {
            return Ok(TokenizerSpec::Heuristic);
        }
        if let Some(t) = LocalTokenizer::parse(s) {
            return Ok(TokenizerSpec::Local(t));
        }
        s.parse::<Encoding>()
            .map(TokenizerSpec::OpenAi)
            .map_err(|_| UnknownTokenizer(s.to_string()))
    }
}

impl serde::Serialize for TokenizerSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TokenizerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_round_trips_through_text() {
        for s in [
            "cl100k_base",
            "o200k_base",
            "heuristic",
            "hf:models/qwen/tokenizer.json",
        ] {
            let spec: TokenizerSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
    }

    #[test]
    fn spec_rejects_unknown_names_and_empty_paths() {
        assert!("p50k_base".parse::<TokenizerSpec>().is_err());
        let err = "hf:".parse::<TokenizerSpec>().unwrap_err();
        assert!(
            err.to_string().contains("hf:<path to tokenizer.json>"),
            "{err}"
        );
    }
}
