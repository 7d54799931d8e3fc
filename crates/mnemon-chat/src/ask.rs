//! Questions about memory, told apart from commands: "what did we just
//! do?", "what's the status of epic 5?", "what's next?".

use super::command::Question;
use super::grammar::{Verb, find, starts, verb_at, whole_target};
use super::words::{Tok, text};

pub(super) fn question_of(t: &[Tok], asked: bool) -> Option<Question> {
    // "change the status of story 7 to blocked" is a command.
    if matches!(
        verb_at(t),
        Some((Verb::Update | Verb::Rename | Verb::Mark, _))
    ) {
        return None;
    }
    let low: Vec<&str> = t.iter().map(|x| x.low.as_str()).collect();
    let has = |w: &str| low.contains(&w);
    let did_we = [
        "what did we",
        "what have we",
        "what did i",
        "what have i",
        "what did you",
        "what have you",
        "what was done",
        "what got done",
    ]
    .iter()
    .any(|p| starts(t, &p.split(' ').collect::<Vec<_>>()));
    let recap = starts(t, &["recap"]) || starts(t, &["summarize"]) || starts(t, &["summary"]);
    if did_we && (has("decide") || has("decided") || has("agree") || has("agreed")) {
        return Some(Question::Decided {
            topic: topic_after(t, &["about", "on", "for", "regarding"]),
        });
    }
    if did_we
        || recap
        || starts(t, &["what", "just", "happened"])
        || starts(t, &["what", "was", "the", "last", "thing"])
    {
        if has("today") {
            return Some(Question::Day { offset: 0 });
        }
        if has("yesterday") {
            return Some(Question::Day { offset: -1 });
        }
        if has("session") || (has("so") && has("far")) {
            return Some(Question::Session);
        }
        if did_we || recap || has("just") || has("last") {
            return Some(Question::JustDid);
        }
    }
    if starts(t, &["what", "was", "decided"])
        || starts(t, &["why", "did", "we"])
        || (starts(t, &["decisions"]) && t.len() > 1)
        || starts(t, &["what", "is", "our", "decision"])
    {
        return Some(Question::Decided {
            topic: topic_after(
                t,
                &[
                    "about",
                    "on",
                    "for",
                    "regarding",
                    "choose",
                    "pick",
                    "use",
                    "go",
                    "with",
                ],
            ),
        });
    }
    // Status of something.
    if let Some(i) = find(t, &["status", "of"])
        .or_else(|| find(t, &["progress", "on"]))
        .or_else(|| find(t, &["progress", "of"]))
    {
        let rest = &t[i + 2..];
        return Some(Question::Status {
            target: whole_target(rest),
        });
    }
    for p in [
        &["how", "is"][..],
        &["how", "are"],
        &["where", "are", "we", "on"],
        &["where", "do", "we", "stand", "on"],
    ] {
        if starts(t, p) {
            let mut rest = &t[p.len()..];
            for tail in [
                &["going"][..],
                &["doing"],
                &["coming", "along"],
                &["looking"],
            ] {
                if rest.len() > tail.len()
                    && rest[rest.len() - tail.len()..]
                        .iter()
                        .zip(tail)
                        .all(|(a, b)| a.is(b))
                {
                    rest = &rest[..rest.len() - tail.len()];
                }
            }
            if let Some(target) = whole_target(rest) {
                return Some(Question::Status {
                    target: Some(target),
                });
            }
        }
    }
    if (starts(t, &["status"])
        || starts(t, &["project", "status"])
        || starts(t, &["overall", "status"]))
        && t.len() <= 2
    {
        return Some(Question::Status { target: None });
    }
    if starts(t, &["status"]) {
        return Some(Question::Status {
            target: whole_target(&t[1..]),
        });
    }
    if let Some(last) = t.last()
        && last.is("status")
        && let Some(target) = whole_target(&t[..t.len() - 1])
    {
        return Some(Question::Status {
            target: Some(target),
        });
    }
    let next = [
        &["what", "is", "next"][..],
        &["what", "next"],
        &["what", "now"],
        &["next", "steps"],
        &["next", "up"],
        &["whats", "next"],
        &["what", "should", "we", "do"],
        &["what", "should", "i", "do"],
        &["what", "should", "we", "work", "on"],
        &["what", "should", "i", "work", "on"],
        &["what", "to", "do", "next"],
        &["what", "do", "we", "do", "next"],
        &["what", "is", "left"],
        &["what", "remains"],
    ];
    if next.iter().any(|p| starts(t, p)) || (t.len() == 1 && t[0].is("next") && asked) {
        return Some(Question::Next);
    }
    let blocked = [
        &["what", "is", "blocked"][..],
        &["what", "are", "the", "blockers"],
        &["what", "is", "blocking"],
        &["is", "anything", "blocked"],
        &["anything", "blocked"],
        &["any", "blockers"],
        &["blockers"],
        &["what", "is", "stuck"],
        &["whats", "blocked"],
    ];
    if blocked.iter().any(|p| starts(t, p)) {
        return Some(Question::Blocked);
    }
    None
}

/// The words after the first of `preps`, as the topic of a question.
fn topic_after(t: &[Tok], preps: &[&str]) -> String {
    let i = t
        .iter()
        .position(|x| x.is_any(preps))
        .map_or(t.len(), |i| i + 1);
    let rest: Vec<Tok> = t[i..]
        .iter()
        .filter(|x| !x.is_any(&["the", "a", "an"]))
        .cloned()
        .collect();
    text(&rest)
}
