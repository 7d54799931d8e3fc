//! The compressor's guarantees, as properties over random inputs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_core::compress::{
    CompressError, Extractive, SourceItem, Summarizer, compress_within, hierarchical, parse,
    sentences::split, verbatim_tokens,
};
use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "created",
    "epic",
    "story",
    "task",
    "login",
    "signup",
    "MFA",
    "password",
    "hashing",
    "bcrypt",
    "validated",
    "deployed",
    "the",
    "module",
    "tests",
    "passed",
    "failed",
    "retry",
    "OAuth",
    "deferred",
    "sprint",
    "#5",
    "#12",
    "3.5",
    "src/main.rs",
    "quality",
    "score",
    "0.87",
];

fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(WORDS), 2..12),
        prop::sample::select(&[".", "!", "?"][..]),
    )
        .prop_map(|(w, end)| format!("{}{end}", w.join(" ")))
}

fn items() -> impl Strategy<Value = Vec<SourceItem>> {
    prop::collection::vec(
        (
            prop::collection::vec(sentence(), 1..5),
            prop::bool::weighted(0.15),
            0.0f64..1.0,
        ),
        0..40,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (s, pinned, importance))| SourceItem {
                sources: vec![format!("o{}", i + 1)],
                order: i as i64,
                text: s.join(" "),
                pinned,
                importance,
            })
            .collect()
    })
}

fn counter() -> OpenAiBpe {
    OpenAiBpe::new(Encoding::Cl100kBase)
}

fn pinned_tokens(items: &[SourceItem], c: &dyn TokenCounter) -> u64 {
    let pinned: Vec<SourceItem> = items.iter().filter(|i| i.pinned).cloned().collect();
    if pinned.is_empty() {
        0
    } else {
        verbatim_tokens(&pinned, c)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn output_fits_and_traces_to_inputs(items in items(), target in 0u64..1_500) {
        let c = counter();
        let pinned = pinned_tokens(&items, &c);
        match Extractive::default().summarize(&items, target, &c) {
            Ok(sum) => {
                prop_assert!(pinned <= target);
                prop_assert_eq!(sum.tokens, c.count(&sum.text) as u64);
                prop_assert!(sum.tokens <= target, "{} > {}", sum.tokens, target);
                // The seeds' ratio holds whenever the pinned items allow it.
                if pinned * 10 <= sum.input_tokens * 7 {
                    prop_assert!(sum.tokens * 10 <= sum.input_tokens * 7 || sum.tokens == 0);
                }
                // Every pinned item appears verbatim.
                for i in items.iter().filter(|i| i.pinned) {
                    prop_assert!(sum.lines.iter().any(|l| l.text == i.text && l.sources == i.sources));
                }
                // Every line is made of sentences of the items it names,
                // and lines are in chronological order.
                let mut last = i64::MIN;
                for l in &sum.lines {
                    prop_assert!(l.order >= last);
                    last = l.order;
                    let src: Vec<&SourceItem> = items.iter().filter(|i| i.sources == l.sources).collect();
                    prop_assert_eq!(src.len(), 1);
                    let sentences = split(&src[0].text);
                    for s in split(&l.text) {
                        prop_assert!(sentences.contains(&s), "`{}` is not in {:?}", s, sentences);
                    }
                }
                // The rendered text reads back as the same lines.
                let back = parse(&sum.text);
                prop_assert_eq!(back.len(), sum.lines.len());
                // The audit accounts for every item exactly once.
                let a = &sum.audit;
                prop_assert_eq!(a.kept_verbatim.len() + a.summarized.len() + a.dropped.len(), items.len());
            }
            Err(CompressError::PinnedExceedTarget { pinned_tokens, .. }) => {
                prop_assert!(pinned_tokens > target);
                prop_assert_eq!(pinned_tokens, pinned);
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn compress_within_never_exceeds_and_names_what_it_left_out(items in items(), target in 0u64..400) {
        let c = counter();
        let sum = compress_within(&Extractive::default(), &items, target, &c).unwrap();
        prop_assert!(sum.tokens <= target);
        prop_assert_eq!(sum.tokens, c.count(&sum.text) as u64);
        let pinned = items.iter().filter(|i| i.pinned).count();
        let shown = sum.lines.iter().filter(|l| l.pinned).count();
        prop_assert_eq!(shown + sum.audit.pinned_deferred.len(), pinned);
    }

    #[test]
    fn same_input_same_summary(items in items(), target in 50u64..600) {
        let c = counter();
        let a = Extractive::default().summarize(&items, target, &c);
        let b = Extractive::default().summarize(&items, target, &c);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn hierarchy_halves_each_level() {
    let c = counter();
    let items: Vec<SourceItem> = (0..60)
        .map(|i| SourceItem {
            sources: vec![format!("o{i}")],
            order: i,
            text: format!(
                "Ran task #{i} on the auth module. The tests took {i}.5 seconds and passed. Quality score was 0.{i}."
            ),
            pinned: i % 20 == 0,
            importance: 0.5,
        })
        .collect();
    let levels = hierarchical(&Extractive::default(), &items, 3, &c).unwrap();
    assert_eq!(levels.len(), 3);
    let input = verbatim_tokens(&items, &c);
    assert!(levels[0].tokens <= input / 2);
    assert!(levels[1].tokens <= levels[0].tokens / 2);
    assert!(levels[2].tokens <= levels[1].tokens / 2);
    for l in &levels {
        for p in items.iter().filter(|i| i.pinned) {
            assert!(
                l.text.contains(&p.text),
                "level lost pinned item {}",
                p.sources[0]
            );
        }
    }
}

#[test]
fn near_duplicates_are_removed() {
    let c = counter();
    let items: Vec<SourceItem> = (0..10)
        .map(|i| SourceItem {
            sources: vec![format!("o{i}")],
            order: i,
            text: "Validated the login flow and all tests passed.".into(),
            pinned: false,
            importance: 0.5,
        })
        .collect();
    let sum = Extractive::default().summarize(&items, 1_000, &c).unwrap();
    assert_eq!(sum.lines.len(), 1);
    assert_eq!(sum.audit.duplicates_removed, 9);
    assert_eq!(sum.audit.dropped.len(), 9);
}
