//! `mnemon init`: a new `.mnemon/` with a commented `config.toml`.

use std::path::{Path, PathBuf};

use mnemon_core::config::{ConfigFile, DEFAULT_TOML, load};
use mnemon_core::models::Registry;
use mnemon_core::setup::{Setup, resolve};

use crate::error::{Error, Result};
use crate::settings::{CONFIG_NAME, DIR_NAME, display_path};
use crate::views::write_atomically;

/// What to put in a new project's configuration.
#[derive(Debug, Clone, Default)]
pub struct InitOptions {
    /// The orchestrator's model, an id or alias from the registry.
    pub model: Option<String>,
    /// The context window in tokens, when it differs from the model's.
    pub window: Option<u64>,
}

/// A project just created.
#[derive(Debug, Clone)]
pub struct Initialized {
    pub config_path: PathBuf,
    pub setup: Setup,
}

/// Creates `root/.mnemon/config.toml`: every setting, commented, with the
/// model and window given. Refuses to overwrite a configuration, and to
/// write one that would not load. The database is created by the first
/// command that needs it.
pub fn init(root: &Path, opts: &InitOptions) -> Result<Initialized> {
    if !root.is_dir() {
        return Err(Error::Input(format!(
            "{} is not a directory",
            root.display()
        )));
    }
    let dir = root.join(DIR_NAME);
    let path = dir.join(CONFIG_NAME);
    if path.exists() {
        return Err(Error::Input(format!(
            "{} already exists; edit it, or delete it to start again",
            display_path(&path)
        )));
    }
    if let Some(model) = &opts.model {
        Registry::built_in()
            .get(model)
            .map_err(|e| Error::Input(format!("--model {model}: {e}")))?;
    }
    let mut text = DEFAULT_TOML.to_string();
    if let Some(model) = &opts.model {
        let quoted = toml::Value::String(model.clone()).to_string();
        text = text.replacen(
            "# active = \"qwen2.5-coder:32b\"",
            &format!("active = {quoted}"),
            1,
        );
    }
    if let Some(window) = opts.window {
        text = text.replacen(
            "# max_tokens = 128000",
            &format!("max_tokens = {window}"),
            1,
        );
    }
    let loaded = load(
        Some(ConfigFile {
            path: &display_path(&path),
            text: &text,
        }),
        &[],
    )?;
    let setup = resolve(&loaded.config, None)?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    write_atomically(&path, text.as_bytes())?;
    Ok(Initialized {
        config_path: path,
        setup,
    })
}
