//! The optimizer's five techniques, each on its own, and the properties
//! that hold for any epoch: every operation changed at most once, pinned
//! ones never, counts exact, savings as reported, and nothing that leaves
//! the context lost.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_core::compress::Extractive;
use mnemon_core::memory::{Operation, Phase, Timestamp};
use mnemon_core::optimize::{
    OptimizeInput, OptimizePlan, REGISTRY_PATH, StateBase, Technique, Thresholds, apply_diff, plan,
};
use mnemon_core::profile::{ProfileName, ProfileParams};
use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
use proptest::prelude::*;
use serde_json::{Value, json};

const HOUR: i64 = 3_600_000;
const NOW: i64 = 1_750_000_000_000;

fn counter() -> OpenAiBpe {
    OpenAiBpe::new(Encoding::Cl100kBase)
}

fn op(seq: i64, kind: &str, data: Value, phase: Option<Phase>, age_ms: i64) -> Operation {
    let text = match &data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Operation {
        id: format!("op-{seq}"),
        seq,
        session_id: Some("sess-0001-abcdef".into()),
        agent: "orchestrator".into(),
        tokens: counter().count(&format!("{kind} {text}")) as u64,
        kind: kind.into(),
        data,
        phase,
        status: None,
        importance: 0.5,
        pinned: false,
        created_at: Timestamp(NOW - age_ms),
    }
}

fn sentence(i: i64) -> String {
    let topics = [
        "login form",
        "signup flow",
        "MFA codes",
        "password hashing",
        "session tokens",
        "rate limits",
    ];
    format!(
        "Step {i} worked on the {} and recorded result {} for story #{}.",
        topics[(i as usize) % topics.len()],
        i * 7 % 13,
        i % 5 + 1
    )
}

fn input<'a>(ops: &'a [Operation], phase: Option<Phase>, p: &ProfileParams) -> OptimizeInput<'a> {
    OptimizeInput {
        ops,
        session_id: "sess-0001-abcdef",
        current_phase: phase,
        now: Timestamp(NOW),
        thresholds: Thresholds::of(p),
        state_base: None,
        registry: Default::default(),
    }
}

fn run(i: &OptimizeInput<'_>) -> OptimizePlan {
    plan(i, &Extractive::default(), &counter()).expect("plan")
}

fn saved(p: &OptimizePlan, t: Technique) -> u64 {
    p.reports()
        .iter()
        .find(|r| r.technique == t)
        .unwrap()
        .tokens_saved
}

#[test]
fn a_completed_phase_collapses_to_its_cap_and_is_archived_whole() {
    for (name, cap) in [
        (ProfileName::Balanced, 500),
        (ProfileName::UltraAggressive, 100),
    ] {
        let p = ProfileParams::new(name, 128_000);
        let mut ops: Vec<Operation> = (1..=40)
            .map(|i| {
                op(
                    i,
                    "task_execution",
                    Value::String(sentence(i)),
                    Some(Phase::Planning),
                    HOUR / 2,
                )
            })
            .collect();
        ops[3].pinned = true;
        ops.extend((41..=45).map(|i| {
            op(
                i,
                "task_execution",
                Value::String(sentence(i)),
                Some(Phase::Execution),
                0,
            )
        }));
        let plan = run(&input(&ops, Some(Phase::Execution), &p));
        let subs: Vec<_> = plan
            .substitutions
            .iter()
            .filter(|s| s.technique == Technique::PhaseSummaries)
            .collect();
        // 39 unpinned planning operations; the pinned one and the current
        // phase stay as they are.
        assert_eq!(subs.len(), 39, "{name:?}");
        assert!(subs.iter().all(|s| s.op_seq != 4 && s.op_seq <= 40));
        let shown: Vec<_> = subs.iter().filter_map(|s| s.replacement.as_ref()).collect();
        assert_eq!(shown.len(), 1);
        assert!(shown[0].tokens <= cap, "{} > {cap}", shown[0].tokens);
        assert_eq!(
            shown[0].tokens,
            counter().count(&format!("{} {}", shown[0].kind, shown[0].text)) as u64
        );
        assert!(shown[0].text.contains("archive/phases/planning-o1.json"));
        let archive = plan
            .artifacts
            .iter()
            .find(|a| a.technique == Technique::PhaseSummaries)
            .unwrap();
        assert_eq!(archive.path, "archive/phases/planning-o1.json");
        assert_eq!(archive.content["operations"].as_array().unwrap().len(), 39);
        assert!(saved(&plan, Technique::PhaseSummaries) > 0);
    }
}

