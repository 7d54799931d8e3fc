//! Synchronous calls over tokio-postgres: each one runs on this crate's
//! runtime and the calling thread waits for its answer.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use deadpool_postgres::{Object, Pool};
use mnemon_core::memory::{StoreError, StoreResult};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, SimpleQueryMessage, SimpleQueryRow};

use crate::error::map_err;

/// Two threads drive every connection of the process: the work is waiting
/// on the network, and the callers' threads do the waiting.
fn runtime() -> StoreResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("mnemon-postgres")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| StoreError::Backend(format!("cannot start the PostgreSQL client: {e}")))
}

/// Waits for `f`, which may start connections (they are spawned on this
/// crate's runtime). Works from any thread, a tokio runtime's included: it
/// never nests one runtime's `block_on` in another's.
pub(crate) fn block<F: Future>(f: F) -> StoreResult<F::Output> {
    let rt = runtime()?;
    let _inside = rt.enter();
    Ok(futures_executor::block_on(f))
}

pub(crate) fn checkout(pool: &Pool, shown: &str) -> StoreResult<Object> {
    block(pool.get())?.map_err(|e| match e {
        deadpool_postgres::PoolError::Backend(e) => map_err(shown, e),
        other => StoreError::Backend(format!(
            "cannot connect to PostgreSQL at {shown}: {other}. Check that the server runs and the URL is right"
        )),
    })
}

pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// One connection, for one thread's calls.
pub struct Db {
    client: Arc<Object>,
    shown: String,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("database", &self.shown).finish()
    }
}

impl Db {
    pub(crate) fn new(client: Arc<Object>, shown: String) -> Db {
        Db { client, shown }
    }

    fn err(&self, e: tokio_postgres::Error) -> StoreError {
        map_err(&self.shown, e)
    }

    pub fn query(&self, sql: &str, p: Params<'_>) -> StoreResult<Vec<Row>> {
        let client = &self.client;
        block(async {
            let st = client.prepare_cached(sql).await?;
            client.query(&st, p).await
        })?
        .map_err(|e| self.err(e))
    }

    pub fn opt(&self, sql: &str, p: Params<'_>) -> StoreResult<Option<Row>> {
        Ok(self.query(sql, p)?.into_iter().next())
    }

    pub fn one(&self, sql: &str, p: Params<'_>) -> StoreResult<Row> {
        self.opt(sql, p)?
            .ok_or_else(|| StoreError::Backend(format!("{}: no row from `{sql}`", self.shown)))
    }

    /// Rows changed.
    pub fn exec(&self, sql: &str, p: Params<'_>) -> StoreResult<u64> {
        let client = &self.client;
        block(async {
            let st = client.prepare_cached(sql).await?;
            client.execute(&st, p).await
        })?
        .map_err(|e| self.err(e))
    }

    /// Statements whose values are written into them (see
    /// `text::literal`), sent in one round trip: the rows of each,
    /// in order, as text. Each is planned for its own values, which a
    /// prepared statement's generic plan is not.
    pub fn simple_rows(&self, sql: &str) -> StoreResult<Vec<Vec<SimpleQueryRow>>> {
        let messages = block(self.client.simple_query(sql))?.map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        let mut rows = Vec::new();
        for m in messages {
            match m {
                SimpleQueryMessage::Row(r) => rows.push(r),
                SimpleQueryMessage::CommandComplete(_) => out.push(std::mem::take(&mut rows)),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Statements without parameters, in one round trip.
    pub fn batch(&self, sql: &str) -> StoreResult<()> {
        block(self.client.batch_execute(sql))?.map_err(|e| self.err(e))
    }
}

/// An open transaction on a connection: rolled back when dropped before
/// [`Tx::commit`], a panic's unwinding included, so a connection never goes
/// back to the pool inside a transaction.
pub(crate) struct Tx {
    db: Db,
    done: bool,
}

impl Tx {
    /// `lock`: the project's write lock, taken before anything is read.
    pub(crate) fn begin(db: &Db, lock: Option<i64>) -> StoreResult<Tx> {
        // Made first, so a lock that fails rolls the transaction back.
        let tx = Tx {
            db: Db::new(Arc::clone(&db.client), db.shown.clone()),
            done: false,
        };
        // One round trip: the key is an integer mnemon computed, so it is
        // written into the statement.
        match lock {
            Some(key) => tx
                .db
                .batch(&format!("BEGIN; SELECT pg_advisory_xact_lock({key})"))?,
            None => tx.db.batch("BEGIN")?,
        }
        Ok(tx)
    }

    pub(crate) fn begin_snapshot(db: &Db) -> StoreResult<Tx> {
        db.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        Ok(Tx {
            db: Db::new(Arc::clone(&db.client), db.shown.clone()),
            done: false,
        })
    }

    pub(crate) fn commit(mut self) -> StoreResult<()> {
        self.done = true;
        self.db.batch("COMMIT")
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if !self.done {
            // A rollback that fails leaves nothing committed either: the
            // server rolls back when the broken connection closes, and the
            // pool does not hand out a closed one.
            let _ = self.db.batch("ROLLBACK");
        }
    }
}
