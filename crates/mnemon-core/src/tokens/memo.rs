//! Counting each distinct text once. An orchestrator asks for context on
//! every turn and most of what it gets (hot context, documents, working
//! memory, the usual fragments) is what it got last turn; counts are a
//! pure function of the text, so remembering them is exact.

use super::TokenCounter;
use crate::cache::Bounded;

/// Texts longer than this are counted every time: they are rare, and
/// keeping them would cost more memory than counting saves.
const MAX_TEXT: usize = 4_096;
/// The cache starts over past this many entries (a few MB at most).
const MAX_ENTRIES: usize = 50_000;

/// Shared across calls; see [`Memo`].
#[derive(Debug)]
pub struct CountCache(Bounded<u32>);

impl Default for CountCache {
    fn default() -> Self {
        CountCache(Bounded::new(MAX_ENTRIES))
    }
}

impl CountCache {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A counter that answers from `cache` when it can.
#[derive(Debug, Clone, Copy)]
pub struct Memo<'a> {
    pub inner: &'a dyn TokenCounter,
    pub cache: &'a CountCache,
}

impl TokenCounter for Memo<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn is_exact(&self) -> bool {
        self.inner.is_exact()
    }

    fn splits_at_line_starts(&self) -> bool {
        self.inner.splits_at_line_starts()
    }

    fn count(&self, text: &str) -> usize {
        if text.len() > MAX_TEXT {
            return self.inner.count(text);
        }
        if let Some(n) = self.cache.0.get(text) {
            return n as usize;
        }
        let n = self.inner.count(text);
        self.cache.0.insert(text, n.min(u32::MAX as usize) as u32);
        n
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        self.inner.count_up_to(text, limit)
    }
}
