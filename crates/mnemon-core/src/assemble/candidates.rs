//! Turning memory into candidates, each section in its order of preference.

use super::Candidate;
use crate::engine::live::operation_line;
use crate::memory::{DecisionRecord, Entity, HotContext, Message, Operation};

/// The hot context as one candidate: it is included whole or not at all.
pub fn hot(h: &HotContext) -> Vec<Candidate> {
    if h.items.is_empty() {
        return Vec::new();
    }
    vec![Candidate {
        id: format!("hot@{}", h.version),
        provenance: h.items.iter().map(|i| i.id.clone()).collect(),
        text: h.to_markdown().trim_end().to_string(),
        score: 1.0,
        order: 0,
        role: None,
        excerpt: None,
        group: None,
    }]
}

/// Operations, newest preferred, shown oldest first.
pub fn operations(newest_first: &[Operation]) -> Vec<Candidate> {
    newest_first
        .iter()
        .map(|o| Candidate {
            id: format!("o{}", o.seq),
            provenance: Vec::new(),
            text: operation_line(o),
            score: o.importance,
            order: o.seq,
            role: None,
            excerpt: None,
            group: None,
        })
        .collect()
}

/// Messages, newest preferred, shown oldest first.
pub fn messages(newest_first: &[Message]) -> Vec<Candidate> {
    newest_first
        .iter()
        .map(|m| Candidate {
            id: format!("m{}", m.seq),
            provenance: Vec::new(),
            text: m.content.clone(),
            score: m.importance,
            order: m.seq,
            role: Some(m.role),
            excerpt: None,
            group: None,
        })
        .collect()
}

/// A document split at its `## ` headings; the top blocks are preferred.
#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: pushed above"
)]
pub fn document(name: &str, text: &str) -> Vec<Candidate> {
    let mut blocks: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") || blocks.is_empty() {
            blocks.push(String::new());
        }
        let b = blocks.last_mut().expect("pushed above");
        if !b.is_empty() {
            b.push('\n');
        }
        b.push_str(line);
    }
    blocks
        .into_iter()
        .map(|b| b.trim_end().to_string())
        .filter(|b| !b.trim().is_empty())
        .enumerate()
        .map(|(i, text)| Candidate {
            id: format!("{name}#{i}"),
            provenance: vec![name.to_string()],
            text,
            score: 1.0,
            order: i as i64,
            role: None,
            excerpt: None,
            group: None,
        })
        .collect()
}

/// Summary lines, newest preferred, shown in order.
pub fn summary(text: &str) -> Vec<Candidate> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .iter()
        .enumerate()
        .rev()
        .map(|(i, l)| Candidate {
            id: format!("summary#{i}"),
            provenance: crate::compress::Line::parse(l, i as i64)
                .map(|l| l.sources)
                .unwrap_or_default(),
            text: l.to_string(),
            score: 0.5,
            order: i as i64,
            role: None,
            excerpt: None,
            group: None,
        })
        .collect()
}

/// Decision records, newest preferred.
pub fn decisions(newest_first: &[DecisionRecord]) -> Vec<Candidate> {
    newest_first
        .iter()
        .enumerate()
        .map(|(i, d)| Candidate {
            id: d.id.clone(),
            provenance: Vec::new(),
            text: format!(
                "- {} {} ({}): {}",
                d.id,
                d.title,
                d.status.name(),
                d.decision
            ),
            score: 1.0,
            order: -(i as i64),
            role: None,
            excerpt: None,
            group: None,
        })
        .collect()
}

/// Entities, most urgent preferred.
pub fn entities(most_urgent_first: &[Entity]) -> Vec<Candidate> {
    most_urgent_first
        .iter()
        .map(|e| Candidate {
            id: format!("#{}", e.number),
            provenance: Vec::new(),
            text: format!(
                "- {} ({}, priority {})",
                e.label(),
                e.status.name(),
                e.priority
            ),
            score: 1.0 - e.priority as f64 / 10.0,
            order: e.number as i64,
            role: None,
            excerpt: None,
            group: None,
        })
        .collect()
}

