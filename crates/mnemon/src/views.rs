//! Files rendered from the database under `.mnemon/`: session logs, the
//! episodic documents and their versions, decision records, checkpoints
//! and the optimizer's artifacts. The database is the truth; these are
//! views, written only after the commit they show.
//!
//! Several processes (and threads) write views of one project at once, so:
//! - every file is replaced atomically (a temp name unique to the process
//!   and the call, fsync, rename, fsync of the directory): a reader sees
//!   the old file or the new one, never half of one, and two writers never
//!   share a temp file;
//! - re-rendering the session and documents happens under an exclusive
//!   lock on `.mnemon/.views.lock`, and reads the database inside it, so the
//!   last writer to take the lock renders the newest commit: no view is
//!   left older than the newest write once its writer returns;
//! - pruning tolerates a file another writer already removed;
//! - a writer whose commit a later render already covered skips its own:
//!   each render leaves a stamp of the log positions it read
//!   (`.mnemon/.views.stamps`), and a write that appended to the log at or
//!   below a stamp is in that render. Under many writers most renders are
//!   skipped instead of queued.
//!
//! A failure here never fails the write that came before it: the caller
//! gets it as a warning, and `mnemon export` rewrites every view.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use mnemon_core::engine::forget::Forgotten;
use mnemon_core::engine::{Checkpoint, EngineStore, StoredCheckpoint};
use mnemon_core::memory::session_log::{SessionLogContext, render};
use mnemon_core::memory::{
    DecisionRecord, DocKind, Document, EntityQuery, EntityStatus, Memory, OperationQuery,
    SessionStatus, Store,
};

use crate::error::{Error, Result};

/// Log head positions (operations, messages) each view's last render read.
type Stamps = std::collections::BTreeMap<String, (i64, i64)>;

/// The stamp of the episodic documents.
const DOCUMENTS: &str = "documents";

/// Distinguishes temp files of one process's concurrent writes.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Temp file, fsync, rename, fsync of the directory: a crash leaves the old
/// file or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    // A view a write did not change (the work plan after a note) is left as
    // it is: no temp file, no rename, no two fsyncs per file on every write.
    if std::fs::metadata(path).is_ok_and(|m| m.len() == bytes.len() as u64)
        && std::fs::read(path).is_ok_and(|old| old == bytes)
    {
        return Ok(());
    }
    // A bare file name's parent is the empty path, which cannot be opened
    // to sync the rename: it means the working directory.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        path.file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy()),
        std::process::id(),
        TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        // The temp file may not exist; nothing else is left behind.
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

fn create_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path)
        .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))
}

/// Removes a file that may already be gone: another writer pruning the
/// same version is not an error.
fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io(format!("cannot remove {}", path.display()), e))
        }
        _ => Ok(()),
    }
}

/// The views of one project's `.mnemon/`.
#[derive(Debug, Clone)]
pub struct Views {
    dir: PathBuf,
    project: String,
    effective_max: Option<u64>,
}

/// Holds `.mnemon/.views.lock` while views are rendered.
struct ViewLock(std::fs::File);

impl Drop for ViewLock {
    fn drop(&mut self) {
        // Closing the file releases the lock as well.
        let _ = self.0.unlock();
    }
}

impl Views {
    /// `dir` is `.mnemon/`; `project` names the project in session logs.
    pub fn new(dir: PathBuf, project: String, effective_max: Option<u64>) -> Views {
        Views {
            dir,
            project,
            effective_max,
        }
    }

    /// `.mnemon/`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> Result<ViewLock> {
        let path = self.dir.join(".views.lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        f.lock()
            .map_err(|e| Error::io(format!("cannot lock {}", path.display()), e))?;
        Ok(ViewLock(f))
    }

