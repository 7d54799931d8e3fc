//! Evidence recall under a token budget, for mnemon and two baselines run
//! in the same process (`mnemon eval recall`).
//!
//! Every conversation is ingested through the real engine into an
//! in-memory SQLite store (each session a session, each turn a message, at
//! a window small enough that refreshes, checkpoints and compaction
//! happen). Then, for every question and budget:
//! - mnemon assembles a context with the question as its query;
//! - `recent` packs the most recent turns that fit;
//! - `bm25` packs the turns SQLite FTS5 ranks best for the same query words.
//!
//! All three are rendered and counted with the same tokenizer and never
//! exceed the budget.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mnemon_core::assemble::retrieve::{HitSource, SearchStore, query_terms};
use mnemon_core::assemble::{BudgetPlan, Format, SectionKind};
use mnemon_core::engine::{ContextRequest, Engine, EngineConfig};
use mnemon_core::eval::{Dataset, Score, Summary, score};
use mnemon_core::importance::Role;
use mnemon_core::memory::{Clock, Memory, MessageQuery, NewMessage, OperationLog, Timestamp};
use mnemon_core::profile::ProfileParams;
use mnemon_core::tokens::{ChatFormat, Encoding, OpenAiBpe, TokenCounter};
use mnemon_core::window::ContextWindow;
use mnemon_sqlite::SqliteStore;
use serde::Serialize;

use crate::error::{Error, Result};

/// A clock the runner sets to each turn's time.
#[derive(Debug, Default)]
struct ReplayClock(AtomicI64);

impl Clock for ReplayClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

/// The methods compared, in the order reports list them.
pub const METHODS: [&str; 3] = ["mnemon", "recent", "bm25"];

#[derive(Debug, Clone, Serialize)]
/// Scores at one budget.
pub struct BudgetResult {
    /// Tokens each method could send.
    pub budget: u64,
    /// Per method: overall, then per category.
    pub overall: BTreeMap<String, Summary>,
    /// Per question category, then per method.
    pub by_category: BTreeMap<String, BTreeMap<String, Summary>>,
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
}

/// Ingests `d` and scores mnemon and both baselines at every budget.
pub fn recall(d: &Dataset, budgets: &[u64], window: u64, preset: &str) -> Result<Report> {
    let plan = BudgetPlan::preset(preset)?;
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let mut scores: BTreeMap<(u64, String, String), Vec<Score>> = BTreeMap::new();
    let mut refreshes = 0;
    let mut checkpoints = 0;
    let mut questions = 0;
    for conv in &d.conversations {
        let clock = Arc::new(ReplayClock::default());
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
        let engine = Engine::new(memory, EngineConfig::new(w, profile, "eval"));
        let mut turn_text: BTreeMap<&str, &str> = BTreeMap::new();
        for s in &conv.sessions {
            let start = Timestamp::parse(&s.date).ok_or_else(|| {
                Error::Input(format!(
                    "session {} has date `{}`, not RFC 3339",
                    s.id, s.date
                ))
            })?;
            clock.0.store(start.0, Ordering::SeqCst);
            engine.start_session(Some(&s.id))?;
            let first = s.turns.first().map(|t| t.speaker.as_str());
            for (i, t) in s.turns.iter().enumerate() {
                clock.0.store(start.0 + i as i64 * 30_000, Ordering::SeqCst);
                turn_text.insert(&t.id, &t.text);
                let role = if Some(t.speaker.as_str()) == first {
                    Role::User
                } else {
                    Role::Assistant
                };
                let out = engine.message(NewMessage {
                    role,
                    content: format!("{}: {}", t.speaker, t.text),
                    agent: None,
                    tokens: None,
                })?;
                checkpoints += out.checkpoints.len();
            }
        }
        refreshes += engine.status()?.refreshes;
        let store = engine.memory().store();
        let mut all = store.messages(&MessageQuery {
            limit: Some(usize::MAX >> 1),
            ..MessageQuery::default()
        })?;
        all.sort_by_key(|m| std::cmp::Reverse(m.seq));
        for q in &conv.questions {
            questions += 1;
            let evidence: Vec<&str> = q
                .evidence
                .iter()
                .filter_map(|e| turn_text.get(e.as_str()).copied())
                .collect();
            let hits = store.search(
                &query_terms(&q.question).join(" "),
                200,
                &[HitSource::Message],
            )?;
            let mut bm25 = hits;
            bm25.sort_by(|a, b| a.bm25.total_cmp(&b.bm25));
            let bm25_texts: Vec<&str> = bm25.iter().map(|h| h.text.as_str()).collect();
            let recent_texts: Vec<&str> = all.iter().map(|m| m.content.as_str()).collect();
            for &budget in budgets {
                let out = engine.context(&ContextRequest {
                    plan: plan.clone(),
                    budget: Some(budget),
                    query: Some(q.question.clone()),
                    format: Format::Markdown,
                    chat: ChatFormat::OPENAI,
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
                let results = [
                    ("mnemon", score(&out.text, &evidence, &order)),
                    ("recent", packed(&counter, &recent_texts, budget, &evidence)),
                    ("bm25", packed(&counter, &bm25_texts, budget, &evidence)),
                ];
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
        results.push(BudgetResult {
            budget,
            overall,
            by_category,
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
    })
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
