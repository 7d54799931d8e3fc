//! The window's accounting, as stored between calls and across restarts.

use serde::{Deserialize, Serialize};

use crate::memory::{Phase, Timestamp};
use crate::window::Zone;

/// The operation kind under which the engine records its own actions
/// (checkpoints, refreshes, resumes). These records are history, not part of
/// the live context: they count in neither working memory nor usage.
pub const ACTION_KIND: &str = "context_action";

/// One agent's context epoch. Usage is `baseline + carried + added`, where
/// `added` is the tokens of the operations and messages of `session_id`
/// recorded after positions `op_seq` and `msg_seq` (read from the log, so
/// it cannot drift from what was stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineState {
    pub agent: String,
    pub session_id: Option<String>,
    /// Rises with every refresh; restored by a resume.
    pub epoch: u64,
    /// Tokens of the memory context loaded when the epoch began.
    pub baseline: u64,
    /// Tokens that were `added` in the epoch a resume restored.
    pub carried: u64,
    /// The epoch counts operations after this log position…
    pub op_seq: i64,
    /// …and messages after this one.
    pub msg_seq: i64,
    /// Operations in working memory that were recorded before `op_seq`
    /// (restored by a resume, or kept by pruning), oldest first.
    pub seed_ops: Vec<i64>,
    /// Messages in the live context recorded before `msg_seq`.
    pub seed_msgs: Vec<i64>,
    /// The zone at the last write, so zone changes survive restarts.
    pub zone: Zone,
    pub emergency: bool,
    pub last_checkpoint: Option<String>,
    pub last_checkpoint_at: Option<Timestamp>,
    /// The operation log position at the last checkpoint (op-count trigger).
    pub checkpoint_op_seq: i64,
    pub refreshes: u64,
    /// `(provider tokens, local usage then)` from the last `report_usage`
    /// in this epoch: usage is the report plus what was added since.
    pub reported: Option<(u64, u64)>,
    /// The phase of the last operation that named one (phase-completion trigger).
    pub phase: Option<Phase>,
    /// The session's tokens when its log was last compacted.
    pub compacted_tokens: u64,
    /// Compare-and-set guard: a commit names the version it read.
    pub version: u64,
    pub started_at: Timestamp,
}

impl EngineState {
    /// The state a new epoch starts from (a refresh, a session's end): its
    /// fresh context is the whole baseline, the logs count on from their
    /// heads, nothing is carried or seeded, and no usage report applies yet.
    /// `used` is the baseline as calibration reads it.
    pub(super) fn next_epoch(
        &self,
        baseline: u64,
        (op_seq, msg_seq): (i64, i64),
        window: &crate::window::ContextWindow,
        used: u64,
    ) -> EngineState {
        EngineState {
            epoch: self.epoch + 1,
            baseline,
            carried: 0,
            op_seq,
            msg_seq,
            seed_ops: Vec::new(),
            seed_msgs: Vec::new(),
            zone: window.zone(used),
            emergency: window.is_emergency(used),
            reported: None,
            ..self.clone()
        }
    }

    pub fn new(agent: &str, at: Timestamp) -> EngineState {
        EngineState {
            agent: agent.to_string(),
            session_id: None,
            epoch: 0,
            baseline: 0,
            carried: 0,
            op_seq: 0,
            msg_seq: 0,
            seed_ops: Vec::new(),
            seed_msgs: Vec::new(),
            zone: Zone::Green,
            emergency: false,
            last_checkpoint: None,
            last_checkpoint_at: None,
            checkpoint_op_seq: 0,
            refreshes: 0,
            reported: None,
            phase: None,
            compacted_tokens: 0,
            version: 0,
            started_at: at,
        }
    }
}

/// Provider-reported tokens ÷ locally counted tokens, per model, in
/// millionths. Learned from `report_usage`; applied to every later estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Calibration {
    pub factor_ppm: u64,
    pub samples: u64,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            factor_ppm: 1_000_000,
            samples: 0,
        }
    }
}

impl Calibration {
    /// Reports outside this range are refused: they mean the provider
    /// counted a different context, not a different tokenizer.
    pub const MIN_PPM: u64 = 250_000;
    pub const MAX_PPM: u64 = 4_000_000;

    /// `local` scaled by the factor, rounded up so estimates err full.
    pub fn apply(self, local: u64) -> u64 {
        ((local as u128 * self.factor_ppm as u128).div_ceil(1_000_000)) as u64
    }

    pub fn factor(self) -> f64 {
        self.factor_ppm as f64 / 1e6
    }

    /// Blends in one observation: the first is taken as is, later ones move
    /// the factor half-way, so one odd report does not swing it.
    pub fn observe(self, observed_ppm: u64) -> Calibration {
        let factor_ppm = if self.samples == 0 {
            observed_ppm
        } else {
            (self.factor_ppm + observed_ppm).div_ceil(2)
        };
        Calibration {
            factor_ppm,
            samples: self.samples + 1,
        }
    }
}

/// Totals of the log after an epoch's positions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LiveTotals {
    pub op_tokens: u64,
    pub op_count: u64,
    pub msg_tokens: u64,
    pub msg_count: u64,
}

impl LiveTotals {
    pub fn tokens(&self) -> u64 {
        self.op_tokens + self.msg_tokens
    }
}
