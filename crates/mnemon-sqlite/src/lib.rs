//! mnemon-sqlite: the embedded store, `.mnemon/mnemon.db`.
//!
//! SQLite in WAL mode with `synchronous = FULL`: a write returns only after
//! its transaction is on disk, so neither a killed process nor a power cut
//! loses an acknowledged write. Every write runs in `BEGIN IMMEDIATE`, which
//! takes the write lock up front; with the busy timeout, concurrent writers
//! from several processes queue instead of failing. FTS5 indexes are
//! maintained by triggers inside the same transaction. Several writes that
//! belong together run in one unit of work (`Store::unit_of_work`).
//!
//! This crate implements mnemon-core's storage traits and knows nothing of
//! the domain rules; those run in core before a write arrives here.

mod commit;
mod decisions;
mod documents;
mod engine;
mod entities;
mod error;
mod forget;
mod hot;
mod log;
mod maintenance;
mod migrate;
mod optimizer;
mod row;
mod search;
mod sessions;
mod transfer;
mod unit;
mod vectors;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use mnemon_core::memory::{Store, StoreError, StoreResult};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

pub use maintenance::{backup_config, inspect, restore_into, set_backup_config};
pub use migrate::LATEST_SCHEMA;
pub use mnemon_core::memory::Health;

use error::map_err;

/// How long a writer waits for another process's transaction.
const BUSY_TIMEOUT_MS: u64 = 30_000;

/// The first pause before opening again after an immediate "database is
/// locked"; it doubles up to 200 ms.
const OPEN_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// How long opening keeps trying: as long as a write waits for the lock.
const OPEN_PATIENCE: std::time::Duration = std::time::Duration::from_millis(BUSY_TIMEOUT_MS);

/// SQLite's SQLITE_BUSY, as `error::map_err` words it.
fn is_busy(e: &StoreError) -> bool {
    matches!(e, StoreError::Backend(m) if m.ends_with("database is locked"))
}

/// The SQLite store of one project.
///
/// A clone shares the connection (and its units of work) with the
/// original: that is how several engines of one process, one per agent,
/// share an in-memory project. File-backed callers that want reads in
/// parallel open the file again instead.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    /// Held for every call, and across a unit of work (`Store::unit_of_work`).
    gate: Arc<unit::Gate>,
    /// Shared by every store of this process on the same file.
    writer: Arc<Mutex<()>>,
    project_id: String,
    path: String,
}

