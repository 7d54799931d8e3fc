//! `what should I send`: context assembly over the engine's memory.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Engine, EngineError, EngineStore};
use crate::assemble::neighbours::{filled_with_exchanges, with_neighbours};
use crate::assemble::retrieve::{
    Budget, HitSource, Ranked, SearchStore, offered_tokens, raise, retrieve,
};
use crate::assemble::rough_tokens;
use crate::assemble::semantic;
use crate::assemble::speaker;
use crate::assemble::{
    Assembled, Assembler, BudgetPlan, Candidate, Format, SectionKind, candidates,
};
use crate::memory::{DocKind, EntityQuery, EntityStatus, MessageQuery, StoreError, StoreResult};
use crate::tokens::{ChatFormat, Memo};

/// What to assemble.
#[derive(Debug, Clone)]
pub struct ContextRequest {
    pub plan: BudgetPlan,
    /// Defaults to the plan's own budget, else what the window has left.
    pub budget: Option<u64>,
    pub query: Option<String>,
    pub format: Format,
    pub chat: ChatFormat,
    /// Leave out the messages from this one on (by `seq`): a caller that
    /// sends the newest turns verbatim (the proxy) wants the older ones.
    pub messages_before: Option<u64>,
}

/// How many fragments retrieval offers the allocator: enough to fill the
/// budget with short records, at least 200, so a short record that
/// matches well but ranks below long ones is still there to be packed.
/// With meaning on, it is also how deep each list goes before fusion: a
/// turn deep in one list and high in the other needs both to rank well.
/// One per 15 tokens (rather than 25) raised recall at 4K and 8K on the
/// development parts of REALTALK (+.006, +.007), LoCoMo (+.001 at 4K) and
/// BEAM (+.015 at 4K), and lowered it nowhere; one per 10 lost at 8K on
/// LoCoMo (BENCHMARKS.md, 2026-11-28).
fn fragment_limit(budget: u64) -> usize {
    ((budget / 15) as usize).max(200)
}

/// The tokens `plan` leaves its fragments, estimated from what the other
/// sections offer (four bytes a token): required sections whole, the rest
/// up to their shares. Leftovers go to the question's fragments first
/// (`BudgetPlan::led_by_question`), so this is what retrieval should fill.
fn room_left(
    plan: &BudgetPlan,
    offers: &BTreeMap<SectionKind, Vec<Candidate>>,
    budget: u64,
) -> u64 {
    let usable = budget - budget * u64::from(plan.reserve_ppm) / 1_000_000;
    let taken: u64 = plan
        .sections
        .iter()
        .filter(|s| s.kind != SectionKind::Fragments)
        .map(|s| {
            let offered: u64 = offers
                .get(&s.kind)
                .map_or(0, |v| v.iter().map(|c| rough_tokens(&c.text, 1)).sum());
            if s.required {
                offered
            } else {
                offered.min(usable * u64::from(s.share_ppm) / 1_000_000)
            }
        })
        .sum();
    usable.saturating_sub(taken)
}

/// The warning a context carries when the model could not embed its query.
fn meaning_is_off(e: &semantic::EmbedError) -> String {
    format!(
        "retrieval by meaning is off for this context: {e}; fragments were found by their words only"
    )
}

/// A query first embeds what has no vector among this many newest records
/// of each log: more than a turn or two writes. A large backlog (an
/// import) is `mnemon reindex`'s work; until then those records are found
/// by their words only.
pub const LIVE_BACKFILL: u64 = 64;

/// How much a record in the span a question names ("last week") is
/// raised: enough to lead others that match as well, not enough to send
/// a record that merely happened then.
const SPAN_BOOST: f64 = 1.5;

