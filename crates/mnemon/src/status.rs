//! "Where am I?": the window, zone, action and profile, and where each
//! number came from.

use mnemon_core::engine::EngineStatus;
use mnemon_core::models::ModelSpec;
use mnemon_core::profile::ProfileParams;
use mnemon_core::setup::{ProfileSource, WindowSizes, WindowSource};
use mnemon_core::tokens::ChatFormat;
use mnemon_core::window::{Action, WindowStatus};
use serde::Serialize;

use crate::Mnemon;
use crate::error::Result;
use crate::settings::{Settings, display_path};

/// Where the usage figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageSource {
    /// The caller gave it (`--used`).
    Given,
    /// The provider's last report plus what was recorded since.
    ProviderReport,
    /// The epoch's baseline plus what was recorded since, calibrated.
    Calibrated,
    /// The epoch's baseline plus what was recorded since.
    Counted,
    /// No project: nothing has been recorded.
    NoProject,
}

impl UsageSource {
    /// How `mnemon status` words it.
    pub fn describe(self) -> &'static str {
        match self {
            UsageSource::Given => "given",
            UsageSource::ProviderReport => "provider report + added since",
            UsageSource::Calibrated => "baseline + added, calibrated",
            UsageSource::Counted => "baseline + added",
            UsageSource::NoProject => "no project: nothing recorded",
        }
    }
}

/// Everything `mnemon status` shows.
#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    /// `.mnemon/`, when there is a project.
    pub project: Option<String>,
    /// The model in force, if one is configured or named.
    pub model: Option<ModelSpec>,
    /// Where the configured window came from.
    pub window_source: WindowSource,
    /// Every size the window was chosen from: config, registry, and what
    /// the model's server reported.
    pub window_sizes: WindowSizes,
    /// The tokenizer counts are made with.
    pub tokenizer: TokenizerInfo,
    /// The framing tokens a chat request costs.
    pub chat_format: ChatFormatInfo,
    /// Where the usage figure came from.
    pub usage_source: UsageSource,
    /// The engine's accounting, when a project's live usage was read.
    pub engine: Option<EngineStatus>,
    /// Usage against the window: zone, thresholds, what is left.
    pub window: WindowStatus,
    /// What to do in this zone.
    pub recommended_action: Action,
    /// The optimization profile and every parameter it sets.
    pub profile: ProfileInfo,
    /// Things to know: a fallback window, an estimated count.
    pub warnings: Vec<String>,
}

/// The tokenizer in force.
#[derive(Debug, Clone, Serialize)]
pub struct TokenizerInfo {
    /// `cl100k_base`, `o200k_base`, `hf:<name>` or `heuristic`.
    pub name: String,
    /// False only for the heuristic: its counts are estimates.
    pub exact: bool,
}

/// The chat framing in force.
#[derive(Debug, Clone, Serialize)]
pub struct ChatFormatInfo {
    /// The model family's format name (`openai`, `chatml`, ...).
    pub name: String,
    /// Tokens per message, per name and to prime the reply.
    pub format: ChatFormat,
}

/// The optimization profile in force.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileInfo {
    /// ultra-aggressive, aggressive, balanced-aggressive, balanced or minimal.
    pub name: mnemon_core::profile::ProfileName,
    /// Why it is this one: configured, the model's, or from the window.
    pub source: ProfileSource,
    /// Every parameter, with where each came from.
    pub parameters: ProfileParams,
}

/// The status for `model` (else the configured one) at `used` tokens, or
/// at the engine's live usage when `engine` is given and `used` is not.
pub fn evaluate(
    settings: &Settings,
    model: Option<&str>,
    used: Option<u64>,
    engine: Option<EngineStatus>,
) -> Result<StatusReport> {
    let setup = settings.setup(model)?;
    let counter = settings.counter(&setup.tokenizer)?;
    let usage_source = match (used, &engine) {
        (Some(_), _) => UsageSource::Given,
        (None, Some(s)) if s.reported.is_some() => UsageSource::ProviderReport,
        (None, Some(s)) if s.calibration_samples > 0 => UsageSource::Calibrated,
        (None, Some(_)) => UsageSource::Counted,
        (None, None) => UsageSource::NoProject,
    };
    let used = used.or(engine.as_ref().map(|s| s.window.used)).unwrap_or(0);
    let window = setup.window.status(used);
    Ok(StatusReport {
        project: settings.dir().map(display_path),
        window_source: setup.window_source,
        window_sizes: setup.window_sizes.clone(),
        tokenizer: TokenizerInfo {
            name: counter.name().to_string(),
            exact: counter.is_exact(),
        },
        chat_format: ChatFormatInfo {
            name: setup.chat_format_name.clone(),
            format: setup.chat_format,
        },
        usage_source,
        engine,
        recommended_action: window.action,
        window,
        profile: ProfileInfo {
            name: setup.profile.name,
            source: setup.profile_source,
            parameters: setup.profile.clone(),
        },
        warnings: setup.warnings.clone(),
        model: setup.model,
    })
}

impl Mnemon {
    /// Where this agent's window stands now. Reads only.
    pub fn status(&self) -> Result<EngineStatus> {
        Ok(self.engine()?.status()?)
    }

    /// The full status report with this agent's live usage.
    pub fn report(&self) -> Result<StatusReport> {
        evaluate(self.settings(), None, None, Some(self.status()?))
    }
}
