//! A store that keeps one project in the process's memory, with no database.
//!
//! It exists for two reasons. It shows that the storage seam can be
//! implemented without SQL: every rule of what is stored, and when, comes from
//! core, and this store only keeps rows. And it lets a test of core's memory
//! service run without a database file or a server, while the same conformance
//! checks as SQLite's and PostgreSQL's hold it to the same behaviour.
//!
//! Every table is a vector of shared rows (`Arc`), so a unit of work's
//! snapshot copies pointers, not records: a failed or panicking unit puts the
//! snapshot back, which is its rollback. Writers take turns: one thread at a
//! time holds the store, for one call or for a whole unit of work (a unit
//! inside a unit joins it), and others wait, as they would for SQLite's
//! write lock. Readers take the same turn, so none reads half of a unit.

mod engine;
mod forget;
mod log;
mod records;
mod search;
mod tiers;
mod words;

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

use mnemon_core::assemble::semantic::StoredVector;
use mnemon_core::engine::forget::ForgetAudit;
use mnemon_core::engine::{Calibration, CompactionRecord, StoredCheckpoint};
use mnemon_core::memory::handle::IdLookup;
use mnemon_core::memory::{
    DecisionRecord, Document, Entity, HotItem, Message, Operation, Session, Store, StoreResult,
    Timestamp,
};
use mnemon_core::optimize::{Artifact, Substitution};

/// One project's rows, each table in the order its rows were written.
#[derive(Debug, Clone, Default)]
struct Tables {
    operations: Vec<Arc<Operation>>,
    messages: Vec<Arc<Message>>,
    /// The last position handed out; positions are never reused, as
    /// SQLite's `AUTOINCREMENT` and PostgreSQL's sequences are not.
    last_operation: i64,
    last_message: i64,
    sessions: Vec<Arc<Session>>,
    hot_items: Vec<Arc<HotItem>>,
    /// Every version of every hot item, as it was written.
    hot_history: Vec<Arc<HotItem>>,
    last_hot: u64,
    hot_version: u64,
    decisions: Vec<Arc<Keyed<DecisionRecord>>>,
    last_decision: i64,
    /// With the time each was deleted: a deleted entity keeps its number.
    entities: Vec<Arc<(Entity, Option<Timestamp>)>>,
    documents: Vec<Arc<Keyed<Document>>>,
    last_document: i64,
    /// Per agent: the state's version and its JSON, as the SQL backends
    /// keep it (forgetting rewrites the text).
    engine_states: Vec<Arc<(String, u64, String)>>,
    calibrations: Vec<(String, Calibration)>,
    checkpoints: Vec<Arc<StoredCheckpoint>>,
    compactions: Vec<Arc<Keyed<CompactionRecord>>>,
    last_compaction: i64,
    substitutions: Vec<Arc<Substitution>>,
    artifacts: Vec<Arc<Artifact>>,
    forgettings: Vec<Arc<ForgetAudit>>,
    /// Vectors with the position each was stored at; a replaced vector is
    /// stored again at a new position, so readers see it as new.
    vectors: Vec<Arc<Keyed<(String, StoredVector)>>>,
    last_vector: i64,
}

/// A row and the key the store gave it, which search and forgetting name
/// it by.
#[derive(Debug, Clone)]
struct Keyed<T> {
    key: i64,
    row: T,
}

impl<T> std::ops::Deref for Keyed<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.row
    }
}

impl<T> std::ops::DerefMut for Keyed<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.row
    }
}

/// Who holds the store now, and how many calls deep.
#[derive(Debug, Default)]
struct Turn {
    holder: Option<ThreadId>,
    depth: usize,
}

#[derive(Default)]
struct Shared {
    turn: Mutex<Turn>,
    released: Condvar,
    tables: Mutex<Tables>,
}

/// Waits until no other thread holds the store, then holds it until dropped.
struct Held<'a>(&'a Shared);

impl Shared {
    fn hold(&self) -> Held<'_> {
        let me = std::thread::current().id();
        let mut turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        while turn.holder.is_some_and(|t| t != me) {
            turn = self
                .released
                .wait(turn)
                .unwrap_or_else(PoisonError::into_inner);
        }
        turn.holder = Some(me);
        turn.depth += 1;
        Held(self)
    }

    /// A panic while the tables were locked leaves them as a failed unit
    /// left them; the unit's snapshot puts them back, so the lock's poison
    /// carries no meaning here.
    fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut turn = self.0.turn.lock().unwrap_or_else(PoisonError::into_inner);
        turn.depth -= 1;
        if turn.depth == 0 {
            turn.holder = None;
            self.0.released.notify_all();
        }
    }
}

