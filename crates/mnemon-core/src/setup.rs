//! From a validated config to what is in force: the model, its window, the
//! profile, the tokenizer and the chat framing, with where each came from.

use serde::Serialize;

use crate::config::{Config, ProfileChoice};
use crate::models::{ModelSpec, Registry, RegistryError};
use crate::profile::{ProfileName, ProfileParams};
use crate::tokens::{ChatFormat, TokenizerSpec};
use crate::window::{ContextWindow, Ratio, Thresholds, WindowError, ZoneActions};

/// Where the configured window size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// `context_window.max_tokens`.
    Config,
    /// The model registry's entry for the active model.
    Registry,
    /// `context_window.fallback_size`: nothing else gave a window.
    Fallback,
    /// The window the model's server really serves (llama.cpp's `-c`,
    /// Ollama's `num_ctx`), smaller than everything else.
    Served,
    /// The model's own maximum as its server reports it.
    Model,
}

/// What a model server said about its window ([`resolve_with`]). Probing
/// is IO, so it happens outside the core and comes in as this value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Detected {
    /// The server as it identified itself: `llama.cpp`, `ollama`, `vllm`...
    pub server: String,
    /// The model's trained maximum (llama.cpp's `n_ctx_train`, Ollama's
    /// `<arch>.context_length`).
    pub model_max: Option<u64>,
    /// The window one request may really use (a llama.cpp slot's `n_ctx`,
    /// Ollama's loaded `context_length`, vLLM's `max_model_len`).
    pub served: Option<u64>,
    /// What fixes a served window smaller than the model's.
    pub fix: Option<String>,
}

/// Every window size that was considered, and where each came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WindowSizes {
    /// `context_window.max_tokens`.
    pub config: Option<u64>,
    /// The registry's entry for the active model.
    pub registry: Option<u64>,
    /// The model's maximum, as its server reports it.
    pub model_max: Option<u64>,
    /// The window the server serves.
    pub served: Option<u64>,
    /// The server that reported them.
    pub server: Option<String>,
}

/// Why the profile is the one it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileSource {
    /// `profile.name` in config.
    Config,
    /// The model registry entry's `optimization_profile`.
    Model,
    /// Picked from the effective window.
    Window,
}

/// Everything resolved from configuration.
#[derive(Debug, Clone)]
pub struct Setup {
    pub model: Option<ModelSpec>,
    pub window: ContextWindow,
    pub window_source: WindowSource,
    /// Every size the window was chosen from.
    pub window_sizes: WindowSizes,
    pub profile: ProfileParams,
    pub profile_source: ProfileSource,
    pub tokenizer: TokenizerSpec,
    pub chat_format_name: String,
    pub chat_format: ChatFormat,
    /// Things the user should know: a fallback window, an approximate tokenizer.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error("chat format `{0}` is neither built in nor defined under [chat_formats.{0}]")]
    UnknownChatFormat(String),
    /// The server serves less than mnemon can manage.
    #[error(
        "{server} serves a window of {served} tokens; × utilization_limit that is {effective}, below the {min} mnemon needs. {fix}, or raise context_window.utilization_limit"
    )]
    ServedTooSmall {
        server: String,
        served: u64,
        effective: u64,
        min: u64,
        fix: String,
    },
}

/// Resolves `config`, optionally for another model than `model.active`.
pub fn resolve(config: &Config, model_override: Option<&str>) -> Result<Setup, SetupError> {
    resolve_with(config, model_override, None)
}

