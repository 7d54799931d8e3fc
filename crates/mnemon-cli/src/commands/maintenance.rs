//! `mnemon backup`, `mnemon restore` and `mnemon doctor`.

use std::io::IsTerminal;

use anyhow::Result;
use mnemon_core::memory::StoreError;

use crate::cli::{BackupArgs, Global, MigrateArgs, RestoreArgs};
use crate::output::{BOLD, DIM, WARN, json, thousands};
use crate::project::Project;

pub fn backup(g: &Global, a: &BackupArgs) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(None)?;
    m.backup(&a.file)?;
    let size = std::fs::metadata(&a.file).map_or(0, |m| m.len());
    if g.json {
        return json(&serde_json::json!({"backup": a.file, "bytes": size}));
    }
    anstream::println!(
        "{BOLD}backed up{BOLD:#} to {}  {DIM}({} bytes; `mnemon restore {}` brings it back){DIM:#}",
        a.file.display(),
        thousands(size),
        a.file.display()
    );
    Ok(())
}

pub fn migrate(g: &Global, a: &MigrateArgs) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(None)?;
    let done = m.migrate_to(&a.to, a.schema.as_deref())?;
    if g.json {
        return json(&done);
    }
    let rows: u64 = done.tables.iter().map(|t| t.rows).sum();
    anstream::println!(
        "{BOLD}copied{BOLD:#} project {} to {}: {} rows in {} tables, each checked by count and SHA-256",
        done.project_id,
        done.target,
        thousands(rows),
        done.tables.len()
    );
    for t in done.tables.iter().filter(|t| t.rows > 0) {
        anstream::println!(
            "  {:<14} {:>9}  {DIM}{}{DIM:#}",
            t.table,
            thousands(t.rows),
            &t.sha256[..16]
        );
    }
    let schema = a
        .schema
        .as_deref()
        .map(|s| format!("\nschema = \"{s}\""))
        .unwrap_or_default();
    anstream::println!(
        "{DIM}the SQLite file is unchanged; to use the copy, add to .mnemon/config.toml:\n[storage]\nurl = \"{}\"{schema}{DIM:#}",
        done.target.split(" (schema").next().unwrap_or(&done.target)
    );
    Ok(())
}

pub fn restore(g: &Global, a: &RestoreArgs) -> Result<()> {
    let root = match &g.dir {
        Some(d) => d.clone(),
        None => {
            // The nearest project, else here.
            let p = Project::find(None)?;
            p.settings().root().to_path_buf()
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let r = mnemon::restore(&root, &a.file, a.force, now)?;
    if g.json {
        return json(&r);
    }
    let rows: Vec<String> = r
        .rows
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(t, n)| format!("{} {t}", thousands(*n)))
        .collect();
    anstream::println!(
        "{BOLD}restored{BOLD:#} project {} from {}: {}",
        r.project_id,
        a.file.display(),
        if rows.is_empty() {
            "empty".to_string()
        } else {
            rows.join(", ")
        }
    );
    if let Some(p) = &r.previous {
        anstream::eprintln!("the database it replaced is kept as {}", p.display());
    }
    Ok(())
}

pub fn doctor(g: &Global) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(None)?;
    // A spinner naming the step: the integrity check reads every page.
    let spinner = (!g.json && std::io::stderr().is_terminal()).then(|| {
        let s = indicatif::ProgressBar::new_spinner();
        s.enable_steady_tick(std::time::Duration::from_millis(120));
        s
    });
    let r = m.doctor_with(|step| {
        if let Some(s) = &spinner {
            s.set_message(step.doing());
        }
    });
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let r = r?;
    if g.json {
        json(&r)?;
    } else {
        let h = &r.health;
        let rows: Vec<String> = h
            .rows
            .iter()
            .map(|(t, n)| format!("{} {t}", thousands(*n)))
            .collect();
        anstream::println!(
            "{BOLD}schema{BOLD:#}      {} (this mnemon writes {})",
            h.schema_version,
            h.latest_schema
        );
        anstream::println!("{BOLD}rows{BOLD:#}        {}", rows.join(", "));
        anstream::println!(
            "{BOLD}views{BOLD:#}       {} files rendered again",
            r.views_regenerated
        );
        if r.ok() {
            anstream::println!(
                "{BOLD}healthy{BOLD:#}     integrity, search indexes, references and identity check out"
            );
        }
        for p in &r.problems {
            anstream::eprintln!("{WARN}problem{WARN:#}: {p}");
        }
    }
    if !r.ok() {
        return Err(mnemon::Error::Store(StoreError::Corrupt {
            path: m
                .dir()
                .map(|d| d.join(mnemon::DB_NAME).display().to_string())
                .unwrap_or_default(),
            reason: format!(
                "{} problem(s); restore a backup (`mnemon restore FILE --force`) or export what is readable",
                r.problems.len()
            ),
        })
        .into());
    }
    Ok(())
}
