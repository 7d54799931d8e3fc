//! Files rendered from the database: written only after the commit, and
//! atomically, so a crash leaves the old file or the new one.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Temp file, fsync, rename: a crash leaves the old file or the new one,
/// never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    // A bare file name's parent is the empty path, which cannot be opened
    // to sync the rename: it means the working directory.
    let dir = match path.parent().context("a file path has a parent")? {
        d if d.as_os_str().is_empty() => Path::new("."),
        d => d,
    };
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

use mnemon_core::memory::session_log::{SessionLogContext, render};
use mnemon_core::memory::{
    DecisionStore, DocKind, Document, DocumentStore, EntityQuery, EntityStatus, EntityStore,
    OperationLog, OperationQuery, SessionStatus, SessionStore, Store,
};

use mnemon_core::engine::{Checkpoint, EngineStore, StoredCheckpoint};

use crate::project::{Project, ProjectMemory};

/// `memory/<stem>.md` for the current version and
/// `memory/versions/<stem>_<YYYYmmdd_HHMMSS_mmm>.md` for each kept old one;
/// version files of pruned versions are removed, so the folder mirrors the store.
pub fn write_documents(project: &Project, m: &ProjectMemory, current: &[Document]) -> Result<()> {
    let Some(dir) = &project.dir else {
        return Ok(());
    };
    let mem = dir.join("memory");
    let versions = mem.join("versions");
    std::fs::create_dir_all(&versions)
        .with_context(|| format!("cannot create {}", versions.display()))?;
    for doc in current {
        write_atomically(
            &mem.join(format!("{}.md", doc.kind.stem())),
            doc.content.as_bytes(),
        )?;
        let kept: Vec<Document> = m
            .store()
            .document_versions(doc.kind)?
            .into_iter()
            .filter(|d| d.version != doc.version)
            .collect();
        let names: Vec<String> = kept.iter().map(version_file).collect();
        for (d, name) in kept.iter().zip(&names) {
            let path = versions.join(name);
            if !path.exists() {
                write_atomically(&path, d.content.as_bytes())?;
            }
        }
        let prefix = format!("{}_", doc.kind.stem());
        for entry in std::fs::read_dir(&versions)
            .with_context(|| format!("cannot read {}", versions.display()))?
        {
            let name = entry?.file_name().to_string_lossy().to_string();
            if name.starts_with(&prefix) && !names.contains(&name) {
                std::fs::remove_file(versions.join(&name))
                    .with_context(|| format!("cannot remove {name}"))?;
            }
        }
    }
    Ok(())
}

fn version_file(d: &Document) -> String {
    format!(
        "{}_{}.md",
        d.kind.stem(),
        d.created_at.datetime().format("%Y%m%d_%H%M%S_%3f")
    )
}

/// Rewrites every rendered file from the database: the episodic documents
/// and their versions, and every decision record.
pub fn export(project: &Project, m: &ProjectMemory, keep_versions: u64) -> Result<usize> {
    let docs = m.refresh_documents(keep_versions)?;
    write_documents(project, m, &docs)?;
    let mut written = DocKind::ALL.len();
    for s in m.store().sessions(usize::MAX >> 1)? {
        write_session(project, m, &s.id)?;
        written += 1;
    }
    if let Some(dir) = &project.dir {
        let decisions = dir.join("decisions");
        std::fs::create_dir_all(&decisions)
            .with_context(|| format!("cannot create {}", decisions.display()))?;
        for r in m.store().decisions(None)? {
            write_atomically(&decisions.join(r.file_name()), r.to_markdown().as_bytes())?;
            written += 1;
        }
        let checkpoints = m.store().checkpoints(usize::MAX >> 1)?;
        written += checkpoints.len();
        write_stored_checkpoints(project, &checkpoints)?;
        written += write_artifacts(project, m, None)?;
    }
    Ok(written)
}

