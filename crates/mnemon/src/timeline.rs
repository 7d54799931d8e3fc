//! An agent's window over time, for the dashboard's chart.
//!
//! The store keeps no usage sample per write: usage is derived from the log
//! (`baseline + carried + tokens recorded since the epoch began`), so the
//! history is derived from the log too. It is walked backwards from the
//! present, where usage is known exactly: each earlier point is the later
//! one less what was recorded in between, and every engine action that
//! wrote down its own figure (a refresh's and an optimization's
//! `tokens_before`, a checkpoint's `tokens_used`) puts the walk back on that
//! exact figure. Between two such anchors a point can be off only by what
//! the anchors leave out (a resume carrying another epoch's tokens).

use mnemon_core::engine::{ACTION_KIND, CompactionRecord};
use mnemon_core::memory::{Message, MessageQuery, Operation, OperationQuery, Timestamp};
use serde::Serialize;
use serde_json::Value;

use crate::Mnemon;
use crate::error::Result;

/// One entry of the log, as the walk needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `o<seq>` or `m<seq>`: where the original is.
    pub source: String,
    /// When it was recorded.
    pub at: Timestamp,
    /// What it added to the window (0 for an engine action).
    pub tokens: u64,
    /// The engine action's data (`{"action": "refresh", ...}`), when the
    /// entry is one.
    pub action: Option<Value>,
}

/// A point of the chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// `o<seq>` or `m<seq>`: the entry this point follows.
    pub source: String,
    /// RFC 3339.
    pub at: String,
    /// Tokens in the window just after this entry.
    pub used: u64,
    /// The context epoch the entry was recorded in.
    pub epoch: u64,
    /// Set on engine actions: what the engine did here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker: Option<Marker>,
}

/// An engine action on the chart: click it to see what it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Marker {
    /// `checkpoint`, `refresh`, `optimize`, `resume`, `compact`,
    /// `session_end`.
    pub kind: String,
    /// The usage just before the action, when it changed the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    /// The action as the engine logged it (a checkpoint's id and trigger,
    /// a refresh's sizes).
    pub data: Value,
    /// The compaction audit of a refresh, a session-log compaction or a
    /// session end: what was kept, summarized, dropped and where each
    /// original stays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionRecord>,
}

/// The chart of one agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// Whose window.
    pub agent: String,
    /// Oldest first.
    pub points: Vec<Point>,
}

fn number(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// The points of `entries` (oldest first), given the usage and epoch now.
pub fn reconstruct(entries: &[Entry], used_now: u64, epoch_now: u64) -> Vec<(Point, Entry)> {
    let mut out = Vec::with_capacity(entries.len());
    let mut after = used_now;
    let mut epoch = epoch_now;
    for e in entries.iter().rev() {
        let (used, marker) = match &e.action {
            None => (after, None),
            Some(data) => {
                let kind = data
                    .get("action")
                    .and_then(Value::as_str)
                    .unwrap_or("action")
                    .to_string();
                let (used, before) = match kind.as_str() {
                    "refresh" | "optimize" => (
                        number(data, "tokens_after").unwrap_or(after),
                        number(data, "tokens_before"),
                    ),
                    "checkpoint" => (number(data, "tokens_used").unwrap_or(after), None),
                    _ => (after, None),
                };
                (
                    used,
                    Some(Marker {
                        kind,
                        before,
                        data: data.clone(),
                        compaction: None,
                    }),
                )
            }
        };
        let this_epoch = epoch;
        // Walking back over a refresh enters the epoch before it.
        let was_refresh = marker.as_ref().is_some_and(|m| m.kind == "refresh");
        if was_refresh {
            epoch = number(e.action.as_ref().unwrap_or(&Value::Null), "epoch")
                .unwrap_or(epoch)
                .saturating_sub(1);
        }
        let before = marker
            .as_ref()
            .and_then(|m| m.before)
            .unwrap_or_else(|| used.saturating_sub(e.tokens));
        out.push((
            Point {
                source: e.source.clone(),
                at: e.at.to_string(),
                used,
                epoch: this_epoch,
                marker,
            },
            e.clone(),
        ));
        after = before;
    }
    out.reverse();
    out
}

/// The compaction audit an engine action leaves, by the action's name.
fn audit_kind(action: &str) -> Option<&'static str> {
    match action {
        "refresh" => Some("refresh"),
        "compact" => Some("session_log"),
        "session_end" => Some("session_end"),
        _ => None,
    }
}

