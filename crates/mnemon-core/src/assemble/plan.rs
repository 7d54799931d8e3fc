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

/// Design v2 §1.3's buffer, kept free in every phase.
pub const DEFAULT_PHASE_BUFFER: f64 = 0.15;

/// Design v2 §1.3's phase budgets: shares of the window per component.
pub const DEFAULT_PHASE_BUDGETS: [(&str, &[(&str, f64)]); 3] = [
    (
        "planning",
        &[
            ("requirements_analysis", 0.10),
            ("decision_records", 0.07),
            ("task_breakdown", 0.05),
        ],
    ),
    (
        "execution",
        &[
            ("task_context", 0.35),
            ("code_generation", 0.15),
            ("validation", 0.10),
        ],
    ),
    (
        "validation",
        &[
            ("test_results", 0.08),
            ("quality_scores", 0.05),
            ("review", 0.02),
        ],
    ),
];

/// Where each of design v2's budget components comes from in mnemon's
/// memory.
pub const PHASE_COMPONENTS: [(&str, SectionKind); 9] = [
    ("requirements_analysis", SectionKind::ProjectState),
    ("decision_records", SectionKind::Decisions),
    ("task_breakdown", SectionKind::WorkPlan),
    ("task_context", SectionKind::WorkingMemory),
    ("code_generation", SectionKind::Fragments),
    ("validation", SectionKind::EntityFacts),
    ("test_results", SectionKind::WorkingMemory),
    ("quality_scores", SectionKind::EntityFacts),
    ("review", SectionKind::Decisions),
];

/// A budget component's section: one of [`PHASE_COMPONENTS`] or a section
/// name.
pub fn component_section(name: &str) -> Option<SectionKind> {
    PHASE_COMPONENTS
        .iter()
        .find(|(c, _)| *c == name)
        .map(|(_, k)| *k)
        .or_else(|| SectionKind::parse(name))
}

