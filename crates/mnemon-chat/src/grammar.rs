//! The grammar's shared pieces: phrases at the start of a line, references
//! to entities (`#12`, `epic 5`, `it`, `the first story`) and the verbs of
//! commands. The parser, questions and edits all read lines with them.

use mnemon_core::memory::{EntityKind, EntityStatus};

use super::command::{Target, Which};
use super::words::{Tok, TokKind, kind_word, ordinal, text};

pub(super) fn starts(t: &[Tok], phrase: &[&str]) -> bool {
    t.len() >= phrase.len() && t.iter().zip(phrase).all(|(a, b)| a.is(b))
}

/// The first position where `phrase` occurs.
pub(super) fn find(t: &[Tok], phrase: &[&str]) -> Option<usize> {
    (0..t.len()).find(|&i| starts(&t[i..], phrase))
}

// -------------------------------------------------------------- references

/// A reference at the start of `t`, and the tokens it took.
pub(super) fn target_at(t: &[Tok]) -> Option<(Target, usize)> {
    let first = t.first()?;
    if let TokKind::Hash(n) = first.kind {
        return Some((
            Target::Number {
                number: n,
                kind: None,
            },
            1,
        ));
    }
    if let Some((kind, _)) = kind_word(first) {
        let mut i = 1;
        if t.get(i).is_some_and(|x| x.is_any(&["number", "no", "num"])) {
            i += 1;
        }
        if let Some(n) = t.get(i).and_then(Tok::number) {
            return Some((
                Target::Number {
                    number: n,
                    kind: Some(kind),
                },
                i + 1,
            ));
        }
        if let Some(q) = t.get(1).filter(|x| x.kind == TokKind::Quoted) {
            return Some((
                Target::Title {
                    kind: Some(kind),
                    text: q.raw.clone(),
                },
                2,
            ));
        }
        return None;
    }
    if first.kind == TokKind::Quoted {
        return Some((
            Target::Title {
                kind: None,
                text: first.raw.clone(),
            },
            1,
        ));
    }
    if first.is_any(&["it", "that", "this"]) {
        if let Some((kind, false)) = t.get(1).and_then(kind_word) {
            return Some((
                Target::Named {
                    kind,
                    which: Which::Only,
                },
                2,
            ));
        }
        let one = t.get(1).is_some_and(|x| x.is("one"));
        return Some((Target::Pronoun { plural: false }, 1 + usize::from(one)));
    }
    if first.is_any(&["them", "those", "these", "they"]) {
        if let Some((kind, true)) = t.get(1).and_then(kind_word) {
            return Some((
                Target::Named {
                    kind,
                    which: Which::Only,
                },
                2,
            ));
        }
        return Some((Target::Pronoun { plural: true }, 1));
    }
    if starts(t, &["all", "of", "them"]) || starts(t, &["all", "of", "those"]) {
        return Some((Target::Pronoun { plural: true }, 3));
    }
    if first.is("the") {
        if let Some((kind, _)) = t.get(1).and_then(kind_word) {
            // `the epic`, or `the epic "Payments"`.
            if let Some(q) = t.get(2).filter(|x| x.kind == TokKind::Quoted) {
                return Some((
                    Target::Title {
                        kind: Some(kind),
                        text: q.raw.clone(),
                    },
                    3,
                ));
            }
            return Some((
                Target::Named {
                    kind,
                    which: Which::Only,
                },
                2,
            ));
        }
        let (which, skip) = if starts(&t[1..], &["most", "recent"]) {
            (Some(Which::Last), 3)
        } else {
            (t.get(1).and_then(ordinal), 2)
        };
        if let Some(which) = which {
            let (kind, _) = t.get(skip).and_then(kind_word)?;
            if kind == EntityKind::Project {
                return None;
            }
            return Some((Target::Named { kind, which }, skip + 1));
        }
        // `the login story`: up to four words naming it by title.
        for len in 1..=4 {
            if let Some((kind, false)) = t.get(1 + len).and_then(kind_word)
                && t[1..1 + len].iter().all(|x| x.kind == TokKind::Word)
            {
                return Some((
                    Target::Title {
                        kind: Some(kind),
                        text: text(&t[1..1 + len]),
                    },
                    len + 2,
                ));
            }
        }
        return None;
    }
    if let TokKind::Num(n) = first.kind {
        return Some((
            Target::Number {
                number: n,
                kind: None,
            },
            1,
        ));
    }
    None
}

