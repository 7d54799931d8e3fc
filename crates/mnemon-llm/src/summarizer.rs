//! Summaries by an LLM on the core's `Summarizer` seam.
//!
//! Every call fits the summarizer model's own window: the items are mapped
//! in chunks sized for that window, then the partial summaries are reduced
//! until they fit the target. A compaction request that overflows its own
//! model is a known failure of other tools; here it cannot happen by
//! construction, and if a server still refuses a chunk for length, the
//! chunk is split and asked again.
//!
//! The LLM never sees pinned items: they are copied verbatim around its
//! output and checked. Its lines carry the provenance ids of the chunk they
//! came from. The newest item (the current turn) is kept whole. Any
//! failure (the server down, a timeout, a reply that is empty or not
//! lines) sends that stage to the extractive summarizer, and the audit
//! says which stage used which model and why it fell back. After the
//! server stops answering, no further call is tried.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use mnemon_core::compress::{
    Audit, CompressError, Extractive, Line, SourceItem, Stage, Summarizer, Summary, render,
    verbatim_tokens,
};
use mnemon_core::tokens::TokenCounter;

use crate::client::{ChatMessage, ChatRequest, Client};
use crate::error::LlmError;

/// The LLM's budget per call, as shares of its window: input, answer.
const INPUT_SHARE: (u64, u64) = (2, 5);
const OUTPUT_SHARE: (u64, u64) = (1, 5);
/// The project's tokenizer may count fewer tokens than the model's; this
/// margin (in percent) keeps a chunk inside the model's window anyway.
const MODEL_TOKEN_MARGIN: u64 = 130;
const MAX_REDUCE_ROUNDS: usize = 3;

/// An LLM summarizer with the extractive one behind it.
#[derive(Debug, Clone)]
pub struct LlmSummarizer {
    client: Arc<dyn Client>,
    name: String,
    /// The summarizer model's window, as served.
    window: u64,
    /// Goals and constraints, given to the model so its summary respects
    /// them; they are re-injected by the context itself, not by the
    /// summary.
    standing: Vec<String>,
    fallback: Extractive,
}

impl LlmSummarizer {
    /// `window` is the summarizer model's served window (from its probe);
    /// `ratio_ppm` the extractive fallback's compression ratio.
    pub fn new(client: Arc<dyn Client>, window: u64, ratio_ppm: u64) -> LlmSummarizer {
        LlmSummarizer {
            name: client.name(),
            client,
            window: window.max(512),
            standing: Vec::new(),
            fallback: Extractive::with_ratio(ratio_ppm),
        }
    }

    /// Standing instructions (goals, constraints) the summary must respect.
    pub fn with_standing(mut self, standing: Vec<String>) -> LlmSummarizer {
        self.standing = standing;
        self
    }

    fn chunk_budget(&self) -> u64 {
        let model_tokens = self.window * INPUT_SHARE.0 / INPUT_SHARE.1;
        (model_tokens * 100 / MODEL_TOKEN_MARGIN).max(64)
    }

    fn answer_budget(&self) -> u64 {
        (self.window * OUTPUT_SHARE.0 / OUTPUT_SHARE.1).max(32)
    }

    /// One LLM call: `items` to lines of at most about `words` words.
    fn ask(&self, items: &[&SourceItem], words: u64, tokens: u64) -> Result<Vec<String>, LlmError> {
        let mut system = String::from(
            "You compress an agent's work log into short factual notes. Keep names, numbers, file paths, identifiers and decisions exactly as written. Never add anything that is not in the log. Answer only with notes, one per line, each starting with \"- \".",
        );
        if !self.standing.is_empty() {
            system.push_str(
                "\nStanding instructions of this project (kept elsewhere; do not repeat them, but keep what bears on them):",
            );
            for s in &self.standing {
                system.push_str("\n* ");
                system.push_str(s);
            }
        }
        let mut log = String::new();
        for i in items {
            log.push_str("- ");
            log.push_str(&i.text.replace('\n', " "));
            log.push('\n');
        }
        let req = ChatRequest {
            messages: vec![
                ChatMessage::system(system),
                ChatMessage::user(format!(
                    "Log:\n{log}\nWrite the notes, {words} words at most in all."
                )),
            ],
            // No more than the share could hold (with the tokenizers'
            // margin): a small model rambles to its limit otherwise.
            max_tokens: (tokens * MODEL_TOKEN_MARGIN / 100 + 16).min(self.answer_budget()),
            window: Some(self.window),
            temperature: Some(0.0),
            json_schema: None,
            expected_prompt_tokens: None,
        };
        let reply = self.client.chat(&req, &mut |_| {})?;
        let lines = note_lines(&reply.text);
        if lines.is_empty() {
            return Err(LlmError::BadReply {
                url: self.name.clone(),
                reason: "the summary has no lines".into(),
                excerpt: crate::error::excerpt(&reply.text, 200),
            });
        }
        Ok(lines)
    }
}

