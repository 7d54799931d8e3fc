//! Context assembly: the best context that fits one exact token budget.
//!
//! One allocator serves every tier. A [`BudgetPlan`] lists sections with a
//! priority, a share and whether they are required; each section offers
//! [`Candidate`]s in its own order of preference (newest operations first,
//! best-ranked fragments first, a document's sections top down). The
//! allocator fills required sections whole, then each section up to its
//! share in priority order, then lets unused space flow to the others by
//! priority. The result is rendered and counted with the target model's
//! tokenizer (chat framing included for the messages format); while it is
//! over budget the last item added is taken out again, so the context never
//! exceeds the budget by a single token. No candidate id appears twice.

/// Bytes a token, for estimates that only compare or size things before
/// anything is counted: English text averages about four bytes a token in
/// the BPE vocabularies mnemon counts with. What is sent is counted exactly.
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// A text's tokens estimated at [`BYTES_PER_TOKEN`], plus `overhead` for
/// what is written around it (a label, a line break).
pub(crate) fn rough_tokens(text: &str, overhead: u64) -> u64 {
    text.len() as u64 / BYTES_PER_TOKEN + overhead
}

pub mod candidates;
pub mod fence;
pub mod index;
pub mod neighbours;
pub mod plan;
pub mod postings;
pub mod retrieve;
pub mod seam;
pub mod semantic;
pub mod speaker;
pub mod when;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

pub use plan::{BudgetPlan, PRESETS, PlanError, SectionKind, SectionPlan};

use crate::importance::Role;
use crate::tokens::{ChatFormat, ChatMessage, TokenCounter, count_chat};

/// Something a section may include.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Unique across the context (`o12`, `m7`, `DR-…`, `#15`, a hot id).
    pub id: String,
    /// Where the text came from, when that differs from `id`.
    pub provenance: Vec<String>,
    pub text: String,
    pub score: f64,
    /// Position when displayed (chronological for logs).
    pub order: i64,
    /// For recent messages: who said it (the messages format sends it as is).
    pub role: Option<Role>,
    /// A shorter form with the same id (a fragment's best sentences), used
    /// when the whole item does not fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<Box<Candidate>>,
    /// A heading shared by the items shown under it (a fragment's day, for
    /// a question about time), written once before its group and costing
    /// once: a date on every line took a fifth of a dated context.
    /// Ungrouped items are shown first, then each group under its heading,
    /// groups in the order of their best item, so the best still leads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Markdown,
    Json,
    Messages,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            "messages" => Ok(Format::Messages),
            _ => Err(format!(
                "unknown format `{s}`: use markdown, json or messages"
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemOut {
    pub id: String,
    pub provenance: Vec<String>,
    /// The item's line with its line break, as the allocator counted it:
    /// what including it cost. Counting the bare text again would give a
    /// figure that appears nowhere in the context and double the counting.
    pub tokens: u64,
    pub score: f64,
    pub text: String,
    /// The heading the item is shown under, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SectionOut {
    pub kind: SectionKind,
    /// The section rendered on its own.
    pub tokens: u64,
    pub items: Vec<ItemOut>,
    /// Candidates offered but left out for space.
    pub left_out: usize,
}

/// An assembled context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assembled {
    pub plan: String,
    pub budget: u64,
    /// Exact tokens of what is sent: the markdown, or the chat request.
    pub tokens: u64,
    pub format: Format,
    /// The markdown (for `markdown` and `json`).
    pub text: String,
    /// The chat messages (for `messages`): memory as a system message, then
    /// the recent turns.
    pub messages: Vec<ChatMessage>,
    pub sections: Vec<SectionOut>,
    /// What the caller should know about how this context was made (the
    /// embedding model failed, say, and fragments were found by words
    /// only). Never part of what is sent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssembleError {
    #[error(
        "the required sections ({sections}) need {need} tokens but the budget is {budget}; give a budget of at least {need}, or make them optional in the plan"
    )]
    RequiredDoNotFit {
        need: u64,
        budget: u64,
        sections: String,
    },
}

