//! Rules a parsed config must satisfy beyond its types.

use crate::config::Config;
use crate::models::{Registry, RegistryError};
use crate::window::{MIN_WINDOW, Ratio};

/// One broken rule: which key, what it holds, what it may hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation {
    pub key: String,
    pub value: String,
    pub allowed: String,
}

const MAX_WINDOW: u64 = 100_000_000;

struct Check<'a> {
    out: Vec<Violation>,
    is_set: &'a dyn Fn(&str) -> bool,
}

impl Check<'_> {
    fn fail(&mut self, key: &str, value: impl ToString, allowed: impl Into<String>) {
        self.out.push(Violation {
            key: key.to_string(),
            value: value.to_string(),
            allowed: allowed.into(),
        });
    }

    fn share(&mut self, key: &str, v: f64, what: &str) {
        if Ratio::new(v).is_none() {
            self.fail(
                key,
                v,
                format!("a number greater than 0 and at most 1 ({what})"),
            );
        }
    }

    fn at_least(&mut self, key: &str, v: Option<u64>, min: u64, what: &str) {
        if let Some(v) = v
            && v < min
        {
            self.fail(key, v, format!("a whole number of at least {min} ({what})"));
        }
    }

    fn window(&mut self, key: &str, v: Option<u64>) {
        if let Some(v) = v
            && !(MIN_WINDOW..=MAX_WINDOW).contains(&v)
        {
            self.fail(
                key,
                v,
                format!("a token count from {MIN_WINDOW} to {MAX_WINDOW}"),
            );
        }
    }
}

