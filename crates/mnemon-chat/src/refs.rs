//! Reference resolution: what "it", "them", "the epic", "the first story"
//! and "#12" mean now.
//!
//! Everything is read from the operation log, newest first: the chat's own
//! `nl_command` records (what each command acted on and in which context)
//! and the `entity_*` records every entity change leaves. Nothing is kept in
//! the process, so a reference resolves the same after a refresh (the log
//! keeps what working memory dropped) and after a restart.
//!
//! When two readings are equally likely (the last command created three
//! stories and the next one says "start it") the resolver does not guess:
//! it returns every candidate and the chat asks which one.

use std::collections::HashSet;

use mnemon_core::memory::{
    Entity, EntityKind, EntityQuery, OperationQuery, Store, StoreError, StoreResult,
};

use super::command::{Target, Which};

/// How far back references look: enough for a long session, bounded so a
/// lookup stays one indexed query.
const LOOKBACK: usize = 400;

/// What one past operation acted on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Group {
    /// The entities the operation created, changed or asked about.
    pub objects: Vec<u64>,
    /// Where they were (the parent of created stories, say).
    pub context: Vec<u64>,
}

fn numbers(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_u64()).collect())
        .unwrap_or_default()
}

/// Mention groups, newest first.
pub(super) fn mentions<S: Store + ?Sized>(store: &S) -> StoreResult<Vec<Group>> {
    let ops = store.operations(&OperationQuery {
        limit: Some(LOOKBACK),
        ..OperationQuery::default()
    })?;
    let mut groups: Vec<Group> = Vec::new();
    // Entity records written by the command just above them in the list
    // (older than it) belong to that command's group.
    let mut covered: HashSet<u64> = HashSet::new();
    for op in &ops {
        match op.kind.as_str() {
            "nl_command" => {
                let g = Group {
                    objects: numbers(&op.data["entities"]),
                    context: numbers(&op.data["context"]),
                };
                covered = g.objects.iter().chain(&g.context).copied().collect();
                if !g.objects.is_empty() || !g.context.is_empty() {
                    groups.push(g);
                }
            }
            "entity_created" | "entity_updated" | "entity_deleted" => {
                let Some(n) = op.data["number"].as_u64() else {
                    continue;
                };
                if covered.contains(&n) {
                    continue;
                }
                covered.clear();
                groups.push(Group {
                    objects: vec![n],
                    context: op.data["parent"].as_u64().into_iter().collect(),
                });
            }
            _ => {}
        }
    }
    Ok(groups)
}

/// The outcome of resolving one reference.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Resolved {
    Found(Vec<Entity>),
    /// Equally likely readings: ask.
    Ambiguous(Vec<Entity>),
    /// Nothing fits; says why and what to type instead.
    Missing(String),
}

/// Resolves `target` to entities of the `allowed` kinds (any kind when
/// empty). `plural` says whether the command can act on several.
pub(super) fn resolve<S: Store + ?Sized>(
    store: &S,
    target: &Target,
    allowed: &[EntityKind],
    plural: bool,
) -> StoreResult<Resolved> {
    let fits = |e: &Entity| allowed.is_empty() || allowed.contains(&e.kind);
    let kinds = || {
        allowed
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(" or ")
    };
    match target {
        Target::Number { number, kind } => {
            let e = match store.entity(*number) {
                Ok(e) => e,
                Err(StoreError::NotFound { .. }) => {
                    return Ok(Resolved::Missing(format!(
                        "there is no #{number}; `list` shows what exists"
                    )));
                }
                Err(e) => return Err(e),
            };
            if let Some(k) = kind
                && *k != e.kind
            {
                return Ok(Resolved::Missing(format!(
                    "#{number} is {}, not a {k}",
                    e.label()
                )));
            }
            if !fits(&e) {
                return Ok(Resolved::Missing(format!(
                    "{} cannot be used here: this needs a {}",
                    e.label(),
                    kinds()
                )));
            }
            Ok(Resolved::Found(vec![e]))
        }
        Target::Pronoun { plural: many } => {
            let groups = mentions(store)?;
            for g in &groups {
                let objects = load(store, &g.objects, &fits);
                let chosen = if objects.is_empty() {
                    load(store, &g.context, &fits)
                } else {
                    objects
                };
                match chosen.len() {
                    0 => continue,
                    1 => return Ok(Resolved::Found(chosen)),
                    _ if *many && plural => return Ok(Resolved::Found(chosen)),
                    _ => return Ok(Resolved::Ambiguous(chosen)),
                }
            }
            Ok(Resolved::Missing(format!(
                "nothing recent for \"{}\" to refer to{}; name it, e.g. `epic 5` or `#12`",
                if *many { "them" } else { "it" },
                if allowed.is_empty() {
                    String::new()
                } else {
                    format!(" (it must be a {})", kinds())
                }
            )))
        }
        Target::Named { kind, .. } if !allowed.is_empty() && !allowed.contains(kind) => {
            Ok(Resolved::Missing(format!(
                "a {kind} cannot be used here: this needs a {}",
                kinds()
            )))
        }
        Target::Named { kind, which } => named(store, *kind, *which, &fits),
        Target::Title { kind, text } => {
            let needle = text.to_lowercase();
            let all = store.entities(&EntityQuery {
                kind: *kind,
                ..EntityQuery::default()
            })?;
            let mut hits: Vec<Entity> = all
                .iter()
                .filter(|e| fits(e) && e.title.to_lowercase() == needle)
                .cloned()
                .collect();
            if hits.is_empty() {
                hits = all
                    .into_iter()
                    .filter(|e| fits(e) && e.title.to_lowercase().contains(&needle))
                    .collect();
            }
            match hits.len() {
                0 => Ok(Resolved::Missing(format!(
                    "no {} is called \"{text}\"",
                    kind.map_or("item", |k| k.name())
                ))),
                1 => Ok(Resolved::Found(hits)),
                _ => {
                    // The most recently mentioned wins when one was.
                    let groups = mentions(store)?;
                    for g in &groups {
                        let recent: Vec<Entity> = hits
                            .iter()
                            .filter(|e| g.objects.contains(&e.number))
                            .cloned()
                            .collect();
                        if recent.len() == 1 {
                            return Ok(Resolved::Found(recent));
                        }
                    }
                    Ok(Resolved::Ambiguous(hits))
                }
            }
        }
    }
}