/// The notes in a reply: one per line, bullets and numbering stripped,
/// provenance ids the model may have copied removed.
fn note_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let l = l.trim();
            let l = l
                .trim_start_matches(['-', '*', '•'])
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches(['.', ')'])
                .trim();
            strip_ids(l)
        })
        // Headings ("Here are the notes:") are not notes.
        .filter(|l| l.chars().filter(|c| c.is_alphanumeric()).count() >= 3 && !l.ends_with(':'))
        .collect()
}

/// `text` without a trailing `[o12,m3]` the model copied.
fn strip_ids(text: &str) -> String {
    if let Some(open) = text.rfind(" [")
        && text.ends_with(']')
    {
        return text[..open].trim().to_string();
    }
    text.to_string()
}

/// Splits items into runs whose verbatim size stays within `budget`.
fn chunks<'a>(
    items: &[&'a SourceItem],
    budget: u64,
    counter: &dyn TokenCounter,
) -> Vec<Vec<&'a SourceItem>> {
    let mut out: Vec<Vec<&SourceItem>> = Vec::new();
    let mut cur: Vec<&SourceItem> = Vec::new();
    let mut size = 0;
    for item in items {
        let n = counter.count(&item.text) as u64 + 4;
        if !cur.is_empty() && size + n > budget {
            out.push(std::mem::take(&mut cur));
            size = 0;
        }
        cur.push(item);
        size += n;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The state of one `summarize` call.
struct Run<'a> {
    s: &'a LlmSummarizer,
    counter: &'a dyn TokenCounter,
    stages: RefCell<Vec<Stage>>,
    /// Set once the server fails in a way that makes further calls futile.
    down: RefCell<Option<String>>,
    calls: Cell<usize>,
}

impl Run<'_> {
    /// Summarizes one chunk into lines carrying its sources: by the LLM,
    /// else extractively. A chunk the server refuses for length is split.
    fn map(&self, stage: &str, chunk: &[&SourceItem], words: u64, tokens: u64) -> Vec<Line> {
        let sources: Vec<String> = spans(
            &chunk
                .iter()
                .flat_map(|i| i.sources.clone())
                .collect::<Vec<_>>(),
        );
        let order = chunk.iter().map(|i| i.order).max().unwrap_or(0);
        let tokens_in: u64 = chunk
            .iter()
            .map(|i| self.counter.count(&i.text) as u64)
            .sum();
        // Cloned first: the borrow must end before a failure sets it.
        let down = self.down.borrow().clone();
        let reason = match down {
            Some(r) => Some(r),
            None => {
                self.calls.set(self.calls.get() + 1);
                match self.s.ask(chunk, words, tokens) {
                    Ok(notes) => {
                        let lines: Vec<Line> = notes
                            .into_iter()
                            .map(|text| Line {
                                text,
                                sources: sources.clone(),
                                verbatim: false,
                                pinned: false,
                                order,
                            })
                            .collect();
                        self.stages.borrow_mut().push(Stage {
                            stage: stage.to_string(),
                            by: self.s.name.clone(),
                            items: chunk.len(),
                            tokens_in,
                            tokens_out: self.counter.count(&render(&lines)) as u64,
                            fell_back: None,
                        });
                        return lines;
                    }
                    Err(LlmError::ContextExceeded { .. }) if chunk.len() > 1 => {
                        let (a, b) = chunk.split_at(chunk.len() / 2);
                        let mut out = self.map(&format!("{stage}a"), a, words / 2, tokens / 2);
                        out.extend(self.map(&format!("{stage}b"), b, words / 2, tokens / 2));
                        return out;
                    }
                    Err(e) => {
                        let reason = e.to_string();
                        if e.is_transient()
                            || matches!(e, LlmError::Auth { .. } | LlmError::ModelNotFound { .. })
                        {
                            *self.down.borrow_mut() =
                                Some(format!("an earlier call failed: {reason}"));
                        }
                        Some(reason)
                    }
                }
            }
        };
        // Extractive, within the same share of the target.
        let owned: Vec<SourceItem> = chunk.iter().map(|i| (*i).clone()).collect();
        let lines = match self
            .s
            .fallback
            .summarize(&owned, tokens.max(16), self.counter)
        {
            Ok(sum) => sum.lines,
            Err(_) => Vec::new(),
        };
        self.stages.borrow_mut().push(Stage {
            stage: stage.to_string(),
            by: "extractive".into(),
            items: chunk.len(),
            tokens_in,
            tokens_out: self.counter.count(&render(&lines)) as u64,
            fell_back: reason,
        });
        lines
    }
}