/// A reference that is the whole of `t`, allowing a trailing `?`-free
/// filler such as "please".
pub(super) fn whole_target(t: &[Tok]) -> Option<Target> {
    let (target, n) = target_at(t)?;
    (n == t.len()).then_some(target)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Create,
    List,
    Show,
    Update,
    Rename,
    Delete,
    Status(EntityStatus),
    Mark,
}

/// The verb at the start of `t` and the tokens it took.
pub(super) fn verb_at(t: &[Tok]) -> Option<(Verb, usize)> {
    use EntityStatus::*;
    let phrases: &[(&[&str], Verb)] = &[
        (&["set", "up"], Verb::Create),
        (&["we", "need"], Verb::Create),
        (&["i", "need"], Verb::Create),
        (&["start", "a", "new"], Verb::Create),
        (&["start", "new"], Verb::Create),
        (&["open", "a", "new"], Verb::Create),
        (&["get", "rid", "of"], Verb::Delete),
        (&["show", "me", "all"], Verb::List),
        (&["show", "all"], Verb::List),
        (&["view", "all"], Verb::List),
        (&["display", "all"], Verb::List),
        (&["give", "me", "all"], Verb::List),
        (&["what", "are", "the"], Verb::List),
        (&["what", "are"], Verb::List),
        (&["how", "many"], Verb::List),
        (&["show", "me"], Verb::Show),
        (&["tell", "me", "about"], Verb::Show),
        (&["details", "of"], Verb::Show),
        (&["details", "for"], Verb::Show),
        (&["details", "on"], Verb::Show),
        (&["info", "on"], Verb::Show),
        (&["start", "working", "on"], Verb::Status(InProgress)),
        (&["begin", "working", "on"], Verb::Status(InProgress)),
        (&["work", "on"], Verb::Status(InProgress)),
        (&["pick", "up"], Verb::Status(InProgress)),
        (&["kick", "off"], Verb::Status(InProgress)),
        (&["start", "on"], Verb::Status(InProgress)),
        (&["we", "started"], Verb::Status(InProgress)),
        (&["we", "finished"], Verb::Status(Completed)),
        (&["we", "completed"], Verb::Status(Completed)),
        (&["done", "with"], Verb::Status(Completed)),
        (&["wrap", "up"], Verb::Status(Completed)),
        (&["finished"], Verb::Status(Completed)),
        (&["we", "are", "blocked", "on"], Verb::Status(Blocked)),
        (&["blocked", "on"], Verb::Status(Blocked)),
    ];
    for (p, v) in phrases {
        if starts(t, p) {
            return Some((*v, p.len()));
        }
    }
    let w = t.first()?.low.as_str();
    let v = match w {
        "create" | "add" | "make" | "new" | "put" | "insert" | "plan" => Verb::Create,
        "list" | "ls" | "enumerate" | "which" => Verb::List,
        "show" | "display" | "view" | "describe" | "details" | "inspect" | "open" | "get" => {
            Verb::Show
        }
        "update" | "change" | "set" | "edit" | "modify" | "prioritize" | "reprioritize"
        | "bump" => Verb::Update,
        "rename" | "retitle" => Verb::Rename,
        "delete" | "remove" | "drop" | "discard" | "trash" | "scrap" | "cancel" | "erase" => {
            Verb::Delete
        }
        "start" | "begin" | "resume" => Verb::Status(InProgress),
        "complete" | "finish" | "close" | "resolve" | "done" => Verb::Status(Completed),
        "block" => Verb::Status(Blocked),
        "reopen" | "re-open" => Verb::Status(InProgress),
        "unblock" | "reset" => Verb::Status(Pending),
        "mark" | "flag" => Verb::Mark,
        _ => return None,
    };
    Some((v, 1))
}
