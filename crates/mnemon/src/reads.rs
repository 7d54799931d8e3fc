//! The verbs that read: what to send, search, the log, the tiers.

use std::path::Path;

use mnemon_core::assemble::retrieve::Ranked;
use mnemon_core::assemble::{Assembled, Format};
use mnemon_core::engine::{ContextRequest, StoredCheckpoint};
use mnemon_core::memory::{
    DecisionRecord, DocKind, Document, Entity, EntityQuery, HotContext, Message, MessageQuery,
    Operation, OperationQuery, Session, StoreError,
};

use crate::Mnemon;
use crate::error::{Error, Result};

/// The largest token count a request may name (a budget, a window, a
/// usage figure): far above any model's window, low enough that no sum of
/// a few of them overflows.
pub const MAX_TOKENS: u64 = 100_000_000;

/// The most items one listing returns. Far more than any screen, file or
/// context holds, so only a mistake reaches it (a wrapped negative number,
/// a digit too many); zero is refused too, as it would answer "nothing"
/// about a project that has things. Interfaces may page below it (one HTTP
/// response, one tool's result).
pub const MAX_LIST: u64 = 1_000_000_000;

/// How many matches a search returns when the caller names no limit, on
/// every interface (the CLI, HTTP, MCP).
pub const SEARCH_LIMIT: usize = 10;

/// How many items a listing of the log, of sessions or of checkpoints
/// returns when the caller names no limit, newest first, on every
/// interface. Decisions and entities are listed whole unless a limit is
/// named (an interface that pages stops at its page).
pub const LIST_LIMIT: usize = 20;

/// `limit` if it is 1 to [`MAX_LIST`]: every listing verb checks here.
pub(crate) fn listing(limit: usize) -> Result<usize> {
    if limit == 0 || limit as u64 > MAX_LIST {
        return Err(Error::OutOfRange {
            what: "limit",
            value: limit as u64,
            min: 1,
            max: MAX_LIST,
            unit: "",
        });
    }
    Ok(limit)
}

/// [`listing`] for a limit that may be absent (everything).
fn listing_opt(limit: Option<usize>) -> Result<Option<usize>> {
    limit.map(listing).transpose()
}

/// The preset a context is assembled with when a request names none: the
/// tiers, which need no question.
pub const DEFAULT_PRESET: &str = "tiers";

/// The budget of a context asked for as a tool's result (MCP) when the
/// caller names none. A tool's result lands in the calling model's own
/// window, so "what the window has left" (the library's default) would
/// fill it; 4,000 tokens holds the tiers and a good share of retrieval.
pub const TOOL_BUDGET: u64 = 4_000;

/// What to assemble: `mnemon context`'s options.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextQuery {
    /// Tokens the result may take at most. `None`: the plan's own budget,
    /// else what the window has left.
    pub budget: Option<u64>,
    /// A preset (`tiers`, `qa`, `conversation`, `router`, `planner`,
    /// `phase:<name>`) or a plan from `[plans.<name>]`.
    pub preset: String,
    /// Words to retrieve for; `None` assembles the tiers alone.
    pub query: Option<String>,
    /// Markdown, JSON or an OpenAI `messages` list.
    pub format: Format,
    /// Leave out the messages from this one on (by `seq`), for a caller
    /// that sends the newest turns verbatim itself.
    pub messages_before: Option<u64>,
}

impl Default for ContextQuery {
    fn default() -> Self {
        ContextQuery {
            budget: None,
            preset: DEFAULT_PRESET.into(),
            query: None,
            format: Format::Markdown,
            messages_before: None,
        }
    }
}

/// A checkpoint's text and where it was read from.
#[derive(Debug, Clone)]
pub struct CheckpointSource {
    /// The checkpoint's JSON text, exactly as read.
    pub json: String,
    /// The file's path, or the id when it came from the database.
    pub name: String,
}

impl Mnemon {
    /// The best context that fits the budget exactly, for this agent.
    /// A budget outside 1 to [`MAX_TOKENS`] is refused here, for every
    /// interface alike.
    pub fn context(&self, q: &ContextQuery) -> Result<Assembled> {
        if let Some(budget) = q.budget
            && !(1..=MAX_TOKENS).contains(&budget)
        {
            return Err(Error::OutOfRange {
                what: "budget",
                value: budget,
                min: 1,
                max: MAX_TOKENS,
                unit: " tokens",
            });
        }
        let plan = self.settings().loaded().config.plan(&q.preset)?;
        let e = self.engine()?;
        Ok(e.context(&ContextRequest {
            plan,
            budget: q.budget,
            query: q.query.clone(),
            format: q.format,
            chat: self.setup().chat_format,
            messages_before: q.messages_before,
        })?)
    }

    /// The name of the tokenizer this project counts with (`cl100k_base`,
    /// a local model's, or the heuristic).
    pub fn tokenizer(&self) -> Result<String> {
        Ok(self.engine()?.memory().counter().name().to_string())
    }

    /// Tokens `text` costs with this project's tokenizer.
    pub fn count_tokens(&self, text: &str) -> Result<u64> {
        Ok(self.engine()?.memory().counter().count(text) as u64)
    }

    /// Tokens a chat request of `messages` costs with this project's
    /// tokenizer and chat framing, the reply priming included.
    pub fn count_chat(&self, messages: &[mnemon_core::tokens::ChatMessage]) -> Result<u64> {
        let e = self.engine()?;
        Ok(
            mnemon_core::tokens::count_chat(
                e.memory().counter(),
                self.setup().chat_format,
                messages,
            ) as u64,
        )
    }

