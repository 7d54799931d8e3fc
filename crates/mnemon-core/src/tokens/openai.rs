//! OpenAI's BPE vocabularies, exact and offline.

use std::fmt;
use std::str::FromStr;

use super::TokenCounter;

/// The two OpenAI encodings current models use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4, GPT-4 Turbo, GPT-3.5 Turbo, text-embedding-3.
    Cl100kBase,
    /// GPT-4o, GPT-4.1, GPT-5, the o-series.
    O200kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::Cl100kBase, Encoding::O200kBase];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown encoding `{s}`: expected cl100k_base or o200k_base"))
    }
}

/// An exact OpenAI tokenizer. Free to construct: the vocabulary is decoded
/// on the first count, once per process, and shared; a command that counts
/// nothing (`status`, `recent`, `hot`) never pays the 50 ms it takes.
#[derive(Clone, Copy)]
pub struct OpenAiBpe {
    encoding: Encoding,
    inner: fn() -> &'static bpe_openai::Tokenizer,
}

impl fmt::Debug for OpenAiBpe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiBpe")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl OpenAiBpe {
    pub fn new(encoding: Encoding) -> Self {
        let inner = match encoding {
            Encoding::Cl100kBase => bpe_openai::cl100k_base,
            Encoding::O200kBase => bpe_openai::o200k_base,
        };
        OpenAiBpe { encoding, inner }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Token ids, identical to tiktoken's.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        (self.inner)().encode(text)
    }
}

impl TokenCounter for OpenAiBpe {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn is_exact(&self) -> bool {
        true
    }

    fn count(&self, text: &str) -> usize {
        (self.inner)().count(text)
    }

    /// Both pre-tokenizers end every piece at a newline run unless the
    /// next character is whitespace, or `/` (o200k's punctuation piece
    /// takes `[\r\n/]*`), so nothing is merged across such a line start.
    fn splits_at_line_starts(&self) -> bool {
        true
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        // Both vocabularies skip NFC normalisation, so this borrows `text`
        // without copying it; the count then walks pieces lazily and stops
        // at the first one that would pass the limit.
        let inner = (self.inner)();
        let normalized = inner.normalize(text);
        inner.count_till_limit(&normalized, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_counts() {
        let cl = OpenAiBpe::new(Encoding::Cl100kBase);
        let o2 = OpenAiBpe::new(Encoding::O200kBase);
        // Reference ids from tiktoken's own documentation examples.
        assert_eq!(cl.encode("hello world"), vec![15339, 1917]);
        assert_eq!(o2.encode("hello world"), vec![24912, 2375]);
        assert_eq!(cl.count(""), 0);
    }

    #[test]
    fn count_up_to_stops_at_the_limit() {
        let cl = OpenAiBpe::new(Encoding::Cl100kBase);
        let text = "word ".repeat(100);
        let n = cl.count(&text);
        assert_eq!(cl.count_up_to(&text, n), Some(n));
        assert_eq!(cl.count_up_to(&text, n - 1), None);
        assert_eq!(cl.count_up_to("", 0), Some(0));
    }
}
