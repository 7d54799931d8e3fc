//! `mnemon import`: a history replayed through the engine at the times it
//! happened, so sessions, messages and what refreshes write carry the real
//! dates, and importing the same file twice stores it once.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use mnemon_core::engine::{DatedMessage, EngineError, EngineEvent, EngineStatus, Outcome};
use mnemon_core::importance::Role;
use mnemon_core::memory::{Clock, MessageQuery, NewMessage, Timestamp};
use mnemon_import::ImportSession;
use serde::Serialize;

use crate::clock::{ReplayClock, SystemClock};
use crate::error::Result;
use crate::render::Touched;
use crate::{Mnemon, ProjectEngine, SessionEnd};

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// Sessions created for turns not stored before.
    pub sessions: usize,
    /// Turns stored.
    pub messages: usize,
    /// Turns already in the project (an earlier import of the same
    /// history), left alone.
    pub already_stored: usize,
    /// Turns too large for the live window to ever hold: stored in their
    /// session and searchable, never in the live context.
    pub outside_window: usize,
    /// Commits the stored turns took: one per run of turns between two of
    /// the engine's actions, so far fewer than the turns.
    pub writes: usize,
    /// Refreshes the engine made while the history went in.
    pub refreshes: u64,
    /// The first time stored, RFC 3339.
    pub from: Option<String>,
    /// The last time stored, RFC 3339.
    pub to: Option<String>,
}

/// Turns offered to one write at most: an import's batches end at the
/// engine's next action anyway; this bounds a transaction's size in a
/// long quiet stretch.
const BATCH: usize = 1_000;

/// What batches stored and did, waiting for their views to be rendered.
#[derive(Default)]
struct Unrendered {
    events: Vec<EngineEvent>,
    status: Option<EngineStatus>,
    touched: Option<Touched>,
}

impl Unrendered {
    fn add<T>(&mut self, out: Outcome<T>) {
        let touched = self.touched.get_or_insert_with(Touched::logged);
        touched.checkpoints.extend(out.checkpoints);
        self.events.extend(out.events);
        self.status = Some(out.status);
    }

    /// Renders (and tells subscribers) what was stored since the last
    /// call, as one write; the order of the files is the order they
    /// happened in.
    fn render(&mut self, m: &Mnemon, e: &Arc<ProjectEngine>) {
        if let Some(touched) = self.touched.take() {
            let events = std::mem::take(&mut self.events);
            let _ = m.after_write(e, &events, self.status.take().as_ref(), touched);
        }
    }
}

/// A stored turn's identity: when it was said (if the source said), who
/// said it, and its text as stored.
fn key(at: Option<Timestamp>, role: Role, stored: &str) -> (Option<i64>, Role, u64, usize) {
    let mut h = DefaultHasher::new();
    stored.hash(&mut h);
    (at.map(|t| t.0), role, h.finish(), stored.len())
}

/// Replays `sessions` into `m`, which must have been opened with `clock`.
/// Each session is started at its first turn's time and ended after its
/// last, so an imported history is history: its sessions are summarized
/// and the agent's next turn opens a session of its own. Turns without a
/// time are stored at the current time. `progress` hears the number of
/// turns handled so far.
pub fn import(
    m: &Mnemon,
    clock: &Arc<ReplayClock>,
    sessions: &[ImportSession],
    mut progress: impl FnMut(usize),
) -> Result<ImportReport> {
    let e = m.engine()?;
    let memory = e.memory();
    // What the project holds already, keyed with and without its time:
    // a turn the source dated matches on its time, an undated one on its
    // speaker and text alone.
    let mut stored: HashSet<(Option<i64>, Role, u64, usize)> = HashSet::new();
    for msg in memory.store().messages(&MessageQuery {
        limit: Some(usize::MAX >> 1),
        ..MessageQuery::default()
    })? {
        stored.insert(key(Some(msg.created_at), msg.role, &msg.content));
        stored.insert(key(None, msg.role, &msg.content));
    }
    let wall = SystemClock::default();
    let refreshes_before = e.status()?.refreshes;
    let mut report = ImportReport::default();
    let mut done = 0;
    for s in sessions {
        let base = done;
        let fresh: Vec<(&mnemon_import::ImportTurn, String)> = s
            .turns
            .iter()
            .map(|t| (t, memory.stored_text(&t.content)))
            .filter(|(t, text)| {
                let seen = stored.contains(&key(t.at, t.role, text));
                if seen {
                    report.already_stored += 1;
                }
                !seen
            })
            .collect();
        if fresh.is_empty() {
            done = base + s.turns.len();
            progress(done);
            continue;
        }
        let start = fresh[0].0.at.unwrap_or_else(|| wall.now());
        clock.set(start);
        m.start_session(s.title.as_deref())?;
        report.sessions += 1;
        // Never back in time within a session: a source's clock skew must
        // not reorder what was said.
        let mut last = start;
        let mut dated = Vec::with_capacity(fresh.len());
        for (t, text) in fresh {
            let at = t.at.unwrap_or_else(|| wall.now()).max(last);
            last = at;
            stored.insert(key(t.at, t.role, &text));
            stored.insert(key(None, t.role, &text));
            dated.push(DatedMessage {
                message: NewMessage {
                    role: t.role,
                    content: t.content.clone(),
                    agent: m.agent.clone(),
                    tokens: None,
                },
                at,
            });
        }
        // The batches' views are rendered once, when the session's turns
        // are in: rendering after each would write the same files again
        // for every run of turns.
        let mut unrendered = Unrendered::default();
        let mut i = 0;
        while i < dated.len() {
            let end = (i + BATCH).min(dated.len());
            let n = e.quiet_run(&dated[i..end])?;
            let stored_now = if n == 0 {
                0
            } else {
                clock.set(dated[i + n - 1].at);
                let out = e.messages_at(&dated[i..i + n])?;
                let k = out.value.len();
                if k > 0 {
                    unrendered.add(out);
                }
                k
            };
            let stored_now = if stored_now > 0 {
                stored_now
            } else {
                // The turn needs the engine before it is written (a new
                // epoch, a refresh to make room): alone, as a live turn.
                let t = &dated[i];
                unrendered.render(m, &e);
                clock.set(t.at);
                match m.message(t.message.clone()) {
                    Ok(_) => {}
                    // A turn larger than the live window can ever hold is
                    // still history: it is stored in its session and found
                    // by search, without entering the live context it
                    // could not fit.
                    Err(crate::Error::Engine(EngineError::TooLarge { .. })) => {
                        memory.message(t.message.clone())?;
                        report.outside_window += 1;
                    }
                    Err(e) => return Err(e),
                }
                1
            };
            report.writes += 1;
            report.from.get_or_insert_with(|| dated[i].at.rfc3339());
            i += stored_now;
            report.messages += stored_now;
            report.to = Some(dated[i - 1].at.rfc3339());
            done += stored_now;
            progress(done);
        }
        unrendered.render(m, &e);
        done = base + s.turns.len();
        progress(done);
        let _: crate::Written<SessionEnd> = m.end_session(None)?;
    }
    report.refreshes = e.status()?.refreshes.saturating_sub(refreshes_before);
    Ok(report)
}
