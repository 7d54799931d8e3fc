//! The typed configuration. Every section has `deny_unknown_fields`, so a
//! misspelt key is an error rather than a silently ignored setting.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::plan::PlanConfig;
use crate::assemble::plan::{DEFAULT_PHASE_BUDGETS, DEFAULT_PHASE_BUFFER};
use crate::assemble::{BudgetPlan, PRESETS, PlanError};
use crate::models::ModelOverride;
use crate::optimize::Thresholds;
use crate::profile::{ProfileName, ProfileOverrides};
use crate::tokens::ChatFormat;
use crate::window::Action;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub model: ModelSection,
    pub context_window: ContextWindowSection,
    pub profile: ProfileSection,
    pub working_memory: WorkingMemorySection,
    pub checkpoint: CheckpointSection,
    pub session: SessionSection,
    pub episodic: EpisodicSection,
    pub decisions: DecisionsSection,
    pub optimization: OptimizationSection,
    pub phase_budgets: PhaseBudgets,
    /// The model server, if any (`mnemon ask`, window detection, LLM
    /// summaries).
    pub llm: super::LlmSection,
    /// How `mnemon serve` manages the window of agents that reach their
    /// model through it.
    pub proxy: super::ProxySection,
    /// Secrets removed before anything is stored.
    pub redaction: RedactionSection,
    /// Retrieval by meaning, with a sentence-embedding model.
    pub embeddings: EmbeddingsSection,
    /// Where the project's memory is kept: `.mnemon/mnemon.db`, or a
    /// PostgreSQL database shared by several machines.
    pub storage: StorageSection,
    /// Extra models, or overrides of built-in ones, by id.
    pub models: BTreeMap<String, ModelOverride>,
    /// Extra chat framings, or overrides of built-in ones, by name.
    pub chat_formats: BTreeMap<String, ChatFormat>,
    /// Context plans of the user's own, by name.
    pub plans: BTreeMap<String, PlanConfig>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSection {
    /// The orchestrator's model: a registry id or alias.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextWindowSection {
    /// Ask the model's server for the window it really serves.
    pub auto_detect: bool,
    /// Overrides the model's window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Share of the window mnemon may use, in (0, 1].
    pub utilization_limit: f64,
    /// Upper edge of green (share of the effective window).
    pub green_threshold: f64,
    /// Upper edge of yellow.
    pub yellow_threshold: f64,
    /// Upper edge of orange; red begins here.
    pub orange_threshold: f64,
    /// The emergency failsafe.
    pub red_threshold: f64,
    /// Window used when neither a model nor `max_tokens` gives one.
    pub fallback_size: u64,
    pub green_action: Action,
    pub yellow_action: Action,
    pub orange_action: Action,
    pub red_action: Action,
}

impl Default for ContextWindowSection {
    fn default() -> Self {
        ContextWindowSection {
            auto_detect: true,
            max_tokens: None,
            utilization_limit: 1.0,
            green_threshold: 0.50,
            yellow_threshold: 0.70,
            orange_threshold: 0.85,
            red_threshold: 0.95,
            fallback_size: 16_384,
            green_action: Action::ProceedNormally,
            yellow_action: Action::MonitorAndPlanCheckpoint,
            orange_action: Action::OptimizeThenCheckpoint,
            red_action: Action::EmergencyCheckpointAndRefresh,
        }
    }
}

/// `auto`, or a profile forced by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProfileChoice {
    #[default]
    Auto,
    Named(ProfileName),
}

impl Serialize for ProfileChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ProfileChoice::Auto => s.serialize_str("auto"),
            ProfileChoice::Named(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ProfileChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.eq_ignore_ascii_case("auto") {
            return Ok(ProfileChoice::Auto);
        }
        s.parse()
            .map(ProfileChoice::Named)
            .map_err(|e: String| serde::de::Error::custom(format!("{e}, or auto")))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileSection {
    /// `auto` picks the profile from the effective window.
    pub name: ProfileChoice,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarization_threshold_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_summary_max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_state_max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_plan_max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_decision_records: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record_max_tokens: Option<u64>,
}

/// `[redaction]`: API keys, tokens, private keys and passwords are replaced
/// by a typed placeholder before anything is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedactionSection {
    pub enabled: bool,
    /// More secrets of your own, on top of the built-in ones.
    pub patterns: Vec<RedactionPattern>,
}

impl Default for RedactionSection {
    fn default() -> Self {
        RedactionSection {
            enabled: true,
            patterns: Vec::new(),
        }
    }
}

/// `[storage]`: unset, the embedded SQLite file `.mnemon/mnemon.db`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageSection {
    /// A PostgreSQL connection URL (`postgres://USER@HOST:PORT/DATABASE`).
    /// The password comes from `PGPASSWORD` or `~/.pgpass`, so the URL can
    /// be shared without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The PostgreSQL schema the project's tables live in (default: the
    /// connection's, usually `public`); several projects share a database
    /// in schemas of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
}