impl Summarizer for LlmSummarizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn summarize(
        &self,
        items: &[SourceItem],
        target: u64,
        counter: &dyn TokenCounter,
    ) -> Result<Summary, CompressError> {
        let input_tokens = verbatim_tokens(items, counter);
        // The current turn (the last item; items come in order, and
        // several may share a timestamp) stays whole when it takes at most
        // a quarter of the target.
        let last = items.len().checked_sub(1);
        let current_fits = items
            .last()
            .is_some_and(|i| counter.count(&i.text) as u64 * 4 <= target);
        let keep_whole = |k: usize, i: &SourceItem| i.pinned || (Some(k) == last && current_fits);
        let mut whole: Vec<&SourceItem> = Vec::new();
        let mut rest: Vec<&SourceItem> = Vec::new();
        for (k, i) in items.iter().enumerate() {
            if keep_whole(k, i) {
                whole.push(i)
            } else {
                rest.push(i)
            }
        }
        let whole_lines: Vec<Line> = whole.iter().map(|i| Line::verbatim(i)).collect();
        let pinned_tokens = if whole_lines.is_empty() {
            0
        } else {
            counter.count(&render(&whole_lines)) as u64
        };
        if pinned_tokens > target {
            return Err(CompressError::PinnedExceedTarget {
                count: whole.len(),
                pinned_tokens,
                target,
            });
        }
        let run = Run {
            s: self,
            counter,
            stages: RefCell::new(Vec::new()),
            down: RefCell::new(None),
            calls: Cell::new(0),
        };
        let space = target - pinned_tokens;
        let mut notes: Vec<Line> = Vec::new();
        if !rest.is_empty() && space > 8 {
            let parts = chunks(&rest, self.chunk_budget(), counter);
            let n = parts.len() as u64;
            let share = (space / n).max(8);
            for (k, part) in parts.iter().enumerate() {
                let stage = format!("map {}/{}", k + 1, n);
                notes.extend(run.map(&stage, part, words_for(share), share));
            }
            // Reduce while the notes are over their space, and only while
            // reducing shrinks them; trimming does the rest.
            let mut size = counter.count(&render(&notes)) as u64;
            for round in 1..=MAX_REDUCE_ROUNDS {
                if size <= space || notes.len() < 2 {
                    break;
                }
                let items: Vec<SourceItem> = notes.iter().map(Line::to_item).collect();
                let refs: Vec<&SourceItem> = items.iter().collect();
                let parts = chunks(&refs, self.chunk_budget(), counter);
                let n = parts.len() as u64;
                let share = (space / n).max(8);
                let mut next = Vec::new();
                for (k, part) in parts.iter().enumerate() {
                    let stage = format!("reduce {round}.{}/{}", k + 1, n);
                    let mut lines = run.map(&stage, part, words_for(share), share);
                    // A reduced line stands for all its inputs' items.
                    let sources: Vec<String> =
                        part.iter().flat_map(|i| i.sources.clone()).collect();
                    for l in &mut lines {
                        l.sources = spans(&sources);
                    }
                    next.extend(lines);
                }
                let next_size = counter.count(&render(&next)) as u64;
                if next_size >= size {
                    break;
                }
                notes = next;
                size = next_size;
            }
        }
        // Whole items verbatim around the notes, in order; then trimmed
        // to the target, last notes first.
        let mut lines: Vec<Line> = whole_lines.clone();
        lines.extend(notes);
        lines.sort_by_key(|l| l.order);
        let mut trimmed = 0;
        while counter.count(&render(&lines)) as u64 > target {
            let Some(pos) = lines.iter().rposition(|l| !l.verbatim) else {
                break;
            };
            lines.remove(pos);
            trimmed += 1;
        }
        let text = render(&lines);
        let tokens = counter.count(&text) as u64;
        let mut stages = run.stages.into_inner();
        // The check: every whole item is there, word for word, and the
        // summary is within its target.
        let missing = whole
            .iter()
            .filter(|i| !text.contains(&i.text.replace('\n', " ")))
            .count();
        if missing > 0 || tokens > target {
            let mut out = self.fallback.summarize(items, target, counter)?;
            stages.push(Stage {
                stage: "check".into(),
                by: "extractive".into(),
                items: items.len(),
                tokens_in: input_tokens,
                tokens_out: out.tokens,
                fell_back: Some(format!(
                    "the staged summary failed its check ({missing} kept items missing, {tokens} of {target} tokens)"
                )),
            });
            out.audit.stages = stages;
            return Ok(out);
        }
        if trimmed > 0 {
            stages.push(Stage {
                stage: "trim".into(),
                by: "mnemon".into(),
                items: trimmed,
                tokens_in: 0,
                tokens_out: tokens,
                fell_back: None,
            });
        }
        let mut audit = Audit::default();
        for (k, i) in items.iter().enumerate() {
            if keep_whole(k, i) {
                audit.kept_verbatim.extend(i.sources.iter().cloned());
            } else {
                audit.summarized.extend(i.sources.iter().cloned());
            }
        }
        audit.stages = stages;
        Ok(Summary {
            lines,
            text,
            tokens,
            input_tokens,
            target,
            audit,
        })
    }
}

