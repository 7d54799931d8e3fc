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
    let dir = root.join(mnemon::DIR_NAME);
    if args.force && dir.join(mnemon::CONFIG_NAME).is_file() {
        if args.model.is_some() || args.window.is_some() {
            anyhow::bail!(
                "--force starts the memory over and keeps config.toml; change the model or window in .mnemon/config.toml instead"
            );
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let kept = mnemon::identity::start_over(&dir, &dir.join(mnemon::DB_NAME), now)?;
        if g.json {
            return json(
                &json!({"started_over": display_path(&dir), "previous_database": kept.as_deref().map(display_path)}),
            );
        }
        match kept {
            Some(p) => println!(
                "{BOLD}started over{BOLD:#}: the memory is empty; the previous database is kept as {}",
                display_path(&p)
            ),
            None => println!("{BOLD}started over{BOLD:#}: the memory is empty"),
        }
        return Ok(());
    }
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
    println!(
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
