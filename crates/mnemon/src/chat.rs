//! `mnemon chat` without its terminal: a session of typed lines, each
//! understood and run by mnemon-core's `Chat`, with the files each reply
//! changed written here.

use mnemon_chat::{Chat, Reply, ReplyKind};
use serde::Serialize;

use crate::error::Result;
use crate::render::Touched;
use crate::{Mnemon, ProjectEngine, ProjectStore};

/// One chat session over a project, for one agent. Keep it for as long as
/// the conversation lasts: a question back ("which epic?") is answered by
/// the next line.
pub struct ChatSession {
    mnemon: Mnemon,
    engine: std::sync::Arc<ProjectEngine>,
    chat: Chat<'static, ProjectStore>,
}

impl std::fmt::Debug for ChatSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatSession")
            .field("chat", &self.chat)
            .finish()
    }
}

/// A reply and anything that went wrong after its write committed.
#[derive(Debug, Clone, Serialize)]
pub struct ChatReply {
    #[serde(flatten)]
    /// What the line got: its kind, text, entities, events and the window.
    pub reply: Reply,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    /// Views that could not be written after the line's write committed.
    pub warnings: Vec<String>,
}

impl Mnemon {
    /// A chat session for this handle's agent.
    pub fn chat(&self) -> Result<ChatSession> {
        let engine = self.engine()?;
        let shared = std::sync::Arc::clone(&engine);
        let chat = match self.llm_parser() {
            Some(parser) => Chat::shared_with_parser(shared, parser),
            None => Chat::shared(shared),
        };
        Ok(ChatSession {
            mnemon: self.clone(),
            chat,
            engine,
        })
    }
}

impl ChatSession {
    /// Understands and runs one line; every understood line is recorded.
    pub fn handle(&mut self, line: &str) -> Result<ChatReply> {
        self.handle_streaming(line, &mut |_| {})
    }

    /// [`ChatSession::handle`]; with an LLM configured, a line that is no
    /// command is a question: it is asked (`Mnemon::ask`) and the answer
    /// streams to `on_text` as it arrives.
    pub fn handle_streaming(
        &mut self,
        line: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatReply> {
        let mut reply = self.chat.handle(line)?;
        #[cfg(feature = "llm")]
        if reply.kind == ReplyKind::NotUnderstood
            && self.mnemon.settings().loaded().config.llm.enabled()
        {
            let asked = self
                .mnemon
                .ask(line.trim(), &crate::AskOptions::default(), on_text)?;
            reply.kind = ReplyKind::Answer;
            reply.text = asked.answer;
            reply.events = asked.written.events;
            reply.status = asked.written.status;
            // `ask` settled its own writes (views, subscribers) already.
            return Ok(ChatReply {
                reply,
                warnings: asked.written.warnings,
            });
        }
        #[cfg(not(feature = "llm"))]
        let _ = (&mut reply, on_text);
        Ok(self.settle(reply))
    }

    /// Ends the session gracefully: summary, archive, episodic documents
    /// and a checkpoint.
    pub fn end(&mut self) -> Result<ChatReply> {
        let reply = self.chat.end()?;
        Ok(self.settle(reply))
    }

    /// Whether the last reply asked a question that the next line answers.
    pub fn awaiting_answer(&self) -> bool {
        self.chat.awaiting_answer()
    }

    /// The window of the agent the session drives.
    pub fn status(&self) -> Result<mnemon_core::engine::EngineStatus> {
        Ok(self.engine.status()?)
    }

    /// `line` as a write would store it (reasoning removed, secrets
    /// redacted): what a history file on disk may keep of it.
    pub fn stored_text(&self, line: &str) -> String {
        self.engine.memory().stored_text(line)
    }

    fn settle(&self, reply: Reply) -> ChatReply {
        let touched = Touched {
            decisions: reply.decisions.clone(),
            sessions: reply.sessions.clone(),
            checkpoints: reply.checkpoints.clone(),
            views: reply.recorded.is_some()
                || !reply.sessions.is_empty()
                || reply.kind == ReplyKind::Ended,
            // A line that changed sessions renders whatever the log says.
            logged: reply.recorded.is_some() && reply.sessions.is_empty(),
        };
        let warnings = self
            .mnemon
            .after_write(&self.engine, &reply.events, None, touched);
        ChatReply { reply, warnings }
    }
}
