//! Evidence recall under a token budget, for mnemon and two baselines run
//! in the same process (`mnemon eval recall`).
//!
//! Every conversation is ingested through the real engine into an
//! in-memory SQLite store (each session a session, each turn a message, at
//! a window small enough that refreshes, checkpoints and compaction
//! happen). Then, for every question and budget:
//! - mnemon assembles a context with the question as its query;
//! - `recent` packs the most recent turns that fit;
//! - `bm25` packs the turns SQLite FTS5 ranks best for the same query words;
//! - `hybrid` (with an embedding model) packs the turns of BM25's list and
//!   the model's nearest turns fused by plain reciprocal-rank fusion
//!   ([`hybrid`]), the strongest simple baseline.
//!
//! All of them are rendered and counted with the same tokenizer and never
//! exceed the budget.

use std::collections::BTreeMap;
use std::sync::Arc;

use mnemon_core::assemble::retrieve::{HitSource, SearchStore, query_terms};
use mnemon_core::assemble::{BudgetPlan, Format, SectionKind};
use mnemon_core::engine::{ContextRequest, Engine, EngineConfig};
use mnemon_core::importance::Role;
use mnemon_core::memory::{Memory, MessageQuery, NewMessage, OperationLog, Timestamp};
use mnemon_core::profile::ProfileParams;
use mnemon_core::tokens::{ChatFormat, Encoding, OpenAiBpe, TokenCounter};
use mnemon_core::window::ContextWindow;
use mnemon_import::eval::lead::{Lead, lead};
use mnemon_import::eval::{Dataset, Score, Summary, score};
use mnemon_sqlite::SqliteStore;
use serde::Serialize;

use crate::error::{Error, Result};

pub mod hybrid;
pub mod vectors;

/// The methods compared, in the order reports list them.
pub const METHODS: [&str; 4] = ["mnemon", "recent", "bm25", "hybrid"];

/// A baseline run beside mnemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The most recent turns that fit.
    Recent,
    /// The turns BM25 ranks best.
    Bm25,
    /// BM25 and the embedding model fused by plain RRF.
    Hybrid,
}

impl Baseline {
    /// How reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Baseline::Recent => "recent",
            Baseline::Bm25 => "bm25",
            Baseline::Hybrid => "hybrid",
        }
    }

    /// Every baseline that can run: the hybrid one needs a model.
    pub fn all(with_model: bool) -> Vec<Baseline> {
        let mut out = vec![Baseline::Recent, Baseline::Bm25];
        if with_model {
            out.push(Baseline::Hybrid);
        }
        out
    }
}

#[derive(Debug, Clone, Serialize)]
/// Scores at one budget.
pub struct BudgetResult {
    /// Tokens each method could send.
    pub budget: u64,
    /// Per method: overall, then per category.
    pub overall: BTreeMap<String, Summary>,
    /// Per question category, then per method.
    pub by_category: BTreeMap<String, BTreeMap<String, Summary>>,
    /// Per baseline: mnemon's recall minus the baseline's, question by
    /// question, with a 95 % interval (see [`mnemon_import::eval::lead`]).
    pub lead: BTreeMap<String, Lead>,
}

#[derive(Debug, Clone, Serialize)]
/// A recall evaluation: what was run and the scores at each budget.
pub struct Report {
    /// Conversations ingested.
    pub conversations: usize,
    /// Questions asked across them.
    pub questions: usize,
    /// The window the conversations were ingested at.
    pub window: u64,
    /// The context preset mnemon assembled with.
    pub preset: String,
    /// The tokenizer every method was counted with.
    pub tokenizer: String,
    /// Refreshes the engine made while ingesting.
    pub refreshes: u64,
    /// Checkpoints the engine took while ingesting.
    pub checkpoints: usize,
    /// One entry per budget, in the order given.
    pub results: Vec<BudgetResult>,
    /// Per question and budget, what each method included (only when
    /// asked for: it is large).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<Trace>,
}

#[derive(Debug, Clone, Serialize)]
/// What one question got at one budget: for finding out why a method
/// missed an evidence turn.
pub struct Trace {
    /// The conversation's id in the dataset.
    pub conversation: String,
    /// The question as asked.
    pub question: String,
    /// Its category in the dataset.
    pub category: String,
    /// Tokens each method could send.
    pub budget: u64,
    /// The evidence turns as stored messages (`m12`).
    pub evidence: Vec<String>,
    /// mnemon's score, then per section: its tokens and the ids it holds,
    /// in rank order for fragments.
    pub mnemon: Score,
    /// Per section: its name, its tokens and its items' ids, best first.
    pub sections: Vec<(String, u64, Vec<String>)>,
    /// BM25's score.
    pub bm25: Score,
    /// Where each evidence turn ranks in BM25's order (0-based), if at all.
    pub bm25_ranks: Vec<Option<usize>>,
    /// The hybrid baseline's score (zero when it was not run).
    pub hybrid: Score,
    /// Where each evidence turn ranks in the hybrid baseline's order.
    pub hybrid_ranks: Vec<Option<usize>>,
}