#[test]
fn the_current_phase_is_never_summarized() {
    let p = ProfileParams::for_window(128_000);
    let ops: Vec<Operation> = (1..=40)
        .map(|i| {
            op(
                i,
                "task_execution",
                Value::String(sentence(i)),
                Some(Phase::Execution),
                0,
            )
        })
        .collect();
    assert!(run(&input(&ops, Some(Phase::Execution), &p)).is_empty());
}

#[test]
fn large_files_enter_the_registry_with_path_summary_mtime_and_size() {
    let p = ProfileParams::for_window(128_000);
    let content: String = (1..=120).map(sentence).collect::<Vec<_>>().join(" ");
    let small = json!({"path": "src/small.rs", "content": "fn main() {}"});
    let big = json!({"path": "src/auth.rs", "content": content, "mtime": "2025-01-15T14:30:00Z"});
    let ops = vec![
        op(1, "file_read", small, None, 0),
        op(2, "file_read", big, None, 0),
    ];
    let mut i = input(&ops, None, &p);
    i.registry
        .insert("docs/old.md".into(), json!({"path": "docs/old.md"}));
    let plan = run(&i);
    assert_eq!(plan.substitutions.len(), 1);
    let s = &plan.substitutions[0];
    assert_eq!((s.op_seq, s.technique), (2, Technique::ArtifactRegistry));
    let r = s.replacement.as_ref().unwrap();
    assert!(r.text.starts_with("src/auth.rs ("), "{}", r.text);
    assert!(r.tokens < 120);
    let reg = plan
        .artifacts
        .iter()
        .find(|a| a.path == REGISTRY_PATH)
        .unwrap();
    let e = &reg.content["src/auth.rs"];
    assert_eq!(e["last_modified"], "2025-01-15T14:30:00Z");
    assert_eq!(
        e["size_tokens"].as_u64().unwrap(),
        counter().count(&content) as u64
    );
    assert!(!e["summary"].as_str().unwrap().is_empty());
    assert_eq!(e["operation"], "o2");
    // Earlier entries are kept.
    assert!(reg.content.get("docs/old.md").is_some());
}

#[test]
fn state_becomes_its_changes_since_the_checkpoint() {
    let p = ProfileParams::for_window(128_000);
    let base = json!({"epics": {"5": {"title": "User authentication", "status": "pending", "stories": [12, 13, 14]}},
                      "phase": "planning", "notes": (1..=30).map(sentence).collect::<Vec<_>>()});
    let mut s1 = base.clone();
    s1["epics"]["5"]["status"] = json!("in_progress");
    let mut s2 = s1.clone();
    s2["phase"] = json!("execution");
    s2["epics"]["6"] = json!({"title": "Billing"});
    let ops = vec![
        op(10, "state", s1, None, 0),
        op(11, "task_execution", json!("started story 12"), None, 0),
        op(12, "state", s2.clone(), None, 0),
    ];
    let mut i = input(&ops, None, &p);
    i.state_base = Some(StateBase {
        checkpoint_id: "CP-20250115-143000".into(),
        op_seq: 3,
        state: base.clone(),
    });
    let plan = run(&i);
    let subs: Vec<_> = plan
        .substitutions
        .iter()
        .filter(|s| s.technique == Technique::DifferentialState)
        .collect();
    assert_eq!(subs.len(), 2);
    let hidden = subs.iter().find(|s| s.op_seq == 10).unwrap();
    assert!(hidden.replacement.is_none());
    assert_eq!(hidden.reason, "superseded by o12");
    let r = subs
        .iter()
        .find(|s| s.op_seq == 12)
        .unwrap()
        .replacement
        .as_ref()
        .unwrap();
    assert!(r.text.contains("CP-20250115-143000"));
    let delta: Value = serde_json::from_str(&r.text[r.text.find('{').unwrap()..]).unwrap();
    assert_eq!(
        apply_diff(&base, &delta),
        s2,
        "the delta rebuilds the state exactly"
    );
    // Without a checkpoint there is nothing to be different from.
    let i = input(&ops, None, &p);
    assert!(run(&i).is_empty());
}

