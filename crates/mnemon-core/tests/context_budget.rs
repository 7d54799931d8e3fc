//! The budget invariant end to end: random in-memory stores (operations,
//! messages, hot context, decisions, tasks and the documents rendered from
//! them), every preset, random budgets, queries and formats. What the engine
//! sends never exceeds the budget by one token when recounted from scratch,
//! required sections come whole, no item appears twice, and a refusal names a
//! budget that then works.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::collections::BTreeSet;

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::{AssembleError, BudgetPlan, Format, PRESETS, SectionKind};
use mnemon_core::engine::{ContextRequest, Engine, EngineError};
use mnemon_core::importance::Role;
use mnemon_core::memory::{
    Consequences, DecisionStatus, EntityKind, HotKind, NewDecision, NewEntity, NewMessage,
    NewOperation, Priority,
};
use mnemon_core::tokens::{ChatFormat, Encoding, OpenAiBpe, TokenCounter, count_chat};
use proptest::prelude::*;
use serde_json::json;

const WORDS: [&str; 24] = [
    "deploy",
    "schema",
    "Postgres",
    "retry",
    "timeout",
    "Alice",
    "billing",
    "cache",
    "index",
    "migration",
    "Berlin",
    "login",
    "token",
    "queue",
    "worker",
    "rollback",
    "error",
    "budget",
    "session",
    "Granite",
    "api",
    "latency",
    "fixed",
    "blocked",
];

fn sentence() -> impl Strategy<Value = String> {
    // Mostly short records, now and then one too long to fit whole, so that
    // excerpts (a record's best sentences) are exercised too.
    prop_oneof![
        8 => prop::collection::vec(prop::sample::select(WORDS.to_vec()), 3..40),
        1 => prop::collection::vec(prop::sample::select(WORDS.to_vec()), 200..400),
    ]
    .prop_map(|w| {
        w.chunks(9)
            .map(|c| format!("{}.", c.join(" ")))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

#[derive(Debug, Clone)]
struct Contents {
    operations: Vec<String>,
    messages: Vec<(bool, String)>,
    hot: Vec<String>,
    decisions: Vec<(String, String)>,
    tasks: Vec<String>,
}

fn contents() -> impl Strategy<Value = Contents> {
    (
        prop::collection::vec(sentence(), 0..30),
        prop::collection::vec((any::<bool>(), sentence()), 0..12),
        prop::collection::vec(sentence(), 0..4),
        prop::collection::vec((sentence(), sentence()), 0..3),
        prop::collection::vec(sentence(), 0..6),
    )
        .prop_map(|(operations, messages, hot, decisions, tasks)| Contents {
            operations,
            messages,
            hot,
            decisions,
            tasks,
        })
}

fn stored(c: &Contents) -> Engine<InMemoryStore> {
    let e = engine(
        InMemoryStore::new(),
        1_000_000,
        SteppingClock::starting(T0),
        "budget",
    );
    let m = e.memory();
    for t in &c.tasks {
        m.create_entity(&NewEntity {
            kind: EntityKind::Task,
            title: t.chars().take(80).collect(),
            description: Some(t.clone()),
            priority: Some(2),
            parent: None,
        })
        .unwrap();
    }
    for (title, why) in &c.decisions {
        m.decide(&NewDecision {
            title: title.chars().take(60).collect(),
            context: why.clone(),
            decision: title.clone(),
            consequences: Consequences::default(),
            alternatives: Vec::new(),
            assumptions: Vec::new(),
            status: DecisionStatus::Accepted,
        })
        .unwrap();
    }
    for h in &c.hot {
        m.add_hot(HotKind::Constraint, h, None, Some(Priority::High), None)
            .unwrap();
    }
    for o in &c.operations {
        e.record(NewOperation {
            kind: "task_execution".into(),
            data: json!({ "text": o }),
            ..NewOperation::default()
        })
        .unwrap();
    }
    for (user, text) in &c.messages {
        e.message(NewMessage {
            role: if *user { Role::User } else { Role::Assistant },
            content: text.clone(),
            agent: None,
            tokens: None,
        })
        .unwrap();
    }
    m.refresh_documents(3).unwrap();
    e
}

/// The exact tokens of what would be sent, counted afresh with the plain
/// tokenizer rather than through the engine's remembered counts.
fn recount(out: &mnemon_core::assemble::Assembled, format: Format) -> u64 {
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    match format {
        Format::Messages => count_chat(&counter, ChatFormat::OPENAI, &out.messages) as u64,
        _ => counter.count(&out.text) as u64,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn what_the_engine_sends_fits_its_budget_exactly(
        c in contents(),
        preset in prop::sample::select(PRESETS.to_vec()),
        budget in 0u64..3_000,
        format in prop::sample::select(vec![Format::Markdown, Format::Json, Format::Messages]),
        // "when" asks about time: fragments then come under their day.
        query in prop::option::of(prop::collection::vec(
            prop::sample::select([&WORDS[..], &["when"]].concat()),
            1..4,
        )),
    ) {
        let e = stored(&c);
        let plan = BudgetPlan::preset(preset).unwrap();
        let request = |budget: u64| ContextRequest {
            plan: plan.clone(),
            budget: Some(budget),
            query: query.as_ref().map(|q| q.join(" ")),
            format,
            chat: ChatFormat::OPENAI,
messages_before: None,
        };
        let out = match e.context(&request(budget)) {
            Ok(out) => out,
            Err(EngineError::Assemble(AssembleError::RequiredDoNotFit { need, budget: b, .. })) => {
                prop_assert_eq!(b, budget);
                prop_assert!(need > budget, "refused {budget} though {need} was enough");
                // The figure the error gives is enough.
                let out = e.context(&request(need)).unwrap();
                prop_assert!(recount(&out, format) <= need);
                return Ok(());
            }
            Err(other) => panic!("{other}"),
        };
        let sent = recount(&out, format);
        prop_assert!(sent <= budget, "{sent} tokens sent for a budget of {budget}");
        prop_assert_eq!(out.tokens, sent);
        let mut seen = BTreeSet::new();
        for s in &out.sections {
            prop_assert!(plan.sections.iter().any(|p| p.kind == s.kind));
            for i in &s.items {
                prop_assert!(seen.insert(i.id.clone()), "{} twice", i.id);
            }
        }
        // A plan that requires the hot context gets it whole.
        let hot_required = plan
            .sections
            .iter()
            .any(|s| s.kind == SectionKind::HotContext && s.required);
        if hot_required && !c.hot.is_empty() {
            prop_assert!(seen.iter().any(|id| id.starts_with("hot@")), "hot context missing");
        }
    }
}
