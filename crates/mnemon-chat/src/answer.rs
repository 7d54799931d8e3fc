//! Questions about memory, answered from the log, the entities, the hot
//! context and the decision records. Nothing here writes.

use std::collections::{BTreeMap, HashSet};

use mnemon_core::engine::live::operation_line;
use mnemon_core::memory::{
    Entity, EntityKind, EntityQuery, EntityStatus, HotKind, Operation, OperationQuery,
};

use super::command::Question;
use super::describe::{entity, labels, plural, row};
use super::{Chat, ChatStore, Outcome, Slot, Stop};

/// Operations a "what did we do" answer reads at most.
const HISTORY: usize = 2_000;

pub(super) fn answer<S: ChatStore + ?Sized>(
    chat: &Chat<'_, S>,
    q: &Question,
    forced: &Option<(Slot, Vec<Entity>)>,
) -> Result<Outcome, Stop> {
    let memory = chat.engine.memory();
    let store = memory.store();
    match q {
        Question::JustDid => {
            let session = store.active_session(memory.agent())?;
            let ops = store.operations(&OperationQuery {
                session_id: session.map(|s| s.id),
                limit: Some(200),
                ..OperationQuery::default()
            })?;
            let done = actions(&ops);
            if done.is_empty() {
                return Ok(Outcome::answer(
                    "Nothing yet in this session: no command has changed anything.".into(),
                ));
            }
            let mut text = format!("We just {}.", lower_first(&done[0]));
            if done.len() > 1 {
                text.push_str("\nBefore that:");
                for d in done.iter().skip(1).take(4) {
                    text.push_str(&format!("\n  - {}", lower_first(d)));
                }
            }
            let mut out = Outcome::answer(text);
            out.summary = Some(format!("Recalled the last {} actions.", done.len().min(5)));
            Ok(out)
        }
        Question::Day { offset } => {
            let now = memory.clock().now().0;
            const DAY: i64 = 86_400_000;
            let start = (now.div_euclid(DAY) + offset) * DAY;
            let ops = store.operations(&OperationQuery {
                limit: Some(HISTORY),
                ..OperationQuery::default()
            })?;
            let day: Vec<Operation> = ops
                .into_iter()
                .filter(|o| o.created_at.0 >= start && o.created_at.0 < start + DAY)
                .collect();
            let when = if *offset == 0 { "Today" } else { "Yesterday" };
            Ok(history(when, &day))
        }
        Question::Session => {
            let Some(s) = store.active_session(memory.agent())? else {
                return Ok(Outcome::answer(
                    "No session is active yet; your next command starts one.".into(),
                ));
            };
            let ops = store.operations(&OperationQuery {
                session_id: Some(s.id.clone()),
                limit: Some(HISTORY),
                ..OperationQuery::default()
            })?;
            Ok(history("This session", &ops))
        }
        Question::Status { target: None } => {
            let counts = store.status_counts()?;
            if counts.is_empty() {
                return Ok(Outcome::answer(
                    "The project is empty: create an epic to start, e.g. `create an epic for user authentication`."
                        .into(),
                ));
            }
            let mut text = String::from("Project status:");
            for kind in EntityKind::ALL {
                let of: Vec<_> = counts.iter().filter(|c| c.kind == kind).collect();
                if of.is_empty() {
                    continue;
                }
                let total: u64 = of.iter().map(|c| c.count).sum();
                let parts: Vec<String> = of
                    .iter()
                    .map(|c| format!("{} {}", c.count, c.status.name().replace('_', " ")))
                    .collect();
                text.push_str(&format!(
                    "\n  {total} {}: {}",
                    plural(kind, total as usize),
                    parts.join(", ")
                ));
            }
            Ok(Outcome::answer(text))
        }
        Question::Status {
            target: Some(target),
        } => {
            let found = chat.resolve(target, &[], true, Slot::Target, forced)?;
            let mut parts = Vec::new();
            for e in &found {
                parts.push(entity(store, e)?);
            }
            let mut out = Outcome::answer(parts.join("\n\n"));
            out.summary = Some(format!(
                "Status of {}: {}.",
                labels(&found),
                found
                    .iter()
                    .map(|e| e.status.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            out.objects = found;
            Ok(out)
        }
        Question::Next => {
            let mut lines = Vec::new();
            let q = |status, kind| EntityQuery {
                kind: Some(kind),
                status: Some(status),
                limit: Some(5),
                ..EntityQuery::default()
            };
            let mut objects = Vec::new();
            for (status, kind) in [
                (EntityStatus::InProgress, EntityKind::Task),
                (EntityStatus::InProgress, EntityKind::Story),
                (EntityStatus::Pending, EntityKind::Task),
                (EntityStatus::Pending, EntityKind::Story),
            ] {
                for e in store.entities(&q(status, kind))? {
                    if objects.len() < 5 {
                        let verb = if status == EntityStatus::InProgress {
                            "Continue"
                        } else {
                            "Start"
                        };
                        lines.push(format!("{verb} {}", e.label()));
                        objects.push(e);
                    }
                }
            }
            let hot = memory.hot()?;
            for a in hot.of_kind(HotKind::PendingAction).take(3) {
                lines.push(format!("Pending action: {}", a.text));
            }
            for g in hot.of_kind(HotKind::Goal).take(3) {
                lines.push(format!("Goal ({}): {}", g.status.name(), g.text));
            }
            let blocked = store.entities(&EntityQuery {
                status: Some(EntityStatus::Blocked),
                limit: Some(3),
                ..EntityQuery::default()
            })?;
            for b in &blocked {
                lines.push(format!("Unblock {}", b.label()));
            }
            if lines.is_empty() {
                return Ok(Outcome::answer(
                    "Nothing is open: every item is completed. Create the next epic or story."
                        .into(),
                ));
            }
            let mut text = String::from("Next:");
            for (i, l) in lines.iter().enumerate() {
                text.push_str(&format!("\n  {}. {l}", i + 1));
            }
            let mut out = Outcome::answer(text);
            out.summary = Some(format!("Suggested next: {}.", lines[0]));
            out.objects = objects;
            Ok(out)
        }
        Question::Blocked => {
            let blocked = store.entities(&EntityQuery {
                status: Some(EntityStatus::Blocked),
                ..EntityQuery::default()
            })?;
            if blocked.is_empty() {
                return Ok(Outcome::answer("Nothing is blocked.".into()));
            }
            let mut text = format!(
                "{} blocked:",
                if blocked.len() == 1 {
                    "1 item is".to_string()
                } else {
                    format!("{} items are", blocked.len())
                }
            );
            for e in &blocked {
                text.push_str(&format!("\n  {}", row(e)));
            }
            let mut out = Outcome::answer(text);
            out.summary = Some(format!("Blocked: {}.", labels(&blocked)));
            out.objects = blocked;
            Ok(out)
        }
        Question::Decided { topic } => decided(chat, topic),
    }
}

/// The actions in `ops` (newest first), one sentence each, newest first:
/// the chat's commands that changed something, entity changes made
/// elsewhere, and the orchestrator's own operations.
fn actions(ops: &[Operation]) -> Vec<String> {
    let mut out = Vec::new();
    let mut covered: HashSet<u64> = HashSet::new();
    // A decision logged from the chat is told by the chat's own record.
    let mut decision_told = false;
    for op in ops {
        match op.kind.as_str() {
            "decision" if decision_told => decision_told = false,
            "nl_command" | "slash_command" => {
                decision_told = op.data["intent"].as_str() == Some("/log_decision");
                covered = ["entities", "context"]
                    .iter()
                    .flat_map(|k| op.data[*k].as_array().cloned().unwrap_or_default())
                    .filter_map(|v| v.as_u64())
                    .collect();
                if op.status.as_deref() == Some(super::APPLIED)
                    && let Some(r) = op.data["result"].as_str()
                {
                    out.push(r.trim_end_matches('.').to_string());
                }
            }
            "entity_created" | "entity_updated" | "entity_deleted" => {
                let n = op.data["number"].as_u64().unwrap_or(0);
                if covered.contains(&n) {
                    continue;
                }
                covered.clear();
                let verb = match op.kind.as_str() {
                    "entity_created" => "Created",
                    "entity_deleted" => "Deleted",
                    _ => "Updated",
                };
                out.push(format!(
                    "{verb} {} #{n} \"{}\"",
                    sentence_kind(op.data["entity_type"].as_str().unwrap_or("item")),
                    op.data["title"].as_str().unwrap_or("")
                ));
            }
            k if k.starts_with("goal_")
                || k.starts_with("constraint_")
                || k.starts_with("note_")
                || k.starts_with("pending_action_")
                || k.starts_with("decision_")
                || k.starts_with("file_")
                || k.starts_with("entity_")
                || k == mnemon_core::engine::ACTION_KIND => {}
            _ => out.push(operation_line(op)),
        }
    }
    out
}

fn sentence_kind(k: &str) -> String {
    super::describe::sentence_case(k)
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if !s.starts_with("Epic") && !s.starts_with("Story") && !s.starts_with("Task") => {
            f.to_lowercase().chain(c).collect()
        }
        Some(f) => std::iter::once(f).chain(c).collect(),
        None => String::new(),
    }
}

/// "Today: 4 commands changed the project: …" with counts by intent.
fn history(when: &str, ops: &[Operation]) -> Outcome {
    let done = actions(ops);
    let mut by_intent: BTreeMap<String, usize> = BTreeMap::new();
    let mut questions = 0;
    for op in ops.iter().filter(|o| o.kind == "nl_command") {
        let intent = op.data["intent"].as_str().unwrap_or("").to_string();
        if op.status.as_deref() == Some(super::APPLIED) {
            *by_intent.entry(intent).or_default() += 1;
        } else {
            questions += 1;
        }
    }
    if done.is_empty() {
        let text = format!(
            "{when}: nothing changed the project{}.",
            if questions > 0 {
                format!(" ({questions} questions and listings)")
            } else {
                String::new()
            }
        );
        return Outcome::answer(text);
    }
    let counts: Vec<String> = by_intent.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let mut text = format!(
        "{when}: {} actions{}{}.",
        done.len(),
        if counts.is_empty() {
            String::new()
        } else {
            format!(" ({} commands)", counts.join(", "))
        },
        if questions > 0 {
            format!(", {questions} questions")
        } else {
            String::new()
        }
    );
    for d in done.iter().rev().take(20) {
        text.push_str(&format!("\n  - {d}"));
    }
    if done.len() > 20 {
        text.push_str(&format!(
            "\n  … and {} earlier (see the session log)",
            done.len() - 20
        ));
    }
    let mut out = Outcome::answer(text);
    out.summary = Some(format!("{when}: {} actions.", done.len()));
    out
}

/// Decision records (and hot-context decisions) mentioning the topic.
fn decided<S: ChatStore + ?Sized>(chat: &Chat<'_, S>, topic: &str) -> Result<Outcome, Stop> {
    let memory = chat.engine.memory();
    let words: Vec<String> = mnemon_core::compress::sentences::terms(topic)
        .into_iter()
        .map(|w| w.chars().take(5).collect())
        .collect();
    let matches = |text: &str| {
        let terms: Vec<String> = mnemon_core::compress::sentences::terms(text)
            .into_iter()
            .map(|w| w.chars().take(5).collect())
            .collect();
        words.is_empty() || words.iter().any(|w| terms.contains(w))
    };
    let records = memory.store().decisions(None)?;
    let hits: Vec<_> = records
        .iter()
        .filter(|d| matches(&format!("{} {} {}", d.title, d.decision, d.context)))
        .take(5)
        .collect();
    let hot: Vec<String> = memory
        .hot()?
        .of_kind(HotKind::Decision)
        .filter(|h| !hits.iter().any(|d| h.text.contains(&d.id)))
        .filter(|h| matches(&h.text))
        .map(|h| h.text.clone())
        .collect();
    let about = if topic.is_empty() {
        String::new()
    } else {
        format!(" about \"{topic}\"")
    };
    if hits.is_empty() && hot.is_empty() {
        return Ok(Outcome::answer(format!(
            "No decision{about} is recorded. Log one with `/log_decision <decision> | <rationale>`."
        )));
    }
    let mut text = format!("Decisions{about}:");
    for d in &hits {
        text.push_str(&format!(
            "\n  {} ({}, {}): {}",
            d.id,
            d.status.name().to_ascii_lowercase(),
            d.timestamp.datetime().format("%Y-%m-%d"),
            d.decision
        ));
        if !d.context.is_empty() {
            text.push_str(&format!("\n    why: {}", d.context));
        }
    }
    for h in &hot {
        text.push_str(&format!("\n  {h}"));
    }
    let mut out = Outcome::answer(text);
    out.summary = Some(format!(
        "Recalled {}{about}.",
        mnemon_core::text::counted((hits.len() + hot.len()) as u64, "decision", "decisions")
    ));
    Ok(out)
}
