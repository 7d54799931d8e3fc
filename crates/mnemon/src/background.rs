//! What a long-running process (the server) moves off the write path: the
//! rendered views, and the stream of what happened.
//!
//! A CLI process renders a write's views before it exits, so a user who
//! opens `.mnemon/` sees the write. A server answers thousands of writes a
//! second; rendering the session file and documents inside each request
//! would cost more than the write itself. With
//! [`crate::OpenOptions::render_in_background`] a write is answered once
//! it is committed, and one worker renders what the writes changed,
//! coalescing a burst into one render of the session and documents per
//! agent. The database stays the truth; `Mnemon::flush_views` waits for
//! the worker, and `mnemon export` rewrites everything.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mnemon_core::engine::{EngineEvent, EngineStatus};
use serde::Serialize;

use crate::ProjectEngine;
use crate::render::{Touched, render_with};
use crate::store::AnyStore;
use crate::views::Views;

/// Something that happened in a project, as subscribers receive it.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectEvent {
    /// The agent whose write it was.
    pub agent: String,
    /// What the engine did on its own because of the write (zone changes,
    /// checkpoints, refreshes, optimizations).
    pub events: Vec<EngineEvent>,
    /// The agent's window after the write.
    pub status: EngineStatus,
}

/// How many events a slow subscriber may fall behind before it misses
/// some (it is told how many).
const EVENT_BACKLOG: usize = 1024;

/// The project's event stream: every write's outcome, in commit order per
/// agent, to every subscriber in this process.
#[derive(Debug)]
pub(crate) struct EventBus(tokio::sync::broadcast::Sender<ProjectEvent>);

impl Default for EventBus {
    fn default() -> Self {
        EventBus(tokio::sync::broadcast::channel(EVENT_BACKLOG).0)
    }
}

impl EventBus {
    pub fn publish(&self, event: ProjectEvent) {
        // No subscriber is not an error.
        let _ = self.0.send(event);
    }

    /// Whether anyone listens: an event costs nothing when nobody does.
    pub fn listened(&self) -> bool {
        self.0.receiver_count() > 0
    }

    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ProjectEvent> {
        self.0.subscribe()
    }
}

enum Job {
    Render {
        engine: Arc<ProjectEngine>,
        events: Vec<EngineEvent>,
        touched: Touched,
    },
    Flush(mpsc::Sender<()>),
}

/// The worker that renders views after the writes are answered.
///
/// It reads through a connection of its own when the project has one to
/// give (a file): rendering a long session reads thousands of rows, and on
/// the agent's connection every write of that agent waited for it (one
/// client's record p95 was 10 ms at 100,000 operations, its median 1 ms).
pub(crate) struct Renderer {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Renderer")
    }
}

impl Renderer {
    pub fn start(
        views: Views,
        keep_versions: u64,
        store: Option<AnyStore>,
    ) -> std::io::Result<Renderer> {
        let (tx, rx) = mpsc::channel::<Job>();
        let worker = std::thread::Builder::new()
            .name("mnemon-views".into())
            .spawn(move || work(&rx, &views, keep_versions, store.as_ref()))?;
        Ok(Renderer {
            jobs: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(worker)),
        })
    }

    /// Queues a committed write's views. `false` when the worker is gone
    /// (the caller then renders itself).
    pub fn queue(
        &self,
        engine: Arc<ProjectEngine>,
        events: Vec<EngineEvent>,
        touched: Touched,
    ) -> Result<(), (Vec<EngineEvent>, Touched)> {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        match jobs.as_ref() {
            Some(tx) => tx
                .send(Job::Render {
                    engine,
                    events,
                    touched,
                })
                .map_err(|e| match e.0 {
                    Job::Render {
                        events, touched, ..
                    } => (events, touched),
                    Job::Flush(_) => unreachable!("a render job was sent"),
                }),
            None => Err((events, touched)),
        }
    }

    /// Returns once every write queued before the call is rendered.
    pub fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        let sent = {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            jobs.as_ref()
                .is_some_and(|j| j.send(Job::Flush(tx)).is_ok())
        };
        if sent {
            let _ = rx.recv();
        }
    }
}

impl Drop for Renderer {
    /// Renders what is queued, then stops the worker.
    fn drop(&mut self) {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = w.join();
        }
    }
}

/// How long the worker rests after a pass, as a multiple of the pass: at
/// most a quarter of a core goes to views, however busy the writes.
const REST_PER_WORK: u32 = 3;

/// The longest rest: views lag writes by at most about this (plus a pass).
const MAX_REST: Duration = Duration::from_secs(1);

/// Takes every job waiting, renders decisions, sessions, checkpoints and
/// artifacts as they came, and the session file and documents once per
/// agent (the render reads the store as it is now, so it covers every
/// write before it).
///
/// A pass over long sessions costs tens of milliseconds, and under a
/// stream of writes the next pass had always been queued: the worker kept
/// a core busy re-rendering files that changed by a line, and the writes
/// it rendered waited for CPU. So after a pass it rests
/// [`REST_PER_WORK`] times as long (at most [`MAX_REST`]), gathering the
/// jobs that arrive; a flush ends the rest at once.
fn work(rx: &mpsc::Receiver<Job>, views: &Views, keep_versions: u64, store: Option<&AnyStore>) {
    let render = |engine: &ProjectEngine, events: &[EngineEvent], touched: Touched| {
        let own;
        let m = match store {
            Some(s) => {
                own = engine.memory().over(s.clone());
                &own
            }
            None => engine.memory(),
        };
        report(render_with(views, keep_versions, m, events, touched));
    };
    let mut rest_until: Option<Instant> = None;
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        if let Some(until) = rest_until.take() {
            while !batch.iter().any(|j| matches!(j, Job::Flush(_))) {
                let left = until.saturating_duration_since(Instant::now());
                match rx.recv_timeout(left) {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
        }
        batch.extend(rx.try_iter());
        let started = Instant::now();
        let mut latest: BTreeMap<String, (Arc<ProjectEngine>, bool)> = BTreeMap::new();
        let mut flushes = Vec::new();
        for job in batch {
            match job {
                Job::Flush(done) => flushes.push(done),
                Job::Render {
                    engine,
                    events,
                    mut touched,
                } => {
                    if touched.views {
                        let agent = engine.memory().agent().to_string();
                        let logged =
                            touched.logged && latest.get(&agent).is_none_or(|(_, logged)| *logged);
                        latest.insert(agent, (Arc::clone(&engine), logged));
                        touched.views = false;
                    }
                    render(&engine, &events, touched);
                }
            }
        }
        for (engine, logged) in latest.into_values() {
            let touched = Touched {
                views: true,
                logged,
                ..Touched::default()
            };
            render(&engine, &[], touched);
        }
        for done in flushes {
            let _ = done.send(());
        }
        let rest = (started.elapsed() * REST_PER_WORK).min(MAX_REST);
        rest_until = Some(Instant::now() + rest);
    }
}

fn report(warnings: Vec<String>) {
    for w in warnings {
        tracing::warn!(target: "mnemon::views", "{w}");
    }
}
