//! OpenAI's BPE vocabularies, exact and offline.

use std::fmt;
use std::str::FromStr;

use std::sync::LazyLock;

use super::TokenCounter;
use super::merge;
use super::split::{self, Pattern};
use super::vocab::Vocab;

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

/// A vocabulary's table and its pattern: everything an exact count needs.
pub(super) struct Bpe {
    vocab: Vocab,
    pattern: Pattern,
}

impl Bpe {
    fn load(table: &'static [u8], pattern: Pattern) -> Bpe {
        #[allow(
            clippy::expect_used,
            reason = "build.rs wrote the table and checked it"
        )]
        let vocab = Vocab::new(table).expect("build.rs writes tables in vocab.rs's layout");
        Bpe { vocab, pattern }
    }

    /// Counts pieces until the total passes `limit`: then `None`.
    fn count_till(&self, text: &str, limit: usize) -> Option<usize> {
        let mut n = 0usize;
        for piece in split::pieces(self.pattern, text) {
            n += merge::count(&self.vocab, piece.as_bytes());
            if n > limit {
                return None;
            }
        }
        Some(n)
    }
}

static CL100K_BASE: LazyLock<Bpe> = LazyLock::new(|| {
    Bpe::load(
        include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.bpe")),
        Pattern::Cl100k,
    )
});

static O200K_BASE: LazyLock<Bpe> = LazyLock::new(|| {
    Bpe::load(
        include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bpe")),
        Pattern::O200k,
    )
});

/// An exact OpenAI tokenizer. Free to construct and to use the first time:
/// the vocabulary is a table compiled into the binary and read in place
/// (see `tokens::vocab`), the pattern is code (see `tokens::split`), so
/// nothing is built or decoded, and a process pays in memory only for the
/// pages of the table its counts touch.
#[derive(Clone, Copy)]
pub struct OpenAiBpe {
    encoding: Encoding,
    inner: &'static LazyLock<Bpe>,
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
            Encoding::Cl100kBase => &CL100K_BASE,
            Encoding::O200kBase => &O200K_BASE,
        };
        OpenAiBpe { encoding, inner }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Token ids, identical to tiktoken's.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let bpe: &Bpe = self.inner;
        let mut ids = Vec::with_capacity(text.len() / 4);
        for piece in split::pieces(bpe.pattern, text) {
            merge::tokens(&bpe.vocab, piece.as_bytes(), &mut |id| {
                ids.push(id);
                true
            });
        }
        ids
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
        self.inner
            .count_till(text, usize::MAX)
            .unwrap_or(usize::MAX)
    }

    /// Both pre-tokenizers end every piece at a newline run unless the
    /// next character is whitespace, or `/` (o200k's punctuation piece
    /// takes `[\r\n/]*`), so nothing is merged across such a line start.
    fn splits_at_line_starts(&self) -> bool {
        true
    }

    /// Walks pieces lazily and stops at the first one that passes the
    /// limit: a "does it fit" check on a long text costs the limit, not the
    /// text.
    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        self.inner.count_till(text, limit)
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
