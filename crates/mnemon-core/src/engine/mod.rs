//! The engine: the seeds' OrchestratorContextManager.
//!
//! One object that the CLI (and later the HTTP and MCP servers) drive. It
//! accounts for the live window (`usage = baseline + added`, calibrated by
//! what providers report), acts on zone changes (checkpoint, optimize,
//! refresh), takes checkpoints on every trigger, resumes from them, and ends
//! sessions with a summary. Every action is computed in memory first and
//! then written by one [`EngineCommit`], so a failure at any step leaves
//! the store exactly as it was: the pre-action state is the snapshot a
//! failed compaction rolls back to.
//!
//! Thread-safe: writers take an internal lock, readers do not. Each call
//! re-reads the engine state from the store, so several processes sharing
//! one project see each other's epochs; a compare-and-set on the state's
//! version keeps two of them from both refreshing the same epoch.

mod actions;
pub mod checkpoint;
mod checkpointing;
mod commit;
mod config;
mod context;
mod ending;
pub mod forget;
mod history;
pub mod live;
mod optimizing;
mod outcome;
mod refresh;
mod retry;
mod state;
mod store;
mod summary;
mod writes;

use retry::{CONFLICT_RETRIES, back_off, retry_conflicts};

pub use config::{CheckpointTriggers, EngineConfig};
pub use outcome::{EngineEvent, EngineStatus, Outcome};

use std::sync::{Mutex, MutexGuard};

pub use checkpoint::{Checkpoint, CheckpointError};
pub use checkpointing::Resumed;
pub use commit::CommitWrites;
pub use context::ContextRequest;
pub use ending::Compaction;
pub use history::DatedMessage;
pub use live::{LiveCaps, LiveContext};
pub use optimizing::OptimizeReport;
pub use state::{ACTION_KIND, Calibration, EngineState, LiveTotals};
pub use store::{
    CompactionRecord, EngineCommit, EngineStore, HotRestore, StateRow, StoredCheckpoint,
    state_conflict,
};
pub use summary::SessionReport;

use crate::compress::{CompressError, Extractive, Summarizer};
use crate::memory::{
    DocKind, Memory, Message, NewMessage, NewOperation, Operation, Page, Session, StoreError,
    StoreResult, Timestamp, WorkingMemory,
};
use crate::window::{ContextWindow, WindowEvent, Zone, ZoneMonitor};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Compress(#[from] CompressError),
    #[error(transparent)]
    Assemble(#[from] crate::assemble::AssembleError),
    #[error(transparent)]
    Embed(#[from] crate::assemble::semantic::EmbedError),
    #[error(
        "this item is {tokens} tokens, but the live context has room for {room} even after a refresh (effective window {effective_max}). Store large content as a file and record a reference, or use a model with a larger window"
    )]
    TooLarge {
        tokens: u64,
        room: u64,
        effective_max: u64,
    },
    #[error(
        "this {what} is {tokens} tokens, but an item that every context includes may take at most {limit} (1/32 of the {effective_max}-token window, within 256 to 4,096). Keep the long text where it is searchable without being sent every turn (`mnemon record --type note --data ...`, or a file), and keep a short reference to it here"
    )]
    ItemTooLarge {
        what: &'static str,
        tokens: u64,
        limit: u64,
        effective_max: u64,
    },
    #[error("{0}")]
    Invalid(String),
    /// Another writer (usually another process) moved the engine state
    /// between this action's read and its commit; nothing was written.
    #[error(
        "{0}: another process changed the context at the same moment; nothing was written, retry"
    )]
    Conflict(String),
}

