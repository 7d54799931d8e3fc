//! Where a project lives and what it is configured to be: `.mnemon/`
//! found like `.git`, the configuration merged from defaults, the file and
//! `MNEMON_*` variables, and tokenizer files loaded. Needs no database, so
//! commands that only read settings (`status --used`, `tokens count`,
//! `config show`) work before `mnemon init`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use mnemon_core::config::{ConfigFile, Loaded, load};
use mnemon_core::setup::{Setup, resolve_with};
use mnemon_core::tokens::{Heuristic, LocalTokenizer, OpenAiBpe, TokenCounter, TokenizerSpec};

use crate::error::{Error, Result};

/// The directory that marks a project, like `.git`.
pub const DIR_NAME: &str = ".mnemon";
/// The configuration file inside it.
pub const CONFIG_NAME: &str = "config.toml";
/// The SQLite database inside it.
pub const DB_NAME: &str = "mnemon.db";
/// Lines typed into `mnemon chat`, under `.mnemon/`: kept redacted, and
/// cleaned by `forget --matching`.
pub const CHAT_HISTORY: &str = "chat_history";

/// The process environment as mnemon reads it: only `MNEMON_*` variables,
/// and only those whose name and value are UTF-8. Anything else in the
/// environment is someone else's and is never looked at.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: Vec<(String, String)>,
}

impl Environment {
    /// No variables: configuration comes from defaults and the file only.
    pub fn empty() -> Environment {
        Environment::default()
    }

    /// The `MNEMON_*` variables of this process.
    pub fn from_process() -> Result<Environment> {
        Environment::from_vars(std::env::vars_os())
    }

    /// `MNEMON_*` pairs from any list (tests, a server's per-request
    /// settings). A `MNEMON_*` variable that is not UTF-8 is refused by
    /// name; other variables are ignored whatever they hold.
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Result<Environment> {
        let mut out = Vec::new();
        for (k, v) in vars {
            let Some(key) = k.to_str() else { continue };
            if !key.starts_with("MNEMON_") {
                continue;
            }
            let value = v.into_string().map_err(|_| {
                Error::Input(format!(
                    "the environment variable {key} is not valid UTF-8; set it to a UTF-8 value or unset it"
                ))
            })?;
            out.push((key.to_string(), value));
        }
        Ok(Environment { vars: out })
    }

    /// These variables with `key` set to `value` (replacing it if set).
    pub fn with(mut self, key: &str, value: &str) -> Environment {
        self.vars.retain(|(k, _)| k != key);
        self.vars.push((key.to_string(), value.to_string()));
        self
    }

    /// The value of one `MNEMON_*` variable.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every `MNEMON_*` variable, as name and value.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }
}

/// A project's place on disk and its configuration, read once.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The directory holding `.mnemon/`; relative tokenizer paths start here.
    root: PathBuf,
    /// `.mnemon/` itself, when it exists.
    dir: Option<PathBuf>,
    loaded: Loaded,
    env: Environment,
    /// What the model server said about its window (`[llm]` with
    /// `auto_detect`), probed or read from the probe cache.
    detection: crate::detection::Detection,
}

impl Settings {
    /// `dir` if given (its `.mnemon/`, which may not exist yet), else the
    /// nearest ancestor of `cwd` with a `.mnemon/`, else `cwd` with none.
    pub fn find(cwd: &Path, dir: Option<&Path>, env: Environment) -> Result<Settings> {
        let (root, marker) = match dir {
            Some(d) => {
                let mut root = cwd.join(d);
                if !root.is_dir() {
                    return Err(Error::Input(format!(
                        "--dir {} is not a directory",
                        d.display()
                    )));
                }
                // `--dir proj/.mnemon` names the project too, unless that
                // directory holds a project of its own.
                if root.file_name().is_some_and(|n| n == DIR_NAME)
                    && !root.join(DIR_NAME).is_dir()
                    && let Some(parent) = root.parent()
                {
                    root = parent.to_path_buf();
                }
                let m = root.join(DIR_NAME);
                let marker = m.is_dir().then_some(m);
                (root, marker)
            }
            None => cwd
                .ancestors()
                .map(|a| (a, a.join(DIR_NAME)))
                .find(|(_, d)| d.is_dir())
                .map_or((cwd.to_path_buf(), None), |(a, d)| {
                    (a.to_path_buf(), Some(d))
                }),
        };
        Settings::at(root, marker, env)
    }

