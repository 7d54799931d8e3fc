//! mnemon: a context-window manager and tiered memory for LLM orchestrators
//! and agents.
//!
//! This crate is the front door. It opens a project (a directory with a
//! `.mnemon/`, an explicit configuration, or nothing but memory), chooses
//! the storage backend, and hands back one [`Mnemon`] handle whose methods
//! are the product's verbs: [`record`](Mnemon::record),
//! [`message`](Mnemon::message), [`context`](Mnemon::context),
//! [`search`](Mnemon::search), [`status`](Mnemon::status), the hot context,
//! decisions, entities, sessions, checkpoints, refresh, compaction,
//! optimization, usage reports and [`chat`](Mnemon::chat). The `mnemon`
//! command line, the HTTP server and the MCP server are thin adapters over
//! it, so every interface keeps the same rules.
//!
//! Every write goes through the engine: it is counted in the agent's
//! window, refused at the 95 % line when even a refresh would not make
//! room, and may trigger zone actions (optimize, checkpoint, refresh). A
//! write that committed is reported as committed: the work after it
//! (rendered views, files of checkpoints and artifacts) can only add
//! [`Written::warnings`], never turn the call into an error.
//!
//! ```
//! use mnemon::{ContextQuery, Mnemon, NewOperation};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), mnemon::Error> {
//! let m = Mnemon::in_memory()?;
//! m.record(NewOperation::new("task_execution", json!({"task": 15, "result": "login form done"})))?;
//! let ctx = m.context(&ContextQuery { budget: Some(400), query: Some("login".into()), ..ContextQuery::default() })?;
//! assert!(ctx.tokens <= 400);
//! println!("{} · {}", m.status()?.window.zone.name(), ctx.text);
//! # Ok(())
//! # }
//! ```
//!
//! [`Mnemon`] is `Send + Sync` and cheap to clone (an `Arc`): give each
//! thread or async task its own clone. [`Mnemon::for_agent`] gives a handle
//! whose writes and window belong to another agent of the same project.

#![warn(missing_docs)]

mod background;
mod chat;
mod clock;
mod detection;
pub mod embeddings;
mod error;
pub mod eval;
mod forget;
pub mod identity;
pub mod import;
mod init;
#[cfg(feature = "llm")]
mod llm;
#[cfg(not(feature = "llm"))]
#[path = "llm_off.rs"]
mod llm;
mod maintenance;
mod reads;
mod render;
mod settings;
mod status;
mod store;
pub mod timeline;
pub mod tokenizers;
mod views;
mod writes;

use std::collections::HashMap;
use std::path::Path;
#[cfg(feature = "postgres")]
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use background::ProjectEvent;
pub use chat::{ChatReply, ChatSession};
pub use clock::{ReplayClock, SystemClock};
pub use error::{Error, ErrorClass, Result};
pub use init::{InitOptions, Initialized, init};
#[cfg(feature = "llm")]
pub use llm::{AskOptions, AskRequest, Asked, ProbeReport};
pub use maintenance::{DoctorReport, DoctorStep, Migrated, Restored, restore};
pub use mnemon_core::engine::forget::{ForgetAudit, ForgetTarget, Forgotten};
pub use mnemon_core::memory::Health;
#[cfg(feature = "llm")]
pub use mnemon_llm;
pub use reads::{
    CheckpointSource, ContextQuery, DEFAULT_PRESET, LIST_LIMIT, MAX_LIST, MAX_TOKENS, SEARCH_LIMIT,
    TOOL_BUDGET,
};
pub use settings::{
    CHAT_HISTORY, CONFIG_NAME, DB_NAME, DIR_NAME, Environment, Settings, display_path, load_hf,
};
pub use status::{ChatFormatInfo, ProfileInfo, StatusReport, TokenizerInfo, UsageSource, evaluate};
pub use views::{Views, write_atomically};
pub use writes::{SessionEnd, Written};

pub use mnemon_chat;
pub use mnemon_core;
pub use mnemon_core::assemble::{Assembled, Format};
pub use mnemon_core::engine::{
    Checkpoint, Compaction, EngineEvent, EngineStatus, OptimizeReport, Resumed, SessionReport,
};
pub use mnemon_core::importance::Role;
pub use mnemon_core::memory::{
    DecisionRecord, DecisionStatus, Entity, EntityChange, EntityKind, EntityQuery, HotContext,
    HotItem, HotItemChange, HotKind, HotStatus, Message, MessageQuery, NewDecision, NewEntity,
    NewMessage, NewOperation, Operation, OperationQuery, Phase, Priority, Session, Timestamp,
};
pub use mnemon_import;