pub struct Engine<S: ?Sized> {
    memory: Memory<S>,
    cfg: EngineConfig,
    summarizer: Box<dyn Summarizer>,
    write: Mutex<()>,
    /// Token counts of context lines, kept across calls.
    counts: crate::tokens::CountCache,
    /// Words retrieval found common, so it need not read them again.
    common: crate::assemble::retrieve::CommonWords,
    /// The sentence-embedding model, when retrieval by meaning is on.
    embedder: Option<std::sync::Arc<dyn crate::assemble::semantic::Embedder>>,
    /// Its stored vectors, read once and topped up; shared by the engines
    /// of one project.
    vectors: std::sync::Arc<crate::assemble::semantic::VectorIndex>,
    /// How it waits between lost races and runs parallel work.
    runtime: std::sync::Arc<dyn crate::runtime::Runtime>,
    /// The live totals counted last, and through which positions.
    live: Mutex<Option<LiveMemo>>,
}

/// Live totals of a session from an epoch's positions, counted through
/// `through` (operation, message). Every write asks for them (its answer
/// reports the window); counting the whole epoch each time read thousands
/// of index entries per write once an epoch was long, so only what was
/// logged since is counted and added.
///
/// A row removed from the epoch by another process (`mnemon forget` while
/// a server runs) stays counted until the epoch's positions move (the next
/// refresh or resume); this process's own forgetting starts the count over.
#[derive(Debug, Clone)]
struct LiveMemo {
    session: String,
    from: (i64, i64),
    through: (i64, i64),
    totals: LiveTotals,
}

impl<S: ?Sized> std::fmt::Debug for Engine<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("model", &self.cfg.model)
            .field("summarizer", &self.summarizer.name())
            .finish()
    }
}

/// The live context as the engine sees it at one moment.
#[derive(Clone)]
pub(crate) struct View {
    pub state: EngineState,
    /// Whether `state` came from the store (else it is a fresh default).
    pub stored: bool,
    pub session: Option<Session>,
    pub totals: LiveTotals,
    pub calibration: Calibration,
}

impl View {
    /// The active session, if the epoch belongs to it (a session started
    /// outside the engine has no epoch until the next engine write).
    pub fn epoch_session(&self) -> Option<&Session> {
        self.session
            .as_ref()
            .filter(|s| self.state.session_id.as_deref() == Some(&s.id))
    }

    pub fn local(&self) -> u64 {
        self.state.baseline + self.state.carried + self.totals.tokens()
    }

    /// What [`View::used`] becomes once `saved` local tokens leave the
    /// live context.
    pub fn used_less(&self, saved: u64) -> u64 {
        match self.state.reported {
            Some(_) => self.used().saturating_sub(self.calibration.apply(saved)),
            None => self.calibration.apply(self.local().saturating_sub(saved)),
        }
    }

    /// Calibrated usage; exact at the moment a provider reported it.
    pub fn used(&self) -> u64 {
        let local = self.local();
        match self.state.reported {
            Some((tokens, at_local)) => {
                tokens + self.calibration.apply(local.saturating_sub(at_local))
            }
            None => self.calibration.apply(local),
        }
    }
}

impl<S: EngineStore + ?Sized> Engine<S> {
    pub fn new(memory: Memory<S>, cfg: EngineConfig) -> Engine<S> {
        Engine {
            summarizer: Box::new(Extractive::with_ratio(cfg.compression_ratio_ppm)),
            memory,
            cfg,

            write: Mutex::new(()),
            counts: crate::tokens::CountCache::default(),
            common: crate::assemble::retrieve::CommonWords::default(),
            embedder: None,
            vectors: std::sync::Arc::default(),
            runtime: std::sync::Arc::new(crate::runtime::InOrder),
            live: Mutex::new(None),
        }
    }

    /// Turns on retrieval by meaning with `e`, fused with retrieval by
    /// words; `index` holds the stored vectors in memory (share one among
    /// the engines of a project).
    pub fn with_embedder(
        mut self,
        e: std::sync::Arc<dyn crate::assemble::semantic::Embedder>,
        index: std::sync::Arc<crate::assemble::semantic::VectorIndex>,
    ) -> Engine<S> {
        self.embedder = Some(e);
        self.vectors = index;
        self
    }

    pub fn embedder(&self) -> Option<&dyn crate::assemble::semantic::Embedder> {
        self.embedder.as_deref()
    }

