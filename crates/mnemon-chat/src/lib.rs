//! `mnemon chat`: an orchestrator session driven by typed lines.
//!
//! [`Chat`] turns one line into one [`Reply`]: a project command run
//! against the store, a question about memory answered from it, a slash
//! command, or a question back when a reference has two equally likely
//! readings. Every line it understands is recorded as an `nl_command` or
//! `slash_command` operation through the engine, so it counts against the
//! window and can trigger checkpoints, optimization and refreshes like any
//! other write. The terminal, scripts and files are the caller's: this
//! module does no IO.

mod answer;
mod ask;
pub mod command;
mod describe;
mod edit;
mod engine_ref;
mod grammar;
mod parse;
mod refs;
mod reply;
mod slash;
mod words;

use serde_json::json;

pub use command::{Command, CommandParser, Field, Parsed, Question, StatusFilter, Target, Which};
pub use parse::{FORMS, RuleParser, closest};
pub use reply::{Recorded, Reply, ReplyKind};

use mnemon_core::assemble::retrieve::SearchStore;
use mnemon_core::engine::{
    Checkpoint, Engine, EngineError, EngineEvent, EngineStatus, EngineStore,
};
use mnemon_core::memory::{
    Atomically, DecisionRecord, Entity, EntityChange, EntityKind, NewEntity, NewOperation,
};

use describe::{labels, sentence_case};
use engine_ref::EngineRef;
use refs::Resolved;

/// The status of a recorded command that changed something. Not
/// "completed": the session summary counts those as accomplishments, and
/// the entity records already say what was accomplished.
pub(crate) const APPLIED: &str = "applied";

/// What a chat needs of a store: the engine's records and search.
pub trait ChatStore: EngineStore + SearchStore {}

impl<T: EngineStore + SearchStore + ?Sized> ChatStore for T {}

/// A question waiting for its answer: the command to finish, which of its
/// references was ambiguous, and the candidates offered.
#[derive(Debug, Clone)]
struct Pending {
    line: String,
    command: Command,
    slot: Slot,
    options: Vec<Entity>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Target,
    Parent,
}

/// Stops a command early with a reply (a question back, or an error).
enum Stop {
    Clarify(Slot, Vec<Entity>),
    Refuse(String),
    Engine(EngineError),
}

impl From<EngineError> for Stop {
    fn from(e: EngineError) -> Stop {
        Stop::Engine(e)
    }
}

impl From<mnemon_core::memory::StoreError> for Stop {
    fn from(e: mnemon_core::memory::StoreError) -> Stop {
        Stop::Engine(e.into())
    }
}

/// What a command did, before it is recorded.
struct Outcome {
    kind: ReplyKind,
    text: String,
    /// Entities acted on (recorded as `entities` for later references).
    objects: Vec<Entity>,
    /// Their context (recorded as `context`).
    context: Vec<u64>,
    /// One line for the log, when the full text is long.
    summary: Option<String>,
    checkpoints: Vec<Checkpoint>,
    events: Vec<EngineEvent>,
    decisions: Vec<DecisionRecord>,
    sessions: Vec<String>,
    /// Whether to record the line (false for lines that ended the session).
    record: bool,
}

impl Outcome {
    fn answer(text: String) -> Outcome {
        Outcome {
            kind: ReplyKind::Answer,
            text,
            objects: Vec::new(),
            context: Vec::new(),
            summary: None,
            checkpoints: Vec::new(),
            events: Vec::new(),
            decisions: Vec::new(),
            sessions: Vec::new(),
            record: true,
        }
    }

    /// This outcome with what the engine did on its own after a write.
    pub(crate) fn absorb<T>(mut self, written: mnemon_core::engine::Outcome<T>) -> Outcome {
        self.events.extend(written.events);
        self.checkpoints.extend(written.checkpoints);
        self
    }

    fn done(text: String, objects: Vec<Entity>) -> Outcome {
        Outcome {
            kind: ReplyKind::Done,
            objects,
            ..Outcome::answer(text)
        }
    }
}

/// One chat session over an engine.
pub struct Chat<'e, S: ?Sized> {
    engine: EngineRef<'e, S>,
    parser: Box<dyn CommandParser>,
    pending: Option<Pending>,
}

impl<S: ?Sized> std::fmt::Debug for Chat<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chat")
            .field("parser", &self.parser.name())
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