/// Ingests `d` and scores mnemon and both baselines at every budget.
pub fn recall(
    d: &Dataset,
    budgets: &[u64],
    window: u64,
    preset: &str,
    trace: bool,
    embedder: Option<Arc<dyn mnemon_core::assemble::semantic::Embedder>>,
    baselines: &[Baseline],
) -> Result<Report> {
    // Each budget and baseline once, in the order given: a second copy
    // would score its questions twice and pair them out of step with
    // mnemon's when leads are drawn.
    let budgets = &first_of_each(budgets)[..];
    let baselines = &first_of_each(baselines)[..];
    if baselines.contains(&Baseline::Hybrid) && embedder.is_none() {
        return Err(Error::Input(
            "the hybrid baseline fuses BM25 with an embedding model: give one with --embeddings DIR (`mnemon embeddings fetch` downloads all-MiniLM-L6-v2)".into(),
        ));
    }
    let plan = BudgetPlan::preset(preset)?;
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let mut scores: BTreeMap<(u64, String, String), Vec<Score>> = BTreeMap::new();
    let mut refreshes = 0;
    let mut checkpoints = 0;
    let mut questions = 0;
    let mut traces = Vec::new();
    for conv in &d.conversations {
        let clock = Arc::new(crate::clock::ReplayClock::default());
        let w = ContextWindow::with_defaults(window)
            .map_err(|e| Error::Input(format!("--window {window}: {e}")))?;
        let profile = ProfileParams::for_window(w.effective_max());
        let limits = (
            profile.working_memory_max_operations.value as usize,
            profile.working_memory_max_tokens.value,
        );
        let memory = Memory::new(
            SqliteStore::in_memory()?,
            Box::new(OpenAiBpe::new(Encoding::Cl100kBase)),
            clock.clone(),
            Some("eval"),
            limits,
        );
        let mut engine = Engine::new(memory, EngineConfig::new(w, profile, "eval"))
            .with_runtime(Arc::new(mnemon_threads::Threads));
        if let Some(e) = &embedder {
            engine = engine.with_embedder(Arc::clone(e), Arc::default());
        }
        let mut turn_text: BTreeMap<&str, &str> = BTreeMap::new();
        let mut turn_seq: BTreeMap<&str, String> = BTreeMap::new();
        for s in &conv.sessions {
            let start = mnemon_import::parse_time(&s.date).ok_or_else(|| {
                Error::Input(format!(
                    "session {} has date `{}`, not RFC 3339",
                    s.id, s.date
                ))
            })?;
            clock.set(start);
            engine.start_session(Some(&s.id))?;
            let first = s.turns.first().map(|t| t.speaker.as_str());
            for (i, t) in s.turns.iter().enumerate() {
                clock.set(Timestamp(start.0 + i as i64 * 30_000));
                turn_text.insert(&t.id, &t.text);
                let role = if Some(t.speaker.as_str()) == first {
                    Role::User
                } else {
                    Role::Assistant
                };
                let msg = NewMessage {
                    role,
                    content: format!("{}: {}", t.speaker, t.text),
                    agent: None,
                    tokens: None,
                };
                match engine.message(msg.clone()) {
                    Ok(out) => checkpoints += out.checkpoints.len(),
                    // As `mnemon import` does: history the window could
                    // never hold is stored outside the live context.
                    Err(mnemon_core::engine::EngineError::TooLarge { .. }) => {
                        engine.memory().message(msg)?;
                    }
                    Err(e) => return Err(e.into()),
                }
                if trace {
                    let last = engine.memory().store().messages(&MessageQuery {
                        limit: Some(1),
                        ..MessageQuery::default()
                    })?;
                    if let Some(m) = last.first() {
                        turn_seq.insert(&t.id, format!("m{}", m.seq));
                    }
                }
            }
        }
        refreshes += engine.status()?.refreshes;
        let store = engine.memory().store();
        if let Some(e) = &embedder {
            use mnemon_core::assemble::semantic::{Backlog, backfill};
            backfill(store, e.as_ref(), Backlog::All, &mut |_| {})
                .map_err(mnemon_core::engine::EngineError::from)?;
        }
        let mut all = store.messages(&MessageQuery {
            limit: Some(usize::MAX >> 1),
            ..MessageQuery::default()
        })?;
        all.sort_by_key(|m| std::cmp::Reverse(m.seq));
        let index = mnemon_core::assemble::semantic::VectorIndex::default();
        for q in &conv.questions {
            questions += 1;
            let evidence: Vec<&str> = q
                .evidence
                .iter()
                .filter_map(|e| turn_text.get(e.as_str()).copied())
                .collect();
            let hits = store.search(
                &query_terms(&q.question).join(" "),
                hybrid::DEPTH,
                &[HitSource::Message],
            )?;
            let mut bm25 = hits;
            bm25.sort_by(|a, b| a.bm25.total_cmp(&b.bm25));
            let bm25_texts: Vec<&str> = bm25.iter().map(|h| h.text.as_str()).collect();
            let recent_texts: Vec<&str> = all.iter().map(|m| m.content.as_str()).collect();
            let dense = match &embedder {
                Some(e) if baselines.contains(&Baseline::Hybrid) => {
                    hybrid::nearest(store, &index, e.as_ref(), &q.question)?
                }
                _ => Vec::new(),
            };
            let hybrid_texts = hybrid::fuse(&bm25, &dense);
            for &budget in budgets {
                let out = engine.context(&ContextRequest {
                    plan: plan.clone(),
                    budget: Some(budget),
                    query: Some(q.question.clone()),
                    format: Format::Markdown,
                    chat: ChatFormat::OPENAI,
                    messages_before: None,
                })?;
                // mnemon's order: fragments by rank, then the recent turns.
                let of = |k: SectionKind| {
                    out.sections
                        .iter()
                        .filter(move |s| s.kind == k)
                        .flat_map(|s| s.items.iter().map(|i| i.text.as_str()))
                };
                let order: Vec<&str> = of(SectionKind::Fragments)
                    .chain(of(SectionKind::RecentMessages))
                    .collect();
                let mut results = vec![("mnemon", score(&out.text, &evidence, &order))];
                for b in baselines {
                    let texts = match b {
                        Baseline::Recent => &recent_texts,
                        Baseline::Bm25 => &bm25_texts,
                        Baseline::Hybrid => &hybrid_texts,
                    };
                    results.push((b.name(), packed(&counter, texts, budget, &evidence)));
                }
                let of_method = |m: &str| {
                    results
                        .iter()
                        .find(|r| r.0 == m)
                        .map(|r| r.1)
                        .unwrap_or_default()
                };
                if trace {
                    traces.push(Trace {
                        conversation: conv.id.clone(),
                        question: q.question.clone(),
                        category: q.category.clone(),
                        budget,
                        evidence: q
                            .evidence
                            .iter()
                            .map(|e| turn_seq.get(e.as_str()).cloned().unwrap_or_default())
                            .collect(),
                        mnemon: results[0].1,
                        sections: out
                            .sections
                            .iter()
                            .map(|s| {
                                let mut items: Vec<&mnemon_core::assemble::ItemOut> =
                                    s.items.iter().collect();
                                items.sort_by(|a, b| b.score.total_cmp(&a.score));
                                (
                                    s.kind.name().to_string(),
                                    s.tokens,
                                    items.iter().map(|i| i.id.clone()).collect(),
                                )
                            })
                            .collect(),
                        bm25: of_method("bm25"),
                        bm25_ranks: evidence
                            .iter()
                            .map(|e| bm25_texts.iter().position(|t| t.contains(e)))
                            .collect(),
                        hybrid: of_method("hybrid"),
                        hybrid_ranks: evidence
                            .iter()
                            .map(|e| hybrid_texts.iter().position(|t| t.contains(e)))
                            .collect(),
                    });
                }
                for (method, s) in results {
                    for cat in ["all", q.category.as_str()] {
                        scores
                            .entry((budget, method.to_string(), cat.to_string()))
                            .or_default()
                            .push(s);
                    }
                }
            }
        }
    }
    let mut results = Vec::new();
    for &budget in budgets {
        let mut overall = BTreeMap::new();
        let mut by_category: BTreeMap<String, BTreeMap<String, Summary>> = BTreeMap::new();
        for ((b, method, cat), s) in &scores {
            if *b != budget {
                continue;
            }
            if cat == "all" {
                overall.insert(method.clone(), Summary::of(s));
            } else {
                by_category
                    .entry(cat.clone())
                    .or_default()
                    .insert(method.clone(), Summary::of(s));
            }
        }
        let recall_of = |method: &str| -> Vec<f64> {
            scores
                .get(&(budget, method.to_string(), "all".to_string()))
                .map(|s| s.iter().map(|s| s.recall).collect())
                .unwrap_or_default()
        };
        let ours = recall_of("mnemon");
        let leads = baselines
            .iter()
            .map(|b| (b.name().to_string(), lead(&ours, &recall_of(b.name()))))
            .collect();
        results.push(BudgetResult {
            budget,
            overall,
            by_category,
            lead: leads,
        });
    }
    Ok(Report {
        conversations: d.conversations.len(),
        questions,
        window,
        preset: preset.to_string(),
        tokenizer: counter.name().to_string(),
        refreshes,
        checkpoints,
        results,
        trace: traces,
    })
}

/// `items` without later copies, in their order (a handful of budgets or
/// baselines).
fn first_of_each<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for i in items {
        if !out.contains(i) {
            out.push(*i);
        }
    }
    out
}

/// A baseline: whole turns in the given order, one per line, while the
/// rendered text fits the budget (estimated per line, then counted exactly
/// and trimmed from the end, as the allocator does).
fn packed(counter: &dyn TokenCounter, ordered: &[&str], budget: u64, evidence: &[&str]) -> Score {
    let mut included: Vec<&str> = Vec::new();
    let mut estimate = 0;
    for t in ordered {
        let cost = counter.count(t) as u64 + 1;
        if estimate + cost > budget {
            continue;
        }
        estimate += cost;
        included.push(t);
    }
    let mut text = included.join("\n");
    while counter.count(&text) as u64 > budget {
        included.pop();
        text = included.join("\n");
    }
    score(&text, evidence, &included)
}
