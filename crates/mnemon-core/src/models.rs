//! The model registry: which window, tokenizer and chat framing a model has.
//!
//! Built-in entries cover every model ADR-018's configuration names, with the
//! windows it gives them, and OpenAI's current chat models with their
//! documented windows and list prices (USD per million tokens). Config adds
//! entries or overrides fields of built-in ones under `[models.<id>]`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::profile::ProfileName;
use crate::tokens::{Encoding, LocalTokenizer, TokenizerSpec};

/// One model mnemon knows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSpec {
    /// The provider's model id (`qwen2.5-coder:32b`, `gpt-4o`).
    pub id: String,
    /// Other names that find this entry (ADR-018's config keys).
    pub aliases: Vec<String>,
    pub provider: String,
    pub context_window: u64,
    pub tokenizer: TokenizerSpec,
    /// A key of the chat formats (`openai`, `chatml`, `llama3`, ...).
    pub chat_format: String,
    pub optimization_profile: Option<ProfileName>,
    pub cost_per_1m_input_tokens: f64,
    pub cost_per_1m_output_tokens: f64,
    /// True for built-in entries, false for entries from config.
    pub built_in: bool,
}

/// A `[models.<id>]` table in config: every field optional, so that an
/// entry can override one field of a built-in model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverride {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The provider's model id, when it differs from the table's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<TokenizerSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_format: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimization_profile: Option<ProfileName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_1m_input_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_1m_output_tokens: Option<f64>,
}

/// A model name the registry does not know.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    #[error("{}", unknown_model_message(.name, .near))]
    UnknownModel { name: String, near: Vec<String> },
    #[error(
        "model `{id}` in config is new, so it needs `{field}`; add it under [models.\"{id}\"] in config.toml"
    )]
    MissingField { id: String, field: &'static str },
}

fn unknown_model_message(name: &str, near: &[String]) -> String {
    format!(
        "unknown model `{name}`: use {}",
        unknown_model_hint(name, near)
    )
}

fn unknown_model_hint(name: &str, near: &[String]) -> String {
    let mut msg = String::from("a model that `mnemon models list` shows");
    if !near.is_empty() {
        msg.push_str(&format!(" (did you mean {}?)", near.join(", ")));
    }
    msg.push_str(&format!(
        ", or one you add to .mnemon/config.toml:\n\n\
         [models.\"{name}\"]\nprovider = \"ollama\"        # or openai, anthropic, vllm, llamacpp\n\
         context_window = 32768       # tokens the server really serves\n\
         tokenizer = \"heuristic\"      # or cl100k_base, o200k_base, hf:path/to/tokenizer.json\n"
    ));
    msg
}

/// All models known to one project: the built-ins plus config's entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Registry {
    models: Vec<ModelSpec>,
}

struct BuiltIn {
    id: &'static str,
    aliases: &'static [&'static str],
    provider: &'static str,
    window: u64,
    tokenizer: TokenizerSpec,
    chat: &'static str,
    profile: Option<ProfileName>,
    cost: (f64, f64),
}

