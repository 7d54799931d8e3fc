//! Compression: turning many items into a summary that fits a token target
//! without losing what must not be lost.
//!
//! The [`Summarizer`] seam takes items that carry provenance ids and returns
//! lines that keep them, so every sentence of a summary can be traced to the
//! operations and messages it came from. [`Extractive`] is the embedded
//! default (no LLM): it only ever copies sentences, so nothing in a summary
//! is invented. An LLM summarizer plugs into the same trait.
//!
//! Rules every summarizer obeys, and the tests check:
//! - pinned items (decisions, constraints, goals, errors, failures,
//!   completions, "remember" requests, `#12` identifiers) appear verbatim;
//! - the rendered output, counted exactly, never exceeds the target;
//! - when the pinned items alone exceed the target the summarizer says so
//!   ([`CompressError::PinnedExceedTarget`]) instead of dropping them;
//!   [`compress_within`] is the caller's way out, and it names what it left
//!   out and where the originals are.

mod extractive;
pub mod sentences;

pub use extractive::Extractive;

use serde::{Deserialize, Serialize};

use crate::tokens::TokenCounter;

/// Something to compress, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceItem {
    /// Provenance ids, such as `o12` (operation at log position 12) or `m7`
    /// (message 7). A line of an earlier summary carries all of its ids.
    pub sources: Vec<String>,
    /// Chronological position; output lines are ordered by it.
    pub order: i64,
    pub text: String,
    pub pinned: bool,
    /// 0 to 1 (see `importance`).
    pub importance: f64,
}

/// One line of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub text: String,
    pub sources: Vec<String>,
    /// The item's whole text, unchanged.
    pub verbatim: bool,
    pub pinned: bool,
    pub order: i64,
}

impl Line {
    /// `- text [o12,o13]`, or `- text [pinned o12]` for a pinned item.
    pub fn render(&self) -> String {
        let ids = self.sources.join(",");
        let text = self.text.replace('\n', " ");
        if self.pinned {
            format!("- {text} [pinned {ids}]")
        } else {
            format!("- {text} [{ids}]")
        }
    }

    /// Reads a line written by [`Line::render`]; `None` for any other line.
    pub fn parse(line: &str, order: i64) -> Option<Line> {
        let rest = line.strip_prefix("- ")?;
        let open = rest.rfind(" [")?;
        let inner = rest[open + 2..].strip_suffix(']')?;
        let (pinned, ids) = match inner.strip_prefix("pinned ") {
            Some(ids) => (true, ids),
            None => (false, inner),
        };
        let sources: Vec<String> = ids.split(',').map(str::to_string).collect();
        if sources
            .iter()
            .any(|s| s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        {
            return None;
        }
        Some(Line {
            text: rest[..open].to_string(),
            sources,
            verbatim: pinned,
            pinned,
            order,
        })
    }

    /// `item` whole and unchanged, as every summarizer keeps a pinned one.
    pub fn verbatim(item: &SourceItem) -> Line {
        Line {
            text: item.text.clone(),
            sources: item.sources.clone(),
            verbatim: true,
            pinned: item.pinned,
            order: item.order,
        }
    }

    /// This line as an item for a further level of summary.
    pub fn to_item(&self) -> SourceItem {
        SourceItem {
            sources: self.sources.clone(),
            order: self.order,
            text: self.text.clone(),
            pinned: self.pinned,
            importance: if self.pinned { 1.0 } else { 0.5 },
        }
    }
}

/// What a compaction did with each input item. Nothing is deleted: every id
/// here names a row that stays in the store, so `dropped` says where the
/// original lives, not that it is gone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// Whole and unchanged.
    pub kept_verbatim: Vec<String>,
    /// Represented by some of their sentences.
    pub summarized: Vec<String>,
    /// Not represented; the original is in the store under this id.
    pub dropped: Vec<String>,
    /// Pinned items left out because the pinned items alone exceeded the
    /// space ([`compress_within`] only); also kept in the store.
    pub pinned_deferred: Vec<String>,
    /// Sentences skipped as near-duplicates of a kept one.
    pub duplicates_removed: usize,
    /// Who wrote which part, for summaries made in stages (an LLM's map
    /// and reduce), and why a stage fell back to extractive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
}

/// One call of a staged summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    /// `map 2/5`, `reduce`, `check`.
    pub stage: String,
    /// The summarizer and model that did it (`llama.cpp:SmolLM2`,
    /// `extractive`).
    pub by: String,
    /// Items in, tokens in and out.
    pub items: usize,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Why this stage is not the LLM's, when it fell back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_back: Option<String>,
}

/// A compaction's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub lines: Vec<Line>,
    /// The lines rendered, one per line; what [`Summary::tokens`] counts.
    pub text: String,
    pub tokens: u64,
    /// Tokens of the input rendered verbatim in the same line format.
    pub input_tokens: u64,
    pub target: u64,
    pub audit: Audit,
}

