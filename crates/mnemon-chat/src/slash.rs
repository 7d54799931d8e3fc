//! Slash commands (the short-term-context seed's "Context Commands", plus
//! `/checkpoint`, `/search`, and the session-memory plan's `memory:clear`
//! and `memory:status`).

use mnemon_core::memory::{
    DecisionStatus, HotItemChange, HotKind, HotStatus, NewDecision, StoreError, StoreResult,
};
use mnemon_core::text::{counted, thousands};

use super::describe::short;
use super::{Chat, ChatStore, Outcome, ReplyKind, bare};

/// Every slash command with its arguments and what it does, for `/help`.
pub const SLASH: &[(&str, &str)] = &[
    (
        "/context status",
        "window usage, zone, working memory and hot context",
    ),
    ("/context summary", "the summary of this session so far"),
    (
        "/context clear",
        "end and archive this session (nothing is lost); the next command starts a new one",
    ),
    (
        "/context restore ID",
        "make an earlier session the active one again",
    ),
    (
        "/context archive [--title T]",
        "archive this session as a fragment, with a title",
    ),
    ("/set_goal TEXT", "add a goal to the hot context"),
    (
        "/complete_goal ID",
        "complete a goal (its id, its number in /context status, or its text)",
    ),
    ("/remember TEXT", "keep a note in the hot context"),
    (
        "/log_decision DECISION | RATIONALE",
        "record a decision (ADR)",
    ),
    (
        "/add_constraint TEXT",
        "add a constraint to the hot context",
    ),
    ("/checkpoint", "take a checkpoint now"),
    ("/search QUERY", "search every tier of memory"),
    ("/help", "this list"),
    (
        "/quit",
        "end the session gracefully (also Ctrl-D or Ctrl-C)",
    ),
    (
        "memory:status",
        "commands and tokens recorded in this session",
    ),
    ("memory:clear", "same as /context clear"),
];

/// Runs `line` if it is a slash command; `None` if it is not one.
pub(super) fn run<S: ChatStore + ?Sized>(
    chat: &mut Chat<'_, S>,
    line: &str,
) -> Result<Option<Outcome>, mnemon_core::engine::EngineError> {
    let low = line.to_lowercase();
    if !line.starts_with('/') && !low.starts_with("memory:") {
        return Ok(None);
    }
    let (head, rest) = match line.split_once(char::is_whitespace) {
        Some((h, r)) => (h.to_lowercase(), r.trim()),
        None => (low.clone(), ""),
    };
    let result = match head.as_str() {
        "/help" | "/?" => Ok(help()),
        "/context" => context(chat, rest),
        "/set_goal" | "/goal" => hot_add(chat, HotKind::Goal, rest, "/set_goal"),
        "/remember" | "/note" => hot_add(chat, HotKind::Note, rest, "/remember"),
        "/add_constraint" | "/constraint" => {
            hot_add(chat, HotKind::Constraint, rest, "/add_constraint")
        }
        "/complete_goal" => complete_goal(chat, rest),
        "/log_decision" | "/decision" => log_decision(chat, rest),
        "/checkpoint" => {
            let cp = chat.engine.checkpoint("manual")?;
            let mut out = Outcome::answer(format!(
                "Checkpoint {} taken at {} tokens ({:.1} %). Resume from it with `mnemon checkpoint resume {}`.",
                cp.id,
                thousands(cp.context_snapshot.tokens_used),
                // A share (0-1) in the checkpoint's JSON, a percent here.
                cp.context_snapshot.percentage * 100.0,
                cp.id
            ));
            out.kind = ReplyKind::Done;
            out.checkpoints.push(cp);
            Ok(out)
        }
        "/search" => search(chat, rest),
        "/quit" | "/exit" | "/bye" | "/stop" => {
            let mut out = end_session(chat, "Session ended")?;
            out.kind = ReplyKind::Ended;
            Ok(out)
        }
        "memory:status" => memory_status(chat),
        "memory:clear" => clear(chat),
        _ => Ok(unknown_slash(&head)),
    };
    match result {
        Ok(out) => Ok(Some(out)),
        Err(e) if super::is_user_error(&e) => Ok(Some(bare(
            ReplyKind::Error,
            super::describe::sentence_case(&e.to_string()),
        ))),
        Err(e) => Err(e.into()),
    }
}

type Res = StoreResult<Outcome>;

