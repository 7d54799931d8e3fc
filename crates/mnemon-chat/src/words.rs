//! Words as the parser sees them: typed text split into tokens that keep
//! the original spelling (titles are stored as typed) beside a lowercase
//! form for matching, with contractions opened and quotes kept whole.

use mnemon_core::memory::{EntityKind, EntityStatus};

use super::command::StatusFilter;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TokKind {
    Word,
    Num(u64),
    /// `#12`
    Hash(u64),
    /// Text in quotes, kept as one title.
    Quoted,
    Punct(char),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tok {
    pub raw: String,
    pub low: String,
    pub kind: TokKind,
}

impl Tok {
    fn word(raw: &str) -> Tok {
        Tok {
            raw: raw.to_string(),
            low: raw.to_lowercase(),
            kind: TokKind::Word,
        }
    }

    pub fn is(&self, w: &str) -> bool {
        self.low == w
    }

    pub fn is_any(&self, ws: &[&str]) -> bool {
        ws.contains(&self.low.as_str())
    }

    pub fn punct(&self, c: char) -> bool {
        self.kind == TokKind::Punct(c)
    }

    pub fn number(&self) -> Option<u64> {
        match self.kind {
            TokKind::Num(n) | TokKind::Hash(n) => Some(n),
            _ => None,
        }
    }
}

/// `what's` → `what is`, `let's` → `let us`; possessive `'s` after other
/// words is dropped ("task 15's priority").
fn open_contraction(w: &str) -> Vec<Tok> {
    let low = w.to_lowercase();
    let pairs: &[(&str, &[&str])] = &[
        ("let's", &["let", "us"]),
        ("lets", &["let", "us"]),
        ("i'd", &["i", "would"]),
        ("we've", &["we", "have"]),
        ("i've", &["i", "have"]),
        ("what're", &["what", "are"]),
        ("we're", &["we", "are"]),
        ("don't", &["do", "not"]),
        ("isn't", &["is", "not"]),
        ("haven't", &["have", "not"]),
        ("didn't", &["did", "not"]),
    ];
    if let Some((_, parts)) = pairs.iter().find(|(c, _)| *c == low) {
        return parts.iter().map(|p| Tok::word(p)).collect();
    }
    if let Some(stem) = w.strip_suffix("'s") {
        let s = stem.to_lowercase();
        if [
            "what", "how", "where", "it", "that", "who", "there", "here", "which",
        ]
        .contains(&s.as_str())
        {
            return vec![Tok::word(stem), Tok::word("is")];
        }
        return vec![Tok::word(stem)];
    }
    vec![Tok::word(w)]
}

/// Splits a line into tokens. Returns the tokens and whether the line
/// ended with a question mark.
pub(super) fn tokenize(line: &str) -> (Vec<Tok>, bool) {
    let line = line
        .replace(['\u{2019}', '\u{2018}'], "'")
        .replace(['\u{201c}', '\u{201d}'], "\"");
    let question = line.trim_end().ends_with('?');
    let chars: Vec<char> = line.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let boundary = |c: char| c.is_whitespace() || ",:;()?!".contains(c);
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == '?' || c == '!' {
            i += 1;
            continue;
        }
        if ",:;()".contains(c) {
            toks.push(Tok {
                raw: c.to_string(),
                low: c.to_string(),
                kind: TokKind::Punct(c),
            });
            i += 1;
            continue;
        }
        let at_word_start = i == 0 || boundary(chars[i - 1]);
        if (c == '"' || (c == '\'' && at_word_start))
            && let Some(end) = chars[i + 1..].iter().position(|&x| x == c)
        {
            let inner: String = chars[i + 1..i + 1 + end].iter().collect();
            let inner = inner.trim().to_string();
            if !inner.is_empty() {
                toks.push(Tok {
                    low: inner.to_lowercase(),
                    raw: inner,
                    kind: TokKind::Quoted,
                });
            }
            i += end + 2;
            continue;
        }
        let start = i;
        while i < chars.len() && !boundary(chars[i]) {
            i += 1;
        }
        let mut w: String = chars[start..i].iter().collect();
        while w.ends_with(['.', '!', '?']) && w.len() > 1 {
            w.pop();
        }
        if w == "." || w.is_empty() {
            continue;
        }
        let digits = w.strip_prefix('#').unwrap_or(&w);
        let digits = digits.strip_suffix("'s").unwrap_or(digits);
        if !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit())
            && let Ok(n) = digits.parse::<u64>()
        {
            toks.push(Tok {
                raw: w.clone(),
                low: w.to_lowercase(),
                kind: if w.starts_with('#') {
                    TokKind::Hash(n)
                } else {
                    TokKind::Num(n)
                },
            });
            continue;
        }
        toks.extend(open_contraction(&w));
    }
    (toks, question)
}