/// Resolves `config` with what the model's server reported: the window is
/// the least of `context_window.max_tokens`, the model's maximum (the
/// server's word over the registry's) and the served window.
pub fn resolve_with(
    config: &Config,
    model_override: Option<&str>,
    detected: Option<&Detected>,
) -> Result<Setup, SetupError> {
    let registry = Registry::with_overrides(&config.models)?;
    let wanted = model_override.or(config.model.active.as_deref());
    let model = wanted.map(|name| registry.get(name).cloned()).transpose()?;
    let cw = &config.context_window;
    let mut warnings = Vec::new();

    let sizes = WindowSizes {
        config: cw.max_tokens,
        registry: model.as_ref().map(|m| m.context_window),
        model_max: detected.and_then(|d| d.model_max),
        served: detected.and_then(|d| d.served),
        server: detected.map(|d| d.server.clone()),
    };
    // The model's maximum: the server knows the weights it loaded.
    let model_max = sizes
        .model_max
        .map(|n| (n, WindowSource::Model))
        .or(sizes.registry.map(|n| (n, WindowSource::Registry)));
    let candidates = [
        sizes.config.map(|n| (n, WindowSource::Config)),
        model_max,
        sizes.served.map(|n| (n, WindowSource::Served)),
    ];
    let (configured, window_source) = match candidates.into_iter().flatten().min_by_key(|(n, _)| *n)
    {
        Some(pick) => pick,
        None => {
            warnings.push(format!(
                "no model is configured and the window could not be detected, so mnemon assumes context_window.fallback_size = {} tokens. Set model.active (see `mnemon models list`) or context_window.max_tokens.",
                cw.fallback_size
            ));
            (cw.fallback_size, WindowSource::Fallback)
        }
    };
    if let (Some(served), Some((max, _))) = (sizes.served, model_max)
        && served < max
    {
        let server = sizes.server.as_deref().unwrap_or("the server");
        let fix = detected
            .and_then(|d| d.fix.clone())
            .unwrap_or_else(|| "raise the server's context size".into());
        warnings.push(format!(
            "{server} serves a window of {served} tokens but the model can hold {max}: mnemon manages {served}. To use more, {fix}."
        ));
    }

    // Validation guarantees these are shares; fall back to defaults only for
    // a config built in code without validation.
    let share = |v: f64, default: Ratio| Ratio::new(v).unwrap_or(default);
    let d = Thresholds::default();
    let thresholds = Thresholds {
        green: share(cw.green_threshold, d.green),
        yellow: share(cw.yellow_threshold, d.yellow),
        orange: share(cw.orange_threshold, d.orange),
        red: share(cw.red_threshold, d.red),
    };
    let actions = ZoneActions::new(
        cw.green_action,
        cw.yellow_action,
        cw.orange_action,
        cw.red_action,
    );
    let window = ContextWindow::new(
        configured,
        share(cw.utilization_limit, Ratio::ONE),
        thresholds,
        actions,
    )
    .map_err(|e| match (e, window_source) {
        (WindowError::TooSmall { effective, min, .. }, WindowSource::Served) => {
            let fix = detected
                .and_then(|d| d.fix.clone())
                .unwrap_or_else(|| "raise the server's context size".into());
            let mut chars = fix.chars();
            let fix = chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default();
            SetupError::ServedTooSmall {
                server: sizes.server.clone().unwrap_or_else(|| "the server".into()),
                served: configured,
                effective,
                min,
                fix,
            }
        }
        (e, _) => SetupError::Window(e),
    })?;

    let (profile_name, profile_source) = match (
        config.profile.name,
        model.as_ref().and_then(|m| m.optimization_profile),
    ) {
        (ProfileChoice::Named(p), _) => (p, ProfileSource::Config),
        // A model's profile suits its own window; once the window is
        // overridden or limited, the window decides.
        (ProfileChoice::Auto, Some(p))
            if window.effective_max() == model.as_ref().map_or(0, |m| m.context_window) =>
        {
            (p, ProfileSource::Model)
        }
        (ProfileChoice::Auto, _) => (
            ProfileName::for_window(window.effective_max()),
            ProfileSource::Window,
        ),
    };
    let profile = ProfileParams::new(profile_name, window.effective_max())
        .with_overrides(&config.profile_overrides());

    let tokenizer = model
        .as_ref()
        .map_or(TokenizerSpec::Heuristic, |m| m.tokenizer.clone());
    if tokenizer == TokenizerSpec::Heuristic {
        let name = model.as_ref().map_or("this project", |m| m.id.as_str());
        warnings.push(format!(
            "token counts for {name} are estimates (characters / 4). For exact counts set tokenizer = \"hf:path/to/tokenizer.json\" under [models.\"{}\"].",
            model.as_ref().map_or("<id>", |m| m.id.as_str())
        ));
    }
    let chat_format_name = model
        .as_ref()
        .map_or_else(|| "openai".to_string(), |m| m.chat_format.clone());
    let chat_format = config
        .chat_format(&chat_format_name)
        .ok_or_else(|| SetupError::UnknownChatFormat(chat_format_name.clone()))?;

    Ok(Setup {
        model,
        window,
        window_source,
        window_sizes: sizes,
        profile,
        profile_source,
        tokenizer,
        chat_format_name,
        chat_format,
        warnings,
    })
}