pub const PRESETS: [&str; 11] = [
    "tiers",
    "qa",
    "conversation",
    "router",
    "planner",
    "compaction",
    "hot",
    "recall",
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
            // take what they fill; the latest turns and the summary what
            // retrieval leaves. Fixed shares for them (15 % and 5 %) cost
            // 0.02-0.09 recall on every set at 1K-4K: the question's
            // evidence is rarely in the last session, and when it is,
            // retrieval finds it there too.
            "qa" => (
                0.0,
                vec![
                    s(HotContext, 0, 0.0, true),
                    s(Fragments, 1, 1.0, false),
                    s(RecentMessages, 2, 0.0, false),
                    s(SessionSummary, 3, 0.0, false),
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
            // What stands in for the older turns of a conversation that
            // no longer fits (the proxy's compaction): the standing facts,
            // the summary of what was said, and the older turns the last
            // question needs. No recent turns: the caller sends those
            // verbatim itself.
            "compaction" => (
                0.0,
                vec![
                    s(HotContext, 0, 0.25, false),
                    s(SessionSummary, 1, 0.35, false),
                    s(Fragments, 2, 0.40, false),
                ],
                None,
            ),
            // The standing facts alone: goals, constraints, decisions and
            // notes (the proxy's `inject = "hot"`).
            "hot" => (0.0, vec![s(HotContext, 0, 1.0, false)], None),
            // Retrieved records alone: what a question needs from the
            // past when everything else is sent already.
            "recall" => (0.0, vec![s(Fragments, 0, 1.0, false)], None),
            // Design v2 §1.3, with its 15 % buffer kept free.
            phase if phase.starts_with("phase:") => {
                let name = &phase["phase:".len()..];
                let parts = DEFAULT_PHASE_BUDGETS
                    .iter()
                    .find(|(p, _)| *p == name)
                    .ok_or_else(|| PlanError::UnknownPreset(phase.to_string()))?
                    .1
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v));
                return BudgetPlan::phase(name, DEFAULT_PHASE_BUFFER, parts);
            }
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

    /// Design v2's plan for `phase` (planning, execution or validation):
    /// the hot context whole, each budget component in its section by
    /// share, then the phase's other sections from leftovers; `buffer` is
    /// kept free. Components are design v2's names or section names.
    pub fn phase(
        phase: &str,
        buffer: f64,
        parts: impl IntoIterator<Item = (String, f64)>,
    ) -> Result<BudgetPlan, PlanError> {
        use SectionKind::*;
        let name = format!("phase:{phase}");
        let fillers: &[SectionKind] = match phase {
            "planning" => &[SessionSummary, Fragments],
            "execution" => &[SessionSummary],
            "validation" => &[Fragments],
            _ => return Err(PlanError::UnknownPreset(name)),
        };
        let mut shares: Vec<(SectionKind, f64)> = Vec::new();
        for (component, share) in parts {
            let kind = component_section(&component).ok_or_else(|| PlanError::Invalid {
                plan: name.clone(),
                reason: format!(
                    "unknown budget component `{component}`: use {} or a section name ({})",
                    PHASE_COMPONENTS.map(|(c, _)| c).join(", "),
                    SectionKind::ALL.map(SectionKind::name).join(", ")
                ),
            })?;
            match shares.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, s)) => *s += share,
                None => shares.push((kind, share)),
            }
        }
        shares.retain(|(k, _)| *k != HotContext);
        shares.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut sections = vec![s(HotContext, 0, 0.0, true)];
        for (kind, share) in shares {
            sections.push(s(kind, sections.len() as u8, share, false));
        }
        for kind in fillers {
            if !sections.iter().any(|x| x.kind == *kind) {
                sections.push(s(*kind, sections.len() as u8, 0.0, false));
            }
        }
        let plan = BudgetPlan {
            name,
            reserve_ppm: (buffer * 1e6).round() as u32,
            sections,
            default_budget: None,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// This plan with retrieval first, for a context that has a question:
    /// fragments go ahead of every other optional section, with at least
    /// `worth_ppm` of the budget (what the question's good matches fill,
    /// the caller's estimate). The other optional sections keep their
    /// proportions in what is left, so the shares still add up to what
    /// they did. A plan without fragments, or whose fragments already
    /// have that much, is returned as it is.
    pub fn led_by_question(&self, worth_ppm: u32) -> BudgetPlan {
        let Some(f) = self
            .sections
            .iter()
            .find(|s| s.kind == SectionKind::Fragments && !s.required)
        else {
            return self.clone();
        };
        // Never more than the reserve and the required sections leave.
        let held: u64 = self
            .sections
            .iter()
            .filter(|s| s.required)
            .map(|s| u64::from(s.share_ppm))
            .sum::<u64>()
            + u64::from(self.reserve_ppm);
        let worth_ppm = worth_ppm.min(1_000_000u64.saturating_sub(held) as u32);
        if f.share_ppm >= worth_ppm {
            return self.clone();
        }
        let others: u64 = self
            .sections
            .iter()
            .filter(|s| !s.required && s.kind != SectionKind::Fragments)
            .map(|s| u64::from(s.share_ppm))
            .sum();
        let free = 1_000_000u64
            .saturating_sub(held)
            .saturating_sub(u64::from(worth_ppm));
        let lead = self
            .sections
            .iter()
            .filter(|s| !s.required)
            .map(|s| s.priority)
            .min()
            .unwrap_or(0);
        let mut plan = self.clone();
        for s in &mut plan.sections {
            if s.required {
                continue;
            }
            if s.kind == SectionKind::Fragments {
                s.share_ppm = worth_ppm;
                s.priority = lead;
            } else {
                if others > free {
                    s.share_ppm = (u64::from(s.share_ppm) * free / others) as u32;
                }
                // Ties in priority are broken by kind, and fragments are
                // the last kind: every other section moves one down.
                s.priority = s.priority.saturating_add(1);
            }
        }
        plan
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
        if self.reserve_ppm >= 1_000_000 {
            return Err(bad(
                "its reserve keeps the whole budget free; give a reserve under 100 %".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_puts_fragments_first_with_the_share_they_are_worth() {
        let tiers = BudgetPlan::preset("tiers").unwrap();
        let led = tiers.led_by_question(400_000);
        assert_eq!(led.validate(), Ok(()));
        let mut order: Vec<&SectionPlan> = led.sections.iter().filter(|s| !s.required).collect();
        order.sort_by_key(|s| (s.priority, s.kind));
        assert_eq!(order[0].kind, SectionKind::Fragments);
        assert_eq!(order[0].share_ppm, 400_000);
        // The others keep their proportions in the 60 % left.
        let wm = led
            .sections
            .iter()
            .find(|s| s.kind == SectionKind::WorkingMemory)
            .unwrap();
        assert_eq!(wm.share_ppm, 180_000);
        let total: u64 = led.sections.iter().map(|s| u64::from(s.share_ppm)).sum();
        assert!(total <= 1_000_000, "{total}");
        // qa already gives fragments everything; a plan without them is
        // left alone.
        let qa = BudgetPlan::preset("qa").unwrap();
        assert_eq!(qa.led_by_question(400_000), qa);
        let router = BudgetPlan::preset("router").unwrap();
        assert_eq!(router.led_by_question(400_000), router);
    }

    proptest::proptest! {
        #[test]
        fn a_plan_led_by_a_question_stays_valid(
            preset in proptest::sample::select(PRESETS.to_vec()),
            worth in 0u32..=1_000_000,
        ) {
            let plan = BudgetPlan::preset(preset).unwrap();
            let led = plan.led_by_question(worth);
            proptest::prop_assert_eq!(led.validate(), Ok(()));
            proptest::prop_assert_eq!(led.sections.len(), plan.sections.len());
        }
    }

    #[test]
    fn a_reserve_of_the_whole_budget_is_refused() {
        let mut plan = BudgetPlan::preset("phase:execution").unwrap();
        assert_eq!(plan.validate(), Ok(()));
        plan.sections = vec![s(SectionKind::HotContext, 0, 0.0, true)];
        plan.reserve_ppm = 1_000_000;
        let err = plan.validate().unwrap_err().to_string();
        assert!(err.contains("give a reserve under 100 %"), "{err}");
    }
}