#[test]
fn items_over_2000_tokens_move_to_files_with_a_preview_and_their_size() {
    let p = ProfileParams::for_window(1_000_000);
    let log: String = (1..=300).map(sentence).collect::<Vec<_>>().join(" ");
    let ops = vec![op(7, "test_output", Value::String(log.clone()), None, 0)];
    assert!(ops[0].tokens > 2_000);
    let plan = run(&input(&ops, None, &p));
    assert_eq!(plan.substitutions.len(), 1);
    let r = plan.substitutions[0].replacement.as_ref().unwrap();
    let head = format!(
        "externalized to artifacts/o7.json ({} tokens): ",
        ops[0].tokens
    );
    assert!(r.text.starts_with(&head), "{}", r.text);
    let preview = &r.text[head.len()..];
    assert_eq!(
        preview.chars().count(),
        201,
        "200 characters and an ellipsis"
    );
    assert!(log.starts_with(preview.trim_end_matches('…')));
    let a = &plan.artifacts[0];
    assert_eq!(a.path, "artifacts/o7.json");
    assert_eq!(a.content["operation"]["data"], Value::String(log));
}

#[test]
fn pruning_keeps_fresh_traces_the_last_five_validations_and_every_unresolved_error() {
    let p = ProfileParams::for_window(128_000);
    let mut ops = vec![
        op(1, "debug_trace", json!("stack at step 1"), None, 2 * HOUR),
        op(2, "debug_trace", json!("stack at step 2"), None, HOUR / 4),
    ];
    ops.extend((3..=10).map(|i| {
        op(
            i,
            "validation",
            json!(format!("validation {i} passed")),
            None,
            0,
        )
    }));
    for i in 11..=28 {
        let mut e = op(i, "error", json!(format!("error {i}")), None, 0);
        e.status = Some(if i % 6 == 0 { "open" } else { "resolved" }.into());
        ops.push(e);
    }
    let plan = run(&input(&ops, None, &p));
    let pruned: Vec<i64> = plan.substitutions.iter().map(|s| s.op_seq).collect();
    // Resolved errors: 15 of 18 (12, 18, 24 are open); the oldest 5 go.
    assert_eq!(pruned, vec![1, 3, 4, 5, 11, 13, 14, 15, 16]);
    assert!(
        plan.substitutions
            .iter()
            .all(|s| s.technique == Technique::Pruning && s.replacement.is_none())
    );
    let expected: u64 = ops
        .iter()
        .filter(|o| pruned.contains(&o.seq))
        .map(|o| o.tokens)
        .sum();
    assert_eq!(saved(&plan, Technique::Pruning), expected);
}

fn arb_op() -> impl Strategy<Value = (u8, usize, Option<u8>, bool, i64, bool)> {
    (
        0u8..7,
        1usize..400,
        proptest::option::of(0u8..3),
        any::<bool>(),
        0i64..3 * HOUR,
        prop::bool::weighted(0.1),
    )
}