/// The optimizer's files (`archive/phases/…`, `artifacts/…`) from the
/// database, which holds them whole: `paths`, or every one when `None`.
pub fn write_artifacts(
    project: &Project,
    m: &ProjectMemory,
    paths: Option<&[String]>,
) -> Result<usize> {
    let Some(dir) = &project.dir else {
        return Ok(0);
    };
    let all = match paths {
        None => m.store().artifacts()?,
        Some(paths) => {
            let mut out = Vec::new();
            for p in paths {
                out.extend(m.store().artifact(p)?);
            }
            out
        }
    };
    for a in &all {
        // Paths come from the optimizer, but a database is an input too.
        if a.path.split('/').any(|c| c == ".." || c.is_empty()) {
            anyhow::bail!(
                "artifact path `{}` leaves .mnemon/; the database is damaged",
                a.path
            );
        }
        let file = dir.join(&a.path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let text = serde_json::to_string_pretty(&a.content)?;
        write_atomically(&file, text.as_bytes())?;
    }
    Ok(all.len())
}

/// `checkpoints/<id>.json`, exactly as stored.
pub fn write_stored_checkpoints(project: &Project, cps: &[StoredCheckpoint]) -> Result<()> {
    let Some(dir) = &project.dir else {
        return Ok(());
    };
    let dir = dir.join("checkpoints");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for cp in cps {
        write_atomically(&dir.join(format!("{}.json", cp.id)), cp.json.as_bytes())?;
    }
    Ok(())
}

/// The files of checkpoints an engine action just created.
pub fn write_checkpoints(project: &Project, m: &ProjectMemory, cps: &[Checkpoint]) -> Result<()> {
    let stored: Vec<StoredCheckpoint> = cps
        .iter()
        .map(|c| m.store().checkpoint(&c.id))
        .collect::<Result<_, _>>()?;
    write_stored_checkpoints(project, &stored)
}

/// `sessions/session_<id>.md` while a session is live;
/// `sessions/archive/session_<YYYYmmdd_HHMMSS>_<id8>.md` once archived.
pub fn write_session(project: &Project, m: &ProjectMemory, session_id: &str) -> Result<()> {
    let Some(dir) = &project.dir else {
        return Ok(());
    };
    let session = m.store().session(session_id)?;
    let mut ops = m.store().operations(&OperationQuery {
        session_id: Some(session.id.clone()),
        ..OperationQuery::default()
    })?;
    ops.reverse();
    let of = |status, limit| {
        m.store().entities(&EntityQuery {
            status: Some(status),
            limit: Some(limit),
            ..EntityQuery::default()
        })
    };
    let (active, blocked, next) = (
        of(EntityStatus::InProgress, 20)?,
        of(EntityStatus::Blocked, 20)?,
        of(EntityStatus::Pending, 3)?,
    );
    let decisions = m.store().decisions(Some(3))?;
    let effective_max = project
        .load_config()
        .ok()
        .and_then(|l| project.setup(l, None).ok())
        .map(|s| s.window.effective_max());
    let name = project.root.file_name().map_or_else(
        || "project".to_string(),
        |n| n.to_string_lossy().to_string(),
    );
    let compaction = m.store().last_compaction(&session.id, "session_log")?;
    let text = render(
        &session,
        &ops,
        &SessionLogContext {
            project: &name,
            project_id: m.store().project_id(),
            effective_max,
            active_work: &active,
            blocked: &blocked,
            recent_decisions: &decisions,
            next_steps: &next,
            compacted: compaction
                .as_ref()
                .map(|c| (c.summary.as_str(), c.through_op_seq)),
        },
    );
    let sessions = dir.join("sessions");
    let live = sessions.join(format!("session_{}.md", session.id));
    if session.status == SessionStatus::Archived {
        let archive = sessions.join("archive");
        std::fs::create_dir_all(&archive)
            .with_context(|| format!("cannot create {}", archive.display()))?;
        let stamp = session.started_at.datetime().format("%Y%m%d_%H%M%S");
        let id8: String = session
            .id
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(8)
            .collect();
        write_atomically(
            &archive.join(format!("session_{stamp}_{id8}.md")),
            text.as_bytes(),
        )?;
        if live.exists() {
            std::fs::remove_file(&live)
                .with_context(|| format!("cannot remove {}", live.display()))?;
        }
    } else {
        std::fs::create_dir_all(&sessions)
            .with_context(|| format!("cannot create {}", sessions.display()))?;
        write_atomically(&live, text.as_bytes())?;
    }
    Ok(())
}

/// After a write: the agent's live session file and the episodic documents
/// (which keep their version when nothing in them changed).
pub fn refresh_views(project: &Project, m: &ProjectMemory) -> Result<()> {
    if let Some(s) = m.store().active_session(m.agent())? {
        write_session(project, m, &s.id)?;
    }
    let keep = project.load_config()?.config.episodic.keep_versions;
    let docs = m.refresh_documents(keep)?;
    write_documents(project, m, &docs)
}
