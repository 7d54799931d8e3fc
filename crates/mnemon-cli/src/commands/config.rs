//! `mnemon config default|show|validate`.

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
