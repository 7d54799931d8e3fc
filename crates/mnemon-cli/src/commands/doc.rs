//! `mnemon doc show`, `mnemon export`.

use anyhow::Result;
use mnemon_core::memory::DocKind;

use crate::cli::Global;
use crate::output::{BOLD, json, stored};
use crate::project::Project;

pub fn show(g: &Global, kind: &str, version: Option<u64>) -> Result<()> {
    let kind: DocKind = kind.parse().map_err(anyhow::Error::msg)?;
    // The current version is regenerated first, so it is never stale.
    let doc = Project::find(g.dir.as_deref())?
        .open(None)?
        .document(kind, version)?;
    if g.json {
        return json(&doc);
    }
    print!("{}", stored(&doc.content));
    Ok(())
}

pub fn export(g: &Global) -> Result<()> {
    let n = Project::find(g.dir.as_deref())?.open(None)?.export()?;
    if g.json {
        return json(&serde_json::json!({"written": n}));
    }
    println!("{BOLD}exported{BOLD:#} {n} documents and decision records from the database");
    Ok(())
}