fn load<S: Store + ?Sized>(
    store: &S,
    numbers: &[u64],
    fits: &dyn Fn(&Entity) -> bool,
) -> Vec<Entity> {
    let mut out: Vec<Entity> = numbers
        .iter()
        .filter_map(|n| store.entity(*n).ok())
        .filter(|e| fits(e))
        .collect();
    out.sort_by_key(|e| e.number);
    out.dedup_by_key(|e| e.number);
    out
}

/// `the epic`, `the first story`, `the last task`: the newest group that
/// holds entities of the kind decides; with none, the whole project does.
#[allow(
    clippy::expect_used,
    reason = "invariants of this function, not outside input: non-empty"
)]
fn named<S: Store + ?Sized>(
    store: &S,
    kind: EntityKind,
    which: Which,
    fits: &dyn Fn(&Entity) -> bool,
) -> StoreResult<Resolved> {
    let of_kind = |e: &Entity| e.kind == kind && fits(e);
    let groups = mentions(store)?;
    for g in &groups {
        let mut objects = load(store, &g.objects, &of_kind);
        if objects.is_empty() {
            objects = load(store, &g.context, &of_kind);
        }
        if objects.is_empty() {
            continue;
        }
        match which {
            Which::Only if objects.len() == 1 => return Ok(Resolved::Found(objects)),
            Which::Only => return Ok(Resolved::Ambiguous(objects)),
            Which::Last => return Ok(Resolved::Found(vec![objects.pop().expect("non-empty")])),
            Which::First if objects.len() > 1 => {
                return Ok(Resolved::Found(vec![objects.swap_remove(0)]));
            }
            Which::Nth(n) if objects.len() >= n => {
                return Ok(Resolved::Found(vec![objects.swap_remove(n - 1)]));
            }
            // A group of one says nothing about "the first" or "the
            // second": count over the project instead.
            Which::First | Which::Nth(_) => break,
        }
    }
    let mut all = store.entities(&EntityQuery {
        kind: Some(kind),
        ..EntityQuery::default()
    })?;
    all.sort_by_key(|e| e.number);
    let pick = match which {
        Which::Only if all.len() == 1 => all.pop(),
        Which::Only if all.len() > 1 => return Ok(Resolved::Ambiguous(all)),
        Which::Only => None,
        Which::First => all.into_iter().next(),
        Which::Last => all.pop(),
        Which::Nth(n) => all.into_iter().nth(n - 1),
    };
    Ok(match pick {
        Some(e) => Resolved::Found(vec![e]),
        None => Resolved::Missing(format!("there is no such {kind} yet")),
    })
}

/// The user's answer to "which one?": `#7`, `7`, `story 7`, `the second`,
/// `second`, a title, or `all`. `None` when it is none of these.
pub(super) fn pick(answer: &str, options: &[Entity]) -> Option<Vec<Entity>> {
    let a = answer
        .trim()
        .trim_end_matches(['.', '!', '?'])
        .to_lowercase();
    let a = a
        .strip_prefix("the ")
        .or_else(|| a.strip_prefix("i mean "))
        .or_else(|| a.strip_prefix("i meant "))
        .unwrap_or(&a)
        .trim()
        .to_string();
    if [
        "all",
        "all of them",
        "both",
        "every one",
        "all three",
        "each",
    ]
    .contains(&a.as_str())
    {
        return Some(options.to_vec());
    }
    let digits: String = a.chars().filter(|c| c.is_ascii_digit()).collect();
    if !digits.is_empty()
        && let Ok(n) = digits.parse::<u64>()
        && let Some(e) = options.iter().find(|e| e.number == n)
    {
        return Some(vec![e.clone()]);
    }
    let ord = [
        ("first", 1),
        ("1st", 1),
        ("second", 2),
        ("2nd", 2),
        ("third", 3),
        ("3rd", 3),
        ("fourth", 4),
        ("fifth", 5),
    ];
    let first_word = a.split_whitespace().next().unwrap_or("");
    if let Some((_, i)) = ord.iter().find(|(w, _)| *w == first_word) {
        return options.get(i - 1).map(|e| vec![e.clone()]);
    }
    if first_word == "last" {
        return options.last().map(|e| vec![e.clone()]);
    }
    let exact: Vec<Entity> = options
        .iter()
        .filter(|e| e.title.to_lowercase() == a)
        .cloned()
        .collect();
    if exact.len() == 1 {
        return Some(exact);
    }
    let partial: Vec<Entity> = options
        .iter()
        .filter(|e| !a.is_empty() && e.title.to_lowercase().contains(&a))
        .cloned()
        .collect();
    (partial.len() == 1).then_some(partial)
}