/// Puts the tables back as they were unless the work it guards succeeded,
/// including when that work panics.
struct Rollback<'a> {
    shared: &'a Shared,
    snapshot: Option<Tables>,
}

impl Rollback<'_> {
    fn keep(mut self) {
        self.snapshot = None;
    }
}

impl Drop for Rollback<'_> {
    fn drop(&mut self) {
        if let Some(snapshot) = self.snapshot.take() {
            *self.shared.tables() = snapshot;
        }
    }
}

/// One project kept in memory. Clones of a store, and stores made by
/// [`InMemoryStore::reopen`], are handles on the same project, as two
/// connections to one database are.
#[derive(Clone)]
pub struct InMemoryStore {
    shared: Arc<Shared>,
    project: String,
}

/// The project and its size: a failed assertion that prints a store should
/// not print every row.
impl std::fmt::Debug for InMemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("InMemoryStore");
        out.field("project", &self.project);
        // Never waits: a store may be printed while its own thread holds it.
        if let Ok(t) = self.shared.tables.try_lock() {
            out.field("operations", &t.operations.len())
                .field("messages", &t.messages.len());
        }
        out.finish_non_exhaustive()
    }
}

impl Default for InMemoryStore {
    fn default() -> Self {
        InMemoryStore::new()
    }
}

impl InMemoryStore {
    /// A new, empty project.
    pub fn new() -> InMemoryStore {
        InMemoryStore {
            shared: Arc::default(),
            project: new_id(),
        }
    }

    /// A second handle on this store's project: what another connection
    /// would open.
    pub fn reopen(&self) -> InMemoryStore {
        self.clone()
    }

    /// Reads the tables in the caller's turn.
    fn read<T>(&self, f: impl FnOnce(&Tables) -> T) -> T {
        let _turn = self.shared.hold();
        f(&self.shared.tables())
    }

    /// Changes the tables in the caller's turn, all or nothing: a failed
    /// change leaves them as they were.
    fn write<T>(&self, f: impl FnOnce(&mut Tables) -> StoreResult<T>) -> StoreResult<T> {
        let _turn = self.shared.hold();
        let mut tables = self.shared.tables();
        let snapshot = tables.clone();
        let out = f(&mut tables);
        if out.is_err() {
            *tables = snapshot;
        }
        out
    }
}

impl Store for InMemoryStore {
    fn project_id(&self) -> &str {
        &self.project
    }

    fn unit_of_work(&self, f: &mut dyn FnMut() -> StoreResult<()>) -> StoreResult<()> {
        let _turn = self.shared.hold();
        let rollback = Rollback {
            shared: &self.shared,
            snapshot: Some(self.shared.tables().clone()),
        };
        f()?;
        rollback.keep();
        Ok(())
    }
}

/// A time-ordered UUID, as the SQL backends draw their ids.
fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The ids of one table, for core's id resolution (handles, full ids and
/// unique prefixes): `(position, id)` in position order.
struct Ids(Vec<(i64, String)>);

impl Ids {
    fn of<'a>(rows: impl Iterator<Item = (i64, &'a str)>) -> Ids {
        Ids(rows.map(|(seq, id)| (seq, id.to_string())).collect())
    }

    /// The full id `id` names in `table`, by core's rules.
    fn resolve(&self, table: &str, what: &'static str, id: &str) -> StoreResult<String> {
        mnemon_core::memory::resolve_id(table, what, id, self)
    }
}

impl IdLookup for Ids {
    fn at_position(&self, seq: i64) -> StoreResult<Option<String>> {
        Ok(self
            .0
            .iter()
            .find(|(s, _)| *s == seq)
            .map(|(_, id)| id.clone()))
    }

    fn two_starting_with(&self, prefix: &str) -> StoreResult<Vec<String>> {
        Ok(self
            .0
            .iter()
            .filter(|(_, id)| id.starts_with(prefix))
            .take(2)
            .map(|(_, id)| id.clone())
            .collect())
    }

    fn count_starting_with(&self, prefix: &str) -> StoreResult<usize> {
        Ok(self
            .0
            .iter()
            .filter(|(_, id)| id.starts_with(prefix))
            .count())
    }
}
