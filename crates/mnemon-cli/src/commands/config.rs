//! `mnemon config default|show|validate|set`.

use anyhow::Result;
use mnemon_core::config::{DEFAULT_TOML, Origin};
use serde_json::json;

use crate::cli::Global;
use crate::output::{BOLD, WARN, json};
use crate::project::{Project, display_path};

pub fn default(g: &Global) -> Result<()> {
    if g.json {
        return json(&mnemon_core::config::Config::default());
    }
    print!("{DEFAULT_TOML}");
    Ok(())
}

pub fn show(g: &Global) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let loaded = project.load_config()?;
    if g.json {
        let origins: serde_json::Map<String, serde_json::Value> = loaded
            .origins
            .iter()
            .map(|(k, o)| (k.clone(), json!(o.to_string())))
            .collect();
        return json(&json!({ "config": loaded.config, "origins": origins }));
    }
    let file = project.config_path().map(|p| display_path(&p));
    println!(
        "# Settings in force: defaults, then {}, then MNEMON_* variables.",
        file.as_deref().unwrap_or("no config file")
    );
    for (key, origin) in &loaded.origins {
        if let Origin::Env { var } = origin {
            println!("# {key} comes from {var}");
        }
    }
    print!("{}", toml::to_string_pretty(&loaded.config)?);
    Ok(())
}

pub fn validate(g: &Global) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let setup = project.setup(None)?;
    // Resolving the tokenizer reads a HuggingFace file if one is named.
    let counter = project.counter(&setup.tokenizer)?;
    let file = project.config_path().map(|p| display_path(&p));
    if g.json {
        return json(&json!({
            "valid": true,
            "file": file,
            "model": setup.model.as_ref().map(|m| &m.id),
            "effective_window": setup.window.effective_max(),
            "profile": setup.profile.name,
            "tokenizer": counter.name(),
            "warnings": setup.warnings,
            "inert": project.load_config()?.config.inert_settings(),
        }));
    }
    println!(
        "{BOLD}ok{BOLD:#}: {} is valid (model {}, effective window {} tokens, profile {}, tokenizer {})",
        file.as_deref().unwrap_or("the default configuration"),
        setup.model.as_ref().map_or("none", |m| m.id.as_str()),
        setup.window.effective_max(),
        setup.profile.name,
        counter.name()
    );
    for w in &setup.warnings {
        anstream::eprintln!("{WARN}warning:{WARN:#} {w}");
    }
    for n in project.load_config()?.config.inert_settings() {
        anstream::eprintln!("{WARN}note:{WARN:#} {n}");
    }
    Ok(())
}

/// One setting changed in the file's text; refused, with the loader's
/// message, when the file would no longer load.
pub fn set(g: &Global, key: &str, value: &str) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let Some(path) = project.config_path() else {
        anyhow::bail!("this project has no config.toml; `mnemon init` writes one");
    };
    let shown = display_path(&path);
    let text =
        std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("cannot read {shown}: {e}"))?;
    let new = mnemon_core::config::edit::set(&text, key, value).map_err(mnemon::Error::Input)?;
    let settings = mnemon::Settings::from_text(Some(&new), mnemon::Environment::default())
        .and_then(|s| s.setup(None).map(drop));
    if let Err(e) = settings {
        anyhow::bail!("{shown} is unchanged: with {key} = {value} it would not load: {e}");
    }
    mnemon::write_atomically(&path, new.as_bytes())?;
    if g.json {
        return json(&json!({ "file": shown, "key": key, "value": value }));
    }
    println!("{BOLD}set{BOLD:#} {key} = {value} in {shown}");
    Ok(())
}