impl Summary {
    /// Output tokens ÷ input tokens (1.0 for an empty input).
    pub fn ratio(&self) -> f64 {
        if self.input_tokens == 0 {
            1.0
        } else {
            self.tokens as f64 / self.input_tokens as f64
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompressError {
    #[error(
        "the {count} pinned items alone need {pinned_tokens} tokens but the target is {target}; pinned items are never dropped, so give more space or move some to the store with compress_within"
    )]
    PinnedExceedTarget {
        count: usize,
        pinned_tokens: u64,
        target: u64,
    },
    #[error("summarizer `{name}` failed: {reason}")]
    Failed { name: String, reason: String },
}

/// The seeds' compression ratio: output at most 70 % of the input.
pub const SEED_RATIO_PPM: u64 = 700_000;

/// Turns items into a summary of at most `target` tokens.
pub trait Summarizer: Send + Sync {
    fn name(&self) -> &str;
    /// Output at most `target` tokens (and at most 70 % of the input when
    /// the pinned items allow), every pinned item verbatim.
    fn summarize(
        &self,
        items: &[SourceItem],
        target: u64,
        counter: &dyn TokenCounter,
    ) -> Result<Summary, CompressError>;
}

/// Renders lines in order, one per line.
pub fn render(lines: &[Line]) -> String {
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&l.render());
    }
    out
}

/// Reads back a summary written by [`render`]. Lines that are not summary
/// lines (headings, notices) are skipped.
pub fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| Line::parse(l, i as i64))
        .collect()
}

/// Like [`Summarizer::summarize`], but never fails for lack of space: when
/// the pinned items alone exceed `target`, the newest pinned items that fit
/// are kept verbatim, a notice line says how many were left out, and the
/// audit lists them under `pinned_deferred`. They stay in the store. The
/// output still never exceeds `target`.
pub fn compress_within(
    s: &dyn Summarizer,
    items: &[SourceItem],
    target: u64,
    counter: &dyn TokenCounter,
) -> Result<Summary, CompressError> {
    match s.summarize(items, target, counter) {
        Err(CompressError::PinnedExceedTarget { .. }) => {}
        other => return other,
    }
    let input_tokens = verbatim_tokens(items, counter);
    let mut pinned: Vec<&SourceItem> = items.iter().filter(|i| i.pinned).collect();
    pinned.sort_by_key(|i| std::cmp::Reverse(i.order));
    let mut kept: Vec<Line> = Vec::new();
    let mut deferred: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut tokens = 0;
    for item in &pinned {
        let line = Line {
            text: item.text.clone(),
            sources: item.sources.clone(),
            verbatim: true,
            pinned: true,
            order: item.order,
        };
        let mut trial = kept.clone();
        trial.push(line);
        trial.sort_by_key(|l| l.order);
        let remaining = pinned.len() - kept.len() - 1;
        let candidate = with_notice(&trial, remaining);
        let n = counter.count(&candidate) as u64;
        if n <= target {
            kept = trial;
            text = candidate;
            tokens = n;
        } else {
            deferred.extend(item.sources.iter().cloned());
        }
    }
    if kept.is_empty() {
        // Not even one pinned item fits: the notice alone, if it fits.
        let notice = with_notice(&[], pinned.len());
        let n = counter.count(&notice) as u64;
        if n <= target {
            text = notice;
            tokens = n;
        }
    } else if !deferred.is_empty() {
        let fixed = with_notice(&kept, deferred_items(&pinned, &kept));
        let n = counter.count(&fixed) as u64;
        if n <= target {
            text = fixed;
            tokens = n;
        }
    }
    let mut audit = Audit::default();
    for item in items {
        let ids = item.sources.iter().cloned();
        if item.pinned {
            if kept.iter().any(|l| l.sources == item.sources) {
                audit.kept_verbatim.extend(ids);
            }
        } else {
            audit.dropped.extend(ids);
        }
    }
    deferred.sort();
    audit.pinned_deferred = deferred;
    Ok(Summary {
        lines: kept,
        text,
        tokens,
        input_tokens,
        target,
        audit,
    })
}

fn deferred_items(pinned: &[&SourceItem], kept: &[Line]) -> usize {
    pinned.len() - kept.len()
}

fn with_notice(lines: &[Line], left_out: usize) -> String {
    let mut text = render(lines);
    if left_out > 0 {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "({left_out} earlier pinned items are kept in the store, not shown here)"
        ));
    }
    text
}

/// Tokens of `items` rendered verbatim as summary lines: the size a summary
/// is compared with.
pub fn verbatim_tokens(items: &[SourceItem], counter: &dyn TokenCounter) -> u64 {
    let mut sorted: Vec<&SourceItem> = items.iter().collect();
    sorted.sort_by_key(|i| i.order);
    let lines: Vec<Line> = sorted.iter().map(|i| Line::verbatim(i)).collect();
    counter.count(&render(&lines)) as u64
}

/// Design v1 §3.6's hierarchy: level 1 summarizes the items, and each
/// further level summarizes the previous one to about half its tokens.
/// Stops early when a level can shrink no further without dropping a
/// pinned item. Returns at most `levels` summaries, most detailed first.
pub fn hierarchical(
    s: &dyn Summarizer,
    items: &[SourceItem],
    levels: usize,
    counter: &dyn TokenCounter,
) -> Result<Vec<Summary>, CompressError> {
    let mut out: Vec<Summary> = Vec::new();
    let mut current: Vec<SourceItem> = items.to_vec();
    let mut current_tokens = verbatim_tokens(items, counter);
    for _ in 0..levels {
        let target = current_tokens / 2;
        match s.summarize(&current, target, counter) {
            Ok(sum) => {
                if !out.is_empty() && sum.tokens >= current_tokens {
                    break;
                }
                current = sum.lines.iter().map(Line::to_item).collect();
                current_tokens = sum.tokens;
                out.push(sum);
            }
            Err(CompressError::PinnedExceedTarget { .. }) if !out.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