    /// After a write: the agent's live session file and the episodic
    /// documents (which keep their version when nothing in them changed),
    /// rendered from the database as it is once the lock is held.
    ///
    /// `covered` is the log's head positions read right after a write that
    /// appended to the log: a view whose last render read positions at or
    /// past them already shows that write and is not rendered again.
    /// `None` (a write that left no log line) always renders.
    pub fn refresh<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        keep_versions: u64,
        covered: Option<(i64, i64)>,
    ) -> Result<()> {
        let _lock = self.lock()?;
        let mut stamps = self.stamps();
        // Read before rendering: everything at or below it is in the render.
        let heads = m.store().log_heads()?;
        let stale = |stamps: &Stamps, name: &str| match (covered, stamps.get(name)) {
            (Some(c), Some(s)) => !(s.0 >= c.0 && s.1 >= c.1),
            _ => true,
        };
        if let Some(s) = m.store().active_session(m.agent())? {
            let name = format!("session_{}", s.id);
            if stale(&stamps, &name) {
                self.write_session_locked(m, &s.id)?;
                stamps.insert(name, heads);
            }
        }
        if stale(&stamps, DOCUMENTS) {
            let docs = m.refresh_documents(keep_versions)?;
            self.write_documents_locked(m, &docs)?;
            stamps.insert(DOCUMENTS.to_string(), heads);
        }
        self.save_stamps(&stamps);
        Ok(())
    }

    fn stamps_path(&self) -> PathBuf {
        self.dir.join(".views.stamps")
    }

    /// The stamps of the last renders; a missing or unreadable file means
    /// none, so everything renders.
    fn stamps(&self) -> Stamps {
        std::fs::read_to_string(self.stamps_path())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Written after the views they describe, under the lock. Losing the
    /// file (a crash, a failed write) only costs renders, never a stale
    /// view, so it is neither synced nor reported.
    fn save_stamps(&self, stamps: &Stamps) {
        if let Ok(text) = serde_json::to_string(stamps) {
            let _ = std::fs::write(self.stamps_path(), text);
        }
    }

    /// `memory/<stem>.md` for the current version and
    /// `memory/versions/<stem>_<YYYYmmdd_HHMMSS_mmm>.md` for each kept old
    /// one; files of pruned versions are removed, so the folder mirrors
    /// the store.
    pub fn write_documents<S: Store + ?Sized>(
        &self,
        m: &Memory<S>,
        current: &[Document],
    ) -> Result<()> {
        let _lock = self.lock()?;
        self.write_documents_locked(m, current)
    }

    fn write_documents_locked<S: Store + ?Sized>(
        &self,
        m: &Memory<S>,
        current: &[Document],
    ) -> Result<()> {
        let mem = self.dir.join("memory");
        let versions = mem.join("versions");
        create_dir(&versions)?;
        for kind in current.iter().map(|d| d.kind) {
            // Read now, not taken from `current`: another writer may have
            // saved a newer version since. The newest is the current one.
            let all = m.store().document_versions(kind)?;
            let Some((doc, kept)) = all.split_first() else {
                continue;
            };
            write_atomically(
                &mem.join(format!("{}.md", doc.kind.stem())),
                doc.content.as_bytes(),
            )?;
            let names: Vec<String> = kept.iter().map(version_file).collect();
            for (d, name) in kept.iter().zip(&names) {
                let path = versions.join(name);
                if !path.exists() {
                    write_atomically(&path, d.content.as_bytes())?;
                }
            }
            let prefix = format!("{}_", doc.kind.stem());
            let entries = std::fs::read_dir(&versions)
                .map_err(|e| Error::io(format!("cannot read {}", versions.display()), e))?;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if name.starts_with(&prefix) && name.ends_with(".md") && !names.contains(&name) {
                    remove_if_present(&versions.join(&name))?;
                }
            }
        }
        Ok(())
    }

    /// `sessions/session_<id>.md` while a session is live;
    /// `sessions/archive/session_<YYYYmmdd_HHMMSS>_<id8>.md` once archived.
    pub fn write_session<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        session_id: &str,
    ) -> Result<()> {
        let _lock = self.lock()?;
        self.write_session_locked(m, session_id)
    }

    fn write_session_locked<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        session_id: &str,
    ) -> Result<()> {
        let store = m.store();
        let session = store.session(session_id)?;
        let mut ops = store.operations(&OperationQuery {
            session_id: Some(session.id.clone()),
            ..OperationQuery::default()
        })?;
        ops.reverse();
        let of = |status, limit| {
            store.entities(&EntityQuery {
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
        let decisions = store.decisions(Some(3))?;
        let compaction = store.last_compaction(&session.id, "session_log")?;
        let text = render(
            &session,
            &ops,
            &SessionLogContext {
                project: &self.project,
                project_id: store.project_id(),
                effective_max: self.effective_max,
                active_work: &active,
                blocked: &blocked,
                recent_decisions: &decisions,
                next_steps: &next,
                compacted: compaction
                    .as_ref()
                    .map(|c| (c.summary.as_str(), c.through_op_seq)),
            },
        );
        let sessions = self.dir.join("sessions");
        let live = sessions.join(format!("session_{}.md", session.id));
        if session.status == SessionStatus::Archived {
            let archive = sessions.join("archive");
            create_dir(&archive)?;
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
            remove_if_present(&live)?;
        } else {
            create_dir(&sessions)?;
            write_atomically(&live, text.as_bytes())?;
        }
        Ok(())
    }

    /// `decisions/DR-<id>_<slug>.md`.
    pub fn write_decision(&self, r: &DecisionRecord) -> Result<()> {
        let dir = self.dir.join("decisions");
        create_dir(&dir)?;
        write_atomically(&dir.join(r.file_name()), r.to_markdown().as_bytes())
    }

    /// `checkpoints/<id>.json`, exactly as stored.
    pub fn write_stored_checkpoints(&self, cps: &[StoredCheckpoint]) -> Result<()> {
        let dir = self.dir.join("checkpoints");
        create_dir(&dir)?;
        for cp in cps {
            write_atomically(&dir.join(format!("{}.json", cp.id)), cp.json.as_bytes())?;
        }
        Ok(())
    }

    /// The files of checkpoints an engine action just created.
    pub fn write_checkpoints<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        cps: &[Checkpoint],
    ) -> Result<()> {
        let stored: Vec<StoredCheckpoint> = cps
            .iter()
            .map(|c| m.store().checkpoint(&c.id))
            .collect::<Result<_, _>>()?;
        self.write_stored_checkpoints(&stored)
    }

    /// The optimizer's files (`archive/phases/…`, `artifacts/…`) from the
    /// database, which holds them whole: `paths`, or every one when `None`.
    pub fn write_artifacts<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        paths: Option<&[String]>,
    ) -> Result<usize> {
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
                return Err(Error::Input(format!(
                    "artifact path `{}` leaves .mnemon/; the database is damaged",
                    a.path
                )));
            }
            let file = self.dir.join(&a.path);
            if let Some(parent) = file.parent() {
                create_dir(parent)?;
            }
            let text = serde_json::to_string_pretty(&a.content)
                .map_err(|e| Error::Input(format!("artifact `{}`: {e}", a.path)))?;
            write_atomically(&file, text.as_bytes())?;
        }
        Ok(all.len())
    }

    /// After a forgetting: the files of what is gone are removed, then
    /// every view is rendered again from the database (a session log or a
    /// document may have shown what went).
    pub fn forget<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        f: &Forgotten,
        keep_versions: u64,
    ) -> Result<()> {
        {
            let _lock = self.lock()?;
            let mut gone: Vec<PathBuf> = Vec::new();
            for id in &f.checkpoints_removed {
                gone.push(self.dir.join("checkpoints").join(format!("{id}.json")));
            }
            for path in &f.artifacts_removed {
                if !path.split('/').any(|c| c == ".." || c.is_empty()) {
                    gone.push(self.dir.join(path));
                }
            }
            for s in &f.sessions {
                gone.push(self.dir.join("sessions").join(format!("session_{s}.md")));
            }
            for p in gone {
                remove_if_present(&p)?;
            }
            // Archived session logs and decision files are named by a
            // stamp or slug as well as the id: found by their id part.
            let id8s: Vec<String> = f
                .sessions
                .iter()
                .map(|s| s.chars().filter(char::is_ascii_hexdigit).take(8).collect())
                .collect();
            self.remove_matching(&self.dir.join("sessions").join("archive"), |name| {
                id8s.iter().any(|id8| name.ends_with(&format!("_{id8}.md")))
            })?;
            self.remove_matching(&self.dir.join("decisions"), |name| {
                f.decisions
                    .iter()
                    .any(|d| name.starts_with(&format!("{d}_")))
            })?;
        }
        self.export(m, keep_versions)?;
        Ok(())
    }

    fn remove_matching(&self, dir: &Path, pick: impl Fn(&str) -> bool) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if pick(&name) {
                remove_if_present(&dir.join(&name))?;
            }
        }
        Ok(())
    }

    /// Rewrites every view from the database; returns how many files.
    pub fn export<S: EngineStore + ?Sized>(
        &self,
        m: &Memory<S>,
        keep_versions: u64,
    ) -> Result<usize> {
        let docs = m.refresh_documents(keep_versions)?;
        self.write_documents(m, &docs)?;
        let mut written = DocKind::ALL.len();
        for s in m.store().sessions(usize::MAX >> 1)? {
            self.write_session(m, &s.id)?;
            written += 1;
        }
        for r in m.store().decisions(None)? {
            self.write_decision(&r)?;
            written += 1;
        }
        let checkpoints = m.store().checkpoints(usize::MAX >> 1)?;
        written += checkpoints.len();
        self.write_stored_checkpoints(&checkpoints)?;
        written += self.write_artifacts(m, None)?;
        Ok(written)
    }
}

fn version_file(d: &Document) -> String {
    format!(
        "{}_{}.md",
        d.kind.stem(),
        d.created_at.datetime().format("%Y%m%d_%H%M%S_%3f")
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn a_view_with_the_same_bytes_is_not_written_again() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("work_plan.md");
        let inode = |p: &Path| std::fs::metadata(p).map(|m| m.ino()).unwrap_or(0);
        write_atomically(&path, b"# Work plan\n").unwrap_or_else(|e| panic!("{e}"));
        let first = inode(&path);
        write_atomically(&path, b"# Work plan\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            inode(&path),
            first,
            "unchanged: the file was left as it was"
        );
        // Same length, other bytes: written (a rename gives a new inode).
        write_atomically(&path, b"# Work plon\n").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(inode(&path), first);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            "# Work plon\n"
        );
        let leftovers = std::fs::read_dir(dir.path())
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(leftovers, 1, "no temp file left behind");
    }
}
