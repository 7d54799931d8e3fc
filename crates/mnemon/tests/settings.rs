//! Every setting the configuration accepts changes what mnemon does. These
//! are the ones that were parsed and then ignored: each test changes the
//! setting and sees the difference.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::sync::Arc;

use mnemon::{EngineEvent, Mnemon, NewOperation, OpenOptions, Phase};
use mnemon_conformance::{HandClock, T0};
use mnemon_core::memory::{Clock, Timestamp};
use serde_json::json;

fn project(config: &str) -> (Mnemon, Arc<HandClock>) {
    let clock = HandClock::at(T0);
    let m = OpenOptions::new()
        .clock(clock.clone())
        .in_memory(Some(config))
        .expect("a valid configuration");
    (m, clock)
}

fn step(m: &Mnemon, i: usize, phase: Option<Phase>) -> Vec<EngineEvent> {
    m.record(NewOperation {
        phase,
        ..NewOperation::new("task_execution", json!({"task": i, "result": "done"}))
    })
    .unwrap()
    .events
}

fn checkpoints(events: &[EngineEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::CheckpointCreated { trigger, .. } => Some(trigger.clone()),
            _ => None,
        })
        .collect()
}

fn triggers_after_twelve_steps(switch: &str, on: bool) -> Vec<String> {
    let (m, _) = project(&format!(
        "[context_window]\nmax_tokens = 128000\n[checkpoint]\noperation_interval = 5\n{switch} = {on}\n"
    ));
    (0..12)
        .flat_map(|i| checkpoints(&step(&m, i, None)))
        .collect()
}

#[test]
fn operation_count_based_switches_the_operation_trigger() {
    let on = triggers_after_twelve_steps("operation_count_based", true);
    assert_eq!(on, vec!["operations_5", "operations_5"]);
    let off = triggers_after_twelve_steps("operation_count_based", false);
    assert!(off.is_empty(), "{off:?}");
}

#[test]
fn time_based_switches_the_time_trigger() {
    for on in [true, false] {
        let (m, clock) = project(&format!(
            "[context_window]\nmax_tokens = 128000\n[checkpoint]\ntime_interval_hours = 1\ntime_based = {on}\n"
        ));
        step(&m, 0, None);
        clock.set(Timestamp(clock.now().0 + 2 * 3_600_000));
        let got = checkpoints(&step(&m, 1, None));
        if on {
            assert_eq!(got, vec!["time_1h"]);
        } else {
            assert!(got.is_empty(), "{got:?}");
        }
    }
}

#[test]
fn phase_completion_switches_the_phase_trigger() {
    for on in [true, false] {
        let (m, _) = project(&format!(
            "[context_window]\nmax_tokens = 128000\n[checkpoint]\nphase_completion = {on}\n"
        ));
        step(&m, 0, Some(Phase::Planning));
        let got = checkpoints(&step(&m, 1, Some(Phase::Execution)));
        if on {
            assert_eq!(got, vec!["phase_complete_planning"]);
        } else {
            assert!(got.is_empty(), "{got:?}");
        }
    }
}

#[test]
fn session_end_switches_the_session_end_checkpoint() {
    for on in [true, false] {
        let (m, _) = project(&format!(
            "[context_window]\nmax_tokens = 128000\n[checkpoint]\nsession_end = {on}\n"
        ));
        step(&m, 0, None);
        let ended = m.end_session(None).unwrap();
        let got = checkpoints(&ended.events);
        assert_eq!(got.len(), usize::from(on), "{got:?}");
        assert_eq!(m.checkpoints(10).unwrap().len(), usize::from(on));
    }
}

#[test]
fn manual_off_refuses_a_manual_checkpoint_and_names_the_key() {
    let (m, _) = project("[checkpoint]\nmanual = false\n");
    let err = m.checkpoint("manual").unwrap_err();
    assert_eq!(err.class(), mnemon::ErrorClass::Input);
    assert!(err.to_string().contains("checkpoint.manual"), "{err}");
    let (m, _) = project("[checkpoint]\nmanual = true\n");
    assert_eq!(m.checkpoint("manual").unwrap().value.trigger, "manual");
}

/// Fills a 4,096-token window with records until the zone reaches orange
/// and returns every event on the way.
fn fill_to_orange(threshold_based: bool) -> Vec<EngineEvent> {
    let (m, _) = project(&format!(
        "[context_window]\nmax_tokens = 4096\n[checkpoint]\nthreshold_based = {threshold_based}\n"
    ));
    let mut events = Vec::new();
    for i in 0..400 {
        let out = m
            .record(NewOperation::new(
                "task_execution",
                json!({"task": i, "result": "the parser handles nested lists, quoted strings and escapes now"}),
            ))
            .unwrap();
        let orange = out
            .events
            .iter()
            .any(|e| matches!(e, EngineEvent::ZoneChanged { to, .. } if to.name() == "orange"));
        events.extend(out.events);
        if orange {
            return events;
        }
    }
    panic!("the window never reached orange");
}

