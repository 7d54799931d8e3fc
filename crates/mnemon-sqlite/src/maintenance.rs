//! Backups, restores and health checks.
//!
//! A backup is SQLite's online backup API copying every page in one step:
//! it reads under one read transaction, so the copy is the database as of
//! one moment even while other processes write (WAL lets them go on). A
//! restore is the same API in the other direction, into the live file,
//! under SQLite's own locks.

use std::path::Path;

use mnemon_core::memory::{Health, StoreError, StoreResult};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use crate::SqliteStore;
use crate::error::map_err;
use crate::migrate::{self, LATEST_SCHEMA};

const FTS_TABLES: &[&str] = &[
    "operations_fts",
    "messages_fts",
    "decisions_fts",
    "hot_fts",
    "entities_fts",
    "documents_fts",
];

/// Copies every page of `src` into `dst` in one step.
fn copy(src: &Connection, dst: &mut Connection, shown: &str) -> StoreResult<()> {
    let backup = Backup::new(src, dst).map_err(|e| map_err(shown, e))?;
    loop {
        match backup.step(-1).map_err(|e| map_err(shown, e))? {
            StepResult::Done => return Ok(()),
            // Another connection held a lock: wait and go on.
            StepResult::Busy | StepResult::Locked => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            StepResult::More => {}
            _ => {}
        }
    }
}

impl SqliteStore {
    /// A consistent copy of this database at `dest`, which must not exist:
    /// written to a temporary name beside it and renamed when complete, so
    /// a backup that fails half-way leaves no file that looks whole.
    pub fn backup_to(&self, dest: &Path) -> StoreResult<()> {
        let shown = dest.display().to_string();
        if dest.exists() {
            return Err(StoreError::Invalid(format!(
                "{shown} exists already; choose a new file name, or remove it first"
            )));
        }
        let tmp = dest.with_extension(format!("partial-{}", std::process::id()));
        let result = (|| {
            let mut dst = Connection::open(&tmp).map_err(|e| map_err(&shown, e))?;
            {
                let conn = self.conn();
                copy(&conn, &mut dst, &shown)?;
            }
            // A single file: no WAL beside it.
            dst.execute_batch("PRAGMA journal_mode = DELETE;")
                .map_err(|e| map_err(&shown, e))?;
            drop(dst);
            std::fs::rename(&tmp, dest).map_err(|e| StoreError::ReadOnly {
                path: shown.clone(),
                reason: e.to_string(),
            })
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// Integrity, search indexes, orphans and schema version.
    pub fn check(&self) -> StoreResult<Health> {
        let conn = self.conn();
        health(&conn, self.path())
    }
}

fn health(conn: &Connection, shown: &str) -> StoreResult<Health> {
    let e = |err| map_err(shown, err);
    let mut h = Health {
        latest_schema: LATEST_SCHEMA,
        ..Health::default()
    };
    let findings: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(e)?;
    h.integrity = findings.into_iter().filter(|f| f != "ok").collect();
    for t in FTS_TABLES {
        let exists: bool = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [t],
                |r| r.get::<_, i64>(0),
            )
            .map_err(e)?
            > 0;
        if exists
            && let Err(err) = conn.execute(
                &format!("INSERT INTO {t}({t}) VALUES('integrity-check')"),
                [],
            )
        {
            h.search_index.push(format!("{t}: {err}"));
        }
    }
    let orphans: Vec<(String, i64, String)> = conn
        .prepare("PRAGMA foreign_key_check")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect()
        })
        .map_err(e)?;
    for (table, rowid, parent) in orphans {
        h.orphans.push(format!(
            "{table} row {rowid} points at a missing row of {parent}"
        ));
    }
    for t in ["checkpoints", "compactions"] {
        let n: i64 = conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM {t} WHERE session_id IS NOT NULL AND session_id NOT IN (SELECT id FROM sessions)"
                ),
                [],
                |r| r.get(0),
            )
            .map_err(e)?;
        if n > 0 {
            h.orphans
                .push(format!("{n} {t} name a session that does not exist"));
        }
    }
    h.schema_version = conn
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .map_err(e)?
        .unwrap_or(0);
    for t in mnemon_core::store::sql::RECORD_TABLES {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .map_err(e)?;
        h.rows.push((t.to_string(), n as u64));
    }
    Ok(h)
}