/// `epic`, `stories`, `sub-task`: the kind and whether it was plural.
pub(super) fn kind_word(t: &Tok) -> Option<(EntityKind, bool)> {
    let w = t.low.as_str();
    let (k, plural) = match w {
        "epic" => (EntityKind::Epic, false),
        "epics" => (EntityKind::Epic, true),
        "story" | "user-story" => (EntityKind::Story, false),
        "stories" | "user-stories" => (EntityKind::Story, true),
        "task" | "subtask" | "sub-task" | "todo-item" => (EntityKind::Task, false),
        "tasks" | "subtasks" | "sub-tasks" => (EntityKind::Task, true),
        "milestone" => (EntityKind::Milestone, false),
        "milestones" => (EntityKind::Milestone, true),
        "project" => (EntityKind::Project, false),
        "projects" => (EntityKind::Project, true),
        _ => return None,
    };
    Some((k, plural))
}

/// `three`, `3`, `a couple of`: a count, and the tokens it took.
pub(super) fn count_at(t: &[Tok]) -> Option<(u64, usize)> {
    let first = t.first()?;
    if let TokKind::Num(n) = first.kind {
        return Some((n, 1));
    }
    if first.is("couple") || (first.is("a") && t.get(1).is_some_and(|x| x.is("couple"))) {
        let skip = if first.is("a") { 2 } else { 1 };
        let of = t.get(skip).is_some_and(|x| x.is("of"));
        return Some((2, skip + usize::from(of)));
    }
    let n = match first.low.as_str() {
        "a" | "an" | "one" | "single" => 1,
        "two" | "both" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        _ => return None,
    };
    Some((n, 1))
}

/// `first`, `2nd`, `last`: which of a group.
pub(super) fn ordinal(t: &Tok) -> Option<super::command::Which> {
    use super::command::Which;
    Some(match t.low.as_str() {
        "first" | "1st" => Which::First,
        "second" | "2nd" => Which::Nth(2),
        "third" | "3rd" => Which::Nth(3),
        "fourth" | "4th" => Which::Nth(4),
        "fifth" | "5th" => Which::Nth(5),
        "last" | "latest" | "newest" => Which::Last,
        _ => return None,
    })
}

/// A status as a person says it, and the tokens it took; `open` only
/// makes sense as a filter, so it comes back as [`StatusFilter::Open`].
pub(super) fn status_at(t: &[Tok]) -> Option<(StatusFilter, usize)> {
    let w = |i: usize| t.get(i).map_or("", |x| x.low.as_str());
    let is = |s| Some((StatusFilter::Is(s), 1));
    match w(0) {
        "done" | "complete" | "completed" | "finished" | "closed" | "resolved" => {
            is(EntityStatus::Completed)
        }
        "blocked" | "stuck" => is(EntityStatus::Blocked),
        "started" | "active" | "ongoing" | "wip" | "in-progress" | "in_progress" => {
            is(EntityStatus::InProgress)
        }
        "pending" | "todo" | "unstarted" => is(EntityStatus::Pending),
        "open" | "unfinished" | "remaining" | "outstanding" => Some((StatusFilter::Open, 1)),
        "in" if w(1) == "progress" => Some((StatusFilter::Is(EntityStatus::InProgress), 2)),
        "to" if w(1) == "do" => Some((StatusFilter::Is(EntityStatus::Pending), 2)),
        "not" if w(1) == "started" => Some((StatusFilter::Is(EntityStatus::Pending), 2)),
        "not" if matches!(w(1), "done" | "finished" | "completed") => Some((StatusFilter::Open, 2)),
        _ => None,
    }
}

