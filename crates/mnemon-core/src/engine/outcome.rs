//! What a write answers: the value stored, the events the engine raised
//! on its own because of it, and the window after it.

use serde::Serialize;

use super::checkpoint::Checkpoint;
use crate::memory::Timestamp;
use crate::window::{Action, WindowStatus, Zone};

/// Something the engine did on its own, for the caller to show or log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EngineEvent {
    SessionStarted {
        session_id: String,
    },
    ZoneChanged {
        from: Zone,
        to: Zone,
        used: u64,
        action: Action,
    },
    EmergencyEntered {
        used: u64,
    },
    EmergencyCleared {
        used: u64,
    },
    CheckpointCreated {
        id: String,
        trigger: String,
    },
    Optimized {
        /// Operations replaced or hidden.
        items: usize,
        tokens_before: u64,
        tokens_after: u64,
        /// Files under `.mnemon/` now holding what left the context.
        artifacts: Vec<String>,
    },
    Refreshed {
        trigger: String,
        tokens_before: u64,
        tokens_after: u64,
        epoch: u64,
        summarized: usize,
        kept_verbatim: usize,
        pinned_deferred: usize,
        /// Who wrote the summary: `extractive`, or an LLM as
        /// `server:model`.
        summarized_by: String,
        /// Why parts of it fell back to extractive, one reason per stage.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fell_back: Vec<String>,
    },
    SessionLogCompacted {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// Secrets were removed from what was stored, one kind per secret
    /// (`openai key`, `password`); the stored text has a placeholder.
    Redacted {
        secrets: Vec<String>,
    },
}

/// The result of a write: what was stored, what the engine did about it,
/// and the checkpoints it created (for the caller to write as files).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome<T> {
    pub value: T,
    pub events: Vec<EngineEvent>,
    #[serde(skip)]
    pub checkpoints: Vec<Checkpoint>,
    pub status: EngineStatus,
}

/// `mnemon status`'s view of the engine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineStatus {
    pub window: WindowStatus,
    pub model: String,
    pub agent: String,
    pub session_id: Option<String>,
    pub epoch: u64,
    pub baseline: u64,
    /// Tokens recorded in this epoch (including those carried by a resume).
    pub added: u64,
    /// `baseline + added`, as counted locally.
    pub local_usage: u64,
    /// The last usage a provider reported in this epoch, if any.
    pub reported: Option<u64>,
    pub calibration: f64,
    pub calibration_samples: u64,
    pub working_memory_operations: usize,
    pub refreshes: u64,
    pub last_checkpoint: Option<String>,
    pub last_checkpoint_at: Option<Timestamp>,
}
