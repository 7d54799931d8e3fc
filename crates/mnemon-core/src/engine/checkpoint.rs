//! Checkpoints in ADR-018's JSON shape, with exactly its keys.
//!
//! The state needed to resume lives inside `working_memory_snapshot`, which
//! ADR-018 leaves open: positions in the operation log, the working-memory
//! and live-message positions, hot-item versions and document versions.
//! That is why a checkpoint costs O(live context), not O(history): it
//! references the log instead of copying it.
//!
//! `working_memory_snapshot.digest` is a SHA-256 of the whole checkpoint
//! (with the digest blank), so a file that was truncated, damaged or edited
//! by hand is refused before anything is applied. Reformatting the JSON is
//! fine: the digest covers values, not whitespace.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::window::Zone;

/// The `working_memory_snapshot.format` this mnemon writes and reads.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointFile {
    pub checkpoint: Checkpoint,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// `CP-YYYYmmdd-HHMMSS`, with `-2`, `-3`… when several fall in one second.
    pub id: String,
    /// RFC 3339, UTC.
    pub timestamp: String,
    /// `threshold_70pct`, `threshold_85pct`, `emergency_95pct`, `time_1h`,
    /// `operations_50`, `manual`, `phase_complete_planning`, `session_end`.
    pub trigger: String,
    pub context_snapshot: ContextSnapshot,
    pub resume_instructions: ResumeInstructions,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSnapshot {
    pub tokens_used: u64,
    /// Share of the effective max, 0 to 1.
    pub percentage: f64,
    pub effective_max: u64,
    pub configured_max: u64,
    pub utilization_limit: f64,
    pub plan_manifest_path: String,
    pub phase_summary_path: Option<String>,
    pub artifacts_registry_path: String,
    pub decision_records_path: String,
    pub working_memory_snapshot: Snapshot,
}

/// What resuming restores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub format: u32,
    pub agent: String,
    pub session_id: Option<String>,
    pub epoch: u64,
    pub baseline: u64,
    /// Tokens added in the epoch up to the checkpoint.
    pub added: u64,
    pub zone: Zone,
    /// Log positions at the checkpoint.
    pub operation_position: i64,
    pub message_position: i64,
    /// Working memory, oldest first, as operation log positions.
    pub operations: Vec<i64>,
    /// Live messages, oldest first, as message log positions.
    pub messages: Vec<i64>,
    pub hot_context: HotRef,
    /// Current version of each episodic document.
    pub documents: BTreeMap<String, u64>,
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotRef {
    pub version: u64,
    /// Live items as `[id, version]`, oldest first.
    pub items: Vec<(String, u64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeInstructions {
    pub next_task: Option<String>,
    pub phase: Option<String>,
    pub blockers: Vec<String>,
    pub context_to_load: Vec<String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    pub model: String,
    pub context_window: u64,
    pub optimization_profile: String,
    pub session_duration_seconds: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "checkpoint {source_name} is not valid checkpoint JSON ({reason}); it may be truncated or damaged. Nothing was restored; pick another with `mnemon checkpoint list`"
    )]
    Malformed { source_name: String, reason: String },
    #[error(
        "checkpoint {source_name} has format {found}, but this mnemon reads format {FORMAT}. Nothing was restored; resume it with the mnemon that wrote it"
    )]
    UnknownFormat { source_name: String, found: String },
    #[error(
        "checkpoint {source_name} was changed after it was written (its digest does not match its content). Nothing was restored; use an unedited checkpoint"
    )]
    Tampered { source_name: String },
}

impl Checkpoint {
    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: a checkpoint serializes"
    )]
    fn digest_of(&self) -> String {
        let mut blank = self.clone();
        blank.context_snapshot.working_memory_snapshot.digest = String::new();
        let text = serde_json::to_string(&blank).expect("a checkpoint serializes");
        let hash = Sha256::digest(text.as_bytes());
        hash.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Sets the digest; call after every field is final.
    pub fn seal(mut self) -> Checkpoint {
        self.context_snapshot.working_memory_snapshot.digest = self.digest_of();
        self
    }

    /// The file's content: pretty JSON under a top-level `checkpoint` key.
    #[allow(
        clippy::expect_used,
        reason = "invariants of this function, not outside input: a checkpoint serializes"
    )]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&CheckpointFile {
            checkpoint: self.clone(),
        })
        .expect("a checkpoint serializes")
    }

    /// Reads and verifies a checkpoint. `source_name` names it in errors.
    pub fn from_json(text: &str, source_name: &str) -> Result<Checkpoint, CheckpointError> {
        let malformed = |reason: String| CheckpointError::Malformed {
            source_name: source_name.to_string(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        let format = &value["checkpoint"]["context_snapshot"]["working_memory_snapshot"]["format"];
        if !format.is_null() && format.as_u64() != Some(FORMAT as u64) {
            return Err(CheckpointError::UnknownFormat {
                source_name: source_name.to_string(),
                found: format.to_string(),
            });
        }
        let file: CheckpointFile =
            serde_json::from_value(value).map_err(|e| malformed(e.to_string()))?;
        let cp = file.checkpoint;
        if cp.context_snapshot.working_memory_snapshot.digest != cp.digest_of() {
            return Err(CheckpointError::Tampered {
                source_name: source_name.to_string(),
            });
        }
        Ok(cp)
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.context_snapshot.working_memory_snapshot
    }
}

/// `CP-YYYYmmdd-HHMMSS` for a time, with `-n` for the n-th in one second.
pub fn checkpoint_id(at: crate::memory::Timestamp, n: u32) -> String {
    let base = at.datetime().format("CP-%Y%m%d-%H%M%S").to_string();
    if n <= 1 { base } else { format!("{base}-{n}") }
}