impl<'e, S: ChatStore + ?Sized> Chat<'e, S> {
    pub fn new(engine: &'e Engine<S>) -> Chat<'e, S> {
        Chat::with_parser(engine, Box::new(RuleParser))
    }

    pub fn with_parser(engine: &'e Engine<S>, parser: Box<dyn CommandParser>) -> Chat<'e, S> {
        Chat {
            engine: EngineRef::Borrowed(engine),
            parser,
            pending: None,
        }
    }

    /// A chat that owns its share of the engine, so it can outlive the
    /// scope that made it (a server's session, a library handle's chat).
    pub fn shared(engine: std::sync::Arc<Engine<S>>) -> Chat<'static, S> {
        Chat::shared_with_parser(engine, Box::new(RuleParser))
    }

    /// [`Chat::shared`] with another parser (an LLM-backed one).
    pub fn shared_with_parser(
        engine: std::sync::Arc<Engine<S>>,
        parser: Box<dyn CommandParser>,
    ) -> Chat<'static, S> {
        Chat {
            engine: EngineRef::Shared(engine),
            parser,
            pending: None,
        }
    }

    pub fn engine(&self) -> &Engine<S> {
        &self.engine
    }

    /// Whether the last reply asked a question that the next line answers.
    pub fn awaiting_answer(&self) -> bool {
        self.pending.is_some()
    }

    /// Handles one line. Store and engine failures come back as errors;
    /// everything a person can get wrong comes back as a reply.
    pub fn handle(&mut self, line: &str) -> Result<Reply, EngineError> {
        let input = line.trim();
        if input.is_empty() {
            return self.reply(input, bare(ReplyKind::Empty, String::new()), None);
        }
        if let Some(p) = self.pending.take() {
            let low = input.to_lowercase();
            if [
                "cancel",
                "never mind",
                "nevermind",
                "none",
                "neither",
                "nothing",
                "stop",
            ]
            .contains(&low.trim_end_matches(['.', '!']))
            {
                return self.reply(
                    input,
                    bare(ReplyKind::Answer, "Cancelled; nothing changed.".into()),
                    None,
                );
            }
            if let Some(chosen) = refs::pick(input, &p.options) {
                let line = format!("{} [{}]", p.line, labels(&chosen));
                return self.run(&line, p.command, Some((p.slot, chosen)));
            }
            // Not an answer: treat it as a new line.
        }
        if let Some(out) = slash::run(self, input)? {
            return self.finish(input, out, None);
        }
        match self.parser.parse(input) {
            Parsed::Command(c) => self.run(input, c, None),
            Parsed::Incomplete(msg) => self.reply(
                input,
                bare(ReplyKind::Incomplete, sentence_case(&msg)),
                None,
            ),
            Parsed::Unknown { closest } => {
                let mut text = format!(
                    "I did not understand \"{input}\", so nothing changed. Closest supported forms:"
                );
                for f in closest {
                    text.push_str(&format!("\n  {f}"));
                }
                text.push_str("\nType /help for everything I understand.");
                self.reply(input, bare(ReplyKind::NotUnderstood, text), None)
            }
        }
    }

    /// Ends the session the way Ctrl-D does (design v1
    /// `shutdown(graceful=True)`): a `session_end` checkpoint, the session
    /// summary, the archive and the episodic documents.
    pub fn end(&mut self) -> Result<Reply, EngineError> {
        let out = slash::end_session(self, "Session ended")?;
        let reply = self.finish("", out, None)?;
        Ok(Reply {
            kind: ReplyKind::Ended,
            ..reply
        })
    }

    fn run(
        &mut self,
        line: &str,
        command: Command,
        forced: Option<(Slot, Vec<Entity>)>,
    ) -> Result<Reply, EngineError> {
        match self.execute(&command, forced) {
            Ok(out) => self.finish(line, out, Some(command)),
            Err(Stop::Clarify(slot, options)) => {
                let text = format!(
                    "Which one do you mean: {}? Answer with a number, a title, \"all\" or \"cancel\".",
                    describe::choices(&options)
                );
                self.pending = Some(Pending {
                    line: line.to_string(),
                    command: command.clone(),
                    slot,
                    options,
                });
                self.reply(line, bare(ReplyKind::Clarify, text), Some(command))
            }
            Err(Stop::Refuse(msg)) => self.reply(
                line,
                bare(ReplyKind::Error, sentence_case(&msg)),
                Some(command),
            ),
            Err(Stop::Engine(EngineError::Store(e))) if is_user_error(&e) => self.reply(
                line,
                bare(ReplyKind::Error, sentence_case(&e.to_string())),
                Some(command),
            ),
            Err(Stop::Engine(e)) => Err(e),
        }
    }