/// Retrieved fragments, in the order the allocator should take them: by
/// relevance, a record longer than a chat turn usually is paying for its
/// length. Packing a budget is a knapsack: a record of a thousand tokens
/// must be more relevant to earn the space of a dozen turns that may each
/// be the one asked about. Up to `TURN_TOKENS` a record costs as one
/// turn: dividing every record by its length sent the shortest ("Wow,
/// Mel!", "ok, thanks") ahead of the turn that answers, whose relevance
/// was only a little higher. Past it the cost counts at its square root.
/// Each fragment carries an excerpt of its best sentences for `query`, for
/// when the whole record does not fit; it is shown in relevance order.
///
/// A fragment is its record's text alone, without a list bullet or an id
/// label: on a chat of 20-token turns a `[m417] ` label took 3 tokens a
/// line, an eighth of a 16K context, and without it recall rose at every
/// budget on every held-back set (BENCHMARKS.md, 2026-11-29). The id
/// stays with the item (`ItemOut::id`, which `context --json`, the API and
/// MCP's json format return), for `forget` and for citing; `search` shows
/// it too.
///
/// For a question about time ("when", "how long before", "last week") the
/// records of the logs are shown under their day, `### 2024-03-15` (days
/// in the order of their best record): the
/// answer is often the day something was said, which only the record's
/// time holds. One heading per day rather than a date on every line: the
/// date cost 8 tokens a line, and a dated 16K context held a fifth fewer
/// turns than an undated one.
pub fn fragments(ranked: &[super::retrieve::Ranked], query: &str) -> Vec<Candidate> {
    let terms = super::retrieve::query_terms(query);
    let dated = super::retrieve::asks_about_time(query);
    let day = |r: &super::retrieve::Ranked| {
        (dated && super::retrieve::LOG_SOURCES.contains(&r.hit.source))
            .then(|| r.hit.at.rfc3339()[..10].to_string())
    };
    let mut out: Vec<(f64, Candidate)> = ranked
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            // A document is sent as contexts send it: only what it says.
            // An empty template ("Nothing is planned yet") matches words
            // like "step" and would fill the budget with headings.
            let lean;
            let text = if r.hit.source == super::retrieve::HitSource::Document {
                lean = crate::memory::episodic::lean(&r.hit.text)?;
                &lean
            } else {
                &r.hit.text
            };
            let group = day(r);
            // Verbatim, newlines included: code, lists and quoted text
            // mean what they say only as written.
            let excerpt = best_sentences(text, &terms, EXCERPT_SENTENCES).map(|e| {
                Box::new(Candidate {
                    id: r.hit.id.clone(),
                    provenance: vec![r.hit.id.clone()],
                    text: e,
                    score: r.score,
                    order: i as i64,
                    role: None,
                    excerpt: None,
                    group: group.clone(),
                })
            });
            let c = Candidate {
                id: r.hit.id.clone(),
                provenance: Vec::new(),
                text: text.to_string(),
                score: r.score,
                order: i as i64,
                role: None,
                excerpt,
                group,
            };
            Some((
                r.score / (approximate_tokens(&c.text) / TURN_TOKENS).max(1.0).sqrt(),
                c,
            ))
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.order.cmp(&b.1.order)));
    out.into_iter().map(|(_, c)| c).collect()
}

/// The length of a long chat turn, in tokens: records up to it compete by
/// relevance alone. Chosen on the development sets of BENCHMARKS.md
/// (2026-11-26): 40 to 80 kept BEAM's long assistant answers from
/// crowding out the user's short facts, and 80 lost least on LoCoMo's
/// turns of a sentence or two.
const TURN_TOKENS: f64 = 80.0;

/// A cheap stand-in for a line's tokens, good enough to compare records
/// (the allocator counts exactly what it includes).
fn approximate_tokens(text: &str) -> f64 {
    (text.len() as f64 / super::BYTES_PER_TOKEN as f64).max(1.0) + 2.0
}

/// An excerpt holds at most this many sentences.
const EXCERPT_SENTENCES: usize = 2;

/// The sentences of `text` that match the most query words (as prefixes,
/// the way retrieval matches), at most `max`, in their original order and
/// joined by ` … `. `None` when no sentence matches or nothing would be cut.
pub fn best_sentences(text: &str, terms: &[String], max: usize) -> Option<String> {
    let sentences = crate::compress::sentences::split(text);
    if sentences.len() < 2 || terms.is_empty() {
        return None;
    }
    let mut scored: Vec<(usize, usize)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let words = crate::compress::sentences::terms(s);
            let hits = terms
                .iter()
                .filter(|t| words.iter().any(|w| w.starts_with(t.as_str())))
                .count();
            (hits, i)
        })
        .filter(|(hits, _)| *hits > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(max);
    if scored.is_empty() || scored.len() == sentences.len() {
        return None;
    }
    scored.sort_by_key(|(_, i)| *i);
    Some(
        scored
            .iter()
            .map(|(_, i)| sentences[*i])
            .collect::<Vec<_>>()
            .join(" … "),
    )
}