fn help() -> Outcome {
    let mut text = String::from("Slash commands:");
    for (c, what) in SLASH {
        text.push_str(&format!("\n  {c:<38} {what}"));
    }
    text.push_str("\nProject commands and questions, in your own words, such as:");
    for f in super::FORMS {
        text.push_str(&format!("\n  {f}"));
    }
    text.push_str("\nReferences: #12, epic 5, it, them, the epic, the first story, the last task.");
    let mut out = Outcome::answer(text);
    out.summary = Some("Showed the help.".into());
    out
}

fn unknown_slash(head: &str) -> Outcome {
    let mut names: Vec<(f64, &str)> = SLASH
        .iter()
        .map(|(c, _)| {
            let name = c.split_whitespace().next().unwrap_or(c);
            (strsim::jaro_winkler(head, name), *c)
        })
        .collect();
    names.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut text = format!("Unknown command {head}; nothing changed. Did you mean:");
    for (_, c) in names.iter().take(3) {
        text.push_str(&format!("\n  {c}"));
    }
    text.push_str("\nType /help for the full list.");
    bare(ReplyKind::NotUnderstood, text)
}

fn context<S: ChatStore + ?Sized>(chat: &mut Chat<'_, S>, rest: &str) -> Res {
    let (sub, arg) = match rest.split_once(char::is_whitespace) {
        Some((s, a)) => (s.to_lowercase(), a.trim()),
        None => (rest.to_lowercase(), ""),
    };
    let engine = &*chat.engine;
    let memory = engine.memory();
    match sub.as_str() {
        "status" | "" => {
            let st = engine.status().map_err(engine_to_store)?;
            let w = &st.window;
            let hot = memory.hot()?;
            let count = |k| hot.of_kind(k).count() as u64;
            let mut text = format!(
                "Zone {} · {} / {} tokens ({:.1} %) · action {}\nEpoch {} · working memory {} · session {} · last checkpoint {}\nHot context: {}, {}, {}, {}, {}",
                w.zone.name().to_uppercase(),
                thousands(w.used),
                thousands(w.effective_max),
                w.fraction * 100.0,
                w.action.name(),
                st.epoch,
                counted(
                    st.working_memory_operations as u64,
                    "operation",
                    "operations"
                ),
                st.session_id.as_deref().map_or("none", short),
                st.last_checkpoint.as_deref().unwrap_or("none"),
                counted(count(HotKind::Goal), "goal", "goals"),
                counted(count(HotKind::Constraint), "constraint", "constraints"),
                counted(count(HotKind::Decision), "decision", "decisions"),
                counted(count(HotKind::Note), "note", "notes"),
                counted(
                    count(HotKind::PendingAction),
                    "pending action",
                    "pending actions"
                ),
            );
            for (i, g) in hot.of_kind(HotKind::Goal).enumerate() {
                text.push_str(&format!(
                    "\n  goal {} [{}] {} ({})",
                    i + 1,
                    g.handle(),
                    g.text,
                    g.status.name()
                ));
            }
            let mut out = Outcome::answer(text);
            out.summary = Some(format!(
                "Context status: {} at {} tokens.",
                w.zone.name(),
                w.used
            ));
            Ok(out)
        }
        "summary" => {
            let text = match engine.session_report().map_err(engine_to_store)? {
                Some(r) => r.to_markdown(),
                None => "No session is active yet; nothing to summarize.".into(),
            };
            let mut out = Outcome::answer(text);
            out.summary = Some("Showed the session summary.".into());
            Ok(out)
        }
        "clear" => clear(chat),
        "restore" => {
            if arg.is_empty() {
                return Err(StoreError::Invalid(
                    "/context restore needs a session id: `mnemon session list` shows them".into(),
                ));
            }
            let previous = memory.store().active_session(memory.agent())?;
            let restored = engine.restore_session(arg).map_err(engine_to_store)?;
            let r = restored.value.clone();
            let mut text = format!(
                "Restored session {} {}: {} operations, {} messages, {} tokens.",
                short(&r.session.id),
                r.session
                    .title
                    .as_deref()
                    .map_or("(untitled)".to_string(), |t| format!("\"{t}\"")),
                r.session.operation_count,
                r.session.message_count,
                thousands(r.session.tokens)
            );
            if let Some(s) = &r.summary {
                text.push_str(&format!("\n{s}"));
            }
            let mut out = Outcome::done(text, Vec::new()).absorb(restored);
            out.sessions = previous.into_iter().map(|p| p.id).collect();
            out.sessions.push(r.session.id);
            Ok(out)
        }
        "archive" => {
            let title = title_arg(arg);
            let archived = engine
                .archive_session(None, title.as_deref())
                .map_err(engine_to_store)?;
            let s = archived.value.clone();
            let mut out = Outcome::done(
                format!(
                    "Archived session {}{} as a fragment. Restore it with /context restore {}.",
                    short(&s.id),
                    s.title
                        .as_deref()
                        .map_or(String::new(), |t| format!(" \"{t}\"")),
                    short(&s.id)
                ),
                Vec::new(),
            )
            .absorb(archived);
            out.sessions.push(s.id);
            out.record = false;
            Ok(out)
        }
        other => Err(StoreError::Invalid(format!(
            "unknown /context subcommand `{other}`: use status, summary, clear, restore ID or archive [--title T]"
        ))),
    }
}