/// One writer at a time per database file within a process. SQLite lets
/// one connection write at a time anyway; without this, the others wait in
/// its busy handler, which sleeps in steps of up to 100 ms, so a burst of
/// writes from many agents' connections had tails of hundreds of
/// milliseconds. Waiting here wakes the next writer as soon as the last one
/// commits. Other processes still meet at SQLite's lock.
fn writer_for(path: &Path) -> Arc<Mutex<()>> {
    type Registry =
        Mutex<std::collections::HashMap<std::path::PathBuf, std::sync::Weak<Mutex<()>>>>;
    static WRITERS: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut map = WRITERS
        .get_or_init(Registry::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(w) = map.get(&key).and_then(std::sync::Weak::upgrade) {
        return w;
    }
    map.retain(|_, w| w.strong_count() > 0);
    let w = Arc::new(Mutex::new(()));
    map.insert(key, Arc::downgrade(&w));
    w
}

impl SqliteStore {
    /// Opens `path`, creating and migrating it if it does not exist.
    /// A foreign, damaged or newer file is refused unchanged.
    ///
    /// Opening is tried again while SQLite answers "database is locked" at
    /// once: switching a file another process is creating to WAL needs it
    /// alone, and SQLite reports that without waiting for the busy
    /// timeout. Every step of opening can be repeated (the migration is
    /// one exclusive transaction), so trying again loses nothing; a process
    /// among many creating one project waits its turn instead of failing.
    pub fn open(path: &Path) -> StoreResult<SqliteStore> {
        let mut pause = OPEN_PAUSE;
        let mut waited = std::time::Duration::ZERO;
        loop {
            match Self::open_once(path) {
                Err(e) if is_busy(&e) && waited < OPEN_PATIENCE => {
                    std::thread::sleep(pause);
                    waited += pause;
                    pause = (pause * 2).min(std::time::Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }

    /// Another connection to this store's file. The same as opening its
    /// path, which (with this store open) reads no header outside SQLite:
    /// see `open_once`.
    pub fn open_another(&self) -> StoreResult<SqliteStore> {
        Self::open(Path::new(&self.path))
    }

    fn open_once(path: &Path) -> StoreResult<SqliteStore> {
        let shown = path.display().to_string();
        if path.is_dir() {
            return Err(StoreError::Foreign {
                path: shown,
                reason: "it is a directory, not a database file; move it aside and mnemon creates the database afresh".into(),
            });
        }
        // Reading the header opens the file outside SQLite, and closing that
        // descriptor releases every POSIX lock this process holds on it: a
        // connection of this process already open would lose its locks, and
        // another process could then delete the WAL under it. So the header
        // is read only by a process with no connection to the file yet, and
        // opens of one file within a process are taken one at a time.
        let writer = writer_for(path);
        let alone = Arc::strong_count(&writer) == 1;
        let _one_at_a_time = writer.lock().unwrap_or_else(|p| p.into_inner());
        if alone && path.exists() {
            check_header(path, &shown)?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| map_err(&shown, e))?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))
            .map_err(|e| map_err(&shown, e))?;
        // Refuse a foreign or newer file before anything writes to it:
        // switching to WAL alone rewrites the header.
        migrate::check_ours(&conn, &shown)?;
        // `secure_delete` on every write, not only while forgetting: an
        // update that moves a row, a compaction or a refresh frees space
        // that would keep the old text for a later forget to miss.
        let setup = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;";
        conn.execute_batch(setup).map_err(|e| map_err(&shown, e))?;
        let project_id = migrate::migrate(&conn, &shown)?;
        tune(&conn, &shown)?;
        drop(_one_at_a_time);
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            gate: Arc::default(),
            writer,
            project_id,
            path: shown,
        })
    }

    /// An in-memory store, for tests and one-off runs.
    pub fn in_memory() -> StoreResult<SqliteStore> {
        let conn = Connection::open_in_memory().map_err(|e| map_err(":memory:", e))?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;")
            .map_err(|e| map_err(":memory:", e))?;
        let project_id = migrate::migrate(&conn, ":memory:")?;
        tune(&conn, ":memory:")?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            gate: Arc::default(),
            writer: Arc::default(),
            project_id,
            path: ":memory:".into(),
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Caps the database at `pages` pages (of 4 KiB by default), so a
    /// runaway writer fills its quota, not the disk. A write past the cap
    /// fails exactly as on a full disk ([`StoreError::DiskFull`]) and leaves
    /// everything already stored intact.
    pub fn limit_pages(&self, pages: u64) -> StoreResult<u64> {
        let conn = self.conn();
        conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n as u64)
        .map_err(|e| self.err(e))
    }

    /// `PRAGMA integrity_check`: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> StoreResult<String> {
        let conn = self.conn();
        conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))
    }

    /// Sets this connection's page cache to `kib` KiB. SQLite takes pages
    /// as it reads them, so a small project never fills it.
    pub fn set_page_cache_kib(&self, kib: u32) -> StoreResult<()> {
        self.conn()
            .execute_batch(&format!("PRAGMA cache_size = -{kib}"))
            .map_err(|e| self.err(e))
    }

    fn conn(&self) -> Conn<'_> {
        let pass = self.gate.enter();
        // A panic while holding the lock cannot leave a half-written
        // transaction (SQLite rolls it back), so a poisoned lock is safe to reuse.
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        Conn { conn, _pass: pass }
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        map_err(&self.path, e)
    }

    /// Runs `f` in one immediate transaction and commits; inside a unit of
    /// work, in a savepoint of the unit's transaction.
    fn write<T>(&self, f: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        let mut conn = self.conn();
        if conn.is_autocommit() {
            let _writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| map_err(&self.path, e))?;
            let out = f(&tx)?;
            tx.commit().map_err(|e| map_err(&self.path, e))?;
            Ok(out)
        } else {
            let sp = conn.savepoint().map_err(|e| map_err(&self.path, e))?;
            let out = f(&sp)?;
            sp.commit().map_err(|e| map_err(&self.path, e))?;
            Ok(out)
        }
    }
}