/// What to assemble with.
#[derive(Debug)]
pub struct Assembler<'a> {
    pub counter: &'a dyn TokenCounter,
    pub chat: ChatFormat,
    pub format: Format,
}

type Chosen<'c> = BTreeMap<SectionKind, Vec<&'c Candidate>>;

/// Fewer tokens than any rendered item takes with its newline.
const MIN_ITEM_TOKENS: u64 = 2;

/// The smallest budget whose usable part (what the plan's reserve leaves)
/// holds `tokens`. The reserve grows with the budget, so adding today's
/// reserve to `tokens` can fall short by the reserve on the difference.
fn smallest_budget(tokens: u64, reserve_ppm: u32) -> u64 {
    // A plan's reserve is under 100 % (`BudgetPlan::validate`).
    let ppm = u128::from(reserve_ppm.min(999_999));
    let usable = |b: u128| b - b * ppm / 1_000_000;
    let want = u128::from(tokens);
    let mut b = (want * 1_000_000).div_ceil(1_000_000 - ppm);
    while b > 0 && usable(b - 1) >= want {
        b -= 1;
    }
    while usable(b) < want {
        b += 1;
    }
    u64::try_from(b).unwrap_or(u64::MAX)
}

impl Assembler<'_> {
    /// Assembles `offers` (candidates per section, most preferred first)
    /// under `plan` within `budget` tokens.
    pub fn assemble(
        &self,
        plan: &BudgetPlan,
        budget: u64,
        offers: &BTreeMap<SectionKind, Vec<Candidate>>,
    ) -> Result<Assembled, AssembleError> {
        let usable = budget - budget * plan.reserve_ppm as u64 / 1_000_000;
        let mut sections: Vec<&SectionPlan> = plan.sections.iter().collect();
        sections.sort_by_key(|s| (s.priority, s.kind));
        let empty = Vec::new();
        let offer = |k: SectionKind| offers.get(&k).unwrap_or(&empty);

        let mut chosen: Chosen<'_> = BTreeMap::new();
        let mut used_ids: BTreeSet<&str> = BTreeSet::new();
        // The order items went in, so the exact fit removes the last first.
        let mut stack: Vec<(SectionKind, usize)> = Vec::new();
        // Each offer is weighed up to four times (its share, the leftovers,
        // the excerpts' pass, and once more when taken); its line is
        // rendered and looked up in the counter's cache only the first.
        // Offers and their excerpts stay where they are for the whole
        // call, so their addresses name them.
        let costs: std::cell::RefCell<HashMap<*const Candidate, u64>> = Default::default();
        let cost = |c: &Candidate| {
            let known = costs.borrow().get(&std::ptr::from_ref(c)).copied();
            known.unwrap_or_else(|| {
                let n = self.line_cost(c);
                costs.borrow_mut().insert(std::ptr::from_ref(c), n);
                n
            })
        };
        let heading = |k: SectionKind| k.heading().map_or(2, |h| self.counter.count(h) as u64 + 2);
        let group_cost = |g: &str| self.counter.count(&format!("{}\n", group_heading(g))) as u64;
        // The groups each section has begun, whose headings are paid for.
        let mut groups_in: BTreeSet<(SectionKind, &str)> = BTreeSet::new();

        // Required sections go in whole.
        let mut required = Vec::new();
        for s in sections.iter().filter(|s| s.required) {
            for c in offer(s.kind) {
                if used_ids.insert(&c.id) {
                    chosen.entry(s.kind).or_default().push(c);
                    if let Some(g) = &c.group {
                        groups_in.insert((s.kind, g));
                    }
                }
            }
            required.push(s.kind.name());
        }
        let need = self.count(&chosen, plan);
        if need > usable {
            return Err(AssembleError::RequiredDoNotFit {
                need: smallest_budget(need, plan.reserve_ppm),
                budget,
                sections: required.join(", "),
            });
        }
        // The fence comes with the first item; required items brought it.
        let fence_cost = self
            .counter
            .count(&format!("{}\n{}", fence::OPEN, fence::CLOSE)) as u64
            + 1;
        let mut estimate = if need == 0 { fence_cost } else { need };

        // Each section up to its share, then the leftovers by priority,
        // then what space is left to excerpts: an excerpt of one record
        // must not take the space a whole lesser one would fill.
        for pass in 0..3 {
            for s in sections.iter().filter(|s| !s.required) {
                let cap = if pass == 0 {
                    (usable * s.share_ppm as u64 / 1_000_000).max(s.min_tokens)
                } else {
                    u64::MAX
                };
                let mut section_cost: u64 = chosen.get(&s.kind).map_or(0, |v| {
                    v.iter().map(|c| cost(c)).sum::<u64>() + heading(s.kind)
                }) + groups_in
                    .iter()
                    .filter(|(k, _)| *k == s.kind)
                    .map(|(_, g)| group_cost(g))
                    .sum::<u64>();
                for whole in offer(s.kind) {
                    // No item line is shorter than this; counting the rest
                    // of a long offer to reject each one is wasted work.
                    if usable.saturating_sub(estimate) < MIN_ITEM_TOKENS {
                        break;
                    }
                    if used_ids.contains(whole.id.as_str()) {
                        continue;
                    }
                    let head = if section_cost == 0 {
                        heading(s.kind)
                    } else {
                        0
                    } + whole
                        .group
                        .as_deref()
                        .filter(|g| !groups_in.contains(&(s.kind, *g)))
                        .map_or(0, group_cost);
                    let fits = |c: &Candidate| {
                        let add = cost(c) + head;
                        section_cost + add <= cap && estimate + add <= usable
                    };
                    // Shares go to whole items; an excerpt only takes
                    // space left over at the end. Counting an excerpt that
                    // is plainly too long (over 8 bytes a token, which no
                    // tokenizer mnemon uses comes near) is skipped: in the
                    // last pass most of a long offer is.
                    let room = usable.saturating_sub(estimate);
                    let Some(c) = std::iter::once(whole)
                        .filter(|_| pass < 2)
                        .chain(
                            whole
                                .excerpt
                                .as_deref()
                                .filter(|e| pass == 2 && e.text.len() as u64 / 8 <= room),
                        )
                        .find(|c| fits(c))
                    else {
                        if pass == 0 {
                            break;
                        }
                        continue;
                    };
                    let add = cost(c) + head;
                    section_cost += add;
                    estimate += add;
                    used_ids.insert(&c.id);
                    if let Some(g) = &c.group {
                        groups_in.insert((s.kind, g));
                    }
                    let v = chosen.entry(s.kind).or_default();
                    v.push(c);
                    stack.push((s.kind, v.len() - 1));
                }
            }
        }

        // Exact fit: counted as sent, trimmed from the last item added.
        loop {
            let tokens = self.count(&chosen, plan);
            if tokens <= usable {
                return Ok(self.output(plan, budget, tokens, &chosen, offers));
            }
            match stack.pop() {
                Some((kind, idx)) => {
                    if let Some(v) = chosen.get_mut(&kind) {
                        v.remove(idx);
                    }
                }
                None => {
                    return Err(AssembleError::RequiredDoNotFit {
                        need: smallest_budget(tokens, plan.reserve_ppm),
                        budget,
                        sections: required.join(", "),
                    });
                }
            }
        }
    }

    /// An item with the newline after it: exact for most lines, and
    /// remembered across calls by a memoizing counter.
    fn line_cost(&self, c: &Candidate) -> u64 {
        self.counter
            .count(&format!("{}\n", fence::neutralize(&c.text))) as u64
    }

    fn count(&self, chosen: &Chosen<'_>, plan: &BudgetPlan) -> u64 {
        match self.format {
            Format::Markdown | Format::Json => {
                count_pieces(self.counter, &pieces(chosen, plan, true))
            }
            Format::Messages => {
                // The memory message from its pieces (not rendered just to
                // be counted), the turns as count_chat counts them (it adds
                // the reply priming once).
                let memory = pieces(chosen, plan, false);
                // `messages` leaves the memory message out when its text is empty.
                let framing = if memory.iter().all(|(p, sep)| p.is_empty() && sep.is_empty()) {
                    0
                } else {
                    self.chat.tokens_per_message as u64
                        + self.counter.count("system") as u64
                        + count_pieces(self.counter, &memory)
                };
                framing + count_chat(self.counter, self.chat, &turns(chosen)) as u64
            }
        }
    }

    fn output(
        &self,
        plan: &BudgetPlan,
        budget: u64,
        tokens: u64,
        chosen: &Chosen<'_>,
        offers: &BTreeMap<SectionKind, Vec<Candidate>>,
    ) -> Assembled {
        let sections = display_order(chosen, plan)
            .into_iter()
            .map(|(kind, items)| {
                let one: Chosen<'_> = [(kind, items.clone())].into_iter().collect();
                SectionOut {
                    kind,
                    tokens: count_pieces(self.counter, &pieces(&one, plan, true)),
                    left_out: offers.get(&kind).map_or(0, Vec::len) - items.len(),
                    items: items
                        .iter()
                        .map(|c| ItemOut {
                            id: c.id.clone(),
                            provenance: c.provenance.clone(),
                            tokens: self.line_cost(c),
                            score: c.score,
                            text: fence::neutralize(&c.text).into_owned(),
                            group: c.group.clone(),
                        })
                        .collect(),
                }
            })
            .collect();
        let (text, msgs) = match self.format {
            Format::Messages => (String::new(), messages(chosen, plan)),
            _ => (render_markdown(chosen, plan, true), Vec::new()),
        };
        Assembled {
            plan: plan.name.clone(),
            budget,
            tokens,
            format: self.format,
            text,
            messages: msgs,
            sections,
            warnings: Vec::new(),
        }
    }
}

