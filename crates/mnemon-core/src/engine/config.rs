//! How an engine is set up: its window and profile, and which automatic
//! checkpoints are on.

use super::LiveCaps;
use crate::profile::ProfileParams;
use crate::window::ContextWindow;

/// What the engine needs to know about the model and profile.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub window: ContextWindow,
    pub profile: ProfileParams,
    /// The model name calibration is kept under.
    pub model: String,
    /// Episodic document versions to keep.
    pub keep_versions: u64,
    /// Share of the effective window (millionths) that the memory context
    /// loaded at the start of an epoch may fill. Below the yellow edge, so
    /// a refresh always lands in green.
    pub epoch_budget_ppm: u32,
    /// What the optimizer works to (config's `[optimization]`).
    pub optimizer: crate::optimize::Thresholds,
    /// Which triggers take checkpoints (config's `[checkpoint]` switches).
    pub checkpoints: CheckpointTriggers,
    /// The share of its input (millionths) a compacted session log may
    /// keep: config's `session.compression_target_ratio`.
    pub compression_ratio_ppm: u64,
}

/// Config's `[checkpoint]` switches: which kinds of trigger take a
/// checkpoint. A zone action still optimizes or refreshes with its
/// trigger off; it just takes no checkpoint first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointTriggers {
    /// `threshold_70pct`, `threshold_85pct`, `emergency_95pct`.
    pub threshold: bool,
    /// `time_<hours>`: every `checkpoint.time_interval_hours`.
    pub time: bool,
    /// `operations_<n>`: every `checkpoint.operation_interval` operations.
    pub operations: bool,
    /// `phase_complete_<phase>`.
    pub phase: bool,
    /// `session_end`.
    pub session_end: bool,
    /// Anything a person or caller asks for by name (`manual`, the default).
    pub manual: bool,
}

impl Default for CheckpointTriggers {
    fn default() -> Self {
        CheckpointTriggers {
            threshold: true,
            time: true,
            operations: true,
            phase: true,
            session_end: true,
            manual: true,
        }
    }
}

impl CheckpointTriggers {
    /// The switch that governs `trigger` (its value here) and its config key.
    fn switch(&self, trigger: &str) -> (bool, &'static str) {
        if trigger.starts_with("threshold_") || trigger == "emergency_95pct" {
            (self.threshold, "checkpoint.threshold_based")
        } else if trigger.starts_with("time_") {
            (self.time, "checkpoint.time_based")
        } else if trigger.starts_with("operations_") {
            (self.operations, "checkpoint.operation_count_based")
        } else if trigger.starts_with("phase_complete_") {
            (self.phase, "checkpoint.phase_completion")
        } else if trigger == "session_end" {
            (self.session_end, "checkpoint.session_end")
        } else {
            (self.manual, "checkpoint.manual")
        }
    }

    /// Whether a checkpoint with this trigger name is taken.
    pub fn allows(&self, trigger: &str) -> bool {
        self.switch(trigger).0
    }

    /// The `[checkpoint]` key that switches `trigger` on or off.
    pub fn key_for(&self, trigger: &str) -> &'static str {
        self.switch(trigger).1
    }
}

impl EngineConfig {
    pub fn new(window: ContextWindow, profile: ProfileParams, model: &str) -> EngineConfig {
        EngineConfig {
            optimizer: crate::optimize::Thresholds::of(&profile),
            window,
            profile,
            model: model.to_string(),
            keep_versions: 10,
            epoch_budget_ppm: 400_000,
            checkpoints: CheckpointTriggers::default(),
            compression_ratio_ppm: crate::compress::SEED_RATIO_PPM,
        }
    }

    /// Tokens the memory context may fill when an epoch begins.
    pub fn epoch_budget(&self) -> u64 {
        (self.window.effective_max() as u128 * self.epoch_budget_ppm as u128 / 1_000_000) as u64
    }

    /// Section caps from the profile, within the epoch budget.
    pub fn live_caps(&self) -> LiveCaps {
        let p = &self.profile;
        let budget = self.epoch_budget();
        LiveCaps {
            hot: (budget / 4).max(1),
            session_summary: p.session_summary_max_tokens.value,
            project_state: p.project_state_max_tokens.value,
            work_plan: p.work_plan_max_tokens.value,
            decision_each: p.decision_record_max_tokens.value,
            decisions: p.decision_record_max_tokens.value * p.max_decision_records.value,
            working: p.working_memory_max_tokens.value,
            messages: p.working_memory_max_tokens.value,
        }
    }
}