/// Operations and messages, each already in its log's order, interleaved
/// by time. Each log's own order is kept even when the processes that wrote
/// it disagree about the time.
fn merge_by_time(ops: Vec<Entry>, msgs: Vec<Entry>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(ops.len() + msgs.len());
    let mut ops = ops.into_iter().peekable();
    let mut msgs = msgs.into_iter().peekable();
    loop {
        let take_op = match (ops.peek(), msgs.peek()) {
            (Some(o), Some(m)) => o.at <= m.at,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_op { ops.next() } else { msgs.next() });
    }
    out
}

impl Mnemon {
    /// The last `limit` operations and the last `limit` messages of every
    /// agent, newest first.
    fn recent_log(&self, limit: usize) -> Result<(Vec<Operation>, Vec<Message>)> {
        let e = self.engine()?;
        let m = e.memory();
        let ops = m.recent(&OperationQuery {
            limit: Some(limit),
            ..OperationQuery::default()
        })?;
        let msgs = m.recent_messages(&MessageQuery {
            limit: Some(limit),
            ..MessageQuery::default()
        })?;
        Ok((ops, msgs))
    }

    /// This agent's window over its last `limit` log entries (operations
    /// and messages of its sessions, and its own engine actions).
    pub fn timeline(&self, limit: usize) -> Result<Timeline> {
        crate::reads::listing(limit)?;
        let status = self.status()?;
        let agent = status.agent.clone();
        let e = self.engine()?;
        let (ops, msgs) = self.recent_log(limit)?;
        // What counts in this agent's window: its own writes, and the
        // writes of others into the session it works in.
        let session = status.session_id.clone();
        let counts = |entry_agent: &str, entry_session: Option<&String>| {
            entry_agent == agent || (session.is_some() && entry_session == session.as_ref())
        };
        let mut op_entries = Vec::new();
        for o in ops.iter().rev() {
            let action = o.kind == ACTION_KIND;
            if action && o.agent != agent {
                continue;
            }
            if !action && !counts(&o.agent, o.session_id.as_ref()) {
                continue;
            }
            op_entries.push(Entry {
                source: format!("o{}", o.seq),
                at: o.created_at,
                tokens: if action { 0 } else { o.tokens },
                action: action.then(|| o.data.clone()),
            });
        }
        let msg_entries: Vec<Entry> = msgs
            .iter()
            .rev()
            .filter(|msg| counts(&msg.agent, msg.session_id.as_ref()))
            .map(|msg| Entry {
                source: format!("m{}", msg.seq),
                at: msg.created_at,
                tokens: msg.tokens,
                action: None,
            })
            .collect();
        let mut entries = merge_by_time(op_entries, msg_entries);
        let start = entries.len().saturating_sub(limit);
        let entries: Vec<Entry> = entries.drain(start..).collect();
        // The figure the gauge shows and the actions wrote down (calibrated
        // when a provider has reported usage).
        let used_now = status.window.used;
        let audits = e.memory().store().compactions(64)?;
        let points = reconstruct(&entries, used_now, status.epoch)
            .into_iter()
            .map(|(mut p, entry)| {
                if let Some(mk) = p.marker.as_mut()
                    && let Some(kind) = audit_kind(&mk.kind)
                {
                    // The audit is written in the same commit as its
                    // action, at the same instant.
                    mk.compaction = audits
                        .iter()
                        .find(|c| c.kind == kind && c.created_at == entry.at)
                        .cloned();
                }
                p
            })
            .collect();
        Ok(Timeline { agent, points })
    }

