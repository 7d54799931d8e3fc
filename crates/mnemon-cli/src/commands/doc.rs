//! `mnemon doc show`, `mnemon export`.

use anyhow::Result;
use mnemon_core::memory::{DocKind, DocumentStore};

use crate::cli::Global;
use crate::output::{BOLD, json};
use crate::project::Project;

pub fn show(g: &Global, kind: &str, version: Option<u64>) -> Result<()> {
    let kind: DocKind = kind.parse().map_err(anyhow::Error::msg)?;
    let project = Project::find(g.dir.as_deref())?;
    let keep = project.load_config()?.config.episodic.keep_versions;
    let m = project.memory(None)?;
    // The current version is regenerated first, so it is never stale.
    let docs = m.refresh_documents(keep)?;
    crate::files::write_documents(&project, &m, &docs)?;
    let doc = m.store().document(kind, version)?;
    if g.json {
        return json(&doc);
    }
    anstream::print!("{}", doc.content);
    Ok(())
}

pub fn export(g: &Global) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let keep = project.load_config()?.config.episodic.keep_versions;
    let m = project.memory(None)?;
    let n = crate::files::export(&project, &m, keep)?;
    if g.json {
        return json(&serde_json::json!({"written": n}));
    }
    anstream::println!(
        "{BOLD}exported{BOLD:#} {n} documents and decision records from the database"
    );
    Ok(())
}