/// The connection, for the one thread the gate lets in. The lock is
/// released before the pass (fields drop in order).
struct Conn<'a> {
    conn: MutexGuard<'a, Connection>,
    _pass: unit::Pass<'a>,
}

impl Deref for Conn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// Rolls back a unit of work that did not commit, whether it failed or
/// panicked, so the connection never carries a stray open transaction.
struct Unfinished<'a>(&'a SqliteStore);

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let conn = self.0.conn();
        if !conn.is_autocommit() {
            // A failed rollback leaves nothing committed either: SQLite
            // rolls back an open transaction when the connection closes.
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
}

impl Store for SqliteStore {
    fn project_id(&self) -> &str {
        &self.project_id
    }

    fn unit_of_work(&self, f: &mut dyn FnMut() -> StoreResult<()>) -> StoreResult<()> {
        let _pass = self.gate.enter();
        if !self.conn().is_autocommit() {
            return f();
        }
        // Dropped after `unfinished`: the rollback happens while it is held.
        let _writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        self.conn()
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err(e))?;
        let unfinished = Unfinished(self);
        f()?;
        self.conn()
            .execute_batch("COMMIT")
            .map_err(|e| self.err(e))?;
        std::mem::forget(unfinished);
        Ok(())
    }
}

/// Room for every distinct statement mnemon prepares: with rusqlite's
/// default of sixteen, retrieval's per-index queries alone pushed each
/// other out and were compiled again on every call.
const STATEMENT_CACHE: usize = 256;

/// SQLite's page cache per connection. Retrieval reads a few hundred
/// records scattered over the log; with the default 2 MiB the B-tree's
/// interior pages of a large log were evicted by those reads and fetched
/// from the file again on every lookup.
const PAGE_CACHE_KIB: u32 = 4_096;

/// The page cache for a project whose contexts also retrieve by meaning
/// ([`SqliteStore::set_page_cache_kib`]): those read another few hundred
/// records wherever their vectors point, and at 100,000 operations 4 MiB
/// sent most of those reads to the file. 16 MiB took a fused context's
/// p95 from 3.8 to 3.3 times the words' alone, as 32 MiB did
/// (BENCHMARKS.md, 2026-11-26). It is not the default: `mnemon serve`
/// keeps several connections per project, and at 16 MiB each its peak
/// RSS in the backends bench went from 235 to 345 MiB.
pub const MEANING_PAGE_CACHE_KIB: u32 = 16_384;

/// Statements are planned once. Without the planner's stability guarantee,
/// SQLite 3.54 compiles a statement again whenever a new value is bound to
/// its `LIMIT ?`, which every list and search query has: retrieval spent
/// more time re-planning than searching. mnemon's plans do not depend on
/// bound values (no partial indexes, no `LIKE` on an indexed column), so
/// nothing is lost.
fn tune(conn: &Connection, shown: &str) -> StoreResult<()> {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.execute_batch(&format!("PRAGMA cache_size = -{}", PAGE_CACHE_KIB))
        .map_err(|e| map_err(shown, e))?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .map_err(|e| map_err(shown, e))?;
    Ok(())
}