use mnemon_core::engine::Engine;
use mnemon_core::memory::{Clock, Memory};
use mnemon_core::setup::Setup;
#[cfg(feature = "postgres")]
use mnemon_postgres::PgStore;
use mnemon_sqlite::SqliteStore;

pub use store::{AnyStore, Backend};

/// The store of a project: its SQLite file, or PostgreSQL (`[storage] url`).
pub type ProjectStore = dyn Backend;
/// The engine of one agent over the project's store.
pub type ProjectEngine = Engine<ProjectStore>;
/// The memory rules over the project's store.
pub type ProjectMemory = Memory<ProjectStore>;

/// Connections of a file-backed project.
#[derive(Debug)]
struct Pool {
    stores: Vec<SqliteStore>,
    /// Engines made so far: the next one's turn.
    handed: usize,
}

/// The most connections one handle keeps to its database. Each holds a
/// page cache and compiled statements (several MiB); past a few, more
/// connections buy no parallelism on the machines mnemon serves from.
const MAX_CONNECTIONS: usize = 4;

/// Where a project's data lives.
#[derive(Debug)]
enum Database {
    /// `.mnemon/mnemon.db`: up to [`MAX_CONNECTIONS`] connections, opened
    /// as agents' engines are made and then shared by them in turn, so a
    /// few agents read in parallel (WAL) while a server with hundreds of
    /// agents holds a few page caches, not hundreds. Writers queue in
    /// process on one lock per file (`mnemon-sqlite`). The connection
    /// opened to migrate the file is the first; the others (and the view
    /// renderer's) are opened from it, never by path, so the file is not
    /// opened outside SQLite while its locks are held
    /// (`SqliteStore::open_another`).
    File(Mutex<Pool>),
    /// One in-memory database shared by every agent of the handle.
    Memory(SqliteStore),
    /// A PostgreSQL database (`[storage] url`): one pool of connections,
    /// shared by every agent of the handle.
    #[cfg(feature = "postgres")]
    Postgres(PgStore),
}

struct Inner {
    settings: Settings,
    setup: Setup,
    backend: Database,
    clock: Arc<dyn Clock>,
    views: Option<Views>,
    engines: Mutex<HashMap<String, Arc<ProjectEngine>>>,
    events: background::EventBus,
    /// Renders views after writes are answered (long-running processes).
    renderer: Option<background::Renderer>,
    /// Retrieval by meaning, when `[embeddings]` names a model.
    semantic: Option<embeddings::Semantic>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mnemon")
            .field("root", &self.settings.root())
            .field("backend", &self.backend)
            .finish()
    }
}

/// An open project. Clone it freely; every clone shares the store, the
/// engines and their caches.
#[derive(Debug, Clone)]
pub struct Mnemon {
    inner: Arc<Inner>,
    /// The agent this handle acts as; `None` is the project's default
    /// (`MNEMON_AGENT`, else `orchestrator`).
    agent: Option<String>,
}

/// How to open a project: its environment, clock and agent.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    env: Environment,
    clock: Option<Arc<dyn Clock>>,
    agent: Option<String>,
    background: bool,
}