/// Checks that `src` is a mnemon database in good health, without writing
/// to it; returns its project id and its health.
pub fn inspect(src: &Path) -> StoreResult<(String, Health)> {
    let shown = src.display().to_string();
    if !src.is_file() {
        return Err(StoreError::Invalid(format!(
            "{shown} is not a file; give the file `mnemon backup` wrote"
        )));
    }
    crate::check_header(src, &shown)?;
    let conn = Connection::open_with_flags(src, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| map_err(&shown, e))?;
    migrate::check_ours(&conn, &shown)?;
    let id: String = conn
        .query_row("SELECT value FROM meta WHERE key = 'project_id'", [], |r| {
            r.get(0)
        })
        .map_err(|_| StoreError::Foreign {
            path: shown.clone(),
            reason: "it has no mnemon project id".into(),
        })?;
    let h = health(&conn, &shown)?;
    Ok((id, h))
}

/// The `meta` key under which a backup carries the project's
/// `config.toml`, so a restore into an empty directory gets the model and
/// window the project had, not the defaults.
const BACKUP_CONFIG: &str = "backup_config_toml";

/// Stores `config` (a `config.toml` text) in the backup at `dest`.
pub fn set_backup_config(dest: &Path, config: &str) -> StoreResult<()> {
    let shown = dest.display().to_string();
    let conn = Connection::open(dest).map_err(|e| map_err(&shown, e))?;
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        rusqlite::params![BACKUP_CONFIG, config],
    )
    .map_err(|e| map_err(&shown, e))?;
    Ok(())
}

/// The `config.toml` a backup carries, if the project had one.
pub fn backup_config(src: &Path) -> StoreResult<Option<String>> {
    let shown = src.display().to_string();
    let conn = Connection::open_with_flags(src, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| map_err(&shown, e))?;
    match conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        [BACKUP_CONFIG],
        |r| r.get(0),
    ) {
        Ok(text) => Ok(Some(text)),
        Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
        Err(e) => Err(map_err(&shown, e)),
    }
}

/// Replaces the database at `db` with the contents of `src` (after
/// [`inspect`] found it healthy), through SQLite's locks so that no other
/// connection sees half of it. Returns the restored project id.
pub fn restore_into(src: &Path, db: &Path) -> StoreResult<String> {
    let (id, h) = inspect(src)?;
    let shown = src.display().to_string();
    if !h.integrity.is_empty() {
        return Err(StoreError::Corrupt {
            path: shown,
            reason: h.integrity.join("; "),
        });
    }
    if h.schema_version > LATEST_SCHEMA {
        return Err(StoreError::NewerSchema {
            path: shown,
            found: h.schema_version,
            supported: LATEST_SCHEMA,
        });
    }
    let src_conn = Connection::open_with_flags(src, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| map_err(&shown, e))?;
    let target = db.display().to_string();
    let mut dst = Connection::open(db).map_err(|e| map_err(&target, e))?;
    dst.busy_timeout(std::time::Duration::from_millis(crate::BUSY_TIMEOUT_MS))
        .map_err(|e| map_err(&target, e))?;
    copy(&src_conn, &mut dst, &target)?;
    // The configuration travelled with the backup; the project keeps its
    // own in config.toml.
    dst.execute("DELETE FROM meta WHERE key = ?1", [BACKUP_CONFIG])
        .map_err(|e| map_err(&target, e))?;
    dst.execute_batch("PRAGMA journal_mode = WAL;")
        .map_err(|e| map_err(&target, e))?;
    drop(dst);
    // Brings an older backup to this build's schema.
    SqliteStore::open(db)?;
    Ok(id)
}

impl mnemon_core::store::Backend for SqliteStore {
    fn shown(&self) -> String {
        self.path().to_string()
    }

    fn check(&self) -> StoreResult<Health> {
        SqliteStore::check(self)
    }

    fn backup_to(&self, dest: &Path) -> StoreResult<()> {
        SqliteStore::backup_to(self, dest)
    }
}
