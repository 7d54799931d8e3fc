//! `[proxy]`: how `mnemon serve` manages the window of an agent that talks
//! to its model through mnemon (the OpenAI and Anthropic wire formats).
//! Only data lives here; the proxy itself is in `mnemon-server`.

use serde::{Deserialize, Serialize};

use crate::window::Zone;

/// What the proxy adds to a request it otherwise passes through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Inject {
    /// Nothing: the upstream sees the client's request as sent, so the
    /// provider's prompt cache keeps working.
    #[default]
    None,
    /// The fenced hot context (goals, constraints, decisions, notes).
    Hot,
    /// A fenced context retrieved for the last user turn, within
    /// `inject_budget`.
    Context,
}

impl Inject {
    pub fn name(self) -> &'static str {
        match self {
            Inject::None => "none",
            Inject::Hot => "hot",
            Inject::Context => "context",
        }
    }
}

/// How a compaction brings the conversation's summary up to date.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionSummary {
    /// By `[llm]`'s summarizer, in stages that fit its window (extractive
    /// when it fails): the best summary, at the model's speed.
    #[default]
    Llm,
    /// Extractively, at once: for a slow model, whose summary would make
    /// the compacting request wait.
    Extractive,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProxySection {
    /// Memory placed after the system prompt of every request.
    pub inject: Inject,
    /// Tokens an injected block may take at most.
    pub inject_budget: u64,
    /// The zone a request (with room for its answer) must not reach: from
    /// there on the proxy compacts the conversation's older turns.
    pub compact_at: Zone,
    /// How a compaction summarizes the turns it replaces.
    pub summary: CompactionSummary,
}

impl Default for ProxySection {
    fn default() -> Self {
        ProxySection {
            inject: Inject::None,
            inject_budget: 1_000,
            compact_at: Zone::Orange,
            summary: CompactionSummary::Llm,
        }
    }
}