    /// Ranked matches across every tier.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Ranked>> {
        Ok(self.engine()?.search(query, listing(limit)?)?)
    }

    /// Operations, most recent first. A `session_id` may be a prefix.
    pub fn recent(&self, q: &OperationQuery) -> Result<Vec<Operation>> {
        listing_opt(q.limit)?;
        let e = self.engine()?;
        let m = e.memory();
        let session_id = match &q.session_id {
            Some(id) => Some(m.store().session(id)?.id),
            None => None,
        };
        Ok(m.recent(&OperationQuery {
            session_id,
            ..q.clone()
        })?)
    }

    /// Messages, most recent first.
    pub fn messages(&self, q: &MessageQuery) -> Result<Vec<Message>> {
        listing_opt(q.limit)?;
        Ok(self.engine()?.memory().recent_messages(q)?)
    }

    /// The live hot context.
    pub fn hot(&self) -> Result<HotContext> {
        Ok(self.engine()?.memory().hot()?)
    }

    /// A decision record by id (`DR-a3f8b2c1`), its hex part, or a unique prefix.
    pub fn decision(&self, id: &str) -> Result<DecisionRecord> {
        Ok(self.engine()?.memory().store().decision(id)?)
    }

    /// Most recent first.
    pub fn decisions(&self, limit: Option<usize>) -> Result<Vec<DecisionRecord>> {
        Ok(self
            .engine()?
            .memory()
            .store()
            .decisions(listing_opt(limit)?)?)
    }

    /// A project entity by its number.
    pub fn entity(&self, number: u64) -> Result<Entity> {
        Ok(self.engine()?.memory().store().entity(number)?)
    }

    /// Entities, most urgent first, then by number.
    pub fn entities(&self, q: &EntityQuery) -> Result<Vec<Entity>> {
        listing_opt(q.limit)?;
        Ok(self.engine()?.memory().store().entities(q)?)
    }

    /// A session by id or prefix, or this agent's active one.
    pub fn session(&self, id: Option<&str>) -> Result<Session> {
        let e = self.engine()?;
        let m = e.memory();
        Ok(match id {
            Some(id) => m.store().session(id)?,
            None => m
                .store()
                .active_session(m.agent())?
                .ok_or_else(|| StoreError::NotFound {
                    what: "active session",
                    id: m.agent().to_string(),
                })?,
        })
    }

    /// Most recently active first.
    pub fn sessions(&self, limit: usize) -> Result<Vec<Session>> {
        Ok(self.engine()?.memory().store().sessions(listing(limit)?)?)
    }

    /// Stored checkpoints, newest first.
    pub fn checkpoints(&self, limit: usize) -> Result<Vec<StoredCheckpoint>> {
        Ok(self
            .engine()?
            .memory()
            .store()
            .checkpoints(listing(limit)?)?)
    }

    /// A checkpoint as the database holds it.
    pub fn stored_checkpoint(&self, id: &str) -> Result<StoredCheckpoint> {
        Ok(self.engine()?.memory().store().checkpoint(id)?)
    }

    /// A checkpoint's text: `id_or_path` as a `.json` file, else the
    /// project's `checkpoints/<id>.json`, else the database's copy.
    pub fn checkpoint_source(&self, id_or_path: &str) -> Result<CheckpointSource> {
        let read = |p: &Path| {
            std::fs::read_to_string(p)
                .map_err(|e| Error::io(format!("cannot read {}", p.display()), e))
        };
        let as_path = Path::new(id_or_path);
        if id_or_path.ends_with(".json") && as_path.exists() {
            return Ok(CheckpointSource {
                json: read(as_path)?,
                name: as_path.display().to_string(),
            });
        }
        if let Some(dir) = self.dir() {
            let file = dir.join("checkpoints").join(format!("{id_or_path}.json"));
            if file.exists() {
                return Ok(CheckpointSource {
                    json: read(&file)?,
                    name: crate::display_path(&file),
                });
            }
        }
        let stored = self.stored_checkpoint(id_or_path)?;
        Ok(CheckpointSource {
            json: stored.json,
            name: id_or_path.to_string(),
        })
    }

    /// The positions of the newest operation and the newest message: they
    /// rise with every write, by any process, so a watcher that sees them
    /// move knows the project changed.
    pub fn log_heads(&self) -> Result<(i64, i64)> {
        Ok(self.engine()?.memory().store().log_heads()?)
    }

    /// An episodic document. The current version is regenerated first (and
    /// its file written), so it is never stale.
    pub fn document(&self, kind: DocKind, version: Option<u64>) -> Result<Document> {
        let e = self.engine()?;
        let m = e.memory();
        let docs = m.refresh_documents(self.keep_versions())?;
        if let Some(views) = self.views() {
            views.write_documents(m, &docs)?;
        }
        Ok(m.store().document(kind, version)?)
    }

    /// Rewrites every rendered file from the database; how many.
    pub fn export(&self) -> Result<usize> {
        let e = self.engine()?;
        match self.views() {
            Some(v) => v.export(e.memory(), self.keep_versions()),
            None => Ok(0),
        }
    }

    /// Compaction audits, newest first.
    pub fn compactions(&self, limit: usize) -> Result<Vec<mnemon_core::engine::CompactionRecord>> {
        Ok(self
            .engine()?
            .memory()
            .store()
            .compactions(listing(limit)?)?)
    }
}
