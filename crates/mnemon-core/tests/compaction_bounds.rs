//! A refresh or a compaction exists to make room: neither may leave the
//! window fuller than it found it, and a compaction keeps the configured
//! share of what it compresses, pinned items included. Checked at 4K, 16K
//! and 128K windows, on short and long epochs, with and without pinned
//! items, on the in-memory store (core's rules; every backend keeps the
//! same rows, as the conformance suite checks).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::engine::{Engine, EngineEvent};
use mnemon_core::memory::NewOperation;
use serde_json::json;

const WINDOWS: [u64; 3] = [4_096, 16_384, 131_072];

fn fresh(window: u64) -> Engine<InMemoryStore> {
    engine(
        InMemoryStore::new(),
        window,
        SteppingClock::starting(T0),
        "orchestrator",
    )
}

/// `n` operations; with `pinned`, every fourth a decision or an error,
/// which the summarizer keeps verbatim.
fn history(e: &Engine<InMemoryStore>, n: usize, pinned: bool) {
    for i in 0..n {
        let (kind, status) = match i % 4 {
            1 if pinned => ("decision", None),
            3 if pinned => ("error", Some("failed")),
            _ => ("task_execution", Some("completed")),
        };
        e.record(NewOperation {
            kind: kind.into(),
            data: json!({"text": format!(
                "step {i}: reviewed the login flow and the token refresh of service {} before the release", i % 7
            )}),
            status: status.map(str::to_string),
            ..NewOperation::default()
        })
        .unwrap();
    }
}

fn refreshed(events: &[EngineEvent]) -> (u64, u64) {
    events
        .iter()
        .find_map(|ev| match ev {
            EngineEvent::Refreshed {
                tokens_before,
                tokens_after,
                ..
            } => Some((*tokens_before, *tokens_after)),
            _ => None,
        })
        .expect("a refresh event")
}

#[test]
fn a_refresh_never_leaves_the_window_fuller() {
    for window in WINDOWS {
        for pinned in [false, true] {
            for n in [1, 3, 12, 60] {
                let e = fresh(window);
                history(&e, n, pinned);
                let used = e.status().unwrap().window.used;
                let out = e.refresh("manual").unwrap();
                let (before, after) = refreshed(&out.events);
                assert_eq!(before, used, "window {window}, {n} operations");
                assert!(
                    after <= before,
                    "window {window}, {n} operations, pinned {pinned}: {before} -> {after}"
                );
                assert_eq!(e.status().unwrap().window.used, after);
                // Twice in a row: nothing new to fold in, still no fuller.
                let (b2, a2) = refreshed(&e.refresh("manual").unwrap().events);
                assert!(a2 <= b2, "second refresh at window {window}: {b2} -> {a2}");
            }
        }
    }
}

#[test]
fn a_compaction_keeps_the_configured_share_pinned_items_included() {
    for window in WINDOWS {
        for pinned in [false, true] {
            for n in [4, 40] {
                let e = fresh(window);
                history(&e, n, pinned);
                let c = e.compact(true).unwrap();
                let s = &c.summary;
                assert!(
                    s.tokens * 10 <= s.input_tokens * 7,
                    "window {window}, {n} operations, pinned {pinned}: {} of {} tokens",
                    s.tokens,
                    s.input_tokens
                );
                // Every pinned record is in the summary whole or named as
                // deferred (its original stays in the log).
                if pinned {
                    let kept: usize = s.lines.iter().filter(|l| l.pinned).count();
                    assert!(
                        kept + s.audit.pinned_deferred.len() >= n / 2,
                        "pinned items lost: {kept} kept, {:?} deferred",
                        s.audit.pinned_deferred
                    );
                }
                // What the dry run showed is what the compaction does.
                let done = e.compact(false).unwrap();
                assert_eq!(done.summary.tokens, s.tokens);
            }
        }
    }
}