impl<S: EngineStore + SearchStore + ?Sized> Engine<S> {
    /// Ranked matches across every tier.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Ranked>, EngineError> {
        let (mut ranked, _) = self.by_meaning_too(query, limit, None, &|limit| {
            Ok(retrieve(self.store(), &self.common, query, limit, None)?)
        })?;
        ranked.truncate(limit);
        Ok(ranked)
    }

    /// The ranking by words (`lexical`, at most so many) fused with the
    /// records nearest `query` by meaning, when an embedder is on; else the
    /// words' ranking as it is. The query is embedded while the words are
    /// ranked, at once where the engine's runtime has threads: the two take
    /// similar time and need nothing from each other. Records written since
    /// the last backfill are embedded first (at most [`LIVE_BACKFILL`]), so
    /// what was just said can be found by meaning at once.
    ///
    /// With `fill` (a budget in tokens), a ranking whose records would not
    /// fill it is asked again as deep as their length says the budget
    /// needs (at least twice as deep), while the logs hold more: a
    /// limit set for records of average length leaves part of a budget
    /// empty when they are short (chat turns of a line), and what was left
    /// out is the next best by words and by meaning.
    ///
    /// A model that fails (a server gone away) costs the meaning, not the
    /// context: the words' ranking is returned with a warning saying why.
    fn by_meaning_too(
        &self,
        query: &str,
        mut limit: usize,
        fill: Option<u64>,
        lexical: &(dyn Fn(usize) -> Result<Vec<Ranked>, EngineError> + Sync),
    ) -> Result<(Vec<Ranked>, Option<String>), EngineError> {
        // The logs' size, read only when a ranking falls short: most fill
        // their budget, and on PostgreSQL the read is a round trip.
        let records = std::cell::OnceCell::new();
        let logs = || -> StoreResult<u64> {
            if let Some(n) = records.get() {
                return Ok(*n);
            }
            let n = self.store().last_rows()?.iter().sum::<u64>();
            Ok(*records.get_or_init(|| n))
        };
        // Whether a ranking of `got` records, asked for `asked`, leaves
        // part of the budget that deeper records could fill.
        let short = |got: &[Ranked], asked: usize| -> StoreResult<bool> {
            let falls_short =
                fill.is_some_and(|tokens| got.len() >= asked && offered_tokens(got) < tokens);
            Ok(falls_short && (asked as u64) < logs()?)
        };
        // As many records as would fill the budget at the length of those
        // found: one more round, usually, rather than a doubling each.
        let deeper = |got: &[Ranked], asked: usize| {
            let want = fill.map_or(0, |tokens| tokens + tokens / 4);
            let enough = (asked as u64 * want).div_ceil(offered_tokens(got).max(1));
            let most = records.get().copied().unwrap_or(u64::MAX);
            usize::try_from(enough.min(most)).map_or(asked * 2, |n| n.max(asked * 2))
        };
        let embedder = match self.embedder.as_deref() {
            Some(e) if !query.trim().is_empty() => e,
            _ => {
                let mut ranked = lexical(limit)?;
                while short(&ranked, limit)? {
                    limit = deeper(&ranked, limit);
                    ranked = lexical(limit)?;
                }
                return Ok((ranked, None));
            }
        };
        // Read before the two jobs start: inside the embedding's job it
        // waited for the store behind the words' ranking, about a
        // millisecond of a fused context (BENCHMARKS.md, 2026-12-02).
        let text = self.for_meaning(query);
        let mut q = None;
        let mut words = None;
        self.runtime.all(vec![
            Box::new(|| {
                q = Some(
                    text.map_err(semantic::EmbedError::from)
                        .and_then(|text| embedder.embed_query(&text)),
                )
            }),
            Box::new(|| words = Some(lexical(limit))),
        ]);
        let (Some(q), Some(words)) = (q, words) else {
            return Err(EngineError::Invalid(
                "the runtime returned before running every job".into(),
            ));
        };
        let mut words = words?;
        let q = match q {
            Ok(q) => q,
            Err(semantic::EmbedError::Store(e)) => return Err(e.into()),
            Err(e) => return Ok((words, Some(meaning_is_off(&e)))),
        };
        loop {
            let fused = match self.nearest(embedder, &q, limit, &words) {
                Ok(near) => semantic::fuse(words, near),
                Err(semantic::EmbedError::Store(e)) => return Err(e.into()),
                Err(e) => return Ok((words, Some(meaning_is_off(&e)))),
            };
            if !short(&fused, limit)? {
                return Ok((fused, None));
            }
            limit = deeper(&fused, limit);
            words = lexical(limit)?;
        }
    }

    /// The question as it is embedded: without the names of the
    /// conversation's speakers (see [`speaker::without_speakers`]), read
    /// from its latest messages when the question has a capital letter
    /// at all.
    fn for_meaning<'q>(&self, query: &'q str) -> StoreResult<Cow<'q, str>> {
        if !query.contains(char::is_uppercase) {
            return Ok(Cow::Borrowed(query));
        }
        let latest = self.store().messages(&MessageQuery {
            limit: Some(speaker::SPEAKERS_FROM_LATEST),
            ..MessageQuery::default()
        })?;
        let speakers = speaker::speakers_of(latest.iter().map(|m| m.content.as_str()));
        Ok(speaker::without_speakers(query, &speakers))
    }

    /// `ranked` with the records of the logs that fall in the span a
    /// relative date of `query` names ("last week", "three days ago")
    /// raised by [`SPAN_BOOST`], reckoned from the newest record.
    fn in_the_span_named(
        &self,
        query: &str,
        ranked: Vec<Ranked>,
    ) -> Result<Vec<Ranked>, EngineError> {
        // Most questions name no span; they need not read the present.
        if !crate::assemble::when::names_span(query) {
            return Ok(ranked);
        }
        let mut now = None;
        let last = self.store().last_rows()?;
        for (source, last) in crate::assemble::retrieve::LOG_SOURCES.into_iter().zip(last) {
            if last > 0 {
                for hit in self.store().records(source, &[last as i64])? {
                    now = now.max(Some(hit.at));
                }
            }
        }
        let Some(span) = now.and_then(|now| crate::assemble::when::span(query, now)) else {
            return Ok(ranked);
        };
        Ok(raise(ranked, SPAN_BOOST, |_, r| {
            let log = crate::assemble::retrieve::LOG_SOURCES.contains(&r.hit.source);
            log && span.0 <= r.hit.at && r.hit.at < span.1
        }))
    }

    /// The records nearest the query's vector `q`, best first. Those the
    /// words' ranking (`known`) already holds are taken from it, not read
    /// again: fusion keeps the words' copy of a record found by both.
    fn nearest(
        &self,
        embedder: &dyn semantic::Embedder,
        q: &[f32],
        limit: usize,
        known: &[Ranked],
    ) -> Result<Vec<Ranked>, semantic::EmbedError> {
        semantic::backfill(
            self.store(),
            embedder,
            semantic::Backlog::Newest(LIVE_BACKFILL),
            &mut |_| {},
        )?;
        let near = self.vectors.nearest(
            self.store(),
            embedder.model(),
            q,
            limit,
            self.runtime.as_ref(),
        )?;
        let similarity: std::collections::HashMap<(HitSource, i64), f32> =
            near.iter().map(|n| ((n.0, n.1), n.2)).collect();
        let held: std::collections::HashMap<(HitSource, i64), &Ranked> = known
            .iter()
            .filter(|r| similarity.contains_key(&(r.hit.source, r.hit.row)))
            .map(|r| ((r.hit.source, r.hit.row), r))
            .collect();
        let mut semantic: Vec<Ranked> = Vec::with_capacity(near.len());
        for source in crate::assemble::retrieve::LOG_SOURCES {
            let rows: Vec<i64> = near
                .iter()
                .filter(|n| n.0 == source && !held.contains_key(&(n.0, n.1)))
                .map(|n| n.1)
                .collect();
            let read = self.store().records(source, &rows)?;
            let reused = held
                .values()
                .filter(|r| r.hit.source == source)
                .map(|r| r.hit.clone());
            for hit in read.into_iter().chain(reused) {
                let sim = similarity
                    .get(&(hit.source, hit.row))
                    .copied()
                    .unwrap_or(0.0);
                semantic.push(Ranked {
                    hit,
                    score: f64::from(sim),
                });
            }
        }
        // Equal similarities (a text said twice) rank the newer first, in
        // whatever order the records were gathered.
        semantic.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.hit.row.cmp(&a.hit.row))
                .then(a.hit.id.cmp(&b.hit.id))
        });
        Ok(semantic)
    }

    /// The best context for `req` that fits its budget exactly.
    pub fn context(&self, req: &ContextRequest) -> Result<Assembled, EngineError> {
        let v = self.view()?;
        let budget = match (req.budget, req.plan.default_budget) {
            (Some(b), _) => b,
            (None, Some(b)) => b,
            (None, None) => self.cfg.window.effective_max().saturating_sub(v.used()),
        };
        let memo = Memo {
            inner: self.memory.counter(),
            cache: &self.counts,
        };
        let mut offers: BTreeMap<SectionKind, Vec<Candidate>> = BTreeMap::new();
        let mut warnings = Vec::new();
        let hot = self.store().hot_context()?;
        // A hot item the context carries is not sent again as the
        // operation that logged it (`note_added`, `goal_updated`).
        let hot_ids: std::collections::HashSet<&str> = if req
            .plan
            .sections
            .iter()
            .any(|s| s.kind == SectionKind::HotContext)
        {
            hot.items.iter().map(|i| i.id.as_str()).collect()
        } else {
            Default::default()
        };
        // Fragments last: they fill what the other sections leave.
        let mut sections: Vec<&crate::assemble::SectionPlan> = req.plan.sections.iter().collect();
        sections.sort_by_key(|s| s.kind == SectionKind::Fragments);
        for s in sections {
            let c = match s.kind {
                SectionKind::HotContext => candidates::hot(&hot),
                SectionKind::WorkingMemory => {
                    let wm = self.working_memory_of(&v)?;
                    let ops: Vec<_> = wm
                        .recent()
                        .filter(|o| {
                            let logs_hot =
                                o.kind.ends_with("_added") || o.kind.ends_with("_updated");
                            !(logs_hot
                                && o.data["id"].as_str().is_some_and(|id| hot_ids.contains(id)))
                        })
                        .cloned()
                        .collect();
                    let threshold = self.cfg.profile.summarization_threshold_tokens.value;
                    candidates::operations(&ops)
                        .into_iter()
                        .map(|c| summarized(c, threshold, &memo))
                        .collect()
                }
                SectionKind::RecentMessages => match &v.session {
                    Some(session) => {
                        let mut recent = self.store().messages(&MessageQuery {
                            session_id: Some(session.id.clone()),
                            limit: Some(200),
                            ..MessageQuery::default()
                        })?;
                        if let Some(before) = req.messages_before {
                            recent.retain(|m| (m.seq as u64) < before);
                        }
                        candidates::messages(&recent)
                    }
                    None => Vec::new(),
                },
                SectionKind::SessionSummary => v
                    .session
                    .as_ref()
                    .and_then(|s| s.summary.as_deref())
                    .map(candidates::summary)
                    .unwrap_or_default(),
                SectionKind::ProjectState => self.doc(DocKind::ProjectState)?,
                SectionKind::WorkPlan => self.doc(DocKind::WorkPlan)?,
                SectionKind::Decisions => candidates::decisions(
                    &self
                        .store()
                        .decisions(Some(self.cfg.profile.max_decision_records.value as usize))?,
                ),
                SectionKind::EntityFacts => {
                    let mut all = Vec::new();
                    for status in [
                        EntityStatus::InProgress,
                        EntityStatus::Blocked,
                        EntityStatus::Pending,
                    ] {
                        all.extend(self.store().entities(&EntityQuery {
                            status: Some(status),
                            limit: Some(20),
                            ..EntityQuery::default()
                        })?);
                    }
                    candidates::entities(&all)
                }
                SectionKind::Fragments => match req.query.as_deref() {
                    Some(q) => {
                        let limit = fragment_limit(budget);
                        let room = room_left(&req.plan, &offers, budget);
                        let by_words_alone = self.embedder.is_none();
                        let (ranked, warning) =
                            self.by_meaning_too(q, limit, Some(room), &|limit| {
                                Ok(retrieve(
                                    self.store(),
                                    &self.common,
                                    q,
                                    limit,
                                    Some(Budget {
                                        tokens: budget,
                                        counter: &memo,
                                        fill: by_words_alone.then_some(room),
                                    }),
                                )?)
                            })?;
                        warnings.extend(warning);
                        let ranked = self.in_the_span_named(q, ranked)?;
                        let ranked = speaker::said_by_the_one_named(q, ranked);
                        let ranked = with_neighbours(self.store(), ranked)?;
                        let mut ranked = filled_with_exchanges(self.store(), ranked, room)?;
                        if let Some(before) = req.messages_before {
                            ranked.retain(|r| !is_message_from(r, before));
                        }
                        candidates::fragments(&ranked, q)
                    }
                    None => Vec::new(),
                },
            };
            offers.insert(s.kind, c);
        }
        let a = Assembler {
            counter: &memo,
            chat: req.chat,
            format: req.format,
        };
        let plan = match offers.get(&SectionKind::Fragments) {
            Some(found) if !found.is_empty() => {
                req.plan.led_by_question(question_worth(found, budget))
            }
            _ => req.plan.clone(),
        };
        let mut out = a.assemble(&plan, budget, &offers)?;
        out.warnings = warnings;
        Ok(out)
    }

    fn doc(&self, kind: DocKind) -> StoreResult<Vec<Candidate>> {
        match self.store().document(kind, None) {
            // Only what the document says: an empty one adds nothing.
            Ok(d) => Ok(crate::memory::episodic::lean(&d.content)
                .map(|text| candidates::document(kind.stem(), &text))
                .unwrap_or_default()),
            Err(StoreError::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }
}

/// A message at or after `seq` (`m12` is message 12).
fn is_message_from(r: &Ranked, seq: u64) -> bool {
    r.hit.source == HitSource::Message
        && r.hit
            .id
            .strip_prefix('m')
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= seq)
}

