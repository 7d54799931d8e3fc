//! The behaviour every mnemon storage backend must show.
//!
//! Each check takes a factory that returns a fresh, empty store and panics
//! with a message on any deviation. A backend's own test file calls
//! [`run_all`] (and its process-level durability tests, which are specific
//! to how that backend runs).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test suite: a panic with a message is how it reports a deviation"
)]

mod concurrency;
mod forget;
mod full;
mod in_memory;
mod logs;
mod tiers;
mod units;

pub use concurrency::*;
pub use logs::*;
pub use tiers::*;
pub use units::*;

pub use full::run_full;
pub use in_memory::InMemoryStore;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mnemon_core::memory::{Clock, Memory, Store, Timestamp};
use mnemon_core::tokens::{Encoding, OpenAiBpe};

/// A clock that starts at a fixed instant and moves one second per reading,
/// so every record has a distinct, predictable time.
#[derive(Debug)]
pub struct SteppingClock(AtomicI64);

impl SteppingClock {
    pub fn starting(at: Timestamp) -> Arc<SteppingClock> {
        Arc::new(SteppingClock(AtomicI64::new(at.0)))
    }
}

impl Clock for SteppingClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.fetch_add(1_000, Ordering::SeqCst))
    }
}

/// A clock the test sets: every reading is the instant stored last, so a
/// test can date each turn as the conversation it replays does.
#[derive(Debug)]
pub struct HandClock(AtomicI64);

impl HandClock {
    pub fn at(at: Timestamp) -> Arc<HandClock> {
        Arc::new(HandClock(AtomicI64::new(at.0)))
    }

    pub fn set(&self, at: Timestamp) {
        self.0.store(at.0, Ordering::SeqCst);
    }
}

impl Clock for HandClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

/// 2025-01-15T14:30:00Z, the seeds' example session.
pub const T0: Timestamp = Timestamp(1_736_951_400_000);

pub fn memory<S: Store>(store: S, agent: &str) -> Memory<S> {
    Memory::new(
        store,
        Box::new(OpenAiBpe::new(Encoding::Cl100kBase)),
        SteppingClock::starting(T0),
        Some(agent),
        (10, 2_000),
    )
}

/// Records an operation of `kind` holding `text`, counted as 10 tokens,
/// and returns its position.
#[allow(
    clippy::unwrap_used,
    reason = "a test helper: a failed write is the failure report"
)]
pub fn record_note<S: Store>(m: &Memory<S>, kind: &str, text: &str) -> i64 {
    m.record(mnemon_core::memory::NewOperation {
        kind: kind.into(),
        data: serde_json::json!({ "text": text }),
        tokens: Some(10),
        ..mnemon_core::memory::NewOperation::default()
    })
    .unwrap()
    .seq
}

/// Every check, in order.
pub fn run_all<S: Store + 'static>(fresh: &dyn Fn() -> S) {
    operations_round_trip(fresh);
    messages_round_trip(fresh);
    queries_filter_and_search(fresh);
    sessions_lifecycle(fresh);
    hot_context_versions(fresh);
    decision_records(fresh);
    project_entities(fresh);
    episodic_documents(fresh);
    working_memory_rebuilds(fresh);
    thousands_of_records(fresh);
    concurrent_writers_lose_nothing(fresh);
    agents_adding_goals_never_conflict(fresh);
    a_failed_unit_leaves_no_row_and_no_operation(fresh);
    other_threads_never_read_half_of_a_unit(fresh);
}

/// An engine over `store` for a model with a `window`-token context, using
/// the profile that window selects and cl100k counting.
pub fn engine<S: mnemon_core::engine::EngineStore>(
    store: S,
    window: u64,
    clock: Arc<dyn Clock>,
    agent: &str,
) -> mnemon_core::engine::Engine<S> {
    use mnemon_core::engine::{Engine, EngineConfig};
    use mnemon_core::profile::ProfileParams;
    use mnemon_core::window::ContextWindow;
    let w = ContextWindow::with_defaults(window).expect("a valid window");
    let profile = ProfileParams::for_window(w.effective_max());
    let limits = (
        profile.working_memory_max_operations.value as usize,
        profile.working_memory_max_tokens.value,
    );
    let memory = Memory::new(
        store,
        Box::new(OpenAiBpe::new(Encoding::Cl100kBase)),
        clock,
        Some(agent),
        limits,
    );
    Engine::new(memory, EngineConfig::new(w, profile, "test-model"))
        .with_runtime(std::sync::Arc::new(mnemon_threads::Threads))
}

/// Appends `text` said by `who` as a labelled chat turn ("who: text"),
/// the user's when `i` is even and the assistant's otherwise, as an
/// imported two-person conversation stores it.
#[allow(
    clippy::unwrap_used,
    reason = "a test helper: a failed write is the failure report"
)]
pub fn say<S: mnemon_core::engine::EngineStore>(
    e: &mnemon_core::engine::Engine<S>,
    i: usize,
    who: &str,
    text: &str,
) {
    use mnemon_core::importance::Role;
    e.message(mnemon_core::memory::NewMessage {
        role: if i.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        },
        content: format!("{who}: {text}"),
        agent: None,
        tokens: None,
    })
    .unwrap();
}

/// The markdown context of `budget` tokens the `qa` preset assembles for
/// `query`: what a question-answering agent is sent.
pub fn qa_context<
    S: mnemon_core::engine::EngineStore + mnemon_core::assemble::retrieve::SearchStore,
>(
    e: &mnemon_core::engine::Engine<S>,
    query: &str,
    budget: u64,
) -> mnemon_core::assemble::Assembled {
    use mnemon_core::assemble::{BudgetPlan, Format};
    e.context(&mnemon_core::engine::ContextRequest {
        plan: BudgetPlan::preset("qa").expect("the qa preset"),
        budget: Some(budget),
        query: Some(query.into()),
        format: Format::Markdown,
        chat: mnemon_core::tokens::ChatFormat::OPENAI,
        messages_before: None,
    })
    .expect("a context")
}

/// How a test reaches a backend.
pub trait Backend {
    type Store: mnemon_core::engine::EngineStore
        + mnemon_core::assemble::retrieve::SearchStore
        + 'static;
    /// A new, empty project.
    fn fresh(&self) -> Self::Store;
    /// A second handle on the same project as `store`: what another
    /// process (or another connection of a server) would open.
    fn reopen(&self, store: &Self::Store) -> Self::Store;
}
