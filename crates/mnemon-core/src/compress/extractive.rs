//! The extractive summarizer: keeps whole sentences, chosen by salience.
//!
//! Salience is a weighted sum: 0.45 for centrality (TF-IDF cosine to the
//! input's centroid, normalised to the best sentence), 0.25 for the item's
//! importance, 0.15 for recency (later is higher) and 0.15 for specificity
//! (numbers, `#ids`, names). Sentences are taken in salience order, skipping
//! near-duplicates (term Jaccard of 0.7 or more with a kept sentence), while
//! they fit; the kept sentences are then put back in chronological order.
//! Ties break on position, so the same input always gives the same summary.

use std::collections::{BTreeMap, BTreeSet};

use super::sentences::{density, jaccard, split, term_set, terms};
use super::{
    Audit, CompressError, Line, SEED_RATIO_PPM, SourceItem, Summarizer, Summary, render,
    verbatim_tokens,
};
use crate::tokens::TokenCounter;

/// Jaccard similarity at or above which a sentence repeats a kept one.
const DUPLICATE: f64 = 0.7;

/// The embedded summarizer. Its output never exceeds `ratio_ppm` of its
/// input (config's `session.compression_target_ratio`, the seeds' 0.7 by
/// default) unless the pinned items alone need more.
#[derive(Debug, Clone, Copy)]
pub struct Extractive {
    ratio_ppm: u64,
}

impl Default for Extractive {
    fn default() -> Self {
        Extractive {
            ratio_ppm: SEED_RATIO_PPM,
        }
    }
}

impl Extractive {
    /// Output at most `ratio_ppm` millionths of the input.
    pub fn with_ratio(ratio_ppm: u64) -> Extractive {
        Extractive {
            ratio_ppm: ratio_ppm.clamp(1, 1_000_000),
        }
    }
}

struct Sentence<'a> {
    item: usize,
    index: usize,
    text: &'a str,
    terms: Vec<String>,
    score: f64,
}

impl Summarizer for Extractive {
    fn name(&self) -> &str {
        "extractive"
    }

    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: checked non-empty"
    )]
    fn summarize(
        &self,
        items: &[SourceItem],
        target: u64,
        counter: &dyn TokenCounter,
    ) -> Result<Summary, CompressError> {
        let input_tokens = verbatim_tokens(items, counter);
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&i| (items[i].order, i));

        let pinned_lines: Vec<Line> = order
            .iter()
            .filter(|&&i| items[i].pinned)
            .map(|&i| Line::verbatim(&items[i]))
            .collect();
        let pinned_tokens = if pinned_lines.is_empty() {
            0
        } else {
            counter.count(&render(&pinned_lines)) as u64
        };
        if pinned_tokens > target {
            return Err(CompressError::PinnedExceedTarget {
                count: pinned_lines.len(),
                pinned_tokens,
                target,
            });
        }
        // The configured ratio, unless the pinned items need more.
        let ratio_cap = (input_tokens as u128 * self.ratio_ppm as u128 / 1_000_000) as u64;
        let cap = target.min(ratio_cap.max(pinned_tokens));

        let mut sentences = score(items, &order);
        sentences.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(items[a.item].order.cmp(&items[b.item].order))
                .then(a.index.cmp(&b.index))
        });

        // Greedy by salience, estimating each line's cost; the exact count
        // of the rendered text is checked afterwards.
        let mut chosen: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let sets: Vec<Vec<&str>> = sentences.iter().map(|s| term_set(&s.terms)).collect();
        let mut kept_terms: Vec<&[&str]> = Vec::new();
        let mut duplicates = 0;
        let mut estimate = pinned_tokens;
        let mut by_score: Vec<(usize, usize)> = Vec::new();
        for (s, set) in sentences.iter().zip(&sets) {
            if kept_terms.iter().any(|t| jaccard(t, set) >= DUPLICATE) {
                duplicates += 1;
                continue;
            }
            let cost = counter.count(s.text) as u64 + 4;
            if estimate + cost > cap {
                continue;
            }
            estimate += cost;
            kept_terms.push(set);
            chosen.entry(s.item).or_default().insert(s.index);
            by_score.push((s.item, s.index));
        }

        let texts: Vec<Vec<&str>> = items.iter().map(|i| split(&i.text)).collect();
        loop {
            let lines = assemble(items, &order, &texts, &chosen);
            let text = render(&lines);
            let tokens = counter.count(&text) as u64;
            if tokens <= cap || by_score.is_empty() {
                let audit = audit(items, &texts, &chosen, duplicates);
                return Ok(Summary {
                    lines,
                    text,
                    tokens,
                    input_tokens,
                    target,
                    audit,
                });
            }
            // Over by the join effects of the estimate: drop the least
            // salient kept sentence and count again.
            let (item, index) = by_score.pop().expect("checked non-empty");
            if let Some(set) = chosen.get_mut(&item) {
                set.remove(&index);
                if set.is_empty() {
                    chosen.remove(&item);
                }
            }
        }
    }
}