/// Of the budget, the most a question's fragments claim ahead of the
/// other sections (millionths). The rest still follows the preset, so a
/// question never empties the session summary or working memory.
const QUESTION_SHARE_MAX_PPM: u64 = 600_000;

/// A fragment scoring at least this share of the best one is a good
/// match: what the question's evidence is likely to be among.
const GOOD_MATCH: f64 = 0.5;

/// The share of `budget` a question's good matches fill (millionths), at
/// most [`QUESTION_SHARE_MAX_PPM`]: what retrieval claims ahead of the
/// preset's other sections. A question that matches nothing well claims
/// nothing, and the preset stands. Lengths are estimated (four bytes a
/// token): this only sets a share, and the allocator counts exactly what
/// it takes.
fn question_worth(found: &[Candidate], budget: u64) -> u32 {
    let best = found.iter().map(|c| c.score).fold(0.0, f64::max);
    if best <= 0.0 || budget == 0 {
        return 0;
    }
    let cap = budget * QUESTION_SHARE_MAX_PPM / 1_000_000;
    let mut tokens = 0u64;
    for c in found.iter().filter(|c| c.score >= best * GOOD_MATCH) {
        tokens += rough_tokens(&c.text, 1);
        if tokens >= cap {
            return QUESTION_SHARE_MAX_PPM as u32;
        }
    }
    (tokens * 1_000_000 / budget) as u32
}