pub(crate) fn validate(c: &Config, is_set: &dyn Fn(&str) -> bool) -> Vec<Violation> {
    let mut k = Check {
        out: Vec::new(),
        is_set,
    };
    let cw = &c.context_window;
    k.window("context_window.max_tokens", cw.max_tokens);
    k.window("context_window.fallback_size", Some(cw.fallback_size));
    k.share(
        "context_window.utilization_limit",
        cw.utilization_limit,
        "the share of the window mnemon may use",
    );
    let thresholds = [
        ("green_threshold", cw.green_threshold),
        ("yellow_threshold", cw.yellow_threshold),
        ("orange_threshold", cw.orange_threshold),
        ("red_threshold", cw.red_threshold),
    ];
    let mut all_shares = true;
    for (name, v) in thresholds {
        if Ratio::new(v).is_none() {
            all_shares = false;
            k.share(
                &format!("context_window.{name}"),
                v,
                "a share of the effective window",
            );
        }
    }
    if all_shares {
        for pair in thresholds.windows(2) {
            let ((lo_name, lo), (hi_name, hi)) = (pair[0], pair[1]);
            if Ratio::new(hi) <= Ratio::new(lo) {
                // Blame the key the user wrote; if both or neither, the upper one.
                let lo_key = format!("context_window.{lo_name}");
                let hi_key = format!("context_window.{hi_name}");
                let (key, v) = if (k.is_set)(&lo_key) && !(k.is_set)(&hi_key) {
                    (lo_key, lo)
                } else {
                    (hi_key, hi)
                };
                k.fail(
                    &key,
                    v,
                    format!(
                        "thresholds rising strictly, green < yellow < orange < red, each in (0, 1]; here {lo_name} = {lo} and {hi_name} = {hi}"
                    ),
                );
            }
        }
    }
    if let Some(max) = cw.max_tokens
        && let Some(limit) = Ratio::new(cw.utilization_limit)
        && (MIN_WINDOW..=MAX_WINDOW).contains(&max)
        && limit.of(max) < MIN_WINDOW
    {
        k.fail(
            "context_window.utilization_limit",
            cw.utilization_limit,
            format!(
                "a limit that leaves at least {MIN_WINDOW} tokens of the {max}-token window (at least {:.4})",
                MIN_WINDOW as f64 / max as f64
            ),
        );
    }

    k.at_least(
        "working_memory.max_operations",
        c.working_memory.max_operations,
        1,
        "operations kept in working memory",
    );
    k.at_least(
        "working_memory.max_tokens",
        c.working_memory.max_tokens,
        1,
        "tokens of working memory",
    );
    if let Some(h) = c.checkpoint.time_interval_hours
        && !(h.is_finite() && h > 0.0)
    {
        k.fail(
            "checkpoint.time_interval_hours",
            h,
            "a number of hours greater than 0, such as 0.5 or 4",
        );
    }
    k.at_least(
        "checkpoint.operation_interval",
        c.checkpoint.operation_interval,
        1,
        "operations between checkpoints",
    );

    let r = c.session.compression_target_ratio;
    if !(r.is_finite() && r > 0.0 && r < 1.0) {
        k.fail(
            "session.compression_target_ratio",
            r,
            "a number greater than 0 and less than 1 (0.7 keeps 70 %)",
        );
    }
    k.at_least(
        "session.compression_threshold",
        c.session.compression_threshold,
        1,
        "tokens",
    );
    k.at_least(
        "episodic.compression_threshold",
        c.episodic.compression_threshold,
        1,
        "tokens",
    );
    k.at_least(
        "episodic.keep_versions",
        Some(c.episodic.keep_versions),
        1,
        "old versions kept per document",
    );

    if c.decisions.log_format != "adr" {
        k.fail(
            "decisions.log_format",
            format!("{:?}", c.decisions.log_format),
            "\"adr\" (the only format mnemon writes)",
        );
    }
    if c.decisions.log_raw_reasoning {
        k.fail(
            "decisions.log_raw_reasoning",
            true,
            "false: mnemon never stores raw chain-of-thought, only structured decision records (ADR-018)",
        );
    }

    let p = &c.profile;
    for (key, v) in [
        (
            "profile.summarization_threshold_tokens",
            p.summarization_threshold_tokens,
        ),
        (
            "profile.session_summary_max_tokens",
            p.session_summary_max_tokens,
        ),
        (
            "profile.project_state_max_tokens",
            p.project_state_max_tokens,
        ),
        ("profile.work_plan_max_tokens", p.work_plan_max_tokens),
        (
            "profile.decision_record_max_tokens",
            p.decision_record_max_tokens,
        ),
        (
            "optimization.artifact_registry_threshold_tokens",
            c.optimization.artifact_registry_threshold_tokens,
        ),
        (
            "optimization.phase_summary_max_tokens",
            c.optimization.phase_summary_max_tokens,
        ),
        (
            "optimization.external_storage_threshold_tokens",
            Some(c.optimization.external_storage_threshold_tokens),
        ),
    ] {
        k.at_least(key, v, 1, "tokens");
    }
    k.at_least(
        "profile.max_decision_records",
        p.max_decision_records,
        1,
        "decision records kept",
    );
    let hours = c.optimization.prune_debug_traces_older_than_hours;
    if !(hours.is_finite() && hours > 0.0) {
        k.fail(
            "optimization.prune_debug_traces_older_than_hours",
            hours,
            "a number of hours greater than 0",
        );
    }

    llm(&mut k, &c.llm);
    if c.proxy.compact_at == crate::window::Zone::Green {
        k.fail(
            "proxy.compact_at",
            "\"green\"",
            "\"yellow\", \"orange\" or \"red\": the zone a request must not reach (green begins at 0)",
        );
    }
    k.at_least(
        "proxy.inject_budget",
        Some(c.proxy.inject_budget),
        1,
        "tokens an injected block may take",
    );
    embeddings(&mut k, &c.embeddings);
    storage(&mut k, &c.storage);
    for (i, p) in c.redaction.patterns.iter().enumerate() {
        if p.name.trim().is_empty() {
            k.fail(
                &format!("redaction.patterns[{i}].name"),
                "\"\"",
                "a name, shown in the placeholder: [redacted: <name>]",
            );
        }
        if let Err(e) = regex::Regex::new(&p.regex) {
            let first = e.to_string();
            let first = first.lines().last().unwrap_or_default().trim().to_string();
            k.fail(
                &format!("redaction.patterns[{i}].regex"),
                format!("{:?}", p.regex),
                format!("a regular expression (Rust regex syntax): {first}"),
            );
        }
    }

    let pb = &c.phase_budgets;
    if !(0.0..1.0).contains(&pb.buffer) {
        k.fail(
            "phase_budgets.buffer",
            pb.buffer,
            "a share from 0 up to (not including) 1",
        );
    }
    for (phase, parts) in pb.phases() {
        for (name, v) in parts {
            if !(v.is_finite() && (0.0..=1.0).contains(v)) {
                k.fail(
                    &format!("phase_budgets.{phase}.{name}"),
                    v,
                    "a share from 0 to 1",
                );
            }
        }
        let total: f64 = parts.values().sum::<f64>() + pb.buffer;
        if total > 1.0 + 1e-9 {
            k.fail(
                &format!("phase_budgets.{phase}"),
                format!("{total:.2} with the buffer"),
                "shares that, with phase_budgets.buffer, add up to at most 1",
            );
        }
    }

    for (phase, parts) in pb.phases() {
        for name in parts.keys() {
            if crate::assemble::plan::component_section(name).is_none() {
                k.fail(
                    &format!("phase_budgets.{phase}.{name}"),
                    name,
                    format!(
                        "a budget component ({}) or a section name",
                        crate::assemble::plan::PHASE_COMPONENTS
                            .map(|(c, _)| c)
                            .join(", ")
                    ),
                );
            }
        }
    }

    for (name, plan) in &c.plans {
        let key = format!("plans.{name}");
        if crate::assemble::PRESETS.contains(&name.as_str()) {
            k.fail(
                &key,
                format!("{name:?}"),
                "a name that is not a preset (presets cannot be redefined)",
            );
            continue;
        }
        let before = k.out.len();
        for (i, sc) in plan.sections.iter().enumerate() {
            // Array elements have no line of their own; the array has.
            let at = format!("{key}.sections");
            if crate::assemble::SectionKind::parse(&sc.kind).is_none() {
                k.fail(
                    &at,
                    format!("kind = {:?} (section {})", sc.kind, i + 1),
                    format!(
                        "one of {}",
                        crate::assemble::SectionKind::ALL
                            .map(|s| s.name())
                            .join(", ")
                    ),
                );
            }
            if !(sc.share.is_finite() && (0.0..=1.0).contains(&sc.share)) {
                k.fail(
                    &at,
                    format!("share = {} (section {})", sc.share, i + 1),
                    "a share from 0 to 1",
                );
            }
        }
        if k.out.len() == before
            && let Err(e) = plan.to_plan(name)
        {
            let reason = match e {
                crate::assemble::PlanError::Invalid { reason, .. } => reason,
                other => other.to_string(),
            };
            k.fail(&key, "this plan", format!("a valid plan, but {reason}"));
        }
    }

    for (id, m) in &c.models {
        k.window(&format!("models.\"{id}\".context_window"), m.context_window);
        for (field, v) in [
            ("cost_per_1m_input_tokens", m.cost_per_1m_input_tokens),
            ("cost_per_1m_output_tokens", m.cost_per_1m_output_tokens),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                k.fail(
                    &format!("models.\"{id}\".{field}"),
                    v,
                    "a price of 0 or more (USD per million tokens)",
                );
            }
        }
        if let Some(f) = &m.chat_format
            && c.chat_format(f).is_none()
        {
            k.fail(
                &format!("models.\"{id}\".chat_format"),
                format!("{f:?}"),
                known_formats(c),
            );
        }
    }

    match Registry::with_overrides(&c.models) {
        Err(RegistryError::MissingField { id, field }) => k.fail(
            &format!("models.\"{id}\""),
            "a new model",
            format!("a table that sets `{field}` (it is not a built-in model)"),
        ),
        Err(e) => k.fail("models", "", e.to_string()),
        Ok(reg) => {
            if let Some(active) = &c.model.active
                && let Err(e) = reg.get(active)
            {
                k.fail("model.active", format!("{active:?}"), e.hint());
            }
        }
    }
    k.out
}

