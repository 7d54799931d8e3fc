//! `mnemon import`: a history replayed through the engine at the times it
//! happened, so sessions, messages and what refreshes write carry the real
//! dates, and importing the same file twice stores it once.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use mnemon_core::engine::EngineError;
use mnemon_core::import::ImportSession;
use mnemon_core::importance::Role;
use mnemon_core::memory::{Clock, MessageQuery, NewMessage, OperationLog, Timestamp};
use serde::Serialize;

use crate::clock::{ReplayClock, SystemClock};
use crate::error::Result;
use crate::{Mnemon, SessionEnd};

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
    /// Refreshes the engine made while the history went in.
    pub refreshes: u64,
    /// The first time stored, RFC 3339.
    pub from: Option<String>,
    /// The last time stored, RFC 3339.
    pub to: Option<String>,
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
        let fresh: Vec<(&mnemon_core::import::ImportTurn, String)> = s
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
        let mut last = start;
        for (t, text) in fresh {
            // Never back in time within a session: a source's clock skew
            // must not reorder what was said.
            let at = t.at.unwrap_or_else(|| wall.now()).max(last);
            clock.set(at);
            let msg = NewMessage {
                role: t.role,
                content: t.content.clone(),
                agent: m.agent.clone(),
                tokens: None,
            };
            match m.message(msg.clone()) {
                Ok(_) => {}
                // A turn larger than the live window can ever hold is still
                // history: it is stored in its session and found by search,
                // without entering the live context it could not fit.
                Err(crate::Error::Engine(EngineError::TooLarge { .. })) => {
                    memory.message(msg)?;
                    report.outside_window += 1;
                }
                Err(e) => return Err(e),
            }
            stored.insert(key(t.at, t.role, &text));
            stored.insert(key(None, t.role, &text));
            report.messages += 1;
            report.from.get_or_insert_with(|| at.rfc3339());
            report.to = Some(at.rfc3339());
            last = at;
            done += 1;
            progress(done);
        }
        done = base + s.turns.len();
        progress(done);
        let _: crate::Written<SessionEnd> = m.end_session(None)?;
    }
    report.refreshes = e.status()?.refreshes.saturating_sub(refreshes_before);
    Ok(report)
}
