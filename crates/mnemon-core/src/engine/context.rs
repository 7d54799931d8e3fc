//! `what should I send`: context assembly over the engine's memory.

use std::collections::BTreeMap;

use super::{Engine, EngineError, EngineStore};
use crate::assemble::retrieve::{Budget, Ranked, SearchStore, retrieve, with_neighbours};
use crate::assemble::{
    Assembled, Assembler, BudgetPlan, Candidate, Format, SectionKind, candidates,
};
use crate::memory::{DocKind, EntityQuery, EntityStatus, MessageQuery, StoreError};
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
}

/// How many fragments retrieval offers the allocator: enough to fill the
/// budget with short records, at least 200, so a short record that
/// matches well but ranks below long ones is still there to be packed.
fn fragment_limit(budget: u64) -> usize {
    ((budget / 25) as usize).max(200)
}

impl<S: EngineStore + SearchStore> Engine<S> {
    /// Ranked matches across every tier.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Ranked>, EngineError> {
        Ok(retrieve(self.store(), &self.common, query, limit, None)?)
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
        for s in &req.plan.sections {
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
                        candidates::messages(&self.store().messages(&MessageQuery {
                            session_id: Some(session.id.clone()),
                            limit: Some(200),
                            ..MessageQuery::default()
                        })?)
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
                    Some(q) => candidates::fragments(
                        &with_neighbours(
                            self.store(),
                            retrieve(
                                self.store(),
                                &self.common,
                                q,
                                fragment_limit(budget),
                                Some(Budget {
                                    tokens: budget,
                                    counter: &memo,
                                }),
                            )?,
                        )?,
                        q,
                    ),
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
        Ok(a.assemble(&req.plan, budget, &offers)?)
    }

    fn doc(&self, kind: DocKind) -> Result<Vec<Candidate>, StoreError> {
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
