//! mnemon-postgres: the memory of one project in a PostgreSQL database, so
//! that agents on several machines, and several `mnemon serve` processes,
//! share it.
//!
//! It implements the same storage traits as `mnemon-sqlite` with the same
//! semantics, and runs the same conformance suite. Writers of one project
//! take a transaction-scoped advisory lock keyed by the project before they
//! read anything they will write from: PostgreSQL then orders them as
//! SQLite's `BEGIN IMMEDIATE` does, so entity numbers stay gapless,
//! counters lose no update, and no two writers deadlock, whichever server
//! they came through. Readers never take it. Every write returns only after
//! its transaction committed.
//!
//! The traits are synchronous and mnemon calls them from plain threads (the
//! server from its blocking pool), so each call drives tokio-postgres on a
//! small runtime of this crate's own and waits for the answer.

mod client;
mod cluster;
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
mod row;
mod search;
mod sessions;
mod text;
mod transfer;
mod vectors;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use mnemon_core::memory::{Store, StoreError, StoreResult};

pub use client::Db;
pub use cluster::{Cluster, ClusterError, ClusterOptions};
pub use migrate::LATEST_SCHEMA;

/// Connections one store keeps open at most.
const DEFAULT_POOL: usize = 16;

/// The PostgreSQL store of one project. Clones share the pool and the
/// units of work; another `open` of the same database is a second client,
/// as another process would be.
#[derive(Clone)]
pub struct PgStore {
    shared: Arc<Shared>,
}

struct Shared {
    pool: Pool,
    project_id: String,
    /// The database as messages name it: never with its password.
    shown: String,
    /// The advisory lock writers of this project take.
    lock_key: i64,
    /// The open unit of work of each thread that has one.
    units: Mutex<HashMap<ThreadId, Arc<Object>>>,
    /// How it was reached, for [`PgStore::reopen`].
    target: Target,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("database", &self.shared.shown)
            .field("schema", &self.shared.target.schema)
            .field("project_id", &self.shared.project_id)
            .finish()
    }
}

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct Target {
    pub config: tokio_postgres::Config,
    /// The PostgreSQL schema (namespace) the tables live in; `None` is the
    /// connection's default (`public`, or what the URL's `options` set).
    pub schema: Option<String>,
    pub pool_size: usize,
}

impl Target {
    /// A `postgres://` URL or a `key=value` connection string. A password
    /// may come with it, from `PGPASSWORD` or from `.pgpass` (see
    /// [`Target::with_password_from`]).
    pub fn parse(url: &str) -> StoreResult<Target> {
        let config: tokio_postgres::Config = url.parse().map_err(|e| {
            StoreError::Invalid(format!(
                "`{}` is not a PostgreSQL connection URL ({e}); write it as postgres://USER@HOST:PORT/DATABASE",
                text::without_password(url)
            ))
        })?;
        Ok(Target {
            config,
            schema: None,
            pool_size: DEFAULT_POOL,
        })
    }

    pub fn schema(mut self, schema: &str) -> Target {
        self.schema = Some(schema.to_string());
        self
    }

    /// Fills in a missing password from `env_password` (the value of
    /// `PGPASSWORD`) or else from the text of a `.pgpass` file, matched on
    /// host, port, database and user as libpq does.
    pub fn with_password_from(
        mut self,
        env_password: Option<&str>,
        pgpass: Option<&str>,
    ) -> Target {
        if self.config.get_password().is_some() {
            return self;
        }
        if let Some(p) = env_password.filter(|p| !p.is_empty()) {
            self.config.password(p);
        } else if let Some(p) = pgpass.and_then(|t| text::pgpass_lookup(t, &self.config)) {
            self.config.password(p);
        }
        self
    }

    /// The database as messages name it, without the password.
    pub fn shown(&self) -> String {
        text::shown(&self.config, self.schema.as_deref())
    }
}

impl PgStore {
    /// Opens the project in the database `url` names, creating and
    /// migrating its tables if there are none. A schema holding other
    /// tables, or written by a newer mnemon, is refused unchanged.
    pub fn open(url: &str) -> StoreResult<PgStore> {
        PgStore::connect(Target::parse(url)?)
    }

    pub fn connect(target: Target) -> StoreResult<PgStore> {
        let shown = target.shown();
        let mut config = target.config.clone();
        if let Some(schema) = &target.schema {
            if !mnemon_core::config::StorageSection::plain_schema_name(schema) {
                return Err(StoreError::Invalid(format!(
                    "`{schema}` is not a usable schema name: use lower-case letters, digits and _"
                )));
            }
            migrate::create_schema(&config, schema, &shown)?;
            config.options(format!("-c search_path={schema}"));
        }
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(target.pool_size.max(1))
            .build()
            .map_err(|e| StoreError::Backend(format!("{shown}: {e}")))?;
        let first = Db::new(Arc::new(client::checkout(&pool, &shown)?), shown.clone());
        let project_id = migrate::migrate(&first, &shown)?;
        drop(first);
        Ok(PgStore {
            shared: Arc::new(Shared {
                pool,
                lock_key: text::lock_key(&project_id),
                project_id,
                shown,
                units: Mutex::default(),
                target,
            }),
        })
    }

    /// A second, independent client of the same project.
    pub fn reopen(&self) -> StoreResult<PgStore> {
        PgStore::connect(self.shared.target.clone())
    }

    /// The database as messages name it, without the password.
    pub fn shown(&self) -> &str {
        &self.shared.shown
    }