    /// The agents seen in the last `limit` operations and messages, the
    /// handle's own first.
    pub fn agents(&self, limit: usize) -> Result<Vec<String>> {
        let e = self.engine()?;
        let mut seen = vec![e.memory().agent().to_string()];
        let (ops, msgs) = self.recent_log(limit)?;
        for a in ops
            .iter()
            .map(|o| &o.agent)
            .chain(msgs.iter().map(|m| &m.agent))
        {
            if !seen.contains(a) {
                seen.push(a.clone());
            }
        }
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(seq: i64, tokens: u64, action: Option<Value>) -> Entry {
        Entry {
            source: format!("o{seq}"),
            at: Timestamp(seq * 1000),
            tokens,
            action,
        }
    }

    #[test]
    fn the_walk_back_lands_on_every_figure_an_action_wrote_down() {
        let entries = vec![
            entry(1, 100, None),
            entry(2, 200, None),
            entry(
                3,
                0,
                Some(json!({"action": "checkpoint", "id": "CP-1", "tokens_used": 900})),
            ),
            entry(4, 300, None),
            entry(
                5,
                0,
                Some(
                    json!({"action": "refresh", "tokens_before": 1200, "tokens_after": 250, "epoch": 2}),
                ),
            ),
            entry(6, 50, None),
        ];
        let points = reconstruct(&entries, 300, 2);
        let used: Vec<u64> = points.iter().map(|(p, _)| p.used).collect();
        // Before the checkpoint the walk is anchored on its 900; after the
        // refresh on the present 300 less the 50 recorded since.
        assert_eq!(used, vec![700, 900, 900, 1200, 250, 300]);
        let epochs: Vec<u64> = points.iter().map(|(p, _)| p.epoch).collect();
        assert_eq!(epochs, vec![1, 1, 1, 1, 2, 2]);
        let refresh = points[4].0.marker.as_ref().expect("a marker");
        assert_eq!(
            (refresh.kind.as_str(), refresh.before),
            ("refresh", Some(1200))
        );
        assert_eq!(
            points[2].0.marker.as_ref().map(|m| m.kind.as_str()),
            Some("checkpoint")
        );
        assert!(points[0].0.marker.is_none());
    }

    #[test]
    fn each_log_keeps_its_order_when_writers_disagree_about_the_time() {
        // o2 was written by a process whose clock is ahead.
        let ops = vec![entry(1, 1, None), entry(50, 1, None), entry(3, 1, None)];
        let msgs = vec![Entry {
            source: "m1".into(),
            at: Timestamp(2_000),
            tokens: 1,
            action: None,
        }];
        let merged: Vec<String> = merge_by_time(ops, msgs)
            .into_iter()
            .map(|e| e.source)
            .collect();
        assert_eq!(merged, vec!["o1", "m1", "o50", "o3"]);
    }

    #[test]
    fn usage_never_goes_below_zero_when_the_log_holds_more_than_the_window() {
        let entries = vec![entry(1, 500, None), entry(2, 500, None)];
        let points = reconstruct(&entries, 600, 0);
        let used: Vec<u64> = points.iter().map(|(p, _)| p.used).collect();
        assert_eq!(used, vec![100, 600]);
        let points = reconstruct(&entries, 300, 0);
        assert_eq!(points[0].0.used, 0);
    }

    fn arbitrary_entry() -> impl proptest::strategy::Strategy<Value = (u64, Option<(u8, u64, u64)>)>
    {
        (
            0u64..2_000,
            proptest::option::weighted(0.2, (0u8..3, 0u64..50_000, 0u64..50_000)),
        )
    }

    proptest::proptest! {
        /// Whatever the log holds: the last point is the usage now, every
        /// action sits on the figure it wrote down, and between anchors each
        /// point is the next one less what that next entry added.
        #[test]
        fn every_point_is_anchored_or_follows_from_the_next(
            raw in proptest::collection::vec(arbitrary_entry(), 1..60),
            used_now in 0u64..100_000,
        ) {
            let entries: Vec<Entry> = raw
                .iter()
                .enumerate()
                .map(|(i, (tokens, action))| {
                    let action = action.map(|(kind, a, b)| match kind {
                        0 => json!({"action": "checkpoint", "tokens_used": a}),
                        1 => json!({"action": "refresh", "tokens_before": a, "tokens_after": b, "epoch": 5}),
                        _ => json!({"action": "optimize", "tokens_before": a, "tokens_after": b}),
                    });
                    entry(i as i64, if action.is_some() { 0 } else { *tokens }, action)
                })
                .collect();
            let points = reconstruct(&entries, used_now, 5);
            proptest::prop_assert_eq!(points.len(), entries.len());
            let last = &points[points.len() - 1].0;
            if last.marker.is_none() {
                proptest::prop_assert_eq!(last.used, used_now);
            }
            for (i, (p, e)) in points.iter().enumerate() {
                if let Some(data) = &e.action {
                    let key = if data["action"] == "checkpoint" { "tokens_used" } else { "tokens_after" };
                    proptest::prop_assert_eq!(Some(p.used), data[key].as_u64());
                }
                if let Some((next, next_entry)) = points.get(i + 1) {
                    let start_of_next = next
                        .marker
                        .as_ref()
                        .and_then(|m| m.before)
                        .unwrap_or_else(|| next.used.saturating_sub(next_entry.tokens));
                    if e.action.is_none() {
                        proptest::prop_assert_eq!(p.used, start_of_next);
                    }
                }
            }
        }
    }
}
