//! The allocator never exceeds its budget, keeps required sections whole
//! and includes no item twice: properties over random offers and plans.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::collections::{BTreeMap, BTreeSet};

use mnemon_core::assemble::{
    AssembleError, Assembled, Assembler, BudgetPlan, Candidate, Format, PRESETS, SectionKind,
};
use mnemon_core::importance::Role;
use mnemon_core::tokens::{
    ChatFormat, CountCache, Encoding, Memo, OpenAiBpe, TokenCounter, count_chat,
};

const CHATML: ChatFormat = ChatFormat::CHATML;
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "epic",
    "story",
    "login",
    "MFA",
    "bcrypt",
    "deployed",
    "the",
    "module",
    "tests",
    "passed",
    "Task",
    "#12",
    "3.5",
    "日本語",
    "émigré",
    "\n",
    "  ",
    "🙂",
    "src/main.rs",
    "0.87",
];

const GROUPS: &[&str] = &["2024-03-15", "2024-03-16", "日本語 🙂"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..30).prop_map(|w| w.join(" "))
}

fn offers() -> impl Strategy<Value = BTreeMap<SectionKind, Vec<Candidate>>> {
    prop::collection::vec(
        (
            prop::sample::select(SectionKind::ALL.to_vec()),
            prop::collection::vec(
                (
                    text(),
                    0u8..40,
                    any::<bool>(),
                    proptest::option::of(text()),
                    proptest::option::of(prop::sample::select(GROUPS)),
                ),
                0..12,
            ),
        ),
        0..9,
    )
    .prop_map(|secs| {
        let mut out: BTreeMap<SectionKind, Vec<Candidate>> = BTreeMap::new();
        for (kind, items) in secs {
            let v = out.entry(kind).or_default();
            for (t, id, user, short, group) in items {
                let group = group.map(str::to_string);
                let role = Some(if user { Role::User } else { Role::Assistant });
                // Some offer a shorter form with the same id.
                let excerpt = short.map(|text| {
                    Box::new(Candidate {
                        id: format!("x{id}"),
                        provenance: vec![format!("x{id}")],
                        text,
                        score: 0.5,
                        order: id as i64,
                        role,
                        excerpt: None,
                        group: group.clone(),
                    })
                });
                v.push(Candidate {
                    // Ids repeat across sections on purpose.
                    id: format!("x{id}"),
                    provenance: Vec::new(),
                    text: t,
                    score: 0.5,
                    order: id as i64,
                    role,
                    excerpt,
                    // Some are shown under a heading shared with others.
                    group,
                });
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn never_over_budget_required_whole_no_duplicates(
        offers in offers(),
        preset in prop::sample::select(PRESETS.to_vec()),
        budget in 0u64..1_500,
        format in prop::sample::select(vec![Format::Markdown, Format::Json, Format::Messages]),
        encoding in prop::sample::select(Encoding::ALL.to_vec()),
        memo in any::<bool>(),
    ) {
        // Counts are checked against the plain tokenizer; assembly may count
        // through a memo (summing remembered line counts) or the tokenizer
        // itself (one count of the whole text).
        let counter = OpenAiBpe::new(encoding);
        let cache = CountCache::default();
        let memoized = Memo { inner: &counter, cache: &cache };
        let assembling: &dyn TokenCounter = if memo { &memoized } else { &counter };
        let plan = BudgetPlan::preset(preset).unwrap();
        let a = Assembler { counter: assembling, chat: CHATML, format };
        match a.assemble(&plan, budget, &offers) {
            Ok(out) => {
                prop_assert!(out.tokens <= budget, "{} > {budget}", out.tokens);
                let recount = match format {
                    Format::Messages => count_chat(&counter, CHATML, &out.messages) as u64,
                    _ => counter.count(&out.text) as u64,
                };
                prop_assert_eq!(out.tokens, recount);
                let mut seen = BTreeSet::new();
                for s in &out.sections {
                    for i in &s.items {
                        prop_assert!(seen.insert(i.id.clone()), "{} twice", i.id);
                    }
                }
                // Required sections are whole (their ids first come to them).
                for sp in plan.sections.iter().filter(|s| s.required) {
                    let offered: BTreeSet<&str> = offers
                        .get(&sp.kind)
                        .map(|v| v.iter().map(|c| c.id.as_str()).collect())
                        .unwrap_or_default();
                    for id in offered {
                        prop_assert!(seen.contains(id), "required {} lost {}", sp.kind.name(), id);
                    }
                }
                // Only sections the plan names appear.
                for s in &out.sections {
                    prop_assert!(plan.sections.iter().any(|p| p.kind == s.kind));
                }
            }
            Err(AssembleError::RequiredDoNotFit { need, budget: b, .. }) => {
                prop_assert_eq!(b, budget);
                prop_assert!(need > budget);
                // The budget the error names is enough, and the least that is.
                let out = a.assemble(&plan, need, &offers);
                prop_assert!(out.is_ok(), "{need} named but refused: {out:?}");
                prop_assert!(a.assemble(&plan, need - 1, &offers).is_err());
            }
        }
    }
}

#[test]
fn space_a_section_does_not_use_flows_to_the_others() {
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let plan = BudgetPlan::preset("tiers").unwrap();
    let working: Vec<Candidate> = (0..200)
        .map(|i| Candidate {
            id: format!("o{i}"),
            provenance: Vec::new(),
            text: format!(
                "- [14:{:02}] task_execution: ran step {i} of the migration",
                i % 60
            ),
            score: 0.5,
            order: 200 - i,
            role: None,
            excerpt: None,
            group: None,
        })
        .collect();
    let offers: BTreeMap<_, _> = [(SectionKind::WorkingMemory, working)]
        .into_iter()
        .collect();
    let a = Assembler {
        counter: &counter,
        chat: CHATML,
        format: Format::Markdown,
    };
    let out = a.assemble(&plan, 2_000, &offers).unwrap();
    // Working memory's share is 30 %, but nothing else is offered, so it
    // takes nearly all of the budget.
    assert!(out.tokens > 1_900 && out.tokens <= 2_000, "{}", out.tokens);
}

#[test]
fn required_sections_that_do_not_fit_say_what_they_need() {
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let plan = BudgetPlan::preset("conversation").unwrap();
    let hot = vec![Candidate {
        id: "hot".into(),
        provenance: Vec::new(),
        text: "## Active Goals\n- ".to_string() + &"ship the login flow ".repeat(40),
        score: 1.0,
        order: 0,
        role: None,
        excerpt: None,
        group: None,
    }];
    let offers: BTreeMap<_, _> = [(SectionKind::HotContext, hot)].into_iter().collect();
    let a = Assembler {
        counter: &counter,
        chat: CHATML,
        format: Format::Markdown,
    };
    let err = a.assemble(&plan, 50, &offers).unwrap_err();
    let AssembleError::RequiredDoNotFit {
        need,
        budget,
        sections,
    } = err;
    assert_eq!((budget, sections.as_str()), (50, "hot_context"));
    assert!(need > 150, "{need}");
    assert!(a.assemble(&plan, need, &offers).is_ok());
}

#[test]
fn a_fragment_too_long_to_fit_comes_in_as_its_best_sentences() {
    use mnemon_core::assemble::candidates::best_sentences;
    let long = "The team met on Monday. ".repeat(30)
        + "Alice chose PostgreSQL for the billing service. "
        + &"Lunch was late again. ".repeat(30);
    let terms = vec!["postgres".to_string(), "billing".to_string()];
    let e = best_sentences(&long, &terms, 2).unwrap();
    assert_eq!(e, "Alice chose PostgreSQL for the billing service.");
    assert_eq!(best_sentences("One sentence only.", &terms, 2), None);
    assert_eq!(
        best_sentences("No match here. None at all.", &terms, 2),
        None
    );

    let whole = Candidate {
        id: "o7".into(),
        provenance: Vec::new(),
        text: long.clone(),
        score: 1.0,
        order: 0,
        role: None,
        excerpt: Some(Box::new(Candidate {
            id: "o7".into(),
            provenance: vec!["o7".into()],
            text: e.clone(),
            score: 1.0,
            order: 0,
            role: None,
            excerpt: None,
            group: None,
        })),
        group: None,
    };
    let out = fragments_as_markdown(vec![whole.clone()], 120);
    assert!(out.tokens <= 120);
    assert!(
        out.text
            .contains("\nAlice chose PostgreSQL for the billing service.\n"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("Lunch"), "{}", out.text);
    assert_eq!(
        out.sections[0].items[0].id, "o7",
        "the excerpt names its record"
    );
    let out = fragments_as_markdown(vec![whole], 2_000);
    assert!(
        out.text.contains("Lunch was late again."),
        "the whole record when it fits"
    );
}

/// `items` offered as retrieved fragments, assembled as markdown with the
/// `qa` preset and cl100k.
fn fragments_as_markdown(items: Vec<Candidate>, budget: u64) -> Assembled {
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let offers: BTreeMap<_, _> = [(SectionKind::Fragments, items)].into_iter().collect();
    let a = Assembler {
        counter: &counter,
        chat: CHATML,
        format: Format::Markdown,
    };
    a.assemble(&BudgetPlan::preset("qa").unwrap(), budget, &offers)
        .unwrap()
}

#[test]
fn fragments_carry_no_label_and_a_record_of_several_lines_stands_between_blank_lines() {
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let item = |id: &str, order: i64, text: &str| Candidate {
        id: id.into(),
        provenance: Vec::new(),
        text: text.into(),
        score: 1.0 - order as f64 / 10.0,
        order,
        role: None,
        excerpt: None,
        group: None,
    };
    let out = fragments_as_markdown(
        vec![
            item("m1", 0, "Kevin: we land in Lisbon at nine"),
            item("o2", 1, "plan:\n1. book the hotel\n2. rent a car"),
            item("m3", 2, "Paola: bring the charger"),
            item("m4", 3, "Kevin: and the adapter"),
        ],
        2_000,
    );
    assert!(
        out.text.contains(
            "Kevin: we land in Lisbon at nine\n\nplan:\n1. book the hotel\n2. rent a car\n\nPaola: bring the charger\nKevin: and the adapter\n"
        ),
        "{}",
        out.text
    );
    assert!(!out.text.contains("[m1]"), "{}", out.text);
    assert_eq!(out.tokens, counter.count(&out.text) as u64);
    let ids: Vec<&str> = out.sections[0]
        .items
        .iter()
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(ids, ["m1", "o2", "m3", "m4"], "each line's record, by id");
}

#[test]
fn a_group_heading_is_written_once_and_its_items_follow_it() {
    let counter = OpenAiBpe::new(Encoding::Cl100kBase);
    let item = |id: &str, order: i64, day: &str| Candidate {
        id: id.into(),
        provenance: Vec::new(),
        text: format!("[{id}] Nate: the tournament in Tampa"),
        score: 1.0,
        order,
        role: None,
        excerpt: None,
        group: Some(day.into()),
    };
    // Days are shown in the order of their best item, m9's first.
    let offers: BTreeMap<_, _> = [(
        SectionKind::Fragments,
        vec![
            item("m9", 0, "2022-05-02"),
            item("m3", 1, "2022-05-01"),
            item("m10", 2, "2022-05-02"),
        ],
    )]
    .into_iter()
    .collect();
    let a = Assembler {
        counter: &counter,
        chat: CHATML,
        format: Format::Markdown,
    };
    let plan = BudgetPlan::preset("qa").unwrap();
    let out = a.assemble(&plan, 2_000, &offers).unwrap();
    assert_eq!(
        out.text.matches("### 2022-05-02\n").count(),
        1,
        "{}",
        out.text
    );
    let at = |s: &str| out.text.find(s).unwrap();
    assert!(at("### 2022-05-02") < at("[m9]") && at("[m9]") < at("[m10]"));
    assert!(at("[m10]") < at("### 2022-05-01"));
    assert!(at("### 2022-05-01") < at("[m3]"));
    assert_eq!(out.tokens, counter.count(&out.text) as u64);
    let items = &out.sections[0].items;
    assert_eq!(items[0].group.as_deref(), Some("2022-05-02"));

    // Headings are paid once per group: the least budget that holds all
    // three items is the exact text's, give or take the section heading's
    // blank line the estimate counts; a heading paid per item would need
    // two more headings (16 tokens).
    let usable = |b: u64| b - b * plan.reserve_ppm as u64 / 1_000_000;
    let least = (out.tokens..)
        .find(|b| {
            a.assemble(&plan, *b, &offers).unwrap().sections[0]
                .items
                .len()
                == 3
        })
        .unwrap();
    assert!(
        usable(least) <= out.tokens + 2,
        "{least} for {}",
        out.tokens
    );
}