    pub fn schema(&self) -> Option<&str> {
        self.shared.target.schema.as_deref()
    }

    fn unit(&self) -> Option<Arc<Object>> {
        self.shared
            .units
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&thread::current().id())
            .cloned()
    }

    /// A connection for reads: the thread's unit of work's, or one from
    /// the pool.
    pub fn db(&self) -> StoreResult<Db> {
        let client = match self.unit() {
            Some(c) => c,
            None => Arc::new(client::checkout(&self.shared.pool, &self.shared.shown)?),
        };
        Ok(Db::new(client, self.shared.shown.clone()))
    }

    /// Runs `f` in one transaction holding the project's write lock and
    /// commits; inside a unit of work, in a savepoint of its transaction,
    /// so a failed write leaves the unit usable.
    fn write<T>(&self, f: impl FnOnce(&Db) -> StoreResult<T>) -> StoreResult<T> {
        if let Some(client) = self.unit() {
            let db = Db::new(client, self.shared.shown.clone());
            db.batch("SAVEPOINT mnemon_write")?;
            return match f(&db) {
                Ok(v) => {
                    db.batch("RELEASE SAVEPOINT mnemon_write")?;
                    Ok(v)
                }
                Err(e) => {
                    db.batch("ROLLBACK TO SAVEPOINT mnemon_write; RELEASE SAVEPOINT mnemon_write")?;
                    Err(e)
                }
            };
        }
        let db = self.db()?;
        let tx = client::Tx::begin(&db, Some(self.shared.lock_key))?;
        let out = f(&db)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` as reads that see one snapshot.
    fn snapshot<T>(&self, f: impl FnOnce(&Db) -> StoreResult<T>) -> StoreResult<T> {
        if let Some(client) = self.unit() {
            return f(&Db::new(client, self.shared.shown.clone()));
        }
        let db = self.db()?;
        let tx = client::Tx::begin_snapshot(&db)?;
        let out = f(&db)?;
        tx.commit()?;
        Ok(out)
    }

    fn project(&self) -> &str {
        &self.shared.project_id
    }
}

/// Leaves the thread's unit of work: rolled back unless it committed.
struct UnitGuard<'a> {
    store: &'a PgStore,
    tx: Option<client::Tx>,
}

impl Drop for UnitGuard<'_> {
    fn drop(&mut self) {
        self.store
            .shared
            .units
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&thread::current().id());
        // Dropping an unfinished transaction rolls it back.
        self.tx.take();
    }
}

impl Store for PgStore {
    fn project_id(&self) -> &str {
        &self.shared.project_id
    }

    fn unit_of_work(&self, f: &mut dyn FnMut() -> StoreResult<()>) -> StoreResult<()> {
        if self.unit().is_some() {
            return f();
        }
        let client = Arc::new(client::checkout(&self.shared.pool, &self.shared.shown)?);
        let db = Db::new(Arc::clone(&client), self.shared.shown.clone());
        let tx = client::Tx::begin(&db, Some(self.shared.lock_key))?;
        self.shared
            .units
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(thread::current().id(), client);
        let mut guard = UnitGuard {
            store: self,
            tx: Some(tx),
        };
        f()?;
        if let Some(tx) = guard.tx.take() {
            tx.commit()?;
        }
        drop(guard);
        Ok(())
    }
}

fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Resolves a handle (`o12`, `m7`, `h3`), a full id or a unique prefix in
/// `table`; the rules are core's (`mnemon_core::memory::resolve_id`).
fn resolve_id(
    db: &Db,
    table: &str,
    what: &'static str,
    project: &str,
    id: &str,
) -> StoreResult<String> {
    let lookup = Lookup { db, table, project };
    mnemon_core::memory::resolve_id(table, what, id, &lookup)
}

/// One table's ids, as SQL.
struct Lookup<'a> {
    db: &'a Db,
    table: &'a str,
    project: &'a str,
}

impl Lookup<'_> {
    /// `SELECT <what> FROM <table> WHERE project_id = $1 AND <filter>`,
    /// with `$2` bound to `arg`.
    fn rows(
        &self,
        what: &str,
        filter: &str,
        arg: &(dyn tokio_postgres::types::ToSql + Sync),
    ) -> StoreResult<Vec<tokio_postgres::Row>> {
        let sql = format!(
            "SELECT {what} FROM {} WHERE project_id = $1 AND {filter}",
            self.table
        );
        self.db.query(&sql, &[&self.project, arg])
    }
}

impl mnemon_core::memory::IdLookup for Lookup<'_> {
    fn at_position(&self, seq: i64) -> StoreResult<Option<String>> {
        Ok(self.rows("id", "seq = $2", &seq)?.first().map(|r| r.get(0)))
    }

    /// PostgreSQL's `LIKE` escapes with `\\` by default.
    fn two_starting_with(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let rows = self.rows(
            "id",
            "id LIKE $2 LIMIT 2",
            &mnemon_core::memory::like_prefix(prefix),
        )?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn count_starting_with(&self, prefix: &str) -> StoreResult<usize> {
        let rows = self.rows(
            "count(*)",
            "id LIKE $2",
            &mnemon_core::memory::like_prefix(prefix),
        )?;
        Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0)) as usize)
    }
}

/// `Option<usize>` as a SQL `LIMIT` (`NULL` is no limit).
fn limit(n: Option<usize>) -> Option<i64> {
    n.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}
