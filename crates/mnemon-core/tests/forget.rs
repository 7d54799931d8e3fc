//! Forgetting, as a property over random in-memory stores: whatever
//! subset of operations, messages and hot items is forgotten (before or
//! after a compaction and a checkpoint copied them), no search and no
//! context of any preset ever shows it again, and everything else is
//! still found. That each backend's search index lets go of what is
//! forgotten is the conformance suite's check, run on every backend.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_conformance::InMemoryStore;
use mnemon_conformance::{SteppingClock, T0, engine};
use mnemon_core::assemble::retrieve::{ALL_SOURCES, SearchStore};
use mnemon_core::assemble::{BudgetPlan, Format, PRESETS};
use mnemon_core::engine::forget::ForgetTarget;
use mnemon_core::engine::{ContextRequest, EngineStore};
use mnemon_core::importance::Role;
use mnemon_core::memory::{HotKind, NewMessage, NewOperation};
use mnemon_core::tokens::ChatFormat;
use proptest::prelude::*;
use serde_json::json;

/// One word per record that nothing else contains, so "is it shown?" is a
/// substring test.
const MARKERS: [&str; 12] = [
    "quokka", "axolotl", "narwhal", "pangolin", "tapir", "okapi", "ibis", "wombat", "gecko",
    "marmot", "lemur", "bison",
];

const FILLER: [&str; 10] = [
    "deploy", "schema", "retry", "cache", "worker", "budget", "login", "queue", "index", "error",
];

#[derive(Debug, Clone, Copy)]
enum Kind {
    Operation,
    Message,
    Hot,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Operation), Just(Kind::Message), Just(Kind::Hot)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn forgotten_records_never_come_back(
        records in prop::collection::vec(
            (kind(), prop::collection::vec(prop::sample::select(FILLER.to_vec()), 2..12), any::<bool>()),
            2..MARKERS.len(),
        ),
        compact_first in any::<bool>(),
    ) {
        let e = engine(InMemoryStore::new(), 16_384, SteppingClock::starting(T0), "p");
        let m = e.memory();
        let mut targets = Vec::new();
        let mut kept = Vec::new();
        let mut gone = Vec::new();
        for (i, (k, words, forget)) in records.iter().enumerate() {
            let text = format!("the {} {}.", MARKERS[i], words.join(" "));
            let target = match k {
                Kind::Operation => ForgetTarget::OperationAt(
                    m.record(NewOperation {
                        kind: "note".into(),
                        data: json!({"text": text}),
                        ..NewOperation::default()
                    })
                    .unwrap()
                    .seq,
                ),
                Kind::Message => ForgetTarget::MessageAt(
                    m.message(NewMessage::new(Role::User, &text)).unwrap().seq,
                ),
                Kind::Hot => ForgetTarget::Id(
                    m.add_hot(HotKind::Note, &text, None, None, None).unwrap().id,
                ),
            };
            if *forget {
                targets.push(target);
                gone.push(MARKERS[i]);
            } else {
                kept.push(MARKERS[i]);
            }
        }
        if compact_first {
            e.compact(false).unwrap();
            e.checkpoint("manual").unwrap();
        }
        if !targets.is_empty() {
            e.forget(&targets, false).unwrap();
        }
        let s = m.store();
        for word in gone.iter().chain(&kept) {
            let hits = s.search(word, 50, &ALL_SOURCES).unwrap();
            prop_assert_eq!(hits.is_empty(), gone.contains(word), "search for {}: {:?}", word, hits);
            for preset in PRESETS {
                let out = e
                    .context(&ContextRequest {
                        plan: BudgetPlan::preset(preset).unwrap(),
                        budget: Some(6_000),
                        query: Some(format!("what about the {word}")),
                        format: Format::Markdown,
                        chat: ChatFormat::OPENAI,
messages_before: None,
                    })
                    .unwrap();
                for g in &gone {
                    prop_assert!(!out.text.contains(g), "{} shows forgotten {}:\n{}", preset, g, out.text);
                }
            }
        }
        // The compaction and the checkpoint lost what went, nothing else.
        for c in s.compactions(10).unwrap() {
            for g in &gone {
                prop_assert!(!c.summary.contains(g), "{}", c.summary);
            }
        }
    }
}
