//! What the engine sends for a question.

use super::*;

/// A question about time gets the matching turns under the day they were
/// said, one heading per day, and no date on the lines themselves.
#[test]
fn a_question_about_time_shows_turns_under_their_day() {
    use mnemon_core::assemble::{BudgetPlan, Format};
    use mnemon_core::engine::ContextRequest;
    use mnemon_core::importance::Role;
    use mnemon_core::memory::NewMessage;
    use mnemon_core::tokens::ChatFormat;
    let day = 86_400_000;
    let clock = Arc::new(ManualClock(AtomicI64::new(T0.0)));
    let e = engine(
        SqliteStore::in_memory().unwrap(),
        1_000_000,
        clock.clone(),
        "a",
    );
    for (at, text) in [
        (0, "Nate: I won my first tournament in Tampa!"),
        (60_000, "Joanna: Congrats on the tournament, Nate!"),
        (3 * day, "Nate: The second tournament went well too."),
        (5 * day, "Joanna: My screenplay got rejected again."),
    ] {
        clock.0.store(T0.0 + at, Ordering::SeqCst);
        e.message(NewMessage {
            role: Role::User,
            content: text.into(),
            agent: None,
            tokens: None,
        })
        .unwrap();
    }
    let ask = |query: &str| {
        e.context(&ContextRequest {
            plan: BudgetPlan::preset("qa").unwrap(),
            budget: Some(2_000),
            query: Some(query.into()),
            format: Format::Markdown,
            chat: ChatFormat::OPENAI,
            messages_before: None,
        })
        .unwrap()
    };
    let out = ask("When did Nate win a tournament?");
    // T0 is 2025-01-15 at 14:30 UTC.
    let first = "### 2025-01-15";
    let third = "### 2025-01-18";
    assert_eq!(out.text.matches(first).count(), 1, "{}", out.text);
    assert_eq!(out.text.matches(third).count(), 1, "{}", out.text);
    let at = |s: &str| out.text.find(s).unwrap();
    // Each turn under its own day, whichever day leads.
    assert!(at(first) < at("I won my first tournament"), "{}", out.text);
    assert!(at(first) < at("Congrats on the tournament"), "{}", out.text);
    assert!(at(third) < at("second tournament"), "{}", out.text);
    let (a, b) = (
        at("I won my first tournament"),
        at("Congrats on the tournament"),
    );
    let (c, d) = (at(first), at(third));
    assert!(
        (c < a && c < b && a < d && b < d) || (d < c && c < a && c < b),
        "a day's turns sit together under its heading: {}",
        out.text
    );
    let fragments = out
        .sections
        .iter()
        .find(|s| s.kind == mnemon_core::assemble::SectionKind::Fragments)
        .unwrap();
    assert!(fragments.items.iter().all(|i| !i.text.contains("2025-")));
    assert!(fragments.items.iter().all(|i| i.group.is_some()));
    // A question not about time has no day headings.
    let out = ask("Which tournament did Nate win in Tampa?");
    assert!(!out.text.contains("### 2025"), "{}", out.text);
}