fn known_formats(c: &Config) -> String {
    let mut names: Vec<&str> = crate::tokens::ChatFormat::BUILT_IN
        .iter()
        .map(|(n, _)| *n)
        .collect();
    names.extend(c.chat_formats.keys().map(String::as_str));
    format!(
        "one of {} (or a [chat_formats.<name>] table)",
        names.join(", ")
    )
}

/// `[llm]` and `[llm.summarizer]`: a server mnemon can reach and a model
/// it can name.
fn llm(k: &mut Check<'_>, l: &crate::config::LlmSection) {
    use crate::config::LlmProvider;
    let endpoints = [
        ("llm", Some(l.endpoint())),
        ("llm.summarizer", l.summarizer.clone()),
    ];
    for (section, e) in endpoints {
        let Some(e) = e else { continue };
        if let Some(url) = &e.base_url {
            let rest = url
                .strip_prefix("http://")
                .or_else(|| url.strip_prefix("https://"));
            if rest.is_none_or(|r| r.is_empty() || r.starts_with('/')) {
                k.fail(
                    &format!("{section}.base_url"),
                    format!("{url:?}"),
                    "an http:// or https:// address, such as \"http://localhost:8080/v1\"",
                );
            }
        }
        if let Some(name) = &e.api_key_env
            && (name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            k.fail(
                &format!("{section}.api_key_env"),
                format!("{name:?}"),
                "the name of an environment variable, such as \"OPENAI_API_KEY\" (the key itself never goes in config)",
            );
        }
        if section == "llm" && e.provider.is_none() && (e.base_url.is_some() || e.model.is_some()) {
            k.fail(
                "llm.provider",
                "unset",
                "\"ollama\", \"openai\" (any OpenAI-compatible server) or \"anthropic\" when llm.base_url or llm.model is set",
            );
        }
        let provider = e.provider.or(l.provider);
        if matches!(provider, Some(LlmProvider::Ollama | LlmProvider::Anthropic))
            && e.model.is_none()
            && (section == "llm" || l.model.is_none() || e.provider.is_some())
        {
            k.fail(
                &format!("{section}.model"),
                "unset",
                format!(
                    "the model to use, such as {} ({} serves several)",
                    if provider == Some(LlmProvider::Ollama) {
                        "\"qwen2.5-coder:7b\""
                    } else {
                        "\"claude-sonnet-4-5\""
                    },
                    provider.map_or("", |p| p.name())
                ),
            );
        }
    }
    if l.summarizer.is_some()
        && l.provider.is_none()
        && l.summarizer.as_ref().is_some_and(|s| s.provider.is_none())
    {
        k.fail(
            "llm.summarizer.provider",
            "unset",
            "a provider, here or as llm.provider",
        );
    }
    k.at_least("llm.timeout_secs", Some(l.timeout_secs), 1, "seconds");
    k.at_least(
        "llm.connect_timeout_ms",
        Some(l.connect_timeout_ms),
        1,
        "milliseconds",
    );
    k.at_least(
        "llm.answer_tokens",
        Some(l.answer_tokens),
        1,
        "tokens kept for an answer",
    );
    if l.retries > 10 {
        k.fail("llm.retries", l.retries, "0 to 10 retries");
    }
}

