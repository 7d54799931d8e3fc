//! Combining defaults, the config file and the environment, with errors
//! that name where a bad value came from.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

use super::Config;
use super::validate::validate;

/// The text of a config file and the path to name in errors.
#[derive(Debug, Clone, Copy)]
pub struct ConfigFile<'a> {
    pub path: &'a str,
    pub text: &'a str,
}

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A line (1-based) of the config file.
    File { path: String, line: usize },
    /// An environment variable.
    Env { var: String },
    /// Compiled in.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{path}:{line}"),
            Origin::Env { var } => write!(f, "environment variable {var}"),
            Origin::Default => f.write_str("built-in default"),
        }
    }
}

/// One problem with the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub origin: Origin,
    /// The dotted key, when the problem belongs to one.
    pub key: Option<String>,
    /// The offending value as written.
    pub value: Option<String>,
    /// What is wrong, or what is allowed instead.
    pub allowed: String,
    /// The source line, for file errors.
    pub source_line: Option<String>,
}

/// A line or value as an error shows it: whole when short, else its start
/// and its size, so a runaway line in a file is not echoed back whole.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    const SHOWN: usize = 160;
    match text.char_indices().nth(SHOWN) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} bytes)",
            &text[..cut],
            crate::text::thousands(text.len() as u64)
        )),
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.key, &self.value) {
            (Some(key), Some(value)) => {
                writeln!(
                    f,
                    "{}: {key} = {} is not allowed",
                    self.origin,
                    shown(value)
                )?;
                if let Some(line) = &self.source_line {
                    writeln!(f, "  | {}", shown(line))?;
                }
                write!(f, "  allowed: {}", self.allowed)
            }
            (key, _) => {
                let key = key.as_deref().map(|k| format!("{k}: ")).unwrap_or_default();
                write!(f, "{}: {key}{}", self.origin, self.allowed)?;
                if let Some(line) = &self.source_line {
                    write!(f, "\n  | {}", shown(line))?;
                }
                Ok(())
            }
        }
    }
}

/// Every problem found, so a user fixes them in one pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(
            f,
            "{n} problem{} in the configuration:",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.0 {
            writeln!(f)?;
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

/// A validated configuration and where each set key came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub config: Config,
    /// Dotted key → origin, for every key set by the file or environment.
    pub origins: BTreeMap<String, Origin>,
}

impl Loaded {
    pub fn origin(&self, key: &str) -> Origin {
        self.origins.get(key).cloned().unwrap_or(Origin::Default)
    }
}

const ENV_PREFIX: &str = "MNEMON_";

/// Loads a configuration: defaults, then `file`, then every `MNEMON_A__B`
/// variable of `env`. Returns every problem at once.
#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: the default config serializes"
)]
pub fn load(
    file: Option<ConfigFile<'_>>,
    env: &[(String, String)],
) -> Result<Loaded, ConfigErrors> {
    let mut origins = BTreeMap::new();
    // Start from the defaults as a table, so a file that sets one key of a
    // map (one phase budget, say) keeps the other defaults of that map.
    let mut table =
        toml::Table::try_from(Config::default()).expect("the default config serializes");
    if let Some(file) = file {
        merge(&mut table, parse_file(file)?);
        let doc = toml_edit::Document::parse(file.text)
            .map_err(|e| ConfigErrors(vec![syntax(file, e.span(), e.message())]))?;
        record_file_keys(file, doc.as_table(), &mut Vec::new(), &mut origins);
    }

    let overrides = env_overrides(env)?;
    for (var, path, value) in &overrides {
        let mut candidate = table.clone();
        insert_path(&mut candidate, path, value.clone()).map_err(|problem| {
            ConfigErrors(vec![ConfigError {
                origin: Origin::Env { var: var.clone() },
                key: Some(path.join(".")),
                value: None,
                allowed: problem,
                source_line: None,
            }])
        })?;
        if let Err(e) = Config::deserialize(toml::Value::Table(candidate.clone())) {
            return Err(ConfigErrors(vec![ConfigError {
                origin: Origin::Env { var: var.clone() },
                key: Some(path.join(".")),
                value: None,
                allowed: e.message().to_string(),
                source_line: None,
            }]));
        }
        table = candidate;
        origins.insert(path.join("."), Origin::Env { var: var.clone() });
    }

    let config = Config::deserialize(toml::Value::Table(table)).map_err(|e| {
        ConfigErrors(vec![ConfigError {
            origin: Origin::Default,
            key: None,
            value: None,
            allowed: e.message().to_string(),
            source_line: None,
        }])
    })?;

    let is_set = |key: &str| origins.contains_key(key);
    let violations = validate(&config, &is_set);
    if !violations.is_empty() {
        let errors = violations
            .into_iter()
            .map(|v| {
                let origin = origins.get(&v.key).cloned().unwrap_or(Origin::Default);
                let source_line = match (&origin, file) {
                    (Origin::File { line, .. }, Some(f)) => {
                        f.text.lines().nth(line - 1).map(|l| l.trim().to_string())
                    }
                    _ => None,
                };
                ConfigError {
                    origin,
                    key: Some(v.key),
                    value: Some(v.value),
                    allowed: v.allowed,
                    source_line,
                }
            })
            .collect();
        let mut errors: Vec<ConfigError> = errors;
        errors.sort_by_key(|e| match &e.origin {
            Origin::File { line, .. } => (0, *line),
            Origin::Env { .. } => (1, 0),
            Origin::Default => (2, 0),
        });
        return Err(ConfigErrors(errors));
    }
    Ok(Loaded { config, origins })
}