/// Sections in reading order (hot context first, recent turns last), each
/// item list sorted for display.
fn display_order<'c>(
    chosen: &Chosen<'c>,
    _plan: &BudgetPlan,
) -> Vec<(SectionKind, Vec<&'c Candidate>)> {
    SectionKind::ALL
        .into_iter()
        .filter_map(|k| {
            let v = chosen.get(&k)?;
            if v.is_empty() {
                return None;
            }
            let mut v = v.clone();
            // Ungrouped items first (an item after a group would read as
            // part of it), then groups by their best item.
            let mut lead: BTreeMap<&str, i64> = BTreeMap::new();
            for c in &v {
                if let Some(g) = c.group.as_deref() {
                    let o = lead.entry(g).or_insert(c.order);
                    *o = (*o).min(c.order);
                }
            }
            let key = |c: &Candidate| match c.group.as_deref() {
                None => (false, c.order, c.order),
                Some(g) => (true, lead[g], c.order),
            };
            v.sort_by_key(|c| key(c));
            Some((k, v))
        })
        .collect()
}

/// The markdown as pieces, each with the newlines that follow it: section
/// headings, items, and the blank lines between sections. Joined, they are
/// the text; their counts add up to its count when the tokenizer splits at
/// line starts (see [`count_pieces`]).
fn pieces(
    chosen: &Chosen<'_>,
    plan: &BudgetPlan,
    with_messages: bool,
) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for (kind, items) in display_order(chosen, plan) {
        if kind == SectionKind::RecentMessages && !with_messages {
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.1 = "\n\n";
        }
        if let Some(h) = kind.heading() {
            out.push((h.to_string(), "\n"));
        }
        // A document's blocks keep the blank line before each heading.
        let sep = match kind {
            SectionKind::ProjectState | SectionKind::WorkPlan => "\n\n",
            _ => "\n",
        };
        let mut group: Option<&str> = None;
        // Whether the last piece is an item of this section (not a heading).
        let mut after_item = false;
        for c in items {
            if let Some(g) = c.group.as_deref().filter(|g| group != Some(*g)) {
                out.push((group_heading(g), "\n"));
                group = Some(g);
                after_item = false;
            }
            let text = match (kind, c.role) {
                (SectionKind::RecentMessages, Some(r)) => {
                    format!("{}: {}", r.name(), fence::neutralize(&c.text))
                }
                _ => fence::neutralize(&c.text).into_owned(),
            };
            // A fragment of several lines stands apart, between blank
            // lines: without a label, that is where a record begins and ends.
            let sep = if kind == SectionKind::Fragments && text.contains('\n') {
                if let Some(last) = out.last_mut().filter(|_| after_item) {
                    last.1 = "\n\n";
                }
                "\n\n"
            } else {
                sep
            };
            out.push((text, sep));
            after_item = true;
        }
    }
    // Everything that came from memory sits inside one fence.
    if let Some(last) = out.last_mut() {
        last.1 = "\n";
        out.insert(0, (fence::OPEN.to_string(), "\n"));
        out.push((fence::CLOSE.to_string(), ""));
    }
    out
}

