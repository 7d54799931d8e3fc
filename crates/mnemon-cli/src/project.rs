//! The CLI's view of a project: the library's settings, read once per
//! command, and the handle that every verb goes through.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use mnemon::{Mnemon, OpenOptions, Settings};
use mnemon_core::config::Loaded;
use mnemon_core::setup::Setup;
use mnemon_core::tokens::{TokenCounter, TokenizerSpec};

pub use mnemon::{DIR_NAME, display_path, load_hf};

/// A project found from the working directory or `--dir`, with the
/// process environment as its overrides.
#[derive(Debug)]
pub struct Project {
    settings: Settings,
    opts: OpenOptions,
    /// `.mnemon/` itself, when it exists.
    pub dir: Option<PathBuf>,
}

impl Project {
    /// `--dir` if given, else the nearest ancestor of the working directory
    /// with a `.mnemon/`, else the working directory with none.
    pub fn find(dir: Option<&Path>) -> Result<Project> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        let opts = OpenOptions::from_process_env()?;
        let settings = Settings::find(&cwd, dir, opts.env().clone())?;
        Ok(Project {
            dir: settings.dir().map(Path::to_path_buf),
            settings,
            opts,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn config_path(&self) -> Option<PathBuf> {
        self.settings.config_path()
    }

    pub fn load_config(&self) -> Result<&Loaded> {
        Ok(self.settings.loaded())
    }

    pub fn setup(&self, model: Option<&str>) -> Result<Setup> {
        Ok(self.settings.setup(model)?)
    }

    pub fn counter(&self, spec: &TokenizerSpec) -> Result<Box<dyn TokenCounter>> {
        Ok(self.settings.counter(spec)?)
    }

    /// The project's handle, acting as `agent` (else `MNEMON_AGENT`, else
    /// the default agent).
    pub fn open(&self, agent: Option<&str>) -> Result<Mnemon> {
        let m = self.opts.clone().with_settings(self.settings.clone())?;
        Ok(m.with_agent(agent))
    }

    /// The project's handle with its own clock: `--at` and imports record
    /// what happened at another time.
    pub fn open_with_clock(
        &self,
        agent: Option<&str>,
        clock: std::sync::Arc<dyn mnemon_core::memory::Clock>,
    ) -> Result<Mnemon> {
        let m = self
            .opts
            .clone()
            .clock(clock)
            .with_settings(self.settings.clone())?;
        Ok(m.with_agent(agent))
    }

    /// [`Project::open`], or at `at` when given.
    pub fn open_at(
        &self,
        agent: Option<&str>,
        at: Option<mnemon_core::memory::Timestamp>,
    ) -> Result<Mnemon> {
        match at {
            Some(t) => {
                self.open_with_clock(agent, std::sync::Arc::new(mnemon::SystemClock::fixed(t)))
            }
            None => self.open(agent),
        }
    }
}