/// A working-memory item larger than the profile's
/// `summarization_threshold_tokens` is offered as its most salient
/// sentences within that many tokens, naming the record that holds it
/// whole; a long item would otherwise crowd out the rest of working memory.
/// An item whose sentences cannot be cut (one long sentence) stays whole
/// and competes as it is.
fn summarized(
    c: Candidate,
    threshold: u64,
    counter: &dyn crate::tokens::TokenCounter,
) -> Candidate {
    use crate::compress::{Extractive, SourceItem, Summarizer};
    let tokens = counter.count(&c.text) as u64;
    if threshold == 0 || tokens <= threshold {
        return c;
    }
    // The line's head (`- [HH:MM] kind (status): `) stays as it is.
    let (head, body) = match c.text.split_once(": ") {
        Some((h, b)) => (format!("{h}: "), b),
        None => (String::new(), c.text.as_str()),
    };
    let note = format!(" [summarized from {tokens} tokens; whole in {}]", c.id);
    let room = threshold.saturating_sub(counter.count(&format!("{head}{note}")) as u64);
    let item = SourceItem {
        sources: vec![c.id.clone()],
        order: 0,
        text: body.to_string(),
        pinned: false,
        importance: c.score,
    };
    let Ok(summary) = Extractive::with_ratio(1_000_000).summarize(&[item], room, counter) else {
        return c;
    };
    let kept: Vec<&str> = summary.lines.iter().map(|l| l.text.as_str()).collect();
    if kept.is_empty() {
        return c;
    }
    Candidate {
        text: format!("{head}{}{note}", kept.join(" ")),
        provenance: vec![c.id.clone()],
        ..c
    }
}