/// A priority as a person says it: `priority 1`, `p2`, `high priority`,
/// `urgent`. 1 is the most urgent. Returns the tokens it took.
pub(super) fn priority_at(t: &[Tok]) -> Option<(u8, usize)> {
    let w = |i: usize| t.get(i).map_or("", |x| x.low.as_str());
    let level = |s: &str| -> Option<u8> {
        Some(match s {
            "critical" | "urgent" | "top" | "highest" | "blocker" => 1,
            "high" => 2,
            "medium" | "normal" | "mid" => 3,
            "low" => 4,
            "lowest" | "trivial" => 5,
            _ => return None,
        })
    };
    let digit = |i: usize| -> Option<u8> {
        let n = t.get(i)?.number()?;
        (1..=9).contains(&n).then_some(n as u8)
    };
    if let Some(p) = w(0)
        .strip_prefix('p')
        .and_then(|d| d.parse::<u8>().ok())
        .filter(|_| w(0).len() == 2)
    {
        return Some((p, 1));
    }
    if w(0) == "priority" {
        let mut i = 1;
        if matches!(w(1), "of" | "to" | "=" | "is" | "at") {
            i = 2;
        }
        if let Some(p) = digit(i).or_else(|| level(w(i))) {
            return Some((p, i + 1));
        }
        if let Some(p) = w(i).strip_prefix('p').and_then(|d| d.parse::<u8>().ok()) {
            return Some((p, i + 1));
        }
        return None;
    }
    if let Some(stem) = w(0).strip_suffix("-priority") {
        return level(stem).map(|p| (p, 1));
    }
    if let Some(p) = level(w(0)) {
        if w(1) == "priority" {
            return Some((p, 2));
        }
        if matches!(w(0), "urgent" | "critical") {
            return Some((p, 1));
        }
    }
    None
}

/// Rebuilds the typed text of some tokens: words spaced, punctuation
/// attached to the word before it.
pub(super) fn text(t: &[Tok]) -> String {
    let mut out = String::new();
    for tok in t {
        let attach = matches!(tok.kind, TokKind::Punct(c) if c != '(');
        if !out.is_empty() && !attach && !out.ends_with('(') {
            out.push(' ');
        }
        out.push_str(&tok.raw);
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lows(s: &str) -> Vec<String> {
        tokenize(s).0.into_iter().map(|t| t.low).collect()
    }

    #[test]
    fn contractions_open_and_quotes_stay_whole() {
        assert_eq!(lows("What's next?"), ["what", "is", "next"]);
        assert_eq!(lows("let's start #12"), ["let", "us", "start", "#12"]);
        assert_eq!(
            lows("add task 'write tests' to it"),
            ["add", "task", "write tests", "to", "it"]
        );
        assert_eq!(lows("task 15's priority"), ["task", "15's", "priority"]);
        assert_eq!(tokenize("task 15's").0[1].number(), Some(15));
        assert!(tokenize("what's blocked?").1);
    }

    #[test]
    fn text_is_rebuilt_as_typed() {
        let (t, _) = tokenize("login, signup, and MFA");
        assert_eq!(text(&t), "login, signup, and MFA");
    }

    #[test]
    fn priorities_read_every_way() {
        for (s, p) in [
            ("priority 1", 1),
            ("p2", 2),
            ("high priority", 2),
            ("urgent", 1),
            ("priority low", 4),
            ("high-priority", 2),
        ] {
            assert_eq!(priority_at(&tokenize(s).0).map(|x| x.0), Some(p), "{s}");
        }
        assert_eq!(priority_at(&tokenize("high").0), None);
    }
}
