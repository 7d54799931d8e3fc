//! The rule-based command parser: no LLM, the same answer every time.
//!
//! It reads the way people type to a project tool: polite openers
//! ("please", "can you", "let's"), verbs with their synonyms, counts in
//! words or digits, lists of titles ("login, signup, and MFA"), references
//! (`#12`, `epic 5`, `it`, `the first story`), priorities (`p1`, `high
//! priority`) and statuses (`done`, `in progress`). A line it cannot read
//! whole is refused with the closest supported forms, never half-run.

use crate::memory::{EntityKind, EntityStatus};

use super::command::{
    Command, CommandParser, Field, Parsed, Question, StatusFilter, Target, Which,
};
use super::words::{
    Tok, TokKind, count_at, kind_word, ordinal, priority_at, status_at, text, tokenize,
};

/// The supported forms, shown by `/help` and offered when a line is not
/// understood.
pub const FORMS: &[&str] = &[
    "create an epic for user authentication",
    "add 3 stories to it: login, signup, and MFA",
    "add a task to story 7: write the login form",
    "create a high priority task under epic 5 called rate limiting",
    "list epics",
    "list open tasks in epic 5",
    "show epic 5",
    "show #12",
    "start task 15",
    "complete the first story",
    "mark it as done",
    "block task 15",
    "reopen story 6",
    "rename epic 5 to Accounts",
    "set the priority of task 15 to 1",
    "delete the last task",
    "what did we just do?",
    "what did we do today?",
    "what did we do this session?",
    "what's the status of epic 5?",
    "what's next?",
    "what's blocked?",
    "what did we decide about caching?",
];

/// Words that open a request without changing it.
const OPENERS: &[&[&str]] = &[
    &["please"],
    &["ok"],
    &["okay"],
    &["so"],
    &["now"],
    &["then"],
    &["and"],
    &["also"],
    &["hey"],
    &["just"],
    &["next"],
    &["alright"],
    &["great"],
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
    &["can", "we"],
    &["could", "we"],
    &["let", "us"],
    &["i", "want", "to"],
    &["we", "want", "to"],
    &["i", "would", "like", "to"],
    &["we", "should"],
    &["i", "need", "to"],
    &["we", "need", "to"],
    &["go", "ahead", "and"],
    &["time", "to"],
];

const CLOSERS: &[&[&str]] = &[
    &["please"],
    &["thanks"],
    &["thank", "you"],
    &["for", "me"],
    &["now"],
    &["as", "well"],
    &["too"],
];

/// The rule-based parser.
#[derive(Debug, Default, Clone, Copy)]
pub struct RuleParser;

impl CommandParser for RuleParser {
    fn name(&self) -> &str {
        "rules"
    }

    fn parse(&self, line: &str) -> Parsed {
        let (mut toks, question) = tokenize(line);
        trim_fillers(&mut toks);
        if toks.is_empty() {
            return unknown(line);
        }
        if let Some(q) = question_of(&toks, question) {
            return Parsed::Command(Command::Ask(q));
        }
        match command_of(&toks) {
            Some(Ok(c)) => Parsed::Command(c),
            Some(Err(msg)) => Parsed::Incomplete(msg),
            None => unknown(line),
        }
    }
}

fn starts(t: &[Tok], phrase: &[&str]) -> bool {
    t.len() >= phrase.len() && t.iter().zip(phrase).all(|(a, b)| a.is(b))
}

fn trim_fillers(t: &mut Vec<Tok>) {
    loop {
        let before = t.len();
        for o in OPENERS {
            if starts(t, o) && t.len() > o.len() {
                t.drain(..o.len());
            }
        }
        while t.first().is_some_and(|x| x.punct(',')) {
            t.remove(0);
        }
        for c in CLOSERS {
            if t.len() > c.len() && t[t.len() - c.len()..].iter().zip(*c).all(|(a, b)| a.is(b)) {
                t.truncate(t.len() - c.len());
            }
        }
        while t.last().is_some_and(|x| x.punct(',')) {
            t.pop();
        }
        if t.len() == before {
            return;
        }
    }
}

/// The first position where `phrase` occurs.
fn find(t: &[Tok], phrase: &[&str]) -> Option<usize> {
    (0..t.len()).find(|&i| starts(&t[i..], phrase))
}

fn unknown(line: &str) -> Parsed {
    Parsed::Unknown {
        closest: closest(line, 3),
    }
}

