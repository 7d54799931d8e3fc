//! `mnemon init`: a new `.mnemon/` with a commented config.toml.

use anyhow::{Context, Result, bail};
use mnemon_core::config::{ConfigFile, DEFAULT_TOML, load};
use mnemon_core::models::Registry;
use mnemon_core::setup::resolve;
use serde_json::json;

use crate::cli::{Global, InitArgs};
use crate::output::{BOLD, WARN, json, thousands};
use crate::project::{CONFIG_NAME, DIR_NAME, display_path};

pub fn run(g: &Global, args: &InitArgs) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let root = match &g.dir {
        Some(d) => cwd.join(d),
        None => cwd,
    };
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    let dir = root.join(DIR_NAME);
    let path = dir.join(CONFIG_NAME);
    if path.exists() {
        bail!(
            "{} already exists; edit it, or delete it to start again",
            display_path(&path)
        );
    }

    if let Some(model) = &args.model {
        Registry::built_in()
            .get(model)
            .map_err(|e| anyhow::anyhow!("--model {model}: {e}"))?;
    }
    let mut text = DEFAULT_TOML.to_string();
    if let Some(model) = &args.model {
        text = text.replacen(
            "# active = \"qwen2.5-coder:32b\"",
            &format!("active = {}", toml_string(model)),
            1,
        );
    }
    if let Some(window) = args.window {
        text = text.replacen(
            "# max_tokens = 128000",
            &format!("max_tokens = {window}"),
            1,
        );
    }
    // Refuse to write a config that would not load.
    let loaded = load(
        Some(ConfigFile {
            path: &display_path(&path),
            text: &text,
        }),
        &[],
    )?;
    let setup = resolve(&loaded.config, None)?;

    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::files::write_atomically(&path, text.as_bytes())?;

    if g.json {
        return json(&json!({
            "created": display_path(&path),
            "model": setup.model.as_ref().map(|m| &m.id),
            "effective_window": setup.window.effective_max(),
            "profile": setup.profile.name,
        }));
    }
    anstream::println!(
        "{BOLD}created{BOLD:#} {} (model {}, effective window {} tokens, profile {})",
        display_path(&path),
        setup.model.as_ref().map_or("none", |m| m.id.as_str()),
        thousands(setup.window.effective_max()),
        setup.profile.name
    );
    for w in &setup.warnings {
        anstream::eprintln!("{WARN}warning:{WARN:#} {w}");
    }
    Ok(())
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