    /// Records the line and builds the reply.
    fn finish(
        &mut self,
        line: &str,
        mut out: Outcome,
        command: Option<Command>,
    ) -> Result<Reply, EngineError> {
        if !out.record || line.is_empty() {
            return self.reply(line, out, command);
        }
        let (kind, intent) = match &command {
            Some(c) => ("nl_command", c.intent()),
            None => (
                "slash_command",
                line.split_whitespace().next().unwrap_or(""),
            ),
        };
        let summary = out
            .summary
            .clone()
            .unwrap_or_else(|| first_line(&out.text, 240));
        let recorded = self.engine.record(NewOperation {
            kind: kind.into(),
            data: json!({
                "input": line,
                "intent": intent,
                "entities": out.objects.iter().map(|e| e.number).collect::<Vec<_>>(),
                "context": out.context,
                "result": summary,
            }),
            status: Some(
                if out.kind == ReplyKind::Done {
                    APPLIED
                } else {
                    "answered"
                }
                .into(),
            ),
            ..NewOperation::default()
        })?;
        out.events.extend(recorded.events);
        out.checkpoints.extend(recorded.checkpoints);
        let rec = Recorded {
            id: recorded.value.id.clone(),
            kind: kind.into(),
            tokens: recorded.value.tokens,
        };
        let mut reply = self.reply_with(line, out, command, recorded.status);
        reply.recorded = Some(rec);
        Ok(reply)
    }

    /// A reply for a line that recorded nothing: the status is read now.
    fn reply(
        &self,
        line: &str,
        out: Outcome,
        command: Option<Command>,
    ) -> Result<Reply, EngineError> {
        Ok(self.reply_with(line, out, command, self.engine.status()?))
    }

    /// The engine already returned its status with the write; reading it
    /// again would cost four queries per line.
    fn reply_with(
        &self,
        line: &str,
        out: Outcome,
        command: Option<Command>,
        status: EngineStatus,
    ) -> Reply {
        Reply {
            input: line.to_string(),
            kind: out.kind,
            text: out.text,
            command,
            entities: out.objects,
            recorded: None,
            events: out.events,
            checkpoints: out.checkpoints,
            decisions: out.decisions,
            sessions: out.sessions,
            status,
        }
    }

    fn execute(
        &mut self,
        command: &Command,
        forced: Option<(Slot, Vec<Entity>)>,
    ) -> Result<Outcome, Stop> {
        let memory = self.engine.memory();
        match command {
            Command::Create {
                kind,
                titles,
                parent,
                priority,
            } => {
                let parent = match parent {
                    Some(t) => {
                        let found =
                            self.resolve(t, kind.allowed_parents(), false, Slot::Parent, &forced)?;
                        found.into_iter().next()
                    }
                    None => None,
                };
                if let Some(p) = &parent
                    && !kind.allowed_parents().contains(&p.kind)
                {
                    return Err(Stop::Refuse(format!(
                        "a {kind} cannot go under {}",
                        p.label()
                    )));
                }
                let created = all_or_none(&self.engine, titles, |memory, title| {
                    memory.create_entity(&NewEntity {
                        kind: *kind,
                        title: title.clone(),
                        description: None,
                        priority: *priority,
                        parent: parent.as_ref().map(|p| p.number),
                    })
                })?;
                let under = parent
                    .as_ref()
                    .map(|p| format!(" under {}", p.label()))
                    .unwrap_or_default();
                let text = format!("Created {}{under}.", labels(&created.value));
                let mut out = Outcome::done(text, created.value.clone()).absorb(created);
                out.context = parent.iter().map(|p| p.number).collect();
                Ok(out)
            }
            Command::Update { target, field } => {
                let single = !matches!(field, Field::Priority(_));
                let found = self.resolve(target, &[], !single, Slot::Target, &forced)?;
                let change = match field {
                    Field::Title(t) => EntityChange {
                        title: Some(t.clone()),
                        ..EntityChange::default()
                    },
                    Field::Description(d) => EntityChange {
                        description: Some(d.clone()),
                        ..EntityChange::default()
                    },
                    Field::Priority(p) => EntityChange {
                        priority: Some(*p),
                        ..EntityChange::default()
                    },
                };
                let what = match field {
                    Field::Title(t) => format!("Renamed to \"{t}\":"),
                    Field::Description(_) => "Updated the description of".into(),
                    Field::Priority(p) => format!("Set priority {p} on"),
                };
                let changed = all_or_none(&self.engine, &found, |m, e| {
                    m.update_entity(e.number, &change)
                })?;
                let text = format!("{what} {}.", labels(&changed.value));
                Ok(Outcome::done(text, changed.value.clone()).absorb(changed))
            }
            Command::SetStatus { target, status } => {
                let found = self.resolve(target, &[], true, Slot::Target, &forced)?;
                let change = EntityChange {
                    status: Some(*status),
                    ..EntityChange::default()
                };
                let changed = all_or_none(&self.engine, &found, |m, e| {
                    m.update_entity(e.number, &change)
                })?;
                let verb = match status {
                    mnemon_core::memory::EntityStatus::InProgress => "Started",
                    mnemon_core::memory::EntityStatus::Completed => "Completed",
                    mnemon_core::memory::EntityStatus::Blocked => "Blocked",
                    mnemon_core::memory::EntityStatus::Pending => "Reset to pending:",
                };
                let text = format!("{verb} {}.", labels(&changed.value));
                Ok(Outcome::done(text, changed.value.clone()).absorb(changed))
            }
            Command::Delete { target } => {
                let found = self.resolve(target, &[], true, Slot::Target, &forced)?;
                let deleted = all_or_none(&self.engine, &found, |m, e| m.delete_entity(e.number))?;
                let text = format!(
                    "Deleted {}. Its number stays taken; the log keeps its history.",
                    labels(&deleted.value)
                );
                Ok(Outcome::done(text, deleted.value.clone()).absorb(deleted))
            }
            Command::List {
                kind,
                status,
                parent,
            } => {
                let parent = match parent {
                    Some(t) => self
                        .resolve(t, &[], false, Slot::Parent, &forced)?
                        .into_iter()
                        .next(),
                    None => None,
                };
                let mut out = describe::list(memory.store(), *kind, *status, parent.as_ref())?;
                out.context = parent.iter().map(|p| p.number).collect();
                Ok(out)
            }
            Command::Show { target } => {
                let found = self.resolve(target, &[], true, Slot::Target, &forced)?;
                let mut text = Vec::new();
                for e in &found {
                    text.push(describe::entity(memory.store(), e)?);
                }
                let mut out = Outcome::answer(text.join("\n\n"));
                out.summary = Some(format!("Showed {}.", labels(&found)));
                out.objects = found;
                Ok(out)
            }
            Command::Ask(q) => answer::answer(self, q, &forced),
        }
    }