/// The supported forms nearest to `line`: those sharing its first word
/// first, then by edit distance.
pub fn closest(line: &str, n: usize) -> Vec<&'static str> {
    let low = line.trim().to_lowercase();
    let first = low.split_whitespace().next().unwrap_or("");
    let mut scored: Vec<(f64, &'static str)> = FORMS
        .iter()
        .map(|f| {
            let same = f.split_whitespace().next() == Some(first);
            let words: Vec<&str> = low.split_whitespace().collect();
            let shared = words
                .iter()
                .filter(|w| w.len() > 2 && f.contains(*w))
                .count();
            let score = strsim::normalized_levenshtein(&low, f)
                + if same { 1.0 } else { 0.0 }
                + 0.25 * shared as f64;
            (score, *f)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(n).map(|x| x.1).collect()
}

// ---------------------------------------------------------------- questions

fn question_of(t: &[Tok], asked: bool) -> Option<Question> {
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
fn whole_target(t: &[Tok]) -> Option<Target> {
    let (target, n) = target_at(t)?;
    (n == t.len()).then_some(target)
}

// ---------------------------------------------------------------- commands

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
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
fn verb_at(t: &[Tok]) -> Option<(Verb, usize)> {
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

fn command_of(t: &[Tok]) -> Option<Result<Command, String>> {
    // "task 15 is done", "it is blocked", "the first story is complete".
    if let Some((target, n)) = target_at(t)
        && t.get(n)
            .is_some_and(|x| x.is_any(&["is", "are", "was", "has", "have"]))
    {
        let mut i = n + 1;
        if t.get(i).is_some_and(|x| x.is_any(&["been", "now", "all"])) {
            i += 1;
        }
        if let Some((StatusFilter::Is(status), m)) = status_at(&t[i..])
            && i + m == t.len()
        {
            return Some(Ok(Command::SetStatus { target, status }));
        }
    }
    // "what tasks are in epic 5?", "what epics do we have?"
    if t[0].is("what") && t.get(1).and_then(kind_word).is_some() {
        return list(&t[1..]).map(Ok);
    }
    let (verb, n) = verb_at(t)?;
    let rest = &t[n..];
    match verb {
        // "make task 15 high priority": nothing is created by number.
        Verb::Create
            if matches!(
                target_at(rest),
                Some((Target::Number { kind: Some(_), .. }, _))
            ) || rest
                .first()
                .is_some_and(|x| matches!(x.kind, TokKind::Hash(_))) =>
        {
            update(rest, false, &t[0])
        }
        Verb::Create => create(rest),
        Verb::List => list(rest).map(Ok),
        Verb::Show => show(rest),
        Verb::Update | Verb::Rename => update(rest, verb == Verb::Rename, &t[0]),
        Verb::Delete => Some(
            single_target(rest)
                .map(|target| Command::Delete { target })
                .ok_or_else(|| "delete what? Name it, e.g. `delete task 15` or `delete it`".into()),
        ),
        Verb::Status(status) => status_change(rest, status),
        Verb::Mark => mark(rest),
    }
}

/// `rest` is exactly one reference, perhaps with "the whole" or trailing
/// filler words.
fn single_target(rest: &[Tok]) -> Option<Target> {
    let rest = strip_tail(
        rest,
        &[&["as", "well"], &["too"], &["completely"], &["entirely"]],
    );
    whole_target(rest)
}

fn strip_tail<'a>(t: &'a [Tok], tails: &[&[&str]]) -> &'a [Tok] {
    for tail in tails {
        if t.len() > tail.len()
            && t[t.len() - tail.len()..]
                .iter()
                .zip(*tail)
                .all(|(a, b)| a.is(b))
        {
            return &t[..t.len() - tail.len()];
        }
    }
    t
}

fn status_change(rest: &[Tok], status: EntityStatus) -> Option<Result<Command, String>> {
    // "start a task ..." is creation, caught by the verb table; here the
    // rest must name what changes. A reason after the target is allowed
    // for blocks ("block task 15 until the API is ready").
    if rest.is_empty() {
        return Some(Err(format!(
            "{} what? Name it, e.g. `{} task 15` or `{} it`",
            status_word(status),
            status_word(status),
            status_word(status)
        )));
    }
    let (target, n) = target_at(rest)?;
    let tail = &rest[n..];
    let tail = strip_tail(tail, &[&["as", "well"], &["too"]]);
    let reason = tail.first().is_some_and(|x| {
        x.is_any(&["because", "since", "until", "waiting", "on", "due", "-"]) || x.punct(':')
    });
    if tail.is_empty() || (status == EntityStatus::Blocked && reason) {
        return Some(Ok(Command::SetStatus { target, status }));
    }
    None
}

fn status_word(s: EntityStatus) -> &'static str {
    match s {
        EntityStatus::InProgress => "start",
        EntityStatus::Completed => "complete",
        EntityStatus::Blocked => "block",
        EntityStatus::Pending => "reset",
    }
}

/// "mark it as done", "flag task 15 as blocked", "mark #12 complete".
fn mark(rest: &[Tok]) -> Option<Result<Command, String>> {
    let (target, n) = target_at(rest)?;
    let mut i = n;
    if rest.get(i).is_some_and(|x| x.is_any(&["as", "to"])) {
        i += 1;
    }
    match status_at(&rest[i..]) {
        Some((StatusFilter::Is(status), m)) if i + m == rest.len() => {
            Some(Ok(Command::SetStatus { target, status }))
        }
        _ => Some(Err(
            "mark it as what? Use done, in progress, blocked or pending, e.g. `mark task 15 as done`"
                .into(),
        )),
    }
}

fn show(rest: &[Tok]) -> Option<Result<Command, String>> {
    let rest = if rest.first().is_some_and(|x| x.is("me")) {
        &rest[1..]
    } else {
        rest
    };
    if let Some(target) = single_target(rest) {
        return Some(Ok(Command::Show { target }));
    }
    // "show blocked tasks", "show the stories in epic 5".
    list(rest).map(Ok)
}

fn list(rest: &[Tok]) -> Option<Command> {
    let mut i = 0;
    let mut status = None;
    let mut kind = None;
    let mut saw_kind = false;
    while i < rest.len() {
        let t = &rest[i];
        if t.is_any(&[
            "all",
            "the",
            "our",
            "my",
            "every",
            "of",
            "current",
            "existing",
            "are",
            "is",
            "there",
            "do",
            "we",
            "have",
            "that",
            "which",
            "got",
            "exist",
            "so",
            "far",
            "currently",
        ]) {
            i += 1;
            continue;
        }
        if !saw_kind && t.is_any(&["everything", "items", "work", "entities", "things"]) {
            saw_kind = true;
            i += 1;
            continue;
        }
        if !saw_kind && let Some((k, _)) = kind_word(t) {
            kind = Some(k);
            saw_kind = true;
            i += 1;
            continue;
        }
        if let Some((s, m)) = status_at(&rest[i..]) {
            status = Some(s);
            i += m;
            continue;
        }
        if saw_kind
            && t.is_any(&[
                "in", "under", "of", "for", "from", "inside", "within", "below",
            ])
        {
            let (parent, m) = target_at(&rest[i + 1..])?;
            let after = &rest[i + 1 + m..];
            let (s2, used) = match status_at(after) {
                Some((s, u)) => (Some(s), u),
                None if after.iter().all(|x| x.is_any(&["are", "is", "there"])) => {
                    (None, after.len())
                }
                None => return None,
            };
            if used != after.len() {
                return None;
            }
            return Some(Command::List {
                kind,
                status: s2.or(status),
                parent: Some(parent),
            });
        }
        return None;
    }
    saw_kind.then_some(Command::List {
        kind,
        status,
        parent: None,
    })
}

/// Creation: `VERB [count] [new] [priority] KIND [title] [to|under|in|for
/// TARGET] [priority] [: titles]`.
fn create(rest: &[Tok]) -> Option<Result<Command, String>> {
    let mut i = 0;
    let mut count = None;
    let mut priority = None;
    loop {
        let Some(t) = rest.get(i) else { return None };
        if t.is_any(&[
            "another",
            "new",
            "more",
            "additional",
            "extra",
            "the",
            "some",
            "brand",
        ]) {
            i += 1;
            continue;
        }
        if count.is_none()
            && let Some((n, m)) = count_at(&rest[i..])
        {
            count = Some(n);
            i += m;
            continue;
        }
        if priority.is_none()
            && let Some((p, m)) = priority_at(&rest[i..])
        {
            priority = Some(p);
            i += m;
            continue;
        }
        break;
    }
    let (kind, plural) = kind_word(rest.get(i)?)?;
    let tail = &rest[i + 1..];
    let (head, titles_tail) = match tail.iter().position(|x| x.punct(':')) {
        Some(c) => (&tail[..c], Some(&tail[c + 1..])),
        None => (tail, None),
    };
    let mut head: Vec<Tok> = head.to_vec();
    // Priority anywhere in the head: "with priority 1", "(p2)".
    let mut j = 0;
    while j < head.len() {
        if let Some((p, m)) = priority_at(&head[j..]) {
            priority = Some(p);
            let mut from = j;
            if from > 0 && head[from - 1].is_any(&["with", "at", "as"]) {
                from -= 1;
            }
            let mut to = j + m;
            if from > 0 && head[from - 1].punct('(') && head.get(to).is_some_and(|x| x.punct(')')) {
                from -= 1;
                to += 1;
            }
            head.drain(from..to);
            continue;
        }
        j += 1;
    }
    // The parent: a preposition followed by a reference that ends there.
    let mut parent = None;
    let preps = [
        "to", "under", "in", "into", "for", "on", "within", "inside", "below", "beneath",
    ];
    let mut j = 0;
    while j < head.len() {
        if head[j].is_any(&preps)
            && let Some((target, m)) = target_at(&head[j + 1..])
        {
            let end = j + 1 + m;
            let boundary = head.get(end).is_none_or(|x| {
                x.punct(',')
                    || x.punct(';')
                    || x.is_any(&["called", "named", "titled", "with", "and", "that"])
            });
            // A bare number is a parent only after a kind was implied:
            // "add a task to 5" reads oddly, so ask instead.
            let bare = matches!(target, Target::Number { kind: None, .. })
                && head[j + 1].kind == TokKind::Num(target_number(&target));
            if boundary && !bare {
                parent = Some(target);
                head.drain(j..end);
                continue;
            }
        }
        j += 1;
    }
    // The rest of the head names it, unless titles follow a colon.
    let mut words: &[Tok] = &head;
    while words.first().is_some_and(|x| {
        x.is_any(&[
            "called", "named", "titled", "for", "about", "to", "that", "which", "-", "=", "with",
            "title", "name",
        ]) || x.punct(',')
    }) {
        words = &words[1..];
    }
    let many = plural || count.is_some_and(|c| c > 1);
    let titles: Vec<String> = match titles_tail {
        Some(tail) if many => split_titles(tail),
        Some(tail) => vec![clean_title(tail)]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect(),
        None if words.is_empty() => Vec::new(),
        None if many => split_titles(words),
        None => vec![clean_title(words)],
    };
    let titles: Vec<String> = titles.into_iter().filter(|s| !s.is_empty()).collect();
    let noun = |n: u64| {
        if n == 1 {
            kind.name().to_string()
        } else {
            plural_of(kind)
        }
    };
    if titles.is_empty() {
        let n = count.unwrap_or(1);
        return Some(Err(format!(
            "what should the {} be called? Give {}, e.g. `add {n} {} to epic 5: login, signup, MFA`",
            noun(n),
            if n == 1 {
                "a title".to_string()
            } else {
                format!("{n} titles after a colon")
            },
            noun(n),
        )));
    }
    if let Some(c) = count
        && c != titles.len() as u64
    {
        return Some(Err(format!(
            "you asked for {c} {} but named {}: {}. Give one title per {}, separated by commas",
            noun(c),
            titles.len(),
            titles
                .iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(", "),
            kind.name()
        )));
    }
    Some(Ok(Command::Create {
        kind,
        titles,
        parent,
        priority,
    }))
}

fn target_number(t: &Target) -> u64 {
    match t {
        Target::Number { number, .. } => *number,
        _ => 0,
    }
}

fn plural_of(k: EntityKind) -> String {
    match k {
        EntityKind::Story => "stories".into(),
        k => format!("{}s", k.name()),
    }
}

fn clean_title(t: &[Tok]) -> String {
    text(t)
        .trim_matches(|c: char| c == ',' || c == ';' || c == '.' || c.is_whitespace())
        .to_string()
}

/// "login, signup, and MFA" → three titles; "a and b" → two.
fn split_titles(t: &[Tok]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Vec<Tok> = Vec::new();
    for tok in t {
        if tok.punct(',') || tok.punct(';') || tok.is_any(&["and", "&", "plus"]) {
            if !cur.is_empty() {
                out.push(clean_title(&cur));
                cur.clear();
            }
            continue;
        }
        cur.push(tok.clone());
    }
    if !cur.is_empty() {
        out.push(clean_title(&cur));
    }
    out
}

/// Updates: `rename TARGET to X`, `set the priority of TARGET to 1`,
/// `change TARGET's title to X`, `make TARGET high priority`,
/// `set TARGET to done`, `update the description of TARGET: X`.
fn update(rest: &[Tok], rename: bool, verb: &Tok) -> Option<Result<Command, String>> {
    let rest =
        if rest.first().is_some_and(|x| x.is("the")) && rest.get(1).is_some_and(|x| is_field(x)) {
            &rest[1..]
        } else {
            rest
        };
    // `FIELD of TARGET to VALUE`
    if let Some(field) = rest.first().filter(|x| is_field(x))
        && rest.get(1).is_some_and(|x| x.is_any(&["of", "for", "on"]))
    {
        let (target, n) = target_at(&rest[2..])?;
        let value = value_after(&rest[2 + n..]);
        return Some(field_command(target, &field.low, value));
    }
    let (target, n) = target_at(rest)?;
    let after = &rest[n..];
    // `TARGET FIELD to VALUE`, `TARGET's FIELD: VALUE`
    if let Some(field) = after.first().filter(|x| is_field(x)) {
        return Some(field_command(target, &field.low, value_after(&after[1..])));
    }
    // `prioritize TARGET` alone means most urgent.
    if after.is_empty() && verb.is_any(&["prioritize", "bump"]) {
        return Some(Ok(Command::Update {
            target,
            field: Field::Priority(1),
        }));
    }
    let value = value_after(after);
    if value.is_empty() {
        return Some(Err(
            "change it to what? e.g. `rename epic 5 to Accounts` or `set the priority of task 15 to 1`"
                .into(),
        ));
    }
    if let Some((p, m)) = priority_at(value)
        && m == value.len()
    {
        return Some(Ok(Command::Update {
            target,
            field: Field::Priority(p),
        }));
    }
    if let Some((StatusFilter::Is(status), m)) = status_at(value)
        && m == value.len()
    {
        return Some(Ok(Command::SetStatus { target, status }));
    }
    if rename {
        return Some(Ok(Command::Update {
            target,
            field: Field::Title(clean_title(value)),
        }));
    }
    Some(Err(format!(
        "set it to \"{}\"? Say which field: `rename ... to {0}`, `set the priority of ... to 1`, or `mark ... as done`",
        clean_title(value)
    )))
}

fn is_field(t: &Tok) -> bool {
    t.is_any(&[
        "title",
        "name",
        "priority",
        "description",
        "status",
        "state",
        "details",
    ])
}

/// What follows `to`, `as`, `:` or `=`.
fn value_after(t: &[Tok]) -> &[Tok] {
    let mut t = t;
    while t
        .first()
        .is_some_and(|x| x.is_any(&["to", "as", "=", "be", "into"]) || x.punct(':'))
    {
        t = &t[1..];
    }
    t
}

fn field_command(target: Target, field: &str, value: &[Tok]) -> Result<Command, String> {
    if value.is_empty() {
        return Err(format!(
            "set the {field} to what? e.g. `set the {field} of task 15 to ...`"
        ));
    }
    match field {
        "title" | "name" => Ok(Command::Update {
            target,
            field: Field::Title(clean_title(value)),
        }),
        "description" | "details" => Ok(Command::Update {
            target,
            field: Field::Description(clean_title(value)),
        }),
        "priority" => match value.first().and_then(Tok::number) {
            Some(p) if value.len() == 1 && (1..=5).contains(&p) => Ok(Command::Update {
                target,
                field: Field::Priority(p as u8),
            }),
            _ => match priority_at(value).or_else(|| {
                let mut v = vec![Tok {
                    raw: "priority".into(),
                    low: "priority".into(),
                    kind: TokKind::Word,
                }];
                v.extend_from_slice(value);
                priority_at(&v).map(|(p, m)| (p, m - 1))
            }) {
                Some((p, m)) if m == value.len() && (1..=5).contains(&p) => Ok(Command::Update {
                    target,
                    field: Field::Priority(p),
                }),
                _ => Err(format!(
                    "`{}` is not a priority: use 1 (most urgent) to 5, or urgent, high, medium, low",
                    text(value)
                )),
            },
        },
        _ => match status_at(value) {
            Some((StatusFilter::Is(status), m)) if m == value.len() => {
                Ok(Command::SetStatus { target, status })
            }
            _ => Err(format!(
                "`{}` is not a status: use pending, in progress, blocked or done",
                text(value)
            )),
        },
    }
}
