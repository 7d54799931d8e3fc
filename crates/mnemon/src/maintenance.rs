//! Backup, restore and doctor: what users of a memory ask for first after
//! "how do I delete something".

use std::path::{Path, PathBuf};

use mnemon_core::memory::Health;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::identity::MARKER;
use crate::settings::{DB_NAME, DIR_NAME, display_path};
use crate::{Mnemon, OpenOptions, write_atomically};

/// What `doctor` found.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    /// The database's integrity, search indexes, orphans and schema.
    pub health: Health,
    /// The project id in `.mnemon/project-id` matches the database's.
    pub identity_ok: bool,
    /// Rendered files written again from the database.
    pub views_regenerated: usize,
    /// Everything wrong, one line each; empty when healthy.
    pub problems: Vec<String>,
}

impl DoctorReport {
    /// Nothing is wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What a restore did.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    /// The project id the restored database carries.
    pub project_id: String,
    /// The project's database before, set aside (never deleted), when it
    /// had anything.
    pub previous: Option<PathBuf>,
    /// Rows per table of the restored database.
    pub rows: Vec<(String, u64)>,
}

/// What `migrate_to` copied.
#[derive(Debug, Clone, Serialize)]
pub struct Migrated {
    /// The database written, as messages name it (never its password).
    pub target: String,
    /// The project id, the same on both sides.
    pub project_id: String,
    /// Rows and SHA-256 of every table, equal in the source and, read
    /// back, in the target.
    pub tables: Vec<mnemon_core::memory::transfer::TableSum>,
}

impl Mnemon {
    /// Copies this project (an SQLite one) into the PostgreSQL database
    /// `url` names, which must hold no memory yet: every table in one
    /// transaction, positions kept, committed only when every table read
    /// back has the source's row count and hash. The source is read as one
    /// snapshot and is left as it was.
    #[cfg(feature = "postgres")]
    pub fn migrate_to(&self, url: &str, schema: Option<&str>) -> Result<Migrated> {
        use mnemon_core::memory::transfer::TABLES;
        let source = match &self.inner.backend {
            crate::Database::File(pool) => {
                pool.lock().unwrap_or_else(|p| p.into_inner()).stores[0].clone()
            }
            crate::Database::Memory(store) => store.clone(),
            crate::Database::Postgres(p) => {
                return Err(Error::Input(format!(
                    "this project already lives in PostgreSQL ({}); copy it with pg_dump and pg_restore",
                    p.shown()
                )));
            }
        };
        let project_id = mnemon_core::memory::Store::project_id(&source).to_string();
        let rows = source.export(TABLES)?;
        let sums: Vec<_> = TABLES.iter().zip(&rows).map(|(t, r)| t.sum(r)).collect();
        let target = crate::open_postgres(url, schema)?;
        let tables = target.import(&project_id, TABLES, &rows, &sums)?;
        Ok(Migrated {
            target: target.shown().to_string(),
            project_id,
            tables,
        })
    }

    /// A consistent snapshot of the project's database in `dest` (a new
    /// file), taken while other processes may be writing.
    pub fn backup(&self, dest: &Path) -> Result<()> {
        if self.dir().is_none() {
            return Err(Error::Input(
                "this project lives in memory; there is no database file to back up".into(),
            ));
        }
        self.engine()?.memory().store().backup_to(dest)?;
        // The backup carries the configuration, so a restore into an empty
        // directory gets this project's model and window.
        if let Some(config) = self.inner.settings.config_path()
            && let Ok(text) = std::fs::read_to_string(&config)
        {
            mnemon_sqlite::set_backup_config(dest, &text)?;
        }
        Ok(())
    }

    /// Checks the database (integrity, search indexes, orphans, schema)
    /// and the project's identity, and renders every view again.
    pub fn doctor(&self) -> Result<DoctorReport> {
        self.doctor_with(|_| {})
    }