/// How often a header that is not SQLite's is read before the file is
/// called foreign, and the pause between reads.
const HEADER_READS: u32 = 5;
const HEADER_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// Refuses a file that is not an SQLite database before SQLite touches it.
/// A file another process is creating at this instant may show a torn first
/// page (a read that overlaps the write of it), so a header that is not
/// SQLite's is read again a few times before the file is refused; a
/// foreign file is refused 80 ms later than at the first read.
fn check_header(path: &Path, shown: &str) -> StoreResult<()> {
    for attempt in 1..=HEADER_READS {
        if header_is_sqlite(path, shown)? {
            return Ok(());
        }
        if attempt < HEADER_READS {
            std::thread::sleep(HEADER_PAUSE);
        }
    }
    Err(StoreError::Foreign {
        path: shown.to_string(),
        reason: "it is not an SQLite database file".into(),
    })
}

/// Whether the file starts as an SQLite database does, or is empty.
fn header_is_sqlite(path: &Path, shown: &str) -> StoreResult<bool> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).map_err(|e| StoreError::ReadOnly {
        path: shown.to_string(),
        reason: e.to_string(),
    })?;
    let n = f
        .read(&mut head)
        .map_err(|e| StoreError::Backend(e.to_string()))?;
    Ok(n == 0 || (n == 16 && &head == b"SQLite format 3\0"))
}

fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Resolves a handle (`o12`, `m7`, `h3`), a full id or a unique prefix in
/// `table`; the rules are core's (`mnemon_core::memory::resolve_id`).
fn resolve_id(
    conn: &Connection,
    path: &str,
    table: &str,
    what: &'static str,
    project: &str,
    id: &str,
) -> StoreResult<String> {
    let lookup = Lookup {
        conn,
        path,
        table,
        project,
    };
    mnemon_core::memory::resolve_id(table, what, id, &lookup)
}

/// One table's ids, as SQL.
struct Lookup<'a> {
    conn: &'a Connection,
    path: &'a str,
    table: &'a str,
    project: &'a str,
}

impl Lookup<'_> {
    /// The first column of `SELECT <what> FROM <table> WHERE project_id = ?1
    /// AND <filter>` with `?2` bound to `arg`.
    fn column<T: rusqlite::types::FromSql>(
        &self,
        what: &str,
        filter: &str,
        arg: &dyn rusqlite::ToSql,
    ) -> StoreResult<Vec<T>> {
        let sql = format!(
            "SELECT {what} FROM {} WHERE project_id = ?1 AND {filter}",
            self.table
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_map(rusqlite::params![self.project, arg], |r| r.get(0))
                    .and_then(|rows| rows.collect())
            })
            .map_err(|e| map_err(self.path, e))
    }
}

impl mnemon_core::memory::IdLookup for Lookup<'_> {
    fn at_position(&self, seq: i64) -> StoreResult<Option<String>> {
        Ok(self.column("id", "seq = ?2", &seq)?.into_iter().next())
    }

    fn two_starting_with(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.column(
            "id",
            "id LIKE ?2 ESCAPE '\\' LIMIT 2",
            &mnemon_core::memory::like_prefix(prefix),
        )
    }

    fn count_starting_with(&self, prefix: &str) -> StoreResult<usize> {
        let n: Vec<i64> = self.column(
            "count(*)",
            "id LIKE ?2 ESCAPE '\\'",
            &mnemon_core::memory::like_prefix(prefix),
        )?;
        Ok(n.first().copied().unwrap_or(0) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_size(store: &SqliteStore) -> i64 {
        store
            .conn()
            .query_row("PRAGMA cache_size", [], |r| r.get(0))
            .unwrap_or(0)
    }

    #[test]
    fn the_page_cache_is_4_mib_unless_retrieval_by_meaning_asks_for_more() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = SqliteStore::open(&dir.path().join("m.db")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cache_size(&store), -i64::from(PAGE_CACHE_KIB));
        store
            .set_page_cache_kib(MEANING_PAGE_CACHE_KIB)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cache_size(&store), -i64::from(MEANING_PAGE_CACHE_KIB));
    }
}
