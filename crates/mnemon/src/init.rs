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
    /// The `config.toml` written.
    pub config_path: PathBuf,
    /// The model, window and profile it sets up.
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
        return Err(exists(&path));
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
    create_new(&path, text.as_bytes())?;
    Ok(Initialized {
        config_path: path,
        setup,
    })
}

/// The refusal for a project that exists, with the settings it has.
fn exists(path: &Path) -> Error {
    let settings = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            let shown = display_path(path);
            let loaded = load(
                Some(ConfigFile {
                    path: &shown,
                    text: &text,
                }),
                &[],
            )
            .ok()?;
            resolve(&loaded.config, None).ok()
        })
        .map(|s| {
            format!(
                " (model {}, effective window {} tokens)",
                s.model.as_ref().map_or("none", |m| m.id.as_str()),
                s.window.effective_max()
            )
        })
        .unwrap_or_default();
    Error::Input(format!(
        "{} already exists{settings}; edit it, or delete it to start again",
        display_path(path)
    ))
}

/// Writes `path` whole or not at all, and only if it does not exist: the
/// text goes to a temp file that is then linked into place, which fails
/// when another `mnemon init` got there first. Of several at once, exactly
/// one creates the project.
fn create_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{CONFIG_NAME}.new-{}-{n}", std::process::id()));
    write_atomically(&tmp, bytes)?;
    let linked = std::fs::hard_link(&tmp, path);
    // The temp name is gone either way; the link, if made, holds the text.
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists(path)),
        Err(e) => Err(Error::io(format!("cannot create {}", path.display()), e)),
    }
}