    /// Waits and runs parallel work with `r` (see [`crate::runtime`]); until
    /// then, one job after another and no pause between retries.
    pub fn with_runtime(mut self, r: std::sync::Arc<dyn crate::runtime::Runtime>) -> Engine<S> {
        self.runtime = r;
        self
    }

    /// Replaces the extractive summarizer (an LLM-backed one, say).
    pub fn with_summarizer(mut self, s: Box<dyn Summarizer>) -> Engine<S> {
        self.summarizer = s;
        self
    }

    pub fn memory(&self) -> &Memory<S> {
        &self.memory
    }

    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    fn store(&self) -> &S {
        self.memory.store()
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.write.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> Timestamp {
        self.memory.clock().now()
    }

    pub(crate) fn view(&self) -> StoreResult<View> {
        let agent = self.memory.agent();
        let (state, stored) = match self.store().engine_state(agent)? {
            Some(s) => (s, true),
            None => (EngineState::new(agent, self.now()), false),
        };
        let session = self.store().active_session(agent)?;
        let totals = match &session {
            Some(s) if state.session_id.as_deref() == Some(&s.id) => {
                self.live_totals(&s.id, (state.op_seq, state.msg_seq))?
            }
            _ => LiveTotals::default(),
        };
        let calibration = self
            .store()
            .calibration(&self.cfg.model)?
            .unwrap_or_default();
        Ok(View {
            state,
            stored,
            session,
            totals,
            calibration,
        })
    }

    /// The live totals of `session` from the epoch's positions `from`:
    /// what was logged since the last count, added to it, where the store
    /// can say through which positions it counted (see [`LiveMemo`]).
    fn live_totals(&self, session: &str, from: (i64, i64)) -> StoreResult<LiveTotals> {
        let mut memo = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let known = memo
            .as_ref()
            .filter(|m| m.session == session && m.from == from)
            .map(|m| (m.through, m.totals));
        let (start, base) = known.unwrap_or((from, LiveTotals::default()));
        let Some((more, op, msg)) = self
            .store()
            .live_totals_through(session, start.0, start.1)?
        else {
            *memo = None;
            return self.store().live_totals(session, from.0, from.1);
        };
        let totals = LiveTotals {
            op_tokens: base.op_tokens + more.op_tokens,
            op_count: base.op_count + more.op_count,
            msg_tokens: base.msg_tokens + more.msg_tokens,
            msg_count: base.msg_count + more.msg_count,
        };
        *memo = Some(LiveMemo {
            session: session.to_string(),
            from,
            through: (op, msg),
            totals,
        });
        Ok(totals)
    }

    /// Forgets the counted totals: rows this process removed must not
    /// stay counted (the handle calls it on every agent's engine after a
    /// forget).
    pub fn recount_live(&self) {
        *self.live.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Where the window stands now. Reads only.
    pub fn status(&self) -> Result<EngineStatus, EngineError> {
        let v = self.view()?;
        let wm = self.working_memory_of(&v)?;
        Ok(self.status_of(&v, wm.len()))
    }

    fn status_of(&self, v: &View, wm_len: usize) -> EngineStatus {
        let used = v.used();
        EngineStatus {
            window: self.cfg.window.status(used),
            model: self.cfg.model.clone(),
            agent: self.memory.agent().to_string(),
            session_id: v.state.session_id.clone(),
            epoch: v.state.epoch,
            baseline: v.state.baseline,
            added: v.state.carried + v.totals.tokens(),
            local_usage: v.local(),
            reported: v.state.reported.map(|r| r.0),
            calibration: v.calibration.factor(),
            calibration_samples: v.calibration.samples,
            working_memory_operations: wm_len,
            refreshes: v.state.refreshes,
            last_checkpoint: v.state.last_checkpoint.clone(),
            last_checkpoint_at: v.state.last_checkpoint_at,
        }
    }

    /// Working memory: the epoch's seed operations and those recorded
    /// since, newest kept, within the profile's count and token limits.
    pub fn working_memory(&self) -> Result<WorkingMemory, EngineError> {
        let v = self.view()?;
        Ok(self.working_memory_of(&v)?)
    }

    fn working_memory_of(&self, v: &View) -> StoreResult<WorkingMemory> {
        let (max_ops, max_tokens) = self.memory.working_limits();
        let mut recent: Vec<Operation> = Vec::new();
        if let Some(s) = v.epoch_session() {
            recent = self.store().operations_after(
                &s.id,
                Page {
                    after: v.state.op_seq,
                    limit: max_ops,
                },
            )?;
            if recent.len() < max_ops && !v.state.seed_ops.is_empty() {
                let mut seed = self.store().operations_at(&v.state.seed_ops)?;
                seed.reverse();
                recent.extend(seed);
            }
        }
        let recent = self.substituted(recent)?;
        Ok(WorkingMemory::rebuild(max_ops, max_tokens, &recent))
    }

    /// The epoch's live messages, oldest first (seed, then since).
    fn live_messages(&self, v: &View, limit: usize) -> StoreResult<Vec<Message>> {
        let mut out = self.store().messages_at(&v.state.seed_msgs)?;
        if let Some(s) = v.epoch_session() {
            let mut since = self.store().messages_after(
                &s.id,
                Page {
                    after: v.state.msg_seq,
                    limit,
                },
            )?;
            since.reverse();
            out.extend(since);
        }
        let skip = out.len().saturating_sub(limit);
        Ok(out.split_off(skip))
    }

    /// Records an operation into the live context, acting on what it
    /// changes: a refresh first if it would reach the emergency line, then
    /// zone actions and checkpoint triggers.
    pub fn record(&self, new: NewOperation) -> Result<Outcome<Operation>, EngineError> {
        let tokens = self.memory.operation_tokens(&new);
        let phase = new.phase;
        self.accept(tokens, phase, |m| m.record(new))
    }

    pub fn message(&self, new: NewMessage) -> Result<Outcome<Message>, EngineError> {
        let tokens = self.memory.message_tokens(&new);
        self.accept(tokens, None, |m| m.message(new))
    }

    /// Reads are cheap; the log is the source of truth for `added`, so a
    /// crash between the write and the state update loses nothing.
    fn accept<T>(
        &self,
        tokens: u64,
        phase: Option<crate::memory::Phase>,
        write: impl FnOnce(&Memory<S>) -> StoreResult<T>,
    ) -> Result<Outcome<T>, EngineError> {
        let _g = self.lock();
        let w = &self.cfg.window;
        // An item that would cross the emergency line in an empty window
        // can never enter: refused before anything happens, so a refused
        // write leaves no refresh or checkpoint behind either.
        let alone = self.view()?.calibration.apply(tokens);
        if w.is_emergency(alone) {
            let room = w.token_thresholds().emergency_from.saturating_sub(1);
            return Err(EngineError::TooLarge {
                tokens,
                room,
                effective_max: w.effective_max(),
            });
        }
        let mut events = Vec::new();
        let mut checkpoints = Vec::new();
        let session = self.memory.current_session()?;
        let mut attempt = 0;
        let mut refreshed = false;
        let mut v = loop {
            let mut v = self.view()?;
            let step = if v.state.session_id.as_deref() != Some(&session.id) {
                self.begin_session_epoch(&mut v, &session).map(|()| {
                    events.push(EngineEvent::SessionStarted {
                        session_id: session.id.clone(),
                    });
                    true
                })
            } else if !refreshed && w.is_emergency(v.used() + v.calibration.apply(tokens)) {
                // At the emergency line nothing more enters the live
                // context before a refresh.
                self.refresh_locked("emergency_95pct", &mut events, &mut checkpoints)
                    .map(|()| {
                        refreshed = true;
                        true
                    })
            } else {
                Ok(false)
            };
            match step {
                Ok(false) => break v,
                Ok(true) => {}
                Err(EngineError::Conflict(_)) if attempt < CONFLICT_RETRIES => {
                    attempt += 1;
                    self.runtime.pause(back_off(attempt));
                }
                Err(e) => return Err(e),
            }
        };
        if w.is_emergency(v.used() + v.calibration.apply(tokens)) {
            v = self.view()?;
            let room = w
                .token_thresholds()
                .emergency_from
                .saturating_sub(v.used() + 1);
            if w.is_emergency(v.used() + v.calibration.apply(tokens)) {
                return Err(EngineError::TooLarge {
                    tokens,
                    room,
                    effective_max: w.effective_max(),
                });
            }
        }
        let value = write(&self.memory)?;
        self.acted_on(value, phase, events, checkpoints)
    }

    /// Acts on a durable write (zone actions, triggers, compaction) and
    /// answers with the window after it.
    fn acted_on<T>(
        &self,
        value: T,
        phase: Option<crate::memory::Phase>,
        mut events: Vec<EngineEvent>,
        mut checkpoints: Vec<Checkpoint>,
    ) -> Result<Outcome<T>, EngineError> {
        // The write is durable; what remains is acting on it. If another
        // process moved the state meanwhile, look again: it may already
        // have done what was needed.
        // Failing the call now would tell the caller a durable write was
        // lost, so a contest that outlasts the retries is left to the
        // writers still at it: each re-evaluates after its own write.
        let mut attempt = 0;
        let last = loop {
            let v = self.view()?;
            match self.after_write(v, phase, &mut events, &mut checkpoints) {
                Err(EngineError::Conflict(_)) if attempt < CONFLICT_RETRIES => {
                    attempt += 1;
                    self.runtime.pause(back_off(attempt));
                }
                Err(EngineError::Conflict(_)) => break None,
                Ok(v) => break Some(v),
                Err(e) => return Err(e),
            }
        };
        match last {
            // The view after the last action is current: under the engine's
            // lock nothing else of this agent moved it.
            Some(v) => self.outcome_of(v, value, events, checkpoints),
            None => self.outcome(value, events, checkpoints),
        }
    }

    /// A write's result with the window as it is after it.
    pub(crate) fn outcome<T>(
        &self,
        value: T,
        events: Vec<EngineEvent>,
        checkpoints: Vec<Checkpoint>,
    ) -> Result<Outcome<T>, EngineError> {
        let v = self.view()?;
        self.outcome_of(v, value, events, checkpoints)
    }

    /// [`Engine::outcome`] with a view read after the write.
    fn outcome_of<T>(
        &self,
        v: View,
        value: T,
        events: Vec<EngineEvent>,
        checkpoints: Vec<Checkpoint>,
    ) -> Result<Outcome<T>, EngineError> {
        let wm = self.working_memory_of(&v)?;
        let mut events = events;
        let secrets = self.memory.take_redactions();
        if !secrets.is_empty() {
            events.insert(0, EngineEvent::Redacted { secrets });
        }
        Ok(Outcome {
            value,
            status: self.status_of(&v, wm.len()),
            events,
            checkpoints,
        })
    }

    /// Every operation of the epoch, oldest first: the seed, then those
    /// recorded since.
    pub(crate) fn epoch_operations(&self, v: &View) -> StoreResult<Vec<Operation>> {
        let mut ops = self.store().operations_at(&v.state.seed_ops)?;
        if let Some(s) = v.epoch_session() {
            let mut since = self
                .store()
                .operations_after(&s.id, Page::all_after(v.state.op_seq))?;
            since.reverse();
            ops.extend(since);
        }
        Ok(ops)
    }
}

/// Reads a document body, or `None` when it was never generated.
fn doc_text(docs: &[(DocKind, String)], kind: DocKind) -> Option<&str> {
    docs.iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, t)| t.as_str())
}

pub(crate) fn zone_events(
    window: &ContextWindow,
    state: &EngineState,
    used: u64,
) -> (Vec<WindowEvent>, Zone, bool) {
    let mut m = ZoneMonitor::at(state.zone, state.emergency);
    let ev = m.observe(window, used);
    (ev, m.zone(), window.is_emergency(used))
}
