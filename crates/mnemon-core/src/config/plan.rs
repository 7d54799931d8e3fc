//! Context plans of the user's own (`[plans.<name>]` in config).

use serde::{Deserialize, Serialize};

use crate::assemble::{BudgetPlan, PlanError, SectionKind, SectionPlan};

/// A context plan of the user's own (`[plans.<name>]`), used with
/// `mnemon context --preset <name>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlanConfig {
    /// Share of the budget kept free, 0 to 1.
    pub reserve: f64,
    /// The budget when `--budget` is not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    pub sections: Vec<PlanSectionConfig>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlanSectionConfig {
    /// A section name: hot_context, working_memory, recent_messages, …
    pub kind: String,
    /// Share of the budget, 0 to 1.
    pub share: f64,
    /// Lower fills first; defaults to the section's place in the list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    pub min_tokens: u64,
    pub required: bool,
}

impl PlanConfig {
    pub fn to_plan(&self, name: &str) -> Result<BudgetPlan, PlanError> {
        let invalid = |reason: String| PlanError::Invalid {
            plan: name.to_string(),
            reason,
        };
        if !(self.reserve.is_finite() && (0.0..1.0).contains(&self.reserve)) {
            return Err(invalid(format!(
                "reserve {} must be a share from 0 up to (not including) 1",
                self.reserve
            )));
        }
        let mut sections = Vec::new();
        for (i, sc) in self.sections.iter().enumerate() {
            let kind = SectionKind::parse(&sc.kind).ok_or_else(|| {
                invalid(format!(
                    "unknown section `{}`: use one of {}",
                    sc.kind,
                    SectionKind::ALL.map(SectionKind::name).join(", ")
                ))
            })?;
            if !(sc.share.is_finite() && (0.0..=1.0).contains(&sc.share)) {
                return Err(invalid(format!(
                    "section {} has share {}; use a share from 0 to 1",
                    sc.kind, sc.share
                )));
            }
            sections.push(SectionPlan {
                kind,
                priority: sc.priority.unwrap_or(i.min(255) as u8),
                share_ppm: (sc.share * 1e6).round() as u32,
                min_tokens: sc.min_tokens,
                required: sc.required,
            });
        }
        let plan = BudgetPlan {
            name: name.to_string(),
            reserve_ppm: (self.reserve * 1e6).round() as u32,
            sections,
            default_budget: self.budget,
        };
        plan.validate()?;
        Ok(plan)
    }
}
