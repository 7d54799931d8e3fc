//! Finding the project, reading its configuration and environment, and
//! loading tokenizers: the IO that mnemon-core leaves to its callers.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use mnemon_core::config::{ConfigFile, Loaded, load};
use mnemon_core::setup::{Setup, resolve};
use mnemon_core::tokens::{Heuristic, OpenAiBpe, TokenCounter, TokenizerSpec};

pub const DIR_NAME: &str = ".mnemon";
pub const CONFIG_NAME: &str = "config.toml";

/// A project's `.mnemon/` directory, or none yet.
#[derive(Debug, Clone)]
pub struct Project {
    /// The directory holding `.mnemon/` (relative tokenizer paths start here).
    pub root: PathBuf,
    /// `.mnemon/` itself, when it exists.
    pub dir: Option<PathBuf>,
    /// The configuration, read once per command.
    loaded: std::sync::OnceLock<Loaded>,
}

impl Project {
    /// `--dir` if given, else the nearest ancestor of the working directory
    /// with a `.mnemon/`, else the working directory with none.
    pub fn find(dir: Option<&Path>) -> Result<Project> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        if let Some(dir) = dir {
            let root = cwd.join(dir);
            if !root.is_dir() {
                bail!("--dir {} is not a directory", dir.display());
            }
            let d = root.join(DIR_NAME);
            return Ok(Project {
                dir: d.is_dir().then_some(d),
                root,
                loaded: Default::default(),
            });
        }
        for ancestor in cwd.ancestors() {
            let d = ancestor.join(DIR_NAME);
            if d.is_dir() {
                return Ok(Project {
                    root: ancestor.to_path_buf(),
                    dir: Some(d),
                    loaded: Default::default(),
                });
            }
        }
        Ok(Project {
            root: cwd,
            dir: None,
            loaded: Default::default(),
        })
    }

    pub fn config_path(&self) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(CONFIG_NAME))
            .filter(|p| p.is_file())
    }

    /// Defaults, then config.toml, then MNEMON_* variables; read once and
    /// kept for the rest of the command.
    pub fn load_config(&self) -> Result<&Loaded> {
        if let Some(loaded) = self.loaded.get() {
            return Ok(loaded);
        }
        let loaded = self.read_config()?;
        Ok(self.loaded.get_or_init(|| loaded))
    }

    fn read_config(&self) -> Result<Loaded> {
        let env: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k.starts_with("MNEMON_"))
            .collect();
        let path = self.config_path();
        let text = match &path {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            ),
            None => None,
        };
        let shown = path.as_ref().map(|p| display_path(p));
        let file = match (&shown, &text) {
            (Some(path), Some(text)) => Some(ConfigFile { path, text }),
            _ => None,
        };
        Ok(load(file, &env)?)
    }

    pub fn setup(&self, loaded: &Loaded, model: Option<&str>) -> Result<Setup> {
        Ok(resolve(&loaded.config, model)?)
    }

    /// The counter a tokenizer spec names; HuggingFace files are read here.
    pub fn counter(&self, spec: &TokenizerSpec) -> Result<Box<dyn TokenCounter>> {
        Ok(match spec {
            TokenizerSpec::OpenAi(e) => Box::new(OpenAiBpe::new(*e)),
            TokenizerSpec::Heuristic => Box::new(Heuristic::default()),
            TokenizerSpec::HuggingFace(path) => load_hf(&self.root.join(path))?,
        })
    }
}

#[cfg(feature = "hf-tokenizer")]
pub fn load_hf(path: &Path) -> Result<Box<dyn TokenCounter>> {
    let bytes = std::fs::read(path).with_context(|| {
        format!("cannot read the tokenizer file {}: check the path (relative paths start at the project directory)", path.display())
    })?;
    Ok(Box::new(mnemon_core::tokens::HfTokenizer::from_bytes(
        display_path(path),
        &bytes,
    )?))
}

#[cfg(not(feature = "hf-tokenizer"))]
pub fn load_hf(path: &Path) -> Result<Box<dyn TokenCounter>> {
    bail!(
        "{} is a HuggingFace tokenizer, but this mnemon was built without the hf-tokenizer feature; rebuild with `--features hf-tokenizer`",
        path.display()
    )
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

/// The wall clock; the only place mnemon reads the time. `MNEMON_NOW`
/// (RFC 3339) pins it, so scripted sessions and tests can replay a day.
#[derive(Debug)]
pub struct SystemClock {
    fixed: Option<mnemon_core::memory::Timestamp>,
}

impl SystemClock {
    pub fn from_env() -> Result<SystemClock> {
        let fixed = match std::env::var("MNEMON_NOW") {
            Ok(s) => Some(mnemon_core::memory::Timestamp::parse(&s).with_context(|| {
                format!("MNEMON_NOW={s} is not an RFC 3339 time such as 2025-01-15T14:30:00Z")
            })?),
            Err(_) => None,
        };
        Ok(SystemClock { fixed })
    }
}

impl mnemon_core::memory::Clock for SystemClock {
    fn now(&self) -> mnemon_core::memory::Timestamp {
        self.fixed.unwrap_or_else(|| {
            let ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            mnemon_core::memory::Timestamp(ms)
        })
    }
}

pub const DB_NAME: &str = "mnemon.db";

pub type ProjectStore = mnemon_sqlite::SqliteStore;
pub type ProjectMemory = mnemon_core::memory::Memory<mnemon_sqlite::SqliteStore>;
pub type ProjectEngine = mnemon_core::engine::Engine<mnemon_sqlite::SqliteStore>;

impl Project {
    /// The project's memory: its store, tokenizer, clock and profile.
    pub fn memory(&self, agent: Option<&str>) -> Result<ProjectMemory> {
        Ok(self.memory_and_setup(agent)?.0)
    }

    fn memory_and_setup(&self, agent: Option<&str>) -> Result<(ProjectMemory, Setup)> {
        let Some(dir) = &self.dir else {
            bail!(
                "no {DIR_NAME}/ here or in any parent directory; run `mnemon init` in your project first"
            );
        };
        let loaded = self.load_config()?;
        let setup = self.setup(loaded, None)?;
        let counter = self.counter(&setup.tokenizer)?;
        let store = mnemon_sqlite::SqliteStore::open(&dir.join(DB_NAME))?;
        let limits = (
            setup.profile.working_memory_max_operations.value as usize,
            setup.profile.working_memory_max_tokens.value,
        );
        let agent = agent
            .map(str::to_string)
            .or_else(|| std::env::var("MNEMON_AGENT").ok());
        let memory = mnemon_core::memory::Memory::new(
            store,
            counter,
            std::sync::Arc::new(SystemClock::from_env()?),
            agent.as_deref(),
            limits,
        );
        Ok((memory, setup))
    }

    /// The engine over the project's memory: window accounting, zone
    /// actions, checkpoints.
    pub fn engine(&self, agent: Option<&str>) -> Result<ProjectEngine> {
        let (memory, setup) = self.memory_and_setup(agent)?;
        let model = setup
            .model
            .as_ref()
            .map_or_else(|| "default".to_string(), |m| m.id.clone());
        let config = &self.load_config()?.config;
        let mut cfg = mnemon_core::engine::EngineConfig::new(setup.window, setup.profile, &model);
        cfg.keep_versions = config.episodic.keep_versions;
        cfg.optimizer = config.optimization.thresholds(&cfg.profile);
        Ok(mnemon_core::engine::Engine::new(memory, cfg))
    }
}
