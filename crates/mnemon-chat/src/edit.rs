//! Creating and updating: the two commands with the most to read (counts,
//! title lists, parents, priorities, fields and values).

use mnemon_core::memory::EntityKind;

use super::command::{Command, Field, StatusFilter, Target};
use super::grammar::target_at;
use super::words::{Tok, TokKind, count_at, kind_word, priority_at, status_at, text};

/// Creation: `VERB [count] [new] [priority] KIND [title] [to|under|in|for
/// TARGET] [priority] [: titles]`.
pub(super) fn create(rest: &[Tok]) -> Option<Result<Command, String>> {
    let mut i = 0;
    let mut count = None;
    let mut priority = None;
    loop {
        let t = rest.get(i)?;
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
            let bare = matches!(head[j + 1].kind, TokKind::Num(_));
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
pub(super) fn update(rest: &[Tok], rename: bool, verb: &Tok) -> Option<Result<Command, String>> {
    let rest = if rest.first().is_some_and(|x| x.is("the")) && rest.get(1).is_some_and(is_field) {
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