fn built_ins() -> Vec<BuiltIn> {
    use ProfileName::*;
    let o200k = || TokenizerSpec::OpenAi(Encoding::O200kBase);
    let cl100k = || TokenizerSpec::OpenAi(Encoding::Cl100kBase);
    let openai = |id, window, cost, tokenizer: TokenizerSpec| BuiltIn {
        id,
        aliases: &[],
        provider: "openai",
        window,
        tokenizer,
        chat: "openai",
        profile: None,
        cost,
    };
    vec![
        // ADR-018 "Configuration System", with its windows and profiles.
        BuiltIn {
            id: "phi3:mini",
            aliases: &["phi_3_mini"],
            provider: "ollama",
            window: 4_096,
            tokenizer: TokenizerSpec::Local(LocalTokenizer::Phi3),
            chat: "phi3",
            profile: Some(UltraAggressive),
            cost: (0.0, 0.0),
        },
        BuiltIn {
            id: "qwen2.5-coder:3b",
            aliases: &["qwen_2.5_3b"],
            provider: "ollama",
            window: 8_192,
            tokenizer: TokenizerSpec::Local(LocalTokenizer::Qwen25),
            chat: "chatml",
            profile: Some(Aggressive),
            cost: (0.0, 0.0),
        },
        BuiltIn {
            id: "qwen2.5-coder:7b",
            aliases: &["qwen_2.5_7b"],
            provider: "ollama",
            window: 16_384,
            tokenizer: TokenizerSpec::Local(LocalTokenizer::Qwen25),
            chat: "chatml",
            profile: Some(Aggressive),
            cost: (0.0, 0.0),
        },
        BuiltIn {
            id: "qwen2.5-coder:32b",
            aliases: &["qwen_2.5_32b", "qwen_2.5_coder_32b"],
            provider: "ollama",
            window: 128_000,
            tokenizer: TokenizerSpec::Local(LocalTokenizer::Qwen25),
            chat: "chatml",
            profile: Some(Balanced),
            cost: (0.0, 0.0),
        },
        // Popular Ollama models with public tokenizers, at their trained
        // windows (what a server serves is detected and wins).
        BuiltIn {
            id: "llama3.1:8b",
            aliases: &["llama_3.1_8b"],
            provider: "ollama",
            window: 131_072,
            tokenizer: TokenizerSpec::Local(LocalTokenizer::Llama3),
            chat: "llama3",
            profile: None,
            cost: (0.0, 0.0),
        },
        BuiltIn {
            id: "qwen3:8b",
            aliases: &["qwen_3_8b"],
            provider: "ollama",
            window: 40_960,
            tokenizer: TokenizerSpec::Local(LocalTokenizer::Qwen3),
            chat: "chatml",
            profile: None,
            cost: (0.0, 0.0),
        },
        BuiltIn {
            id: "claude-3-5-sonnet-20241022",
            aliases: &["claude_3.5_sonnet"],
            provider: "anthropic",
            window: 200_000,
            tokenizer: TokenizerSpec::Heuristic,
            chat: "anthropic",
            profile: Some(Balanced),
            cost: (3.0, 15.0),
        },
        BuiltIn {
            id: "gpt-5-turbo",
            aliases: &["gpt5_turbo"],
            provider: "openai",
            window: 1_000_000,
            tokenizer: o200k(),
            chat: "openai",
            profile: Some(Minimal),
            cost: (2.0, 10.0),
        },
        // OpenAI's current chat models, documented windows and list prices.
        openai("gpt-5", 400_000, (1.25, 10.0), o200k()),
        openai("gpt-5-mini", 400_000, (0.25, 2.0), o200k()),
        openai("gpt-5-nano", 400_000, (0.05, 0.40), o200k()),
        openai("gpt-4.1", 1_047_576, (2.0, 8.0), o200k()),
        openai("gpt-4.1-mini", 1_047_576, (0.40, 1.60), o200k()),
        openai("gpt-4.1-nano", 1_047_576, (0.10, 0.40), o200k()),
        openai("gpt-4o", 128_000, (2.50, 10.0), o200k()),
        openai("gpt-4o-mini", 128_000, (0.15, 0.60), o200k()),
        openai("o1", 200_000, (15.0, 60.0), o200k()),
        openai("o3", 200_000, (2.0, 8.0), o200k()),
        openai("o3-mini", 200_000, (1.10, 4.40), o200k()),
        openai("o4-mini", 200_000, (1.10, 4.40), o200k()),
        openai("gpt-4-turbo", 128_000, (10.0, 30.0), cl100k()),
        openai("gpt-4", 8_192, (30.0, 60.0), cl100k()),
        openai("gpt-3.5-turbo", 16_385, (0.50, 1.50), cl100k()),
    ]
}

impl RegistryError {
    /// What would be accepted instead, for messages that already name the input.
    pub fn hint(&self) -> String {
        match self {
            RegistryError::UnknownModel { name, near } => unknown_model_hint(name, near),
            other => other.to_string(),
        }
    }
}

fn default_chat_format(provider: &str) -> &'static str {
    match provider {
        "openai" | "azure" => "openai",
        "anthropic" => "anthropic",
        _ => "chatml",
    }
}