    /// Resolves a reference, or stops with a question or a refusal.
    fn resolve(
        &self,
        target: &Target,
        allowed: &[EntityKind],
        plural: bool,
        slot: Slot,
        forced: &Option<(Slot, Vec<Entity>)>,
    ) -> Result<Vec<Entity>, Stop> {
        if let Some((s, chosen)) = forced
            && *s == slot
        {
            return Ok(chosen.clone());
        }
        match refs::resolve(self.engine.memory().store(), target, allowed, plural)? {
            Resolved::Found(v) => Ok(v),
            Resolved::Ambiguous(v) => Err(Stop::Clarify(slot, v)),
            Resolved::Missing(msg) => Err(Stop::Refuse(msg)),
        }
    }
}

/// Runs `write` for every item in one unit of work: a command on several
/// entities ("add 3 stories: a, b and c", "block them") changes all of them
/// or, when one is refused or fails, none.
/// Writes every item or none, as one engine write: the entities and their
/// log lines are accounted for in the window and may trigger zone actions.
fn all_or_none<S: ChatStore + ?Sized, T>(
    engine: &Engine<S>,
    items: &[T],
    write: impl Fn(
        &mnemon_core::memory::Memory<S>,
        &T,
    ) -> Result<Entity, mnemon_core::memory::StoreError>,
) -> Result<mnemon_core::engine::Outcome<Vec<Entity>>, EngineError> {
    engine.write(ENTITY_LINE_TOKENS * items.len() as u64, |m| {
        m.store()
            .atomically(|| items.iter().map(|i| write(m, i)).collect())
    })
}

/// What an entity's log line adds to the live context, about: its type,
/// number, title and parent as JSON.
const ENTITY_LINE_TOKENS: u64 = 48;

fn bare(kind: ReplyKind, text: String) -> Outcome {
    Outcome {
        kind,
        record: false,
        ..Outcome::answer(text)
    }
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max).collect();
    format!("{cut}…")
}

/// Errors a person caused (a wrong number, an invalid change), shown as a
/// reply instead of ending the session.
fn is_user_error(e: &mnemon_core::memory::StoreError) -> bool {
    use mnemon_core::memory::StoreError as E;
    matches!(
        e,
        E::NotFound { .. } | E::Invalid(_) | E::Ambiguous { .. } | E::Conflict { .. }
    )
}
