//! Budget plans: which sections a context has, in what priority, with what
//! share of the budget. Presets reproduce the design documents.

use serde::{Deserialize, Serialize};

/// A part of an assembled context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    HotContext,
    SessionSummary,
    ProjectState,
    WorkPlan,
    Decisions,
    EntityFacts,
    WorkingMemory,
    RecentMessages,
    Fragments,
}

impl SectionKind {
    pub const ALL: [SectionKind; 9] = [
        SectionKind::HotContext,
        SectionKind::SessionSummary,
        SectionKind::ProjectState,
        SectionKind::WorkPlan,
        SectionKind::Decisions,
        SectionKind::EntityFacts,
        SectionKind::WorkingMemory,
        SectionKind::RecentMessages,
        SectionKind::Fragments,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SectionKind::HotContext => "hot_context",
            SectionKind::SessionSummary => "session_summary",
            SectionKind::ProjectState => "project_state",
            SectionKind::WorkPlan => "work_plan",
            SectionKind::Decisions => "decisions",
            SectionKind::EntityFacts => "entity_facts",
            SectionKind::WorkingMemory => "working_memory",
            SectionKind::RecentMessages => "recent_messages",
            SectionKind::Fragments => "fragments",
        }
    }

    pub fn parse(s: &str) -> Option<SectionKind> {
        SectionKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The heading the section renders under (hot context and the
    /// documents carry their own).
    pub fn heading(self) -> Option<&'static str> {
        match self {
            SectionKind::HotContext | SectionKind::ProjectState | SectionKind::WorkPlan => None,
            SectionKind::SessionSummary => Some("## Session Summary"),
            SectionKind::Decisions => Some("## Recent Decisions"),
            SectionKind::EntityFacts => Some("## Project Items"),
            SectionKind::WorkingMemory => Some("## Working Memory"),
            SectionKind::RecentMessages => Some("## Recent Messages"),
            SectionKind::Fragments => Some("## Relevant Memory"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SectionPlan {
    pub kind: SectionKind,
    /// Lower fills first and receives leftover space first.
    pub priority: u8,
    /// Share of the budget (after the reserve), in millionths.
    pub share_ppm: u32,
    /// Tokens the section may use even when its share is smaller.
    pub min_tokens: u64,
    /// Included whole, or the assembly fails saying what it needs.
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetPlan {
    pub name: String,
    /// Kept free (system prompt, the reply, design v2's buffer), millionths.
    pub reserve_ppm: u32,
    pub sections: Vec<SectionPlan>,
    /// The budget when the caller gives none (the session-memory plan's
    /// router and planner windows).
    pub default_budget: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "unknown preset `{0}`: use tiers, qa, conversation, router, planner, phase:planning, phase:execution or phase:validation"
    )]
    UnknownPreset(String),
    #[error("plan `{plan}`: {reason}")]
    Invalid { plan: String, reason: String },
}

fn s(kind: SectionKind, priority: u8, share: f64, required: bool) -> SectionPlan {
    SectionPlan {
        kind,
        priority,
        share_ppm: (share * 1e6).round() as u32,
        min_tokens: 0,
        required,
    }
}

pub const PRESETS: [&str; 8] = [
    "tiers",
    "qa",
    "conversation",
    "router",
    "planner",
    "phase:planning",
    "phase:execution",
    "phase:validation",
];

impl BudgetPlan {
    /// A preset by name.
    pub fn preset(name: &str) -> Result<BudgetPlan, PlanError> {
        use SectionKind::*;
        let (reserve, sections, default_budget) = match name {
            // Design v1 `get_orchestrator_context`: 30/20/25/15/10, plus the
            // hot context (always included) and fragments from leftovers.
            "tiers" => (
                0.0,
                vec![
                    s(HotContext, 0, 0.0, true),
                    s(WorkingMemory, 1, 0.30, false),
                    s(SessionSummary, 2, 0.20, false),
                    s(ProjectState, 3, 0.25, false),
                    s(WorkPlan, 4, 0.15, false),
                    s(Decisions, 5, 0.10, false),
                    s(Fragments, 6, 0.0, false),
                ],
                None,
            ),
            // The short-term-context seed's 8K example without the system
            // prompt and the reply, which the caller keeps: hot 800, recent
            // 2,500, summary 600, fragments 1,500 of 5,400.
            "conversation" => (
                0.0,
                vec![
                    s(HotContext, 0, 0.148, true),
                    s(RecentMessages, 1, 0.463, false),
                    s(SessionSummary, 2, 0.111, false),
                    s(Fragments, 3, 0.278, false),
                ],
                None,
            ),
            // Answering a question about the past: retrieved fragments
            // first, the latest turns and summary after them.
            "qa" => (
                0.0,
                vec![
                    s(HotContext, 0, 0.0, true),
                    s(Fragments, 1, 0.80, false),
                    s(RecentMessages, 2, 0.15, false),
                    s(SessionSummary, 3, 0.05, false),
                ],
                None,
            ),
            // The session-memory plan's sliding windows over turns.
            "router" => (0.0, vec![s(RecentMessages, 0, 1.0, false)], Some(500)),
            "planner" => (
                0.0,
                vec![
                    s(HotContext, 0, 0.0, false),
                    s(RecentMessages, 1, 1.0, false),
                ],
                Some(1_000),
            ),
            // Design v2 §1.3, with its 15 % buffer kept free.
            "phase:planning" => (
                0.15,
                vec![
                    s(HotContext, 0, 0.0, true),
                    s(ProjectState, 1, 0.10, false),
                    s(Decisions, 2, 0.07, false),
                    s(WorkPlan, 3, 0.05, false),
                    s(SessionSummary, 4, 0.0, false),
                    s(Fragments, 5, 0.0, false),
                ],
                None,
            ),
            "phase:execution" => (
                0.15,
                vec![
                    s(HotContext, 0, 0.0, true),
                    s(WorkingMemory, 1, 0.35, false),
                    s(Fragments, 2, 0.15, false),
                    s(EntityFacts, 3, 0.10, false),
                    s(SessionSummary, 4, 0.0, false),
                ],
                None,
            ),
            "phase:validation" => (
                0.15,
                vec![
                    s(HotContext, 0, 0.0, true),
                    s(WorkingMemory, 1, 0.08, false),
                    s(EntityFacts, 2, 0.05, false),
                    s(Decisions, 3, 0.02, false),
                    s(Fragments, 4, 0.0, false),
                ],
                None,
            ),
            other => return Err(PlanError::UnknownPreset(other.to_string())),
        };
        let plan = BudgetPlan {
            name: name.to_string(),
            reserve_ppm: (reserve * 1e6f64).round() as u32,
            sections,
            default_budget,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// Shares and reserve within 100 %, no section twice.
    pub fn validate(&self) -> Result<(), PlanError> {
        let bad = |reason: String| PlanError::Invalid {
            plan: self.name.clone(),
            reason,
        };
        let total: u64 = self
            .sections
            .iter()
            .map(|s| s.share_ppm as u64)
            .sum::<u64>()
            + self.reserve_ppm as u64;
        if total > 1_000_000 {
            return Err(bad(format!(
                "shares and reserve add up to {:.1} %, more than 100 %",
                total as f64 / 1e4
            )));
        }
        for (i, a) in self.sections.iter().enumerate() {
            if self.sections[..i].iter().any(|b| b.kind == a.kind) {
                return Err(bad(format!("section {} appears twice", a.kind.name())));
            }
        }
        if self.sections.is_empty() {
            return Err(bad("a plan needs at least one section".into()));
        }
        Ok(())
    }
}