impl Registry {
    /// The built-in models only.
    pub fn built_in() -> Registry {
        let models = built_ins()
            .into_iter()
            .map(|b| ModelSpec {
                id: b.id.to_string(),
                aliases: b.aliases.iter().map(|a| a.to_string()).collect(),
                provider: b.provider.to_string(),
                context_window: b.window,
                tokenizer: b.tokenizer,
                chat_format: b.chat.to_string(),
                optimization_profile: b.profile,
                cost_per_1m_input_tokens: b.cost.0,
                cost_per_1m_output_tokens: b.cost.1,
                built_in: true,
            })
            .collect();
        Registry { models }
    }

    /// The built-ins with config's `[models.*]` tables applied: a table whose
    /// key names a known model overrides its fields; any other key adds a model.
    pub fn with_overrides(
        overrides: &BTreeMap<String, ModelOverride>,
    ) -> Result<Registry, RegistryError> {
        let mut reg = Registry::built_in();
        for (key, o) in overrides {
            let found = reg
                .position(key)
                .or_else(|| o.model.as_deref().and_then(|m| reg.position(m)));
            match found {
                Some(i) => {
                    let m = &mut reg.models[i];
                    if let Some(v) = &o.provider {
                        m.provider = v.clone();
                    }
                    if let Some(v) = o.context_window {
                        m.context_window = v;
                    }
                    if let Some(v) = &o.tokenizer {
                        m.tokenizer = v.clone();
                    }
                    if let Some(v) = &o.chat_format {
                        m.chat_format = v.clone();
                    }
                    if o.optimization_profile.is_some() {
                        m.optimization_profile = o.optimization_profile;
                    }
                    if let Some(v) = o.cost_per_1m_input_tokens {
                        m.cost_per_1m_input_tokens = v;
                    }
                    if let Some(v) = o.cost_per_1m_output_tokens {
                        m.cost_per_1m_output_tokens = v;
                    }
                    if !m.aliases.contains(key) && &m.id != key {
                        m.aliases.push(key.clone());
                    }
                    m.built_in = false;
                }
                None => {
                    let provider =
                        o.provider
                            .clone()
                            .ok_or_else(|| RegistryError::MissingField {
                                id: key.clone(),
                                field: "provider",
                            })?;
                    let context_window =
                        o.context_window
                            .ok_or_else(|| RegistryError::MissingField {
                                id: key.clone(),
                                field: "context_window",
                            })?;
                    let id = o.model.clone().unwrap_or_else(|| key.clone());
                    let aliases = if &id == key {
                        vec![]
                    } else {
                        vec![key.clone()]
                    };
                    reg.models.push(ModelSpec {
                        id,
                        aliases,
                        chat_format: o
                            .chat_format
                            .clone()
                            .unwrap_or_else(|| default_chat_format(&provider).to_string()),
                        provider,
                        context_window,
                        tokenizer: o.tokenizer.clone().unwrap_or(TokenizerSpec::Heuristic),
                        optimization_profile: o.optimization_profile,
                        cost_per_1m_input_tokens: o.cost_per_1m_input_tokens.unwrap_or(0.0),
                        cost_per_1m_output_tokens: o.cost_per_1m_output_tokens.unwrap_or(0.0),
                        built_in: false,
                    });
                }
            }
        }
        Ok(reg)
    }

    pub fn models(&self) -> &[ModelSpec] {
        &self.models
    }

