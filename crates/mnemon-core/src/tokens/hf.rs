//! HuggingFace `tokenizer.json` counters for local models (Qwen, Llama, ...).

use std::fmt;

use super::TokenCounter;

/// A tokenizer built from the bytes of a `tokenizer.json`.
///
/// The caller reads the file; core only parses it. Padding and truncation
/// are switched off whatever the file says: a file that pads to 512 or
/// truncates at 2,048 would otherwise report counts that are not the text's.
/// Special tokens (BOS/EOS) are not added either: the chat format accounts
/// for the framing a request adds.
pub struct HfTokenizer {
    name: String,
    inner: tokenizers::Tokenizer,
}

impl fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("name", &self.name)
            .finish()
    }
}

/// A `tokenizer.json` that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error("`{name}` is not a usable HuggingFace tokenizer.json: {reason}")]
pub struct HfLoadError {
    pub name: String,
    pub reason: String,
}

impl HfTokenizer {
    /// `name` labels the tokenizer in reports (usually the file's path).
    pub fn from_bytes(name: impl Into<String>, json: &[u8]) -> Result<Self, HfLoadError> {
        let name = name.into();
        let mut inner = tokenizers::Tokenizer::from_bytes(json).map_err(|e| HfLoadError {
            name: name.clone(),
            reason: e.to_string(),
        })?;
        inner.with_padding(None);
        inner.with_truncation(None).map_err(|e| HfLoadError {
            name: name.clone(),
            reason: e.to_string(),
        })?;
        Ok(HfTokenizer {
            name: format!("hf:{name}"),
            inner,
        })
    }

    /// The same tokenizer under another label: a family's (`qwen2.5`)
    /// rather than its file's path.
    pub fn labelled(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Token ids of `text`, without special tokens.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self.inner.encode(text, false) {
            Ok(enc) => enc.get_ids().to_vec(),
            Err(_) => Vec::new(),
        }
    }
}

impl TokenCounter for HfTokenizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_exact(&self) -> bool {
        true
    }

    fn count(&self, text: &str) -> usize {
        // Encoding only fails on inputs the model cannot represent at all;
        // count those as one token per byte, which never undercounts a
        // byte-level vocabulary.
        match self.inner.encode(text, false) {
            Ok(enc) => enc.len(),
            Err(_) => text.len(),
        }
    }
}