fn score<'a>(items: &'a [SourceItem], order: &[usize]) -> Vec<Sentence<'a>> {
    let mut out: Vec<Sentence<'a>> = Vec::new();
    for (rank, &i) in order.iter().enumerate() {
        if items[i].pinned {
            continue;
        }
        for (index, text) in split(&items[i].text).into_iter().enumerate() {
            out.push(Sentence {
                item: i,
                index,
                text,
                terms: terms(text),
                score: rank as f64,
            });
        }
    }
    if out.is_empty() {
        return out;
    }
    // Document frequency and the centroid of TF-IDF vectors.
    let n = out.len() as f64;
    let mut df: BTreeMap<&str, f64> = BTreeMap::new();
    for s in &out {
        let uniq: BTreeSet<&str> = s.terms.iter().map(String::as_str).collect();
        for t in uniq {
            *df.entry(t).or_default() += 1.0;
        }
    }
    let idf = |t: &str| (1.0 + n / df.get(t).copied().unwrap_or(1.0)).ln();
    let vectors: Vec<BTreeMap<&str, f64>> = out
        .iter()
        .map(|s| {
            let mut v: BTreeMap<&str, f64> = BTreeMap::new();
            for t in &s.terms {
                *v.entry(t.as_str()).or_default() += 1.0;
            }
            for (t, w) in v.iter_mut() {
                *w *= idf(t);
            }
            v
        })
        .collect();
    let mut centroid: BTreeMap<&str, f64> = BTreeMap::new();
    for v in &vectors {
        for (t, w) in v {
            *centroid.entry(t).or_default() += w / n;
        }
    }
    let norm = |v: &BTreeMap<&str, f64>| v.values().map(|w| w * w).sum::<f64>().sqrt();
    let cnorm = norm(&centroid).max(f64::MIN_POSITIVE);
    let centrality: Vec<f64> = vectors
        .iter()
        .map(|v| {
            let dot: f64 = v
                .iter()
                .map(|(t, w)| w * centroid.get(t).copied().unwrap_or(0.0))
                .sum();
            dot / (norm(v).max(f64::MIN_POSITIVE) * cnorm)
        })
        .collect();
    let best = centrality.iter().copied().fold(0.0, f64::max).max(1e-9);
    let last_rank = order.len().saturating_sub(1).max(1) as f64;
    for (s, c) in out.iter_mut().zip(centrality) {
        let recency = s.score / last_rank;
        let importance = items[s.item].importance.clamp(0.0, 1.0);
        s.score = 0.45 * (c / best) + 0.25 * importance + 0.15 * recency + 0.15 * density(s.text);
    }
    out
}

/// Kept sentences grouped back into one line per item, in chronological
/// order, pinned items whole.
fn assemble(
    items: &[SourceItem],
    order: &[usize],
    texts: &[Vec<&str>],
    chosen: &BTreeMap<usize, BTreeSet<usize>>,
) -> Vec<Line> {
    let mut lines = Vec::new();
    for &i in order {
        let item = &items[i];
        if item.pinned {
            lines.push(Line::verbatim(item));
            continue;
        }
        let Some(set) = chosen.get(&i) else { continue };
        let all = set.len() == texts[i].len();
        let text = if all {
            item.text.clone()
        } else {
            set.iter()
                .map(|&k| texts[i][k])
                .collect::<Vec<_>>()
                .join(" ")
        };
        lines.push(Line {
            text,
            sources: item.sources.clone(),
            verbatim: all,
            pinned: false,
            order: item.order,
        });
    }
    lines
}

fn audit(
    items: &[SourceItem],
    texts: &[Vec<&str>],
    chosen: &BTreeMap<usize, BTreeSet<usize>>,
    duplicates_removed: usize,
) -> Audit {
    let mut a = Audit {
        duplicates_removed,
        ..Audit::default()
    };
    for (i, item) in items.iter().enumerate() {
        let ids = item.sources.iter().cloned();
        if item.pinned {
            a.kept_verbatim.extend(ids);
            continue;
        }
        match chosen.get(&i) {
            Some(set) if set.len() == texts[i].len() => a.kept_verbatim.extend(ids),
            Some(_) => a.summarized.extend(ids),
            None => a.dropped.extend(ids),
        }
    }
    a
}
