//! `GET /v1/projects/{project}/events`: a server-sent-events stream of what
//! happens in a project.
//!
//! - `write`: a write through this server committed (agent, the window
//!   after it, and what the engine did);
//! - one event per engine action inside it, named by its kind:
//!   `zone_changed`, `checkpoint_created`, `refreshed`, `optimized`,
//!   `emergency_entered`, `session_started`...;
//! - `changed`: the log moved or a checkpoint appeared without a write
//!   through this server (another process, `mnemon chat` in a terminal),
//!   seen by polling the log heads twice a second;
//! - `lagged`: this client fell behind and missed `missed` events.
//!
//! A comment line every 15 s keeps proxies from closing a quiet stream.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use mnemon::{Mnemon, ProjectEvent};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use std::sync::Arc;

use axum::extract::State;

use crate::AppState;
use crate::api::Project;

/// How often another process's writes are looked for.
const POLL: Duration = Duration::from_millis(500);

/// What the stream last told its client about the store.
struct Watch {
    m: Mnemon,
    rx: tokio::sync::broadcast::Receiver<ProjectEvent>,
    ticker: tokio::time::Interval,
    heads: Option<(i64, i64)>,
    checkpoint: Option<String>,
    /// Events waiting to be sent (one write yields several).
    queue: std::collections::VecDeque<Event>,
}

fn event(name: &str, data: &serde_json::Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

impl Watch {
    /// The store's heads and newest checkpoint, read off the async workers.
    async fn look(&self) -> Option<((i64, i64), Option<String>)> {
        let m = self.m.clone();
        tokio::task::spawn_blocking(move || {
            let heads = m.log_heads().ok()?;
            let cp = m.checkpoints(1).ok()?.into_iter().next().map(|c| c.id);
            Some((heads, cp))
        })
        .await
        .ok()
        .flatten()
    }

    fn queue_write(&mut self, e: &ProjectEvent) {
        let data = serde_json::to_value(e).unwrap_or_else(|_| json!({}));
        self.queue.push_back(event("write", &data));
        for ev in &e.events {
            let v = serde_json::to_value(ev).unwrap_or_else(|_| json!({}));
            let name = v
                .get("event")
                .and_then(|n| n.as_str())
                .unwrap_or("engine")
                .to_string();
            let mut v = v;
            if let Some(o) = v.as_object_mut() {
                o.insert("agent".into(), json!(e.agent));
            }
            self.queue.push_back(event(&name, &v));
        }
    }

    async fn next(&mut self) -> Event {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return e;
            }
            tokio::select! {
                got = self.rx.recv() => match got {
                    Ok(e) => {
                        self.queue_write(&e);
                        // Writes through this server move the heads too.
                        if let Some((heads, cp)) = self.look().await {
                            self.heads = Some(heads);
                            self.checkpoint = cp;
                        }
                    }
                    Err(RecvError::Lagged(n)) => {
                        return event("lagged", &json!({"missed": n}));
                    }
                    Err(RecvError::Closed) => std::future::pending::<()>().await,
                },
                _ = self.ticker.tick() => {
                    if let Some((heads, cp)) = self.look().await {
                        let moved = self.heads.is_some_and(|h| h != heads)
                            || (self.heads.is_some() && cp != self.checkpoint);
                        self.heads = Some(heads);
                        self.checkpoint.clone_from(&cp);
                        if moved {
                            return event("changed", &json!({
                                "operations_head": heads.0,
                                "messages_head": heads.1,
                                "latest_checkpoint": cp,
                            }));
                        }
                    }
                }
            }
        }
    }
}

/// The stream of one project.
#[utoipa::path(
    get,
    path = "/v1/projects/{project}/events",
    tag = "project",
    summary = "Server-sent events: write, zone_changed, checkpoint_created, refreshed, optimized, changed, lagged",
    params(("project" = String, Path, description = "`default` for the served directory, or a project made by `mnemon token create --project P`")),
    responses((status = 200, description = "the result", content_type = "text/event-stream", body = Object), (status = "4XX", description = "a JSON error naming the field and the fix", body = crate::error::ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn events(
    State(state): State<Arc<AppState>>,
    Project(m): Project,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stopping = state.stopping.clone();
    let rx = m.subscribe();
    let mut ticker = tokio::time::interval(POLL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut watch = Watch {
        m,
        rx,
        ticker,
        heads: None,
        checkpoint: None,
        queue: std::collections::VecDeque::new(),
    };
    if let Some((heads, cp)) = watch.look().await {
        watch.heads = Some(heads);
        watch.checkpoint = cp;
    }
    let opened = event(
        "ready",
        &json!({"operations_head": watch.heads.map(|h| h.0), "latest_checkpoint": watch.checkpoint}),
    );
    let first = futures_util::stream::once(async move { Ok(opened) });
    // The stream ends when the server stops, so a graceful stop is not
    // held up by clients that would listen forever.
    let rest = futures_util::stream::unfold((watch, stopping), |(mut w, stop)| async move {
        tokio::select! {
            e = w.next() => Some((Ok(e), (w, stop))),
            () = stop.cancelled() => None,
        }
    });
    Sse::new(futures_util::StreamExt::chain(first, rest)).keep_alive(KeepAlive::default())
}