fn build(
    seq: i64,
    (kind, size, phase, resolved, age, pinned): (u8, usize, Option<u8>, bool, i64, bool),
) -> Operation {
    let text: String = (0..size as i64)
        .map(|k| sentence(seq * 31 + k))
        .collect::<Vec<_>>()
        .join(" ");
    let phase = phase.map(|p| [Phase::Planning, Phase::Execution, Phase::Validation][p as usize]);
    let (k, data) = match kind {
        0 => ("task_execution", json!(text)),
        1 => (
            "file_read",
            json!({"path": format!("src/f{seq}.rs"), "content": text}),
        ),
        2 => ("state", json!({"step": seq, "body": text})),
        3 => ("debug_trace", json!(text)),
        4 => ("validation", json!(text)),
        5 => ("error", json!(text)),
        _ => ("test_output", json!(text)),
    };
    let mut o = op(seq, k, data, phase, age);
    o.pinned = pinned;
    o.status = resolved.then(|| "resolved".to_string());
    o
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn any_epoch_optimizes_safely(
        specs in prop::collection::vec(arb_op(), 1..40),
        window in prop::sample::select(vec![8_192u64, 128_000, 1_000_000]),
        phase in proptest::option::of(0u8..3),
        with_base in any::<bool>(),
    ) {
        let ops: Vec<Operation> = specs.into_iter().enumerate().map(|(i, s)| build(i as i64 + 10, s)).collect();
        let p = ProfileParams::for_window(window);
        let mut i = input(&ops, phase.map(|p| [Phase::Planning, Phase::Execution, Phase::Validation][p as usize]), &p);
        if with_base {
            i.state_base = Some(StateBase { checkpoint_id: "CP-1".into(), op_seq: 1, state: json!({"step": 0}) });
        }
        let plan = run(&i);
        let mut seen = std::collections::BTreeSet::new();
        let mut total = 0;
        for s in &plan.substitutions {
            let o = ops.iter().find(|o| o.seq == s.op_seq).expect("a real operation");
            prop_assert!(seen.insert(s.op_seq), "o{} changed twice", s.op_seq);
            prop_assert!(!o.pinned, "pinned o{} changed", s.op_seq);
            prop_assert_eq!(s.original_tokens, o.tokens);
            if let Some(r) = &s.replacement {
                // A phase summary stands for its whole run (checked below).
                if s.technique != Technique::PhaseSummaries {
                    prop_assert!(r.tokens < o.tokens, "o{} grew", s.op_seq);
                }
                prop_assert_eq!(r.tokens, counter().count(&format!("{} {}", r.kind, r.text)) as u64);
            }
            total += s.original_tokens as i64 - s.tokens_after() as i64;
            // Nothing leaves the context without somewhere to find it.
            let held = plan.artifacts.iter().any(|a| {
                let c = a.content.to_string();
                c.contains(&format!("\"seq\":{}", o.seq)) || c.contains(&format!("\"operation\":\"o{}\"", o.seq))
            });
            match s.technique {
                Technique::PhaseSummaries | Technique::Externalize | Technique::ArtifactRegistry => prop_assert!(held, "o{} not held", o.seq),
                Technique::DifferentialState => prop_assert!(o.kind == "state"),
                Technique::Pruning => prop_assert!(s.replacement.is_none()),
            }
            if s.technique == Technique::PhaseSummaries && let Some(r) = &s.replacement {
                prop_assert!(r.tokens <= p.phase_summary_max_tokens.value);
            }
        }
        for r in plan.reports() {
            prop_assert!(r.items == 0 || r.technique == Technique::Pruning || r.tokens_after < r.tokens_before, "{:?}", r);
        }
        prop_assert!(total >= 0);
        prop_assert_eq!(plan.saved(), total as u64);
        prop_assert_eq!(plan.reports().iter().map(|r| r.tokens_saved).sum::<u64>(), total as u64);
    }
}

#[test]
fn config_turns_techniques_off_and_moves_their_thresholds() {
    let p = ProfileParams::for_window(128_000);
    let log: String = (1..=300).map(sentence).collect::<Vec<_>>().join(" ");
    let mut ops = vec![op(1, "test_output", Value::String(log), None, 0)];
    ops.extend((2..=9).map(|i| op(i, "validation", json!(format!("validation {i}")), None, 0)));
    let c = mnemon_core::config::Config::default();
    let mut i = input(&ops, None, &p);
    i.thresholds = c.optimization.thresholds(&p);
    assert_eq!(
        i.thresholds,
        Thresholds::of(&p),
        "the defaults are the seed's"
    );
    assert_eq!(run(&i).substitutions.len(), 4);
    let mut c = c;
    c.optimization.pruning_enabled = false;
    c.optimization.external_storage_enabled = false;
    i.thresholds = c.optimization.thresholds(&p);
    assert!(run(&i).is_empty());
    c.optimization.pruning_enabled = true;
    c.optimization.prune_validation_history_keep_last = 2;
    i.thresholds = c.optimization.thresholds(&p);
    assert_eq!(run(&i).substitutions.len(), 6);
}
