//! The storage seam in one place: every trait a backend implements, and
//! [`Backend`], the one a project is opened through.
//!
//! Core decides what is stored and when; a backend only keeps rows. The
//! traits are grouped by the part of mnemon that reads them (the memory
//! tiers, the engine's epochs and checkpoints, retrieval by words and by
//! meaning), and every method is one transaction that returns only after
//! it commits, unless it runs inside [`Store::unit_of_work`].
//!
//! A new backend (say, another SQL database) takes these steps:
//!
//! 1. A crate `mnemon-<name>` with a store type that implements the traits
//!    re-exported here: [`Store`] and its six parts, [`EngineStore`] (whose
//!    `commit` hands the backend's open transaction, as
//!    [`crate::engine::CommitWrites`], to [`crate::engine::EngineCommit::apply`]),
//!    [`SearchStore`] and [`VectorStore`], then [`Backend`]. A SQL backend
//!    takes what it reads and how from [`sql`] and [`sources`] (in its own
//!    [`sources::Dialect`]) and writes only its statements.
//! 2. One test file that runs `mnemon_conformance::full` (and the suites it
//!    names) over the new store: the behaviour every backend shares,
//!    forgetting and concurrent writers included, is checked there, not
//!    written again.
//! 3. In `mnemon`, a way to open it from `[storage]` (an opener that
//!    returns `Arc<dyn Backend>`). Nothing else in `mnemon`, the CLI or the
//!    server names a backend: they hold a `dyn Backend`.

use std::path::Path;

pub mod sources;
pub mod sql;

pub use crate::assemble::seam::{SearchStore, VectorStore};
pub use crate::engine::EngineStore;
pub use crate::memory::{
    Atomically, DecisionStore, DocumentStore, EntityStore, Health, HotStore, OperationLog,
    SessionStore, Store, StoreError, StoreResult,
};

/// A project's database, whichever backend keeps it: what `mnemon` opens
/// and every engine, chat and server handler works over, as a trait object
/// so that a backend is added without touching them.
pub trait Backend: EngineStore + SearchStore + std::fmt::Debug {
    /// The database as messages name it: a path, or a URL without its
    /// password.
    fn shown(&self) -> String;

    /// The store's health (integrity, search indexes, orphans, schema), for
    /// `mnemon doctor`.
    fn check(&self) -> StoreResult<Health>;

    /// A consistent snapshot in the new file `dest`, taken while others may
    /// write. A database server's data is backed up with its own tools: such
    /// a backend refuses, naming them.
    fn backup_to(&self, dest: &Path) -> StoreResult<()>;
}
