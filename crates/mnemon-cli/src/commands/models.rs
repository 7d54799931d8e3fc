//! `mnemon models list`.

use anyhow::Result;
use mnemon_core::models::Registry;

use crate::cli::Global;
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::Project;

pub fn list(g: &Global) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let loaded = project.load_config()?;
    let registry = Registry::with_overrides(&loaded.config.models)?;
    if g.json {
        return json(&registry.models());
    }
    println!(
        "{BOLD}{:<28} {:<10} {:>10}  {:<12} {:<20} {:>14}{BOLD:#}",
        "MODEL", "PROVIDER", "WINDOW", "TOKENIZER", "PROFILE", "$/1M IN/OUT"
    );
    for m in registry.models() {
        let profile = m
            .optimization_profile
            .map_or("(by window)".to_string(), |p| p.to_string());
        let aliases = if m.aliases.is_empty() {
            String::new()
        } else {
            format!("  aka {}", m.aliases.join(", "))
        };
        let origin = if m.built_in { "" } else { "  [config]" };
        println!(
            "{:<28} {:<10} {:>10}  {:<12} {:<20} {:>14}{DIM}{aliases}{origin}{DIM:#}",
            m.id,
            m.provider,
            thousands(m.context_window),
            m.tokenizer.to_string(),
            profile,
            format!(
                "{:.2}/{:.2}",
                m.cost_per_1m_input_tokens, m.cost_per_1m_output_tokens
            )
        );
    }
    Ok(())
}
