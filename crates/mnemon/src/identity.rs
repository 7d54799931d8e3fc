//! A project remembers that it has a history. The database's project id is
//! kept beside it in `.mnemon/project-id` on first open; from then on a
//! missing or empty `mnemon.db` (deleted, truncated by a full disk, lost in
//! a copy) or one of another project is refused with what happened and how
//! to recover, instead of silently starting an empty memory.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::settings::display_path;
use crate::views::write_atomically;

/// The file that holds the project's id.
pub const MARKER: &str = "project-id";

/// The id this project's database must carry, if it ever had one; refuses
/// before anything creates a new database in place of a lost one.
pub(crate) fn expected(dir: &Path, db: &Path) -> Result<Option<String>> {
    let marker = dir.join(MARKER);
    let id = match std::fs::read_to_string(&marker) {
        Ok(s) => s.trim().to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::io(
                format!("cannot read {}", display_path(&marker)),
                e,
            ));
        }
    };
    // In WAL mode a new database's pages can all sit in `-wal` until the
    // first checkpoint, with the main file still empty: that is not lost.
    let len = |p: &Path| match std::fs::metadata(p) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(Error::io(format!("cannot read {}", display_path(p)), e)),
    };
    let empty = len(db)? == 0 && len(&db.with_extension("db-wal"))? == 0;
    if empty {
        return Err(Error::Lost(format!(
            "{} is missing or empty, but this project had a history (project {id}); nothing was created in its place. Put the database back (from a backup or a copy), or run `mnemon init --force` to start this project over with an empty memory",
            display_path(db)
        )));
    }
    Ok(Some(id))
}

/// After the database opened: a database of another project is refused;
/// a first open records the id.
pub(crate) fn settle(dir: &Path, db: &Path, expected: Option<&str>, actual: &str) -> Result<()> {
    match expected {
        Some(id) if id == actual => Ok(()),
        Some(id) => Err(Error::Lost(format!(
            "{} belongs to another project ({actual}), not to this one ({id}); put this project's database back, or run `mnemon init --force` to start over",
            display_path(db)
        ))),
        None => write_atomically(&dir.join(MARKER), format!("{actual}\n").as_bytes()),
    }
}

/// `mnemon init --force` on an existing project: the database (if it has
/// anything) is set aside as `mnemon.db.replaced-<UTC time>` (such as
/// `replaced-20261126-170105`, readable in a listing), never deleted, and
/// the project forgets its id. Returns where it went.
pub fn start_over(dir: &Path, db: &Path, now_unix: u64) -> Result<Option<PathBuf>> {
    let mut kept = None;
    let now_unix = mnemon_core::memory::Timestamp((now_unix as i64).saturating_mul(1000))
        .datetime()
        .format("%Y%m%d-%H%M%S")
        .to_string();
    if std::fs::metadata(db).is_ok_and(|m| m.len() > 0) {
        let aside = db.with_extension(format!("db.replaced-{now_unix}"));
        std::fs::rename(db, &aside)
            .map_err(|e| Error::io(format!("cannot move {} aside", display_path(db)), e))?;
        // The WAL and shared memory follow the database under SQLite's own
        // names (`<file>-wal`), so the set-aside file opens with its last
        // commits.
        for suffix in ["-wal", "-shm"] {
            let side = db.with_extension(format!("db{suffix}"));
            if side.exists() {
                let mut to = aside.clone().into_os_string();
                to.push(suffix);
                let to = PathBuf::from(to);
                std::fs::rename(&side, &to).map_err(|e| {
                    Error::io(format!("cannot move {} aside", display_path(&side)), e)
                })?;
            }
        }
        kept = Some(aside);
    } else {
        for ext in ["db", "db-wal", "db-shm"] {
            let f = db.with_extension(ext);
            if f.exists() {
                std::fs::remove_file(&f)
                    .map_err(|e| Error::io(format!("cannot remove {}", display_path(&f)), e))?;
            }
        }
    }
    let marker = dir.join(MARKER);
    if marker.exists() {
        std::fs::remove_file(&marker)
            .map_err(|e| Error::io(format!("cannot remove {}", display_path(&marker)), e))?;
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_database_keeps_its_wal_under_sqlites_names() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = dir.path().join("mnemon.db");
        for (name, body) in [
            ("mnemon.db", "db"),
            ("mnemon.db-wal", "wal"),
            ("mnemon.db-shm", "shm"),
        ] {
            std::fs::write(dir.path().join(name), body).unwrap_or_else(|e| panic!("{e}"));
        }
        // 2026-11-26 17:01:05 UTC.
        let kept = start_over(dir.path(), &db, 1_795_712_465)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("a database with content is kept"));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "mnemon.db.replaced-20261126-170105",
                "mnemon.db.replaced-20261126-170105-shm",
                "mnemon.db.replaced-20261126-170105-wal",
            ]
        );
        assert_eq!(
            kept.file_name().and_then(|n| n.to_str()),
            Some(names[0].as_str())
        );
        let wal = std::fs::read_to_string(dir.path().join(&names[2])).unwrap_or_default();
        assert_eq!(wal, "wal");
    }
}