impl OpenOptions {
    /// Defaults, the config file, no environment variables, the system clock.
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// As the `mnemon` command runs: `MNEMON_*` variables override the
    /// file, `MNEMON_NOW` pins the clock, `MNEMON_AGENT` names the agent.
    pub fn from_process_env() -> Result<OpenOptions> {
        let env = Environment::from_process()?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::from_env(&env)?);
        let agent = env.get("MNEMON_AGENT").map(str::to_string);
        Ok(OpenOptions {
            env,
            clock: Some(clock),
            agent,
            background: false,
        })
    }

    /// The `MNEMON_*` overrides to apply on top of the config file.
    pub fn environment(mut self, env: Environment) -> OpenOptions {
        self.env = env;
        self
    }

    /// The clock every record is stamped with (a fixed one replays a day).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> OpenOptions {
        self.clock = Some(clock);
        self
    }

    /// The agent the handle acts as by default.
    pub fn agent(mut self, agent: impl Into<String>) -> OpenOptions {
        self.agent = Some(agent.into());
        self
    }

    /// Render the files under `.mnemon/` on a worker thread after each
    /// write is answered, coalescing bursts, instead of before the write
    /// returns: for servers, where rendering per request would cost more
    /// than the write. Failures are logged (`tracing`), not returned;
    /// [`Mnemon::flush_views`] waits for the worker.
    pub fn render_in_background(mut self, on: bool) -> OpenOptions {
        self.background = on;
        self
    }

    /// The overrides these options apply.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The project whose `.mnemon/` is directly in `root`.
    pub fn open(self, root: &Path) -> Result<Mnemon> {
        let settings = Settings::open(root, self.env.clone())?;
        self.with_settings(settings)
    }

    /// `dir`'s project if given, else the nearest `.mnemon/` above `cwd`.
    pub fn discover(self, cwd: &Path, dir: Option<&Path>) -> Result<Mnemon> {
        let settings = Settings::find(cwd, dir, self.env.clone())?;
        self.with_settings(settings)
    }

    /// A project with no files: `config` is a `config.toml` text, or `None`
    /// for the defaults. Everything lives until the last clone is dropped.
    pub fn in_memory(self, config: Option<&str>) -> Result<Mnemon> {
        let settings = Settings::from_text(config, self.env.clone())?;
        let store = SqliteStore::in_memory()?;
        self.build(settings, Database::Memory(store))
    }

    /// A project whose settings were read already (the CLI reads them
    /// once per command).
    pub fn with_settings(self, settings: Settings) -> Result<Mnemon> {
        let Some(dir) = settings.dir() else {
            return Err(Error::NoProject(settings.root().display().to_string()));
        };
        let storage = settings.loaded().config.storage.clone();
        if let Some(url) = storage.url.as_deref().filter(|u| !u.trim().is_empty()) {
            #[cfg(feature = "postgres")]
            {
                let store = open_postgres(url, storage.schema.as_deref())?;
                return self.build(settings, Database::Postgres(store));
            }
            #[cfg(not(feature = "postgres"))]
            {
                let _ = url;
                let from = settings
                    .loaded()
                    .origins
                    .get("storage.url")
                    .map_or_else(|| "the configuration".to_string(), ToString::to_string);
                return Err(Error::Input(format!(
                    "[storage] url is set ({from}), but this build of the mnemon library has no PostgreSQL support; build it with the `postgres` feature (the mnemon CLI and server have it), or remove the setting to use the project's SQLite file"
                )));
            }
        }
        let db = dir.join(DB_NAME);
        let expected = identity::expected(dir, &db)?;
        // Opening migrates a new database once, whoever else opens it.
        let first = SqliteStore::open(&db)?;
        identity::settle(
            dir,
            &db,
            expected.as_deref(),
            mnemon_core::memory::Store::project_id(&first),
        )?;
        let pool = Pool {
            stores: vec![first],
            handed: 0,
        };
        self.build(settings, Database::File(Mutex::new(pool)))
    }

    fn build(self, settings: Settings, backend: Database) -> Result<Mnemon> {
        let setup = settings.setup(None)?;
        let views = settings.dir().map(|d| {
            Views::new(
                d.to_path_buf(),
                settings.name(),
                Some(setup.window.effective_max()),
            )
        });
        let clock = self
            .clock
            .unwrap_or_else(|| Arc::new(SystemClock::default()));
        let keep_versions = settings.loaded().config.episodic.keep_versions;
        let renderer = match (&views, self.background) {
            (Some(v), true) => {
                // A file gets the renderer a connection of its own; a pool
                // (PostgreSQL) is shared without waiting already.
                let store = match &backend {
                    Database::File(pool) => {
                        let pool = pool.lock().unwrap_or_else(|p| p.into_inner());
                        Some(Arc::new(pool.stores[0].open_another()?) as AnyStore)
                    }
                    #[cfg(feature = "postgres")]
                    Database::Postgres(pg) => Some(Arc::new(pg.clone()) as AnyStore),
                    Database::Memory(_) => None,
                };
                Some(
                    background::Renderer::start(v.clone(), keep_versions, store)
                        .map_err(|e| Error::io("cannot start the view renderer", e))?,
                )
            }
            _ => None,
        };
        let semantic =
            embeddings::from_config(&settings.loaded().config.embeddings, settings.root());
        Ok(Mnemon {
            inner: Arc::new(Inner {
                semantic,
                settings,
                setup,
                backend,
                clock,
                views,
                engines: Mutex::new(HashMap::new()),
                events: background::EventBus::default(),
                renderer,
            }),
            agent: self.agent,
        })
    }
}

/// Opens the PostgreSQL store `url` names, its password (when the URL has
/// none) from `PGPASSWORD` or the `.pgpass` file (`PGPASSFILE`, else
/// `~/.pgpass`), as libpq finds it.
#[cfg(feature = "postgres")]
pub fn open_postgres(url: &str, schema: Option<&str>) -> Result<PgStore> {
    let mut target = mnemon_postgres::Target::parse(url)?;
    if let Some(s) = schema {
        target = target.schema(s);
    }
    let pgpass = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
        .and_then(|p| std::fs::read_to_string(p).ok());
    let env_password = std::env::var("PGPASSWORD").ok();
    let target = target.with_password_from(env_password.as_deref(), pgpass.as_deref());
    Ok(PgStore::connect(target)?)
}