    fn position(&self, name: &str) -> Option<usize> {
        let name = name.trim();
        self.models.iter().position(|m| {
            m.id.eq_ignore_ascii_case(name)
                || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }

    /// Finds a model by id or alias, ignoring case.
    pub fn get(&self, name: &str) -> Result<&ModelSpec, RegistryError> {
        self.position(name)
            .map(|i| &self.models[i])
            .ok_or_else(|| RegistryError::UnknownModel {
                name: name.to_string(),
                near: self.near(name),
            })
    }

    /// Up to three known names closest to `name`.
    pub fn near(&self, name: &str) -> Vec<String> {
        let wanted = name.to_ascii_lowercase();
        let mut scored: Vec<(f64, &str)> = self
            .models
            .iter()
            .flat_map(|m| {
                std::iter::once(m.id.as_str()).chain(m.aliases.iter().map(String::as_str))
            })
            .map(|candidate| {
                let c = candidate.to_ascii_lowercase();
                let mut score = strsim::jaro_winkler(&wanted, &c);
                if !wanted.is_empty() && c.contains(&wanted) {
                    score += 0.2;
                }
                (score, candidate)
            })
            .filter(|(score, _)| *score >= 0.75)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        let mut out: Vec<String> = Vec::new();
        for (_, c) in scored {
            let id = self.get_id(c);
            if !out.contains(&id) {
                out.push(id);
            }
            if out.len() == 3 {
                break;
            }
        }
        out
    }

    fn get_id(&self, name: &str) -> String {
        self.position(name)
            .map(|i| self.models[i].id.clone())
            .unwrap_or_else(|| name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adr_models_have_the_seeds_windows() {
        let reg = Registry::built_in();
        for (name, window, profile) in [
            ("phi_3_mini", 4_096, ProfileName::UltraAggressive),
            ("qwen_2.5_3b", 8_192, ProfileName::Aggressive),
            ("qwen_2.5_7b", 16_384, ProfileName::Aggressive),
            ("qwen_2.5_32b", 128_000, ProfileName::Balanced),
            ("claude_3.5_sonnet", 200_000, ProfileName::Balanced),
            ("gpt5_turbo", 1_000_000, ProfileName::Minimal),
        ] {
            let m = reg.get(name).unwrap();
            assert_eq!(m.context_window, window, "{name}");
            assert_eq!(m.optimization_profile, Some(profile), "{name}");
        }
        assert_eq!(
            reg.get("QWEN2.5-CODER:32B").unwrap().id,
            "qwen2.5-coder:32b"
        );
        assert_eq!(
            reg.get("gpt-4o").unwrap().tokenizer,
            TokenizerSpec::OpenAi(Encoding::O200kBase)
        );
        assert_eq!(
            reg.get("gpt-4").unwrap().tokenizer,
            TokenizerSpec::OpenAi(Encoding::Cl100kBase)
        );
    }

    #[test]
    fn unknown_model_suggests_near_names_and_how_to_add_one() {
        let reg = Registry::built_in();
        let err = reg.get("gpt-4o-mni").unwrap_err();
        let RegistryError::UnknownModel { near, .. } = &err else {
            panic!()
        };
        assert_eq!(near.first().map(String::as_str), Some("gpt-4o-mini"));
        let text = err.to_string();
        assert!(text.contains("[models.\"gpt-4o-mni\"]"), "{text}");
        assert!(text.contains("mnemon models list"), "{text}");
        let err = reg.get("qwen2.5-coder:14b").unwrap_err();
        let RegistryError::UnknownModel { near, .. } = &err else {
            panic!()
        };
        assert!(
            near.iter().any(|n| n.starts_with("qwen2.5-coder")),
            "{near:?}"
        );
    }

    #[test]
    fn config_adds_and_overrides_models() {
        let mut o = BTreeMap::new();
        o.insert(
            "qwen2.5-coder:32b".to_string(),
            ModelOverride {
                context_window: Some(32_768),
                tokenizer: Some("hf:qwen/tokenizer.json".parse().unwrap()),
                ..ModelOverride::default()
            },
        );
        o.insert(
            "local-llama".to_string(),
            ModelOverride {
                provider: Some("llamacpp".into()),
                model: Some("llama-3.1-8b-instruct".into()),
                context_window: Some(131_072),
                chat_format: Some("llama3".into()),
                ..ModelOverride::default()
            },
        );
        let reg = Registry::with_overrides(&o).unwrap();
        let q = reg.get("qwen_2.5_32b").unwrap();
        assert_eq!(q.context_window, 32_768);
        assert_eq!(q.tokenizer.to_string(), "hf:qwen/tokenizer.json");
        assert!(!q.built_in);
        let l = reg.get("local-llama").unwrap();
        assert_eq!(l.id, "llama-3.1-8b-instruct");
        assert_eq!(
            reg.get("llama-3.1-8b-instruct").unwrap().context_window,
            131_072
        );

        let mut bad = BTreeMap::new();
        bad.insert(
            "mystery".to_string(),
            ModelOverride {
                provider: Some("ollama".into()),
                ..Default::default()
            },
        );
        let err = Registry::with_overrides(&bad).unwrap_err();
        assert!(err.to_string().contains("needs `context_window`"), "{err}");
    }
}