    /// [`Mnemon::doctor`], naming each step to `step` as it starts, so a
    /// caller can show progress on a large project (the integrity check
    /// reads every page of the database).
    pub fn doctor_with(&self, mut step: impl FnMut(DoctorStep)) -> Result<DoctorReport> {
        let store_id =
            mnemon_core::memory::Store::project_id(self.engine()?.memory().store()).to_string();
        step(DoctorStep::Database);
        let health = self.engine()?.memory().store().check()?;
        step(DoctorStep::Identity);
        let identity_ok = match self.dir() {
            Some(d) => std::fs::read_to_string(d.join(MARKER))
                .map(|s| s.trim() == store_id)
                .unwrap_or(false),
            None => true,
        };
        let mut problems = Vec::new();
        for f in &health.integrity {
            problems.push(format!("integrity: {f}"));
        }
        for f in &health.search_index {
            problems.push(format!("search index: {f}"));
        }
        for f in &health.orphans {
            problems.push(format!("orphan: {f}"));
        }
        if health.schema_version != health.latest_schema {
            problems.push(format!(
                "schema version {} (this mnemon writes {})",
                health.schema_version, health.latest_schema
            ));
        }
        if !identity_ok {
            problems.push(format!(
                ".mnemon/{MARKER} does not name this database's project ({store_id})"
            ));
        }
        step(DoctorStep::Views);
        let views_regenerated = match self.export() {
            Ok(n) => n,
            Err(e) => {
                problems.push(format!("views could not be rendered: {e}"));
                0
            }
        };
        Ok(DoctorReport {
            health,
            identity_ok,
            views_regenerated,
            problems,
        })
    }
}

/// Restores the project in `root` from a backup file. A project whose
/// database has anything in it is replaced only with `force`, and then its
/// database is first set aside (`mnemon.db.replaced-<time>`), never
/// deleted. A directory without `.mnemon/` gets one (with the default
/// configuration). The backup is checked before anything changes.
pub fn restore(root: &Path, backup: &Path, force: bool, now_unix: u64) -> Result<Restored> {
    let (_, health) = mnemon_sqlite::inspect(backup)?;
    if !health.integrity.is_empty() {
        return Err(Error::Input(format!(
            "{} is damaged ({}); choose another backup",
            display_path(backup),
            health.integrity.join("; ")
        )));
    }
    let dir = root.join(DIR_NAME);
    if !dir.is_dir() {
        // The project's own configuration when the backup carries one and
        // it still loads; else the defaults, as `mnemon init` writes them.
        let carried = mnemon_sqlite::backup_config(backup)?.filter(|text| {
            crate::Settings::from_text(Some(text), crate::Environment::default()).is_ok()
        });
        match carried {
            Some(text) => {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| Error::io(format!("cannot create {}", display_path(&dir)), e))?;
                write_atomically(&dir.join(crate::CONFIG_NAME), text.as_bytes())?;
            }
            None => {
                crate::init(root, &crate::InitOptions::default())?;
            }
        }
    }
    let db = dir.join(DB_NAME);
    let existing: u64 = if db.exists() {
        let (_, h) = mnemon_sqlite::inspect(&db)?;
        h.rows.iter().map(|(_, n)| n).sum()
    } else {
        0
    };
    if existing > 0 && !force {
        return Err(Error::Input(format!(
            "{} holds {existing} rows already; restoring replaces them. Run again with --force (the current database is set aside, not deleted), or restore into an empty directory",
            display_path(&db)
        )));
    }
    // An empty database is removed, one with rows set aside.
    let previous = crate::identity::start_over(&dir, &db, now_unix)?;
    let id = mnemon_sqlite::restore_into(backup, &db)?;
    write_atomically(&dir.join(MARKER), format!("{id}\n").as_bytes())?;
    let m = OpenOptions::new().open(root)?;
    m.export()?;
    let (_, h) = mnemon_sqlite::inspect(&db)?;
    Ok(Restored {
        project_id: id,
        previous,
        rows: h.rows,
    })
}

/// The steps of [`Mnemon::doctor_with`], in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoctorStep {
    /// Integrity, search indexes, orphans and schema: every page is read.
    Database,
    /// `.mnemon/` names this database's project.
    Identity,
    /// Every view rendered again from the database.
    Views,
}

impl DoctorStep {
    /// What the step does, for a progress line.
    pub fn doing(self) -> &'static str {
        match self {
            DoctorStep::Database => "checking the database: integrity, search indexes, references",
            DoctorStep::Identity => "checking the project's identity",
            DoctorStep::Views => "rendering every view again",
        }
    }
}