impl Setup {
    /// The engine's settings: this setup's window, profile and model, and
    /// the configuration's versions, optimizer thresholds, checkpoint
    /// switches and compression ratio.
    pub fn engine_config(&self, config: &Config) -> crate::engine::EngineConfig {
        let model = self
            .model
            .as_ref()
            .map_or_else(|| "default".to_string(), |m| m.id.clone());
        let mut cfg =
            crate::engine::EngineConfig::new(self.window.clone(), self.profile.clone(), &model);
        cfg.keep_versions = config.episodic.keep_versions;
        cfg.optimizer = config.optimization.thresholds(&cfg.profile);
        let c = &config.checkpoint;
        cfg.checkpoints = crate::engine::CheckpointTriggers {
            threshold: c.threshold_based,
            time: c.time_based,
            operations: c.operation_count_based,
            phase: c.phase_completion,
            session_end: c.session_end,
            manual: c.manual,
        };
        cfg.compression_ratio_ppm =
            (config.session.compression_target_ratio * 1_000_000.0).round() as u64;
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;

    fn cfg(model: Option<&str>) -> Config {
        let mut c = Config::default();
        c.model.active = model.map(Into::into);
        c
    }

    fn detected(model_max: Option<u64>, served: Option<u64>) -> Detected {
        Detected {
            server: "llama.cpp".into(),
            model_max,
            served,
            fix: Some("start llama-server with a larger -c".into()),
        }
    }

    #[test]
    fn the_window_is_the_least_of_what_is_known() {
        let mut c = cfg(Some("gpt-4o"));
        let s = resolve_with(&c, None, Some(&detected(Some(8_192), Some(2_048)))).unwrap();
        assert_eq!(s.window.configured_max(), 2_048);
        assert_eq!(s.window_source, WindowSource::Served);
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains("serves a window of 2048"))
        );
        // The server's maximum is believed over the registry's.
        let s = resolve_with(&c, None, Some(&detected(Some(64_000), None))).unwrap();
        assert_eq!(
            (s.window.configured_max(), s.window_source),
            (64_000, WindowSource::Model)
        );
        c.context_window.max_tokens = Some(4_096);
        let s = resolve_with(&c, None, Some(&detected(Some(64_000), Some(32_000)))).unwrap();
        assert_eq!(
            (s.window.configured_max(), s.window_source),
            (4_096, WindowSource::Config)
        );
        assert_eq!(s.window_sizes.registry, Some(128_000));
        // Nothing configured but a served window: no fallback warning.
        let s = resolve_with(&cfg(None), None, Some(&detected(None, Some(2_048)))).unwrap();
        assert_eq!(s.window_source, WindowSource::Served);
        assert!(!s.warnings.iter().any(|w| w.contains("fallback_size")));
    }

    #[test]
    fn a_served_window_too_small_names_the_server_and_its_fix() {
        let mut c = cfg(None);
        c.context_window.utilization_limit = 0.9;
        let e = resolve_with(&c, None, Some(&detected(Some(8_192), Some(2_048)))).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("llama.cpp serves a window of 2048 tokens"),
            "{msg}"
        );
        assert!(msg.contains("Start llama-server with a larger -c"), "{msg}");
    }

    #[test]
    fn model_window_and_profile() {
        let s = resolve(&cfg(Some("qwen_2.5_32b")), None).unwrap();
        assert_eq!(s.window.configured_max(), 128_000);
        assert_eq!(s.window_source, WindowSource::Registry);
        assert_eq!(s.profile.name, ProfileName::Balanced);
        assert_eq!(s.profile_source, ProfileSource::Model);
        assert_eq!(s.chat_format, ChatFormat::CHATML);
        assert_eq!(
            s.tokenizer,
            TokenizerSpec::Local(crate::tokens::LocalTokenizer::Qwen25)
        );
        // Whether it is fetched is for the caller to say (core reads no files).
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn utilization_limit_moves_the_profile() {
        let mut c = cfg(Some("gpt-4o"));
        c.context_window.utilization_limit = 0.2;
        let s = resolve(&c, None).unwrap();
        assert_eq!(s.window.effective_max(), 25_600);
        assert_eq!(s.profile.name, ProfileName::Aggressive);
        assert_eq!(s.profile_source, ProfileSource::Window);
        assert_eq!(s.tokenizer, TokenizerSpec::OpenAi(Encoding::O200kBase));
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn no_model_falls_back_with_a_warning() {
        let s = resolve(&cfg(None), None).unwrap();
        assert_eq!(s.window.configured_max(), 16_384);
        assert_eq!(s.window_source, WindowSource::Fallback);
        assert!(s.warnings[0].contains("fallback_size = 16384"));
    }

    #[test]
    fn max_tokens_and_named_profile_win() {
        let mut c = cfg(Some("gpt-4o"));
        c.context_window.max_tokens = Some(4_096);
        c.profile.name = ProfileChoice::Named(ProfileName::Minimal);
        let s = resolve(&c, None).unwrap();
        assert_eq!(s.window.effective_max(), 4_096);
        assert_eq!(s.window_source, WindowSource::Config);
        assert_eq!(s.profile.name, ProfileName::Minimal);
        assert_eq!(s.profile_source, ProfileSource::Config);
    }

    #[test]
    fn unknown_model_is_an_error() {
        let err = resolve(&cfg(None), Some("gpt-4x")).unwrap_err();
        assert!(err.to_string().contains("unknown model `gpt-4x`"), "{err}");
    }
}