/// About how many words `tokens` tokens hold.
fn words_for(tokens: u64) -> u64 {
    (tokens * 3 / 4).max(5)
}

/// The span of ids a line written by the model stands for: per kind of
/// id (`o` operations, `m` messages), the first and the last, as `o3-o41`.
/// The model's sentences mix their inputs, so a line cannot name its
/// sources one by one; a span keeps the line short and says where to look
/// (the audit lists every id summarized). Ids that are not a letter and a
/// number are kept as they are. Already-spanned ids widen the span.
pub(crate) fn spans(ids: &[String]) -> Vec<String> {
    let mut bounds: std::collections::BTreeMap<char, (u64, u64)> = Default::default();
    let mut other: Vec<String> = Vec::new();
    for id in ids {
        for part in id.split('-') {
            let mut chars = part.chars();
            match (chars.next(), chars.as_str().parse::<u64>()) {
                (Some(p), Ok(n)) if p.is_ascii_alphabetic() => {
                    let b = bounds.entry(p).or_insert((n, n));
                    b.0 = b.0.min(n);
                    b.1 = b.1.max(n);
                }
                _ => {
                    if !other.contains(id) {
                        other.push(id.clone());
                    }
                    break;
                }
            }
        }
    }
    let mut out: Vec<String> = bounds
        .into_iter()
        .map(|(p, (lo, hi))| {
            if lo == hi {
                format!("{p}{lo}")
            } else {
                format!("{p}{lo}-{p}{hi}")
            }
        })
        .collect();
    out.extend(other);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_spans() {
        let ids: Vec<String> = ["o1", "o2", "o3", "m7", "o5", "m8", "s-x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(spans(&ids), vec!["m7-m8", "o1-o5", "s-x"]);
        let merged = spans(&["o1-o3".to_string(), "o9".to_string(), "m2".to_string()]);
        assert_eq!(merged, vec!["m2", "o1-o9"]);
    }

    #[test]
    fn notes_are_read_from_any_list_style() {
        let notes = note_lines("Here:\n- first fact [o1,o2]\n2. second fact\n* third\n\n-");
        assert_eq!(notes, vec!["first fact", "second fact", "third"]);
    }
}