fn storage(k: &mut Check<'_>, s: &super::schema::StorageSection) {
    if let Some(url) = s.url.as_deref() {
        let url = url.trim();
        let ok = url.starts_with("postgres://")
            || url.starts_with("postgresql://")
            || url.contains("host=")
            || url.contains("dbname=");
        if !ok {
            // The value is not echoed: it may hold a password.
            k.fail(
                "storage.url",
                "not a PostgreSQL URL",
                "postgres://USER@HOST:PORT/DATABASE (the password in PGPASSWORD or ~/.pgpass); remove the setting to keep .mnemon/mnemon.db",
            );
        }
    }
    if let Some(schema) = s.schema.as_deref() {
        let plain = super::schema::StorageSection::plain_schema_name(schema);
        if !plain {
            k.fail(
                "storage.schema",
                schema,
                "lower-case letters, digits and _, not starting with a digit or pg_",
            );
        }
    }
}

fn embeddings(k: &mut Check<'_>, e: &super::schema::EmbeddingsSection) {
    use super::schema::EmbeddingProvider;
    let unset = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    match e.provider {
        Some(EmbeddingProvider::Local) if unset(&e.path) => k.fail(
            "embeddings.path",
            "unset",
            "the directory of a sentence-transformers model (config.json, tokenizer.json, model.safetensors); `mnemon embeddings fetch` downloads all-MiniLM-L6-v2",
        ),
        Some(EmbeddingProvider::Ollama | EmbeddingProvider::Openai) if unset(&e.model) => k.fail(
            "embeddings.model",
            "unset",
            "the embedding model's name at the server, e.g. \"nomic-embed-text\" or \"all-minilm\"",
        ),
        _ => {}
    }
}
