//! How the chat writes about entities: labels in sentences, listings and
//! one entity's details.

use mnemon_core::memory::{Entity, EntityKind, EntityQuery, EntityStatus, Store, StoreResult};

use super::Outcome;
use super::command::StatusFilter;

/// Listings show this many rows, then say how many more there are.
const LIST_MAX: usize = 40;

/// The first 13 characters of an id: enough to tell ids minted in the
/// same millisecond apart, as `mnemon session list` shows them.
pub(super) fn short(id: &str) -> &str {
    &id[..id.len().min(13)]
}

/// `Story #6 "login", Story #7 "signup" and Story #8 "MFA"`.
pub(super) fn labels(es: &[Entity]) -> String {
    join(es.iter().map(Entity::label).collect(), "and")
}

/// `Story #6 "login", Story #7 "signup" or Story #8 "MFA"`.
pub(super) fn choices(es: &[Entity]) -> String {
    join(es.iter().map(Entity::label).collect(), "or")
}

#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: one; two"
)]
fn join(mut v: Vec<String>, last: &str) -> String {
    match v.len() {
        0 => "nothing".into(),
        1 => v.pop().expect("one"),
        _ => {
            let tail = v.pop().expect("two");
            format!("{} {last} {tail}", v.join(", "))
        }
    }
}

pub(super) fn sentence_case(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

pub(super) fn plural(kind: EntityKind, n: usize) -> String {
    match (kind, n) {
        (k, 1) => k.name().to_string(),
        (EntityKind::Story, _) => "stories".into(),
        (k, _) => format!("{}s", k.name()),
    }
}

fn status_text(s: EntityStatus) -> &'static str {
    match s {
        EntityStatus::Pending => "pending",
        EntityStatus::InProgress => "in progress",
        EntityStatus::Blocked => "blocked",
        EntityStatus::Completed => "completed",
    }
}

/// One listing row: `#6  Story "login"  in progress · P2`.
pub(super) fn row(e: &Entity) -> String {
    format!(
        "#{:<4} {} \"{}\"  {} · P{}",
        e.number,
        e.kind.title(),
        e.title,
        status_text(e.status),
        e.priority
    )
}

pub(super) fn list<S: Store + ?Sized>(
    store: &S,
    kind: Option<EntityKind>,
    status: Option<StatusFilter>,
    parent: Option<&Entity>,
) -> StoreResult<Outcome> {
    let mut all = store.entities(&EntityQuery {
        kind,
        status: match status {
            Some(StatusFilter::Is(s)) => Some(s),
            _ => None,
        },
        parent: parent.map(|p| p.number),
        limit: None,
    })?;
    if let Some(f) = status {
        all.retain(|e| f.admits(e.status));
    }
    all.sort_by_key(|e| (e.kind, e.number));
    let what = match kind {
        Some(k) => plural(k, 2),
        None => "items".into(),
    };
    let filter = match status {
        Some(StatusFilter::Is(s)) => format!("{} ", status_text(s)),
        Some(StatusFilter::Open) => "open ".into(),
        None => String::new(),
    };
    let place = parent
        .map(|p| format!(" under {}", p.label()))
        .unwrap_or_default();
    let mut text = if all.is_empty() {
        format!("No {filter}{what}{place}.")
    } else {
        format!(
            "{} {filter}{}{place}:",
            all.len(),
            match kind {
                Some(k) => plural(k, all.len()),
                None =>
                    if all.len() == 1 {
                        "item".into()
                    } else {
                        "items".into()
                    },
            }
        )
    };
    for e in all.iter().take(LIST_MAX) {
        text.push_str(&format!("\n  {}", row(e)));
    }
    if all.len() > LIST_MAX {
        text.push_str(&format!("\n  … and {} more", all.len() - LIST_MAX));
    }
    let mut out = Outcome::answer(text);
    out.summary = Some(format!("Listed {} {filter}{what}{place}.", all.len()));
    // Listed entities become "them" only when the list is short enough to
    // mean something by it.
    if all.len() <= 12 {
        out.objects = all;
    }
    Ok(out)
}

/// One entity with its parent and children.
pub(super) fn entity<S: Store + ?Sized>(store: &S, e: &Entity) -> StoreResult<String> {
    let mut s = format!(
        "{}: {}, priority {}",
        e.label(),
        status_text(e.status),
        e.priority
    );
    if let Some(p) = e.parent {
        match store.entity(p) {
            Ok(p) => s.push_str(&format!(", in {}", p.label())),
            Err(_) => s.push_str(&format!(", in #{p}")),
        }
    }
    s.push_str(&format!(
        ".\n  created {}, updated {}",
        e.created_at.datetime().format("%Y-%m-%d %H:%M UTC"),
        e.updated_at.datetime().format("%Y-%m-%d %H:%M UTC")
    ));
    if let Some(d) = &e.description {
        s.push_str(&format!("\n  {d}"));
    }
    let children = store.entities(&EntityQuery {
        parent: Some(e.number),
        ..EntityQuery::default()
    })?;
    if !children.is_empty() {
        s.push_str(&format!("\n  {}", progress(&children)));
        let mut sorted = children;
        sorted.sort_by_key(|c| c.number);
        for c in sorted.iter().take(LIST_MAX) {
            s.push_str(&format!("\n    {}", row(c)));
        }
    }
    Ok(s)
}

/// `3 stories: 1 completed, 1 in progress, 1 pending`.
pub(super) fn progress(children: &[Entity]) -> String {
    let mut parts = Vec::new();
    for kind in EntityKind::ALL {
        let of: Vec<&Entity> = children.iter().filter(|c| c.kind == kind).collect();
        if of.is_empty() {
            continue;
        }
        let counts: Vec<String> = EntityStatus::ALL
            .iter()
            .rev()
            .filter_map(|s| {
                let n = of.iter().filter(|c| c.status == *s).count();
                (n > 0).then(|| format!("{n} {}", status_text(*s)))
            })
            .collect();
        parts.push(format!(
            "{} {}: {}",
            of.len(),
            plural(kind, of.len()),
            counts.join(", ")
        ));
    }
    parts.join("; ")
}
