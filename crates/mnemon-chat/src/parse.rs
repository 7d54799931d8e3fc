//! The rule-based command parser: no LLM, the same answer every time.
//!
//! It reads the way people type to a project tool: polite openers
//! ("please", "can you", "let's"), verbs with their synonyms, counts in
//! words or digits, lists of titles ("login, signup, and MFA"), references
//! (`#12`, `epic 5`, `it`, `the first story`), priorities (`p1`, `high
//! priority`) and statuses (`done`, `in progress`). A line it cannot read
//! whole is refused with the closest supported forms, never half-run.

use mnemon_core::memory::EntityStatus;

use super::ask::question_of;
use super::command::{Command, CommandParser, Parsed, StatusFilter, Target};
use super::edit::{create, update};
use super::grammar::{Verb, starts, target_at, verb_at, whole_target};
use super::words::{Tok, TokKind, kind_word, status_at, tokenize};

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

pub(super) fn trim_fillers(t: &mut Vec<Tok>) {
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

fn unknown(line: &str) -> Parsed {
    Parsed::Unknown {
        closest: closest(line, 3),
    }
}

/// The supported forms nearest to `line`: those sharing its first word
/// first, then by edit distance.
pub fn closest(line: &str, n: usize) -> Vec<&'static str> {
    let low = line.trim().to_lowercase();
    // A known verb in any of its spellings points at its own forms:
    // "make coffee" is nearest to creating something.
    let (mut toks, _) = tokenize(line);
    trim_fillers(&mut toks);
    let canonical = verb_at(&toks).map(|(v, _)| match v {
        Verb::Create => "create",
        Verb::List => "list",
        Verb::Show => "show",
        Verb::Update => "set",
        Verb::Rename => "rename",
        Verb::Delete => "delete",
        Verb::Status(EntityStatus::InProgress) => "start",
        Verb::Status(EntityStatus::Completed) => "complete",
        Verb::Status(EntityStatus::Blocked) => "block",
        Verb::Status(EntityStatus::Pending) => "reopen",
        Verb::Mark => "mark",
    });
    let first = canonical.unwrap_or_else(|| low.split_whitespace().next().unwrap_or(""));
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

// ---------------------------------------------------------------- commands

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