/// `--title="Auth work"`, `--title Auth work`, or the bare words.
fn title_arg(arg: &str) -> Option<String> {
    let a = arg.trim();
    let a = a
        .strip_prefix("--title=")
        .or_else(|| a.strip_prefix("--title"))
        .unwrap_or(a)
        .trim()
        .trim_matches(['"', '\'']);
    (!a.is_empty()).then(|| a.to_string())
}

fn engine_to_store(e: mnemon_core::engine::EngineError) -> StoreError {
    match e {
        mnemon_core::engine::EngineError::Store(s) => s,
        other => StoreError::Invalid(other.to_string()),
    }
}

fn hot_add<S: ChatStore + ?Sized>(chat: &Chat<'_, S>, kind: HotKind, text: &str, cmd: &str) -> Res {
    if text.is_empty() {
        return Err(StoreError::Invalid(format!(
            "{cmd} needs text, e.g. `{cmd} ship the login flow by Friday`"
        )));
    }
    let written = chat
        .engine
        .add_hot(kind, text, None, None, None)
        .map_err(engine_to_store)?;
    let item = &written.value;
    let what = match kind {
        HotKind::Goal => "Goal set",
        HotKind::Constraint => "Constraint added",
        _ => "Remembered",
    };
    let out = Outcome::done(
        format!(
            "{what} [{}]: {}. It stays in every context until it is completed or removed.",
            item.handle(),
            item.text
        ),
        Vec::new(),
    );
    Ok(out.absorb(written))
}

fn complete_goal<S: ChatStore + ?Sized>(chat: &Chat<'_, S>, arg: &str) -> Res {
    let memory = chat.engine.memory();
    let hot = memory.hot()?;
    if arg.is_empty() {
        return Err(StoreError::Invalid(
            "/complete_goal needs the goal: its id, its number in /context status, or its text"
                .into(),
        ));
    }
    let goal = hot
        .goal(arg)
        .map_err(|e| StoreError::Invalid(e.replace("`mnemon goal list`", "/context status")))?;
    let done = chat
        .engine
        .update_hot(
            &goal.id,
            goal.version,
            HotItemChange {
                status: Some(HotStatus::Complete),
                ..HotItemChange::default()
            },
        )
        .map_err(engine_to_store)?;
    let out = Outcome::done(format!("Goal completed: {}.", done.value.text), Vec::new());
    Ok(out.absorb(done))
}

/// `/log_decision Use Redis for sessions | survives restarts`: the text
/// before `|` (or " because ") is the decision, after it the rationale.
fn log_decision<S: ChatStore + ?Sized>(chat: &Chat<'_, S>, arg: &str) -> Res {
    let (decision, rationale) = match arg.split_once('|') {
        Some((d, r)) => (d.trim(), r.trim()),
        None => match arg.split_once(" because ") {
            Some((d, r)) => (d.trim(), r.trim()),
            None => (arg.trim(), ""),
        },
    };
    if decision.is_empty() {
        return Err(StoreError::Invalid(
            "/log_decision needs the decision, e.g. `/log_decision Use Redis for sessions | it survives restarts`".into(),
        ));
    }
    let title: String = decision.chars().take(80).collect();
    let written = chat.engine.decide(&NewDecision {
        title,
        context: if rationale.is_empty() {
            "Logged in a chat session; no rationale was given.".into()
        } else {
            rationale.to_string()
        },
        decision: decision.to_string(),
        status: DecisionStatus::Accepted,
        consequences: Default::default(),
        alternatives: Vec::new(),
        assumptions: Vec::new(),
    });
    let written = written.map_err(engine_to_store)?;
    let record = written.value.clone();
    let mut out = Outcome::done(
        format!(
            "Decision {} recorded: {}{}",
            record.id,
            record.decision,
            if rationale.is_empty() {
                ". Add why next time: `/log_decision <decision> | <rationale>`.".to_string()
            } else {
                format!(" (because {rationale}).")
            }
        ),
        Vec::new(),
    );
    out.decisions.push(record);
    Ok(out.absorb(written))
}