fn parse_file(file: ConfigFile<'_>) -> Result<toml::Table, ConfigErrors> {
    // Deserializing the text itself (not a parsed table) keeps the span of a
    // wrongly typed or unknown key, so the error can name its line.
    if let Err(e) = toml::from_str::<Config>(file.text) {
        return Err(ConfigErrors(vec![syntax(file, e.span(), e.message())]));
    }
    toml::from_str::<toml::Table>(file.text)
        .map_err(|e| ConfigErrors(vec![syntax(file, e.span(), e.message())]))
}

/// Deep-merges `top` onto `base`: tables merge key by key, values replace.
fn merge(base: &mut toml::Table, top: toml::Table) {
    for (key, value) in top {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(t)) => merge(b, t),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

/// serde names Rust types; users write TOML.
fn plain_types(message: &str) -> String {
    message
        .replace("expected u64", "expected a whole number")
        .replace("expected u32", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a boolean", "expected true or false")
}

fn syntax(
    file: ConfigFile<'_>,
    span: Option<std::ops::Range<usize>>,
    message: &str,
) -> ConfigError {
    let line = span.map(|s| line_of(file.text, s.start)).unwrap_or(1);
    ConfigError {
        origin: Origin::File {
            path: file.path.to_string(),
            line,
        },
        key: None,
        value: None,
        allowed: plain_types(message.trim()),
        source_line: file
            .text
            .lines()
            .nth(line - 1)
            .map(|l| l.trim().to_string()),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Records the line of every leaf key (and every table) in the file.
fn record_file_keys(
    file: ConfigFile<'_>,
    table: &dyn toml_edit::TableLike,
    path: &mut Vec<String>,
    out: &mut BTreeMap<String, Origin>,
) {
    for (key, item) in table.iter() {
        path.push(key.to_string());
        let dotted = dotted_key(path);
        let span = table
            .key(key)
            .and_then(|k| k.span())
            .or_else(|| item.span());
        if let Some(span) = span {
            out.insert(
                dotted,
                Origin::File {
                    path: file.path.to_string(),
                    line: line_of(file.text, span.start),
                },
            );
        }
        if let Some(inner) = item.as_table_like() {
            record_file_keys(file, inner, path, out);
        }
        path.pop();
    }
}

/// `models."gpt-4o".context_window`: quoted where a part is not a bare key.
fn dotted_key(path: &[String]) -> String {
    path.iter()
        .enumerate()
        .map(|(i, p)| {
            let bare = p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            // The models table is keyed by model id, which is quoted in
            // messages even when bare, so they read the same everywhere.
            if bare && !(i == 1 && path[0] == "models") {
                p.clone()
            } else {
                format!("\"{p}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

type EnvOverride = (String, Vec<String>, toml::Value);

fn env_overrides(env: &[(String, String)]) -> Result<Vec<EnvOverride>, ConfigErrors> {
    let mut out: Vec<EnvOverride> = env
        .iter()
        .filter_map(|(var, value)| {
            let rest = var.strip_prefix(ENV_PREFIX)?;
            if !rest.contains("__") {
                return None;
            }
            let path: Vec<String> = rest.split("__").map(|p| p.to_ascii_lowercase()).collect();
            Some((var.clone(), path, parse_env_value(value)))
        })
        .collect();
    // Deterministic whatever order the environment lists them in.
    out.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some((var, _, _)) = out
        .iter()
        .find(|(_, path, _)| path.iter().any(String::is_empty))
    {
        return Err(ConfigErrors(vec![ConfigError {
            origin: Origin::Env { var: var.clone() },
            key: None,
            value: None,
            allowed:
                "names a setting as MNEMON_SECTION__KEY, such as MNEMON_CONTEXT_WINDOW__MAX_TOKENS"
                    .into(),
            source_line: None,
        }]));
    }
    Ok(out)
}

/// Numbers and booleans as TOML reads them; anything else is a string.
fn parse_env_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: env paths have two parts or more"
)]
fn insert_path(table: &mut toml::Table, path: &[String], value: toml::Value) -> Result<(), String> {
    let (last, parents) = path.split_last().expect("env paths have two parts or more");
    let mut cur = table;
    for p in parents {
        let entry = cur
            .entry(p.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` is a value, not a section, so it has no keys to set"))?;
    }
    cur.insert(last.clone(), value);
    Ok(())
}