/// The line a group of items is shown under: a heading one level below
/// the section's.
fn group_heading(group: &str) -> String {
    format!("### {}", fence::neutralize(group))
}

fn render_markdown(chosen: &Chosen<'_>, plan: &BudgetPlan, with_messages: bool) -> String {
    let mut text = String::new();
    for (piece, sep) in pieces(chosen, plan, with_messages) {
        text.push_str(&piece);
        text.push_str(sep);
    }
    text
}

/// Exact tokens of the joined pieces. With a tokenizer that splits at line
/// starts, the sum of each piece's count (newlines included), which a
/// [`crate::tokens::Memo`] answers from memory; otherwise the whole text
/// counted once.
fn count_pieces(counter: &dyn TokenCounter, pieces: &[(String, &'static str)]) -> u64 {
    let safe = counter.splits_at_line_starts()
        && pieces
            .iter()
            .zip(pieces.iter().skip(1))
            .all(|((_, sep), (next, _))| {
                !sep.is_empty()
                    && next
                        .chars()
                        .next()
                        .is_some_and(|c| !c.is_whitespace() && c != '/')
            });
    if safe {
        pieces
            .iter()
            .map(|(p, sep)| {
                if sep.is_empty() {
                    counter.count(p) as u64
                } else {
                    counter.count(&format!("{p}{sep}")) as u64
                }
            })
            .sum()
    } else {
        let mut text = String::new();
        for (p, sep) in pieces {
            text.push_str(p);
            text.push_str(sep);
        }
        counter.count(&text) as u64
    }
}

fn messages(chosen: &Chosen<'_>, plan: &BudgetPlan) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    let memory = render_markdown(chosen, plan, false);
    if !memory.is_empty() {
        out.push(ChatMessage {
            role: "system".into(),
            content: memory,
            name: None,
        });
    }
    out.extend(turns(chosen));
    out
}

/// The recent turns as chat messages, oldest first.
fn turns(chosen: &Chosen<'_>) -> Vec<ChatMessage> {
    let mut turns = chosen
        .get(&SectionKind::RecentMessages)
        .cloned()
        .unwrap_or_default();
    turns.sort_by_key(|c| c.order);
    turns
        .into_iter()
        .map(|c| ChatMessage {
            role: c.role.unwrap_or(Role::User).name().to_string(),
            content: c.text.clone(),
            name: None,
        })
        .collect()
}

#[cfg(test)]
mod budget_tests {
    use super::smallest_budget;

    #[test]
    fn the_named_budget_is_the_least_whose_usable_part_holds_the_tokens() {
        let usable = |b: u64, ppm: u64| b - b * ppm / 1_000_000;
        for ppm in [0u32, 1, 100_000, 150_000, 333_333, 999_999] {
            for tokens in [0u64, 1, 7, 635, 646, 10_000, 1_000_003] {
                let b = smallest_budget(tokens, ppm);
                assert!(usable(b, ppm.into()) >= tokens, "{tokens} at {ppm}: {b}");
                assert!(
                    b == 0 || usable(b - 1, ppm.into()) < tokens,
                    "{tokens} at {ppm}: {b}"
                );
            }
        }
    }
}