fn search<S: ChatStore + ?Sized>(chat: &Chat<'_, S>, q: &str) -> Res {
    if q.is_empty() {
        return Err(StoreError::Invalid(
            "/search needs words to look for, e.g. `/search login`".into(),
        ));
    }
    let hits = chat.engine.search(q, 10).map_err(engine_to_store)?;
    if hits.is_empty() {
        return Ok(Outcome::answer(format!("Nothing matches \"{q}\".")));
    }
    let mut text = format!("{} matches for \"{q}\":", hits.len());
    for h in &hits {
        let t: String = h.hit.text.replace('\n', " ").chars().take(120).collect();
        text.push_str(&format!("\n  {:<12} {t}", h.hit.id));
    }
    let mut out = Outcome::answer(text);
    out.summary = Some(format!("Searched for \"{q}\": {} matches.", hits.len()));
    Ok(out)
}

fn memory_status<S: ChatStore + ?Sized>(chat: &Chat<'_, S>) -> Res {
    let memory = chat.engine.memory();
    let st = chat.engine.status().map_err(engine_to_store)?;
    let text = match memory.store().active_session(memory.agent())? {
        Some(s) => format!(
            "Session {}: {} operations ({} turns typed here), {} messages, {} tokens recorded. Live context: {} / {} tokens ({:.1} %, {}).",
            short(&s.id),
            s.operation_count,
            typed_turns(memory.store(), &s.id)?,
            s.message_count,
            thousands(s.tokens),
            thousands(st.window.used),
            thousands(st.window.effective_max),
            st.window.fraction * 100.0,
            st.window.zone.name()
        ),
        None => format!(
            "No active session. Live context: {} / {} tokens ({:.1} %).",
            thousands(st.window.used),
            thousands(st.window.effective_max),
            st.window.fraction * 100.0
        ),
    };
    let mut out = Outcome::answer(text);
    out.summary = Some("Showed memory status.".into());
    Ok(out)
}

/// Lines typed in the session: commands and slash commands.
fn typed_turns<S: ChatStore + ?Sized>(store: &S, session: &str) -> StoreResult<u64> {
    let mut n = 0;
    for kind in ["nl_command", "slash_command"] {
        n += store.count_operations(&mnemon_core::memory::OperationQuery {
            session_id: Some(session.to_string()),
            kind: Some(kind.into()),
            ..Default::default()
        })?;
    }
    Ok(n)
}

fn clear<S: ChatStore + ?Sized>(chat: &Chat<'_, S>) -> Res {
    let mut out = end_session(chat, "Context cleared").map_err(engine_to_store)?;
    out.kind = ReplyKind::Done;
    Ok(out)
}

/// Ends the active session gracefully: checkpoint, summary, archive,
/// episodic documents. Nothing is recorded after it, so the next command
/// opens a fresh session.
pub(super) fn end_session<S: ChatStore + ?Sized>(
    chat: &Chat<'_, S>,
    headline: &str,
) -> Result<Outcome, mnemon_core::engine::EngineError> {
    let memory = chat.engine.memory();
    if memory.store().active_session(memory.agent())?.is_none() {
        let mut out = Outcome::answer(format!("{headline}: no session was active."));
        out.record = false;
        return Ok(out);
    }
    let ended = chat.engine.end_session()?;
    let id = ended.value.session_id.clone();
    let short = short(&id);
    let mut out = Outcome::answer(format!(
        "{headline}: session {short} is summarized and archived ({} operations, {} tokens); project state, work plan and decision log are updated. Restore it with /context restore {short}.\n\n{}",
        ended.value.total_operations,
        thousands(ended.value.tokens),
        ended.value.to_markdown().trim_end()
    ));
    out.events = ended.events;
    out.checkpoints = ended.checkpoints;
    out.sessions.push(id);
    out.record = false;
    Ok(out)
}