    /// The project whose `.mnemon/` is directly in `root`.
    pub fn open(root: &Path, env: Environment) -> Result<Settings> {
        let marker = root.join(DIR_NAME);
        if !marker.is_dir() {
            return Err(Error::NoProject(root.display().to_string()));
        }
        Settings::at(root.to_path_buf(), Some(marker), env)
    }

    /// Settings from a configuration text, with no directory at all (an
    /// in-memory project). `None` means the compiled-in defaults.
    pub fn from_text(text: Option<&str>, env: Environment) -> Result<Settings> {
        let file = text.map(|text| ConfigFile {
            path: "<config>",
            text,
        });
        let loaded = load(file, env.vars())?;
        let detection = crate::llm::detect(&loaded.config, None, false);
        Ok(Settings {
            root: PathBuf::from("."),
            dir: None,
            loaded,
            env,
            detection,
        })
    }

    fn at(root: PathBuf, dir: Option<PathBuf>, env: Environment) -> Result<Settings> {
        let path = dir
            .as_ref()
            .map(|d| d.join(CONFIG_NAME))
            .filter(|p| p.is_file());
        let text = match &path {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .map_err(|e| Error::io(format!("cannot read {}", p.display()), e))?,
            ),
            None => None,
        };
        let shown = path.as_ref().map(|p| display_path(p));
        let file = match (&shown, &text) {
            (Some(path), Some(text)) => Some(ConfigFile { path, text }),
            _ => None,
        };
        let loaded = load(file, env.vars())?;
        let detection = crate::llm::detect(&loaded.config, dir.as_deref(), false);
        Ok(Settings {
            root,
            dir,
            loaded,
            env,
            detection,
        })
    }

    /// The directory that holds `.mnemon/`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.mnemon/`, if the project has one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The project's name: its directory's.
    pub fn name(&self) -> String {
        self.root
            .canonicalize()
            .ok()
            .as_deref()
            .unwrap_or(&self.root)
            .file_name()
            .map_or_else(
                || "project".to_string(),
                |n| n.to_string_lossy().to_string(),
            )
    }

    /// `.mnemon/config.toml`, when the project has one.
    pub fn config_path(&self) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(CONFIG_NAME))
            .filter(|p| p.is_file())
    }

    /// The merged configuration and where each key came from.
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// The `MNEMON_*` overrides applied.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The model, window, profile and tokenizer in force; `model` overrides
    /// the configured one.
    pub fn setup(&self, model: Option<&str>) -> Result<Setup> {
        let mut setup = resolve_with(&self.loaded.config, model, self.detection.detected.as_ref())?;
        setup.warnings.extend(self.detection.notes.iter().cloned());
        if let TokenizerSpec::Local(t) = setup.tokenizer
            && crate::tokenizers::installed(t).is_none()
        {
            let id = setup.model.as_ref().map_or(t.name(), |m| m.id.as_str());
            setup.warnings.push(format!(
                "token counts for {id} are estimates (characters / 4) until its tokenizer ({}) is on this machine: run `mnemon models fetch-tokenizer {id}` once",
                t.name()
            ));
        }
        Ok(setup)
    }

    /// The counter a tokenizer spec names; HuggingFace files are read here,
    /// relative to the project's root.
    pub fn counter(&self, spec: &TokenizerSpec) -> Result<Box<dyn TokenCounter>> {
        Ok(match spec {
            TokenizerSpec::OpenAi(e) => Box::new(OpenAiBpe::new(*e)),
            TokenizerSpec::Heuristic => Box::new(Heuristic::default()),
            TokenizerSpec::HuggingFace(path) => load_hf(&self.root.join(path))?,
            TokenizerSpec::Local(t) => match crate::tokenizers::installed(*t) {
                Some(path) => load_local(*t, &path)?,
                // Not fetched yet: `setup` has said how to make it exact.
                None => Box::new(Heuristic::default()),
            },
        })
    }
}

/// A HuggingFace `tokenizer.json` as a counter.
#[cfg(feature = "hf-tokenizer")]
pub fn load_hf(path: &Path) -> Result<Box<dyn TokenCounter>> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::io(
            format!(
                "cannot read the tokenizer file {}: check the path (relative paths start at the project directory)",
                path.display()
            ),
            e,
        )
    })?;
    let t = mnemon_core::tokens::HfTokenizer::from_bytes(display_path(path), &bytes)
        .map_err(|e| Error::Input(e.to_string()))?;
    Ok(Box::new(t))
}