#[test]
fn threshold_based_switches_the_zone_checkpoints() {
    let on = checkpoints(&fill_to_orange(true));
    assert!(on.contains(&"threshold_70pct".to_string()), "{on:?}");
    let off = checkpoints(&fill_to_orange(false));
    assert!(!off.iter().any(|t| t.starts_with("threshold_")), "{off:?}");
}

fn compacted_share(ratio: f64) -> f64 {
    let (m, _) = project(&format!(
        "[context_window]\nmax_tokens = 128000\n[session]\ncompression_target_ratio = {ratio}\n"
    ));
    // Distinct sentences: near-duplicates would be dropped whatever the ratio.
    const SYL: [&str; 10] = ["ka", "lo", "mi", "nu", "pe", "ra", "so", "ti", "vo", "ze"];
    let word = |i: usize, k: usize| {
        format!(
            "{}{}{}",
            SYL[(i + k) % 10],
            SYL[(i * 3 + k * 7) % 10],
            SYL[(i / 10 + k * 3) % 10]
        )
    };
    for i in 0..60 {
        let text = (0..8).map(|k| word(i, k)).collect::<Vec<_>>().join(" ");
        m.record(NewOperation::new(
            "task_execution",
            json!({"result": format!("{text}.")}),
        ))
        .unwrap();
    }
    let c = m.compact(true).unwrap().value;
    c.summary.tokens as f64 / c.summary.input_tokens as f64
}

#[test]
fn compression_target_ratio_bounds_a_compacted_session_log() {
    let tight = compacted_share(0.3);
    let loose = compacted_share(0.9);
    assert!(tight <= 0.3, "ratio 0.3 kept {tight:.3}");
    assert!(loose <= 0.9, "ratio 0.9 kept {loose:.3}");
    assert!(
        loose > tight + 0.1,
        "0.9 keeps more than 0.3: {loose:.3} vs {tight:.3}"
    );
}

#[test]
fn auto_detect_without_a_server_says_it_has_nothing_to_ask() {
    let (m, _) = project("[context_window]\nauto_detect = true\n");
    let notes = m.settings().loaded().config.inert_settings();
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("context_window.auto_detect"));
    assert!(notes[0].contains("llm.provider"), "{}", notes[0]);
    let (m, _) = project("[context_window]\nauto_detect = false\n");
    assert!(m.settings().loaded().config.inert_settings().is_empty());
    // With a server configured, detection is in effect: no note.
    let (m, _) = project(
        "[context_window]\nauto_detect = true\n[llm]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nconnect_timeout_ms = 200\n",
    );
    assert!(m.settings().loaded().config.inert_settings().is_empty());
}

fn working_memory_line(threshold: u64) -> String {
    let (m, _) = project(&format!(
        "[context_window]\nmax_tokens = 128000\n[profile]\nsummarization_threshold_tokens = {threshold}\n"
    ));
    let report = "The nightly import read 40,000 rows from the billing export. \
        Twelve rows had a negative amount and were set aside for review. \
        The currency column switched from ISO codes to symbols halfway through the file. \
        A converter now maps the symbols back to ISO codes before the amounts are summed. \
        The totals match the ledger to the cent after the fix. \
        Tomorrow the import runs against the March export as well.";
    m.record(NewOperation::new(
        "task_execution",
        json!({"result": report}),
    ))
    .unwrap();
    let ctx = m
        .context(&mnemon::ContextQuery {
            budget: Some(2_000),
            ..mnemon::ContextQuery::default()
        })
        .unwrap();
    ctx.text
        .lines()
        .find(|l| l.contains("task_execution"))
        .expect("the record is in working memory")
        .to_string()
}

#[test]
fn summarization_threshold_summarizes_large_working_memory_items() {
    let whole = working_memory_line(5_000);
    assert!(whole.contains("Tomorrow the import runs"), "{whole}");
    assert!(!whole.contains("summarized"), "{whole}");
    let cut = working_memory_line(60);
    assert!(cut.contains("[summarized from"), "{cut}");
    assert!(cut.len() < whole.len() / 2, "{cut}");
    let counter = mnemon_core::tokens::OpenAiBpe::new(mnemon_core::tokens::Encoding::Cl100kBase);
    use mnemon_core::tokens::TokenCounter;
    assert!(counter.count(&cut) <= 60, "within the threshold: {cut}");
}