impl StorageSection {
    /// Whether `name` is a PostgreSQL schema name mnemon may write into SQL
    /// unquoted: lower-case letters, digits and `_`, at most 63 bytes, not
    /// starting with a digit or `pg_` (PostgreSQL's own).
    pub fn plain_schema_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 63
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && !name.starts_with("pg_")
    }
}

/// Where sentence embeddings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingProvider {
    /// A model directory run in-process (all-MiniLM-L6-v2, bge-small-en-v1.5).
    Local,
    /// Ollama's `/api/embed`.
    Ollama,
    /// An OpenAI-compatible `/v1/embeddings` (llama.cpp's `llama-server
    /// --embeddings`, vLLM, OpenAI).
    #[serde(alias = "openai-compatible")]
    Openai,
}

/// `[embeddings]`: retrieval by meaning, fused with retrieval by words.
/// Unset provider: words only, as before.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<EmbeddingProvider>,
    /// `local`: the model's directory (config.json, tokenizer.json,
    /// model.safetensors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The model: its name at the server, and the name its vectors are
    /// stored under (for `local`, the directory's name when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the server's API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// One secret of the user's own: its name (shown in the placeholder) and a
/// regular expression (Rust `regex` syntax).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactionPattern {
    pub name: String,
    pub regex: String,
}

