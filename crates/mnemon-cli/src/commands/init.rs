//! `mnemon init`: a new `.mnemon/` with a commented config.toml.

use anyhow::{Context, Result};
use mnemon::InitOptions;
use serde_json::json;

use crate::cli::{Global, InitArgs};
use crate::output::{BOLD, WARN, json, thousands};
use crate::project::display_path;

pub fn run(g: &Global, args: &InitArgs) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let root = match &g.dir {
        Some(d) => cwd.join(d),
        None => cwd,
    };
    let created = mnemon::init(
        &root,
        &InitOptions {
            model: args.model.clone(),
            window: args.window,
        },
    )?;
    let setup = &created.setup;
    let path = display_path(&created.config_path);
    if g.json {
        return json(&json!({
            "created": path,
            "model": setup.model.as_ref().map(|m| &m.id),
            "effective_window": setup.window.effective_max(),
            "profile": setup.profile.name,
        }));
    }
    anstream::println!(
        "{BOLD}created{BOLD:#} {} (model {}, effective window {} tokens, profile {})",
        path,
        setup.model.as_ref().map_or("none", |m| m.id.as_str()),
        thousands(setup.window.effective_max()),
        setup.profile.name
    );
    for w in &setup.warnings {
        anstream::eprintln!("{WARN}warning:{WARN:#} {w}");
    }
    Ok(())
}