impl Mnemon {
    /// The project in `root/.mnemon/`, with no environment overrides.
    pub fn open(root: impl AsRef<Path>) -> Result<Mnemon> {
        OpenOptions::new().open(root.as_ref())
    }

    /// A project in memory with the default configuration.
    pub fn in_memory() -> Result<Mnemon> {
        OpenOptions::new().in_memory(None)
    }

    /// A handle on the same project acting as `agent`: its own window,
    /// session and working memory; the project's memory is shared.
    pub fn for_agent(&self, agent: impl Into<String>) -> Mnemon {
        Mnemon {
            inner: Arc::clone(&self.inner),
            agent: Some(agent.into()),
        }
    }

    /// `for_agent` when a name is given, else this handle.
    pub fn with_agent(&self, agent: Option<&str>) -> Mnemon {
        match agent {
            Some(a) if !a.trim().is_empty() => self.for_agent(a),
            _ => self.clone(),
        }
    }

    /// Where the project lives and its configuration.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The model, window and profile in force.
    pub fn setup(&self) -> &Setup {
        &self.inner.setup
    }

    /// `.mnemon/`, or `None` for a project in memory.
    pub fn dir(&self) -> Option<&Path> {
        self.inner.settings.dir()
    }

    /// The engine of this handle's agent, made on first use and kept.
    /// Not public: every interface goes through the verbs, which keep the
    /// views, events and warnings that a write at the engine would skip.
    pub(crate) fn engine(&self) -> Result<Arc<ProjectEngine>> {
        let name = self.agent.as_deref().unwrap_or_default();
        let mut engines = self.inner.engines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = engines.get(name) {
            return Ok(Arc::clone(e));
        }
        let e = Arc::new(self.new_engine()?);
        engines.insert(name.to_string(), Arc::clone(&e));
        Ok(e)
    }

    fn new_engine(&self) -> Result<ProjectEngine> {
        let inner = &self.inner;
        let store = match &inner.backend {
            #[cfg(feature = "postgres")]
            Database::Postgres(pg) => Arc::new(pg.clone()) as AnyStore,
            Database::File(pool) => {
                let mut pool = pool.lock().unwrap_or_else(|p| p.into_inner());
                let turn = pool.handed;
                let store = if turn >= pool.stores.len() && pool.stores.len() < MAX_CONNECTIONS {
                    let store = pool.stores[0].open_another()?;
                    pool.stores.push(store.clone());
                    store
                } else {
                    pool.stores[turn % pool.stores.len()].clone()
                };
                pool.handed += 1;
                if inner.semantic.is_some() {
                    store.set_page_cache_kib(mnemon_sqlite::MEANING_PAGE_CACHE_KIB)?;
                }
                Arc::new(store) as AnyStore
            }
            Database::Memory(store) => Arc::new(store.clone()) as AnyStore,
        };
        let setup = &inner.setup;
        let counter = inner.settings.counter(&setup.tokenizer)?;
        let limits = (
            setup.profile.working_memory_max_operations.value as usize,
            setup.profile.working_memory_max_tokens.value,
        );
        let config = &inner.settings.loaded().config;
        // Validation has compiled every pattern already.
        let redactor = config
            .redaction
            .redactor()
            .map_err(|e| Error::Input(e.to_string()))?;
        let memory = Memory::new(
            store,
            counter,
            Arc::clone(&inner.clock),
            self.agent.as_deref(),
            limits,
        )
        .with_redactor(redactor);
        let cfg = setup.engine_config(config);
        let engine = Engine::new(memory, cfg).with_runtime(Arc::new(mnemon_threads::Threads));
        Ok(match &inner.semantic {
            Some(s) => engine.with_embedder(Arc::clone(&s.embedder), Arc::clone(&s.index)),
            None => engine,
        })
    }

    /// Every write's outcome (which agent, what the engine did, the window
    /// after it) from now on, made through any clone of this handle in this
    /// process. A receiver that falls more than 1,024 events behind is told
    /// how many it missed.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ProjectEvent> {
        self.inner.events.subscribe()
    }

    /// Returns once the views of every write answered so far are rendered
    /// (at once unless the handle renders in the background).
    pub fn flush_views(&self) {
        if let Some(r) = &self.inner.renderer {
            r.flush();
        }
    }

    pub(crate) fn views(&self) -> Option<&Views> {
        self.inner.views.as_ref()
    }

    pub(crate) fn keep_versions(&self) -> u64 {
        self.inner.settings.loaded().config.episodic.keep_versions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_is_shareable_across_threads_and_tasks() {
        fn shareable<T: Send + Sync + Clone + 'static>() {}
        fn movable<T: Send + 'static>() {}
        shareable::<Mnemon>();
        movable::<ChatSession>();
    }
}