/// A family's fetched `tokenizer.json` as a counter, labelled with the
/// family's name. Parsing the file takes a fifth of a second and 70 MB, so
/// it happens at the first count (a `status` never pays it) and once per
/// process, whatever number of projects and handles it opens.
#[cfg(feature = "hf-tokenizer")]
fn load_local(t: LocalTokenizer, path: &Path) -> Result<Box<dyn TokenCounter>> {
    Ok(Box::new(LocalCounter {
        family: t,
        path: path.to_path_buf(),
        loaded: std::sync::OnceLock::new(),
    }))
}

/// The tokenizers of the families parsed so far in this process.
#[cfg(feature = "hf-tokenizer")]
type Parsed = std::sync::Arc<dyn TokenCounter>;

/// A family's tokenizer, parsed at its first count.
#[cfg(feature = "hf-tokenizer")]
#[derive(Debug)]
struct LocalCounter {
    family: LocalTokenizer,
    path: PathBuf,
    /// `Err` when the file could not be parsed: counts fall back to the
    /// heuristic and say they are estimates.
    loaded: std::sync::OnceLock<std::result::Result<Parsed, Heuristic>>,
}

#[cfg(feature = "hf-tokenizer")]
impl LocalCounter {
    fn get(&self) -> &dyn TokenCounter {
        match self
            .loaded
            .get_or_init(|| parse_local(self.family, &self.path))
        {
            Ok(t) => t.as_ref(),
            Err(h) => h,
        }
    }
}

#[cfg(feature = "hf-tokenizer")]
impl TokenCounter for LocalCounter {
    fn name(&self) -> &str {
        self.family.name()
    }

    /// The file was parsed when it was fetched; only a file damaged since
    /// (found at the first count) makes the counts estimates.
    fn is_exact(&self) -> bool {
        !matches!(self.loaded.get(), Some(Err(_)))
    }

    fn count(&self, text: &str) -> usize {
        self.get().count(text)
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        self.get().count_up_to(text, limit)
    }

    fn splits_at_line_starts(&self) -> bool {
        self.get().splits_at_line_starts()
    }
}

/// The family's tokenizer, from this process's share or parsed from
/// `path`; a file that cannot be read or parsed is reported once and counts
/// become estimates.
#[cfg(feature = "hf-tokenizer")]
fn parse_local(t: LocalTokenizer, path: &Path) -> std::result::Result<Parsed, Heuristic> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static LOADED: OnceLock<Mutex<HashMap<LocalTokenizer, Parsed>>> = OnceLock::new();
    let mut loaded = LOADED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(shared) = loaded.get(&t) {
        return Ok(Arc::clone(shared));
    }
    let parsed = std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            mnemon_core::tokens::HfTokenizer::from_bytes(t.name(), &bytes)
                .map_err(|e| e.to_string())
        });
    match parsed {
        Ok(tokenizer) => {
            let shared: Parsed = Arc::new(tokenizer.labelled(t.name()));
            loaded.insert(t, Arc::clone(&shared));
            Ok(shared)
        }
        Err(reason) => {
            tracing::error!(
                "the {} tokenizer at {} cannot be used ({reason}); counts are estimates until `mnemon models fetch-tokenizer {} --again`",
                t.name(),
                path.display(),
                t.name()
            );
            Err(Heuristic::default())
        }
    }
}

/// Without HuggingFace support a family's tokenizer cannot be read: its
/// counts stay estimates.
#[cfg(not(feature = "hf-tokenizer"))]
fn load_local(_: LocalTokenizer, _: &Path) -> Result<Box<dyn TokenCounter>> {
    Ok(Box::new(Heuristic::default()))
}

/// A HuggingFace `tokenizer.json` as a counter: refused, since this build
/// has no HuggingFace support.
#[cfg(not(feature = "hf-tokenizer"))]
pub fn load_hf(path: &Path) -> Result<Box<dyn TokenCounter>> {
    Err(Error::Input(format!(
        "{} is a HuggingFace tokenizer, but this mnemon was built without the hf-tokenizer feature; rebuild with `--features hf-tokenizer`",
        path.display()
    )))
}

/// A path relative to the working directory when it is below it.
pub fn display_path(p: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf())
        .display()
        .to_string()
}