impl RedactionSection {
    /// The redactor this section describes.
    pub fn redactor(&self) -> Result<crate::memory::Redactor, crate::memory::PatternError> {
        if !self.enabled {
            return Ok(crate::memory::Redactor::off());
        }
        let extra: Vec<(String, String)> = self
            .patterns
            .iter()
            .map(|p| (p.name.clone(), p.regex.clone()))
            .collect();
        crate::memory::Redactor::with_patterns(&extra)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkingMemorySection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_operations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_interval_hours: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_interval: Option<u64>,
    pub threshold_based: bool,
    pub time_based: bool,
    pub operation_count_based: bool,
    pub phase_completion: bool,
    pub session_end: bool,
    pub manual: bool,
}

impl Default for CheckpointSection {
    fn default() -> Self {
        CheckpointSection {
            time_interval_hours: None,
            operation_interval: None,
            threshold_based: true,
            time_based: true,
            operation_count_based: true,
            phase_completion: true,
            session_end: true,
            manual: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionSection {
    /// Compress the session log past this many tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression_threshold: Option<u64>,
    /// A compressed log is at most this share of the original.
    pub compression_target_ratio: f64,
}

impl Default for SessionSection {
    fn default() -> Self {
        SessionSection {
            compression_threshold: None,
            compression_target_ratio: 0.7,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EpisodicSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression_threshold: Option<u64>,
    /// Old versions kept of each episodic document.
    pub keep_versions: u64,
}

impl Default for EpisodicSection {
    fn default() -> Self {
        EpisodicSection {
            compression_threshold: None,
            keep_versions: 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecisionsSection {
    pub log_format: String,
    /// Must stay false: mnemon never stores raw chain-of-thought.
    pub log_raw_reasoning: bool,
}

impl Default for DecisionsSection {
    fn default() -> Self {
        DecisionsSection {
            log_format: "adr".into(),
            log_raw_reasoning: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimizationSection {
    pub artifact_registry_enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_registry_threshold_tokens: Option<u64>,
    pub differential_state_enabled: bool,
    pub external_storage_enabled: bool,
    pub external_storage_threshold_tokens: u64,
    pub pruning_enabled: bool,
    pub prune_debug_traces_older_than_hours: f64,
    pub prune_validation_history_keep_last: u64,
    pub prune_error_log_keep_unresolved_all: bool,
    pub prune_error_log_keep_resolved_last: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase_summary_max_tokens: Option<u64>,
}

impl OptimizationSection {
    /// The optimizer's thresholds: this section's, the profile's where it
    /// leaves them unset.
    pub fn thresholds(&self, profile: &crate::profile::ProfileParams) -> Thresholds {
        let base = Thresholds::of(profile);
        Thresholds {
            artifact_registry: base
                .artifact_registry
                .filter(|_| self.artifact_registry_enabled),
            differential_state: self.differential_state_enabled,
            externalize: self
                .external_storage_enabled
                .then_some(self.external_storage_threshold_tokens),
            pruning: self.pruning_enabled,
            debug_trace_max_age_ms: (self.prune_debug_traces_older_than_hours * 3_600_000.0) as i64,
            keep_validations: self.prune_validation_history_keep_last as usize,
            keep_resolved_errors: self.prune_error_log_keep_resolved_last as usize,
            keep_unresolved_errors: self.prune_error_log_keep_unresolved_all,
            ..base
        }
    }
}

impl Default for OptimizationSection {
    fn default() -> Self {
        OptimizationSection {
            artifact_registry_enabled: true,
            artifact_registry_threshold_tokens: None,
            differential_state_enabled: true,
            external_storage_enabled: true,
            external_storage_threshold_tokens: crate::optimize::EXTERNALIZE_TOKENS,
            pruning_enabled: true,
            prune_debug_traces_older_than_hours: crate::optimize::DEBUG_TRACE_MAX_AGE_MS as f64
                / 3_600_000.0,
            prune_validation_history_keep_last: crate::optimize::KEEP_VALIDATIONS as u64,
            prune_error_log_keep_unresolved_all: true,
            prune_error_log_keep_resolved_last: crate::optimize::KEEP_RESOLVED_ERRORS as u64,
            phase_summary_max_tokens: None,
        }
    }
}

/// Design v2's phase budgets: shares of the window per component of each
/// phase, plus a reserve kept free in every phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PhaseBudgets {
    pub buffer: f64,
    pub planning: BTreeMap<String, f64>,
    pub execution: BTreeMap<String, f64>,
    pub validation: BTreeMap<String, f64>,
}

impl Default for PhaseBudgets {
    fn default() -> Self {
        let map = |phase: &str| -> BTreeMap<String, f64> {
            DEFAULT_PHASE_BUDGETS
                .iter()
                .find(|(p, _)| *p == phase)
                .map(|(_, parts)| parts.iter().map(|(k, v)| (k.to_string(), *v)).collect())
                .unwrap_or_default()
        };
        PhaseBudgets {
            buffer: DEFAULT_PHASE_BUFFER,
            planning: map("planning"),
            execution: map("execution"),
            validation: map("validation"),
        }
    }
}

impl PhaseBudgets {
    pub fn phases(&self) -> [(&'static str, &BTreeMap<String, f64>); 3] {
        [
            ("planning", &self.planning),
            ("execution", &self.execution),
            ("validation", &self.validation),
        ]
    }
}

impl Config {
    /// The profile parameters config sets explicitly.
    pub fn profile_overrides(&self) -> ProfileOverrides {
        ProfileOverrides {
            working_memory_max_operations: self.working_memory.max_operations,
            working_memory_max_tokens: self.working_memory.max_tokens,
            summarization_threshold_tokens: self.profile.summarization_threshold_tokens,
            checkpoint_interval_hours: self.checkpoint.time_interval_hours,
            checkpoint_interval_operations: self.checkpoint.operation_interval,
            session_summary_max_tokens: self.profile.session_summary_max_tokens,
            project_state_max_tokens: self.profile.project_state_max_tokens,
            work_plan_max_tokens: self.profile.work_plan_max_tokens,
            max_decision_records: self.profile.max_decision_records,
            decision_record_max_tokens: self.profile.decision_record_max_tokens,
            artifact_registry_threshold_tokens: self
                .optimization
                .artifact_registry_threshold_tokens,
            phase_summary_max_tokens: self.optimization.phase_summary_max_tokens,
            session_compression_threshold_tokens: self.session.compression_threshold,
            episodic_compression_threshold_tokens: self.episodic.compression_threshold,
        }
    }

    /// The plan called `name`: the user's own, the phase plans built from
    /// `[phase_budgets]`, else a preset.
    /// Settings that are accepted but cannot act in this build, each with
    /// why and what decides instead, so that `mnemon config validate` never
    /// lets a setting look effective when it is not.
    pub fn inert_settings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.context_window.auto_detect && !self.llm.enabled() {
            out.push(
                "context_window.auto_detect = true has nothing to ask: no model server is configured, so the window comes from context_window.max_tokens, the model registry or fallback_size. Set llm.provider (see README, \"Talking to an LLM\") to detect the window the server really serves".to_string(),
            );
        }
        out
    }

    pub fn plan(&self, name: &str) -> Result<BudgetPlan, PlanError> {
        if let Some(p) = self.plans.get(name) {
            return p.to_plan(name);
        }
        if let Some(phase) = name.strip_prefix("phase:")
            && let Some((_, parts)) = self
                .phase_budgets
                .phases()
                .into_iter()
                .find(|(p, _)| *p == phase)
        {
            let parts = parts.iter().map(|(k, v)| (k.clone(), *v));
            return BudgetPlan::phase(phase, self.phase_budgets.buffer, parts);
        }
        BudgetPlan::preset(name).map_err(|e| match e {
            PlanError::UnknownPreset(_) if !self.plans.is_empty() => PlanError::Invalid {
                plan: name.to_string(),
                reason: format!(
                    "no such plan: use a preset ({}) or one of config's plans ({})",
                    PRESETS.join(", "),
                    self.plans.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            },
            e => e,
        })
    }

    /// The chat framing called `name`: config's own, else a built-in one.
    pub fn chat_format(&self, name: &str) -> Option<ChatFormat> {
        self.chat_formats.get(name).copied().or_else(|| {
            ChatFormat::BUILT_IN
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, f)| *f)
        })
    }
}
