//! The MCP tools. Each runs one library verb on the blocking pool and
//! answers with text an LLM can read: JSON for the window and for what was
//! stored, and stored text inside the memory fence. A refusal (bad input,
//! a stale version, a full window) is a tool error whose message says what
//! to do, so the model can read it and retry; only a request the SDK
//! cannot route is a protocol error.

use mnemon::mnemon_core::assemble::fence;
use mnemon::{
    ContextQuery, Format, HotItemChange, HotKind, HotStatus, Mnemon, NewDecision, NewOperation,
    OperationQuery,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Extensions};
use rmcp::{ErrorData, tool, tool_router};
use serde_json::{Value, json};

use super::McpServer;
use super::args::{
    ContextArgs, DecisionArgs, ForgetArgs, GoalArgs, NoArgs, RecentArgs, RecordArgs, ResumeArgs,
    SearchArgs, TextArgs,
};

/// What a tool's work gives back: the text to send, or a refusal to show
/// the model.
type Answer = Result<String, String>;

fn said(e: mnemon::Error) -> String {
    e.to_string()
}

fn to_text(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// What was stored and the window after it, inside the fence (it carries
/// the stored text).
fn stored<T: serde::Serialize>(w: &mnemon::Written<T>) -> Answer {
    let v = w.to_json().map_err(|e| e.to_string())?;
    Ok(fence::wrap(&to_text(&v)))
}

fn in_range(what: &str, n: Option<usize>, default: usize, max: usize) -> Result<usize, String> {
    let n = n.unwrap_or(default);
    if n == 0 || n > max {
        return Err(format!("{what} {n} is out of range: give 1 to {max}"));
    }
    Ok(n)
}

fn priority(p: Option<&str>) -> Result<Option<mnemon::Priority>, String> {
    p.map(str::parse).transpose()
}

impl McpServer {
    /// Runs `work` on the project of this call, off the async workers.
    async fn run(
        &self,
        ext: &Extensions,
        work: impl FnOnce(&Mnemon) -> Answer + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let m = self.project(ext)?;
        let answer = tokio::task::spawn_blocking(move || work(&m))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool stopped: {e}"), None))?;
        Ok(match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }

    fn add_hot(&self, kind: HotKind, a: TextArgs) -> impl FnOnce(&Mnemon) -> Answer + use<> {
        move |m| {
            let p = priority(a.priority.as_deref())?;
            stored(&m.add_hot(kind, &a.text, p, None).map_err(said)?)
        }
    }
}

#[tool_router(router = tool_router, vis = "pub(super)")]
impl McpServer {
    #[tool(
        description = "How full your context window is and what to do now: tokens used of the effective window, the zone (green, yellow, orange, red), the recommended action, the profile and the model. Call it before a large step."
    )]
    async fn status(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, |m| {
            let r = m.report().map_err(said)?;
            Ok(to_text(
                &serde_json::to_value(r).map_err(|e| e.to_string())?,
            ))
        })
        .await
    }

    #[tool(
        description = "Log one operation you performed (a file edit, a command, a test run, an error, a finished task) so it can be recalled and checkpointed. Returns the stored record and your window after it."
    )]
    async fn record(
        &self,
        Parameters(a): Parameters<RecordArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let phase = a.phase.as_deref().map(str::parse).transpose()?;
            let out = m
                .record(NewOperation {
                    kind: a.kind,
                    data: a.data.unwrap_or_else(|| json!({})),
                    tokens: a.tokens,
                    phase,
                    agent: None,
                    status: a.status,
                })
                .map_err(said)?;
            stored(&out)
        })
        .await
    }

    #[tool(
        description = "Keep a fact for the rest of the project (always included in context): a preference, a name, a path, a result you will need again."
    )]
    async fn remember(
        &self,
        Parameters(a): Parameters<TextArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, self.add_hot(HotKind::Note, a)).await
    }

    #[tool(
        description = "Set a goal to work towards; it stays in context until completed. Returns its id and version for complete_goal."
    )]
    async fn set_goal(
        &self,
        Parameters(a): Parameters<TextArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, self.add_hot(HotKind::Goal, a)).await
    }

    #[tool(
        description = "Add a constraint every later step must respect (always included in context): \"never push to main\", \"keep the public API stable\"."
    )]
    async fn add_constraint(
        &self,
        Parameters(a): Parameters<TextArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, self.add_hot(HotKind::Constraint, a)).await
    }

    #[tool(
        description = "Mark a goal complete. Pass the version you read to avoid overwriting someone else's change."
    )]
    async fn complete_goal(
        &self,
        Parameters(a): Parameters<GoalArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let out = m
                .update_hot(
                    &a.id,
                    a.version,
                    HotItemChange {
                        status: Some(HotStatus::Complete),
                        ..HotItemChange::default()
                    },
                )
                .map_err(said)?;
            stored(&out)
        })
        .await
    }

    #[tool(
        description = "The latest operations of this project, newest first, optionally of one type."
    )]
    async fn recent(
        &self,
        Parameters(a): Parameters<RecentArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let limit = in_range("limit", a.limit, mnemon::LIST_LIMIT, 500)?;
            let ops = m
                .recent(&OperationQuery {
                    kind: a.kind,
                    limit: Some(limit),
                    ..OperationQuery::default()
                })
                .map_err(said)?;
            let lines: Vec<String> = ops
                .iter()
                .map(|o| format!("o{} {} {} {}", o.seq, o.created_at, o.kind, o.data))
                .collect();
            Ok(if lines.is_empty() {
                "no operations yet".into()
            } else {
                fence::wrap(&lines.join("\n"))
            })
        })
        .await
    }

    #[tool(
        description = "Full-text search across operations, messages, decisions, the hot context and tasks, best match first."
    )]
    async fn search(
        &self,
        Parameters(a): Parameters<SearchArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let limit = in_range("limit", a.limit, mnemon::SEARCH_LIMIT, 100)?;
            let hits = m.search(&a.query, limit).map_err(said)?;
            let lines: Vec<String> = hits
                .iter()
                .map(|r| format!("{} ({:.3}): {}", r.hit.id, r.score, r.hit.text))
                .collect();
            Ok(if lines.is_empty() {
                format!("nothing matches `{}`", a.query)
            } else {
                fence::wrap(&lines.join("\n"))
            })
        })
        .await
    }

    #[tool(
        description = "The best context that fits a token budget: goals, constraints, decisions, project state, recent work and what is relevant to the query. Never exceeds the budget."
    )]
    async fn context(
        &self,
        Parameters(a): Parameters<ContextArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let budget = a.budget.unwrap_or(mnemon::TOOL_BUDGET);
            let format: Format = a.format.as_deref().unwrap_or("markdown").parse()?;
            let out = m
                .context(&ContextQuery {
                    budget: Some(budget),
                    preset: a.preset.unwrap_or_else(|| mnemon::DEFAULT_PRESET.into()),
                    query: a.query,
                    format,
                    messages_before: None,
                })
                .map_err(said)?;
            Ok(match format {
                // The markdown carries its own fence.
                Format::Markdown => out.text,
                Format::Json | Format::Messages => {
                    to_text(&serde_json::to_value(&out).map_err(|e| e.to_string())?)
                }
            })
        })
        .await
    }

    #[tool(
        description = "Record an architecture decision (ADR): what was decided, why, its consequences and the alternatives rejected. Decisions stay in context."
    )]
    async fn log_decision(
        &self,
        Parameters(a): Parameters<DecisionArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let mut record = json!({
                "title": a.title,
                "context": a.context,
                "decision": a.decision,
                "consequences": {
                    "positive": a.positive,
                    "negative": a.negative,
                    "mitigations": a.mitigations,
                },
                "alternatives": a.alternatives.iter().map(|x| json!({
                    "option": x.option,
                    "rejected_because": x.rejected_because,
                })).collect::<Vec<_>>(),
                "assumptions": a.assumptions,
            });
            if let Some(s) = a.status {
                let status: mnemon::DecisionStatus = s.parse()?;
                record["status"] = json!(status);
            }
            let d = NewDecision::from_json(&record).map_err(|e| e.to_string())?;
            stored(&m.decide(&d).map_err(said)?)
        })
        .await
    }

    #[tool(
        description = "Save a checkpoint now: working memory, hot context, window state and resume instructions. Do it before a risky step or when status says so."
    )]
    async fn checkpoint(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, |m| {
            let out = m.checkpoint("manual").map_err(said)?;
            let cp = &out.value;
            Ok(fence::wrap(&to_text(&json!({
                "id": cp.id,
                "trigger": cp.trigger,
                "resume_instructions": cp.resume_instructions,
                "window": out.status.window,
                "warnings": out.warnings,
            }))))
        })
        .await
    }

    #[tool(
        description = "Continue from a checkpoint (the latest when none is named): restores working memory, the hot context and the window, and returns the next task, blockers and warnings."
    )]
    async fn resume(
        &self,
        Parameters(a): Parameters<ResumeArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            let id = match a.checkpoint {
                Some(id) => crate::api::checkpoint_id(&id).map_err(|e| e.to_string())?,
                None => m
                    .checkpoints(1)
                    .map_err(said)?
                    .into_iter()
                    .next()
                    .map(|c| c.id)
                    .ok_or("there is no checkpoint yet: call `checkpoint` first")?,
            };
            let (out, cp) = m.resume_from(&id).map_err(said)?;
            Ok(fence::wrap(&to_text(&json!({
                "resumed": out.value,
                "resume_instructions": cp.resume_instructions,
                "window": out.status.window,
                "warnings": out.warnings,
            }))))
        })
        .await
    }

    #[tool(
        description = "Forget something the user asked you to forget (a secret, personal data, a wrong fact): by id or by a phrase, from every record, message, fact, decision, summary and checkpoint that holds it. It cannot be undone; try dry_run first. Returns the ids that went, never the content."
    )]
    async fn forget(
        &self,
        Parameters(a): Parameters<ForgetArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, move |m| {
            if a.targets.is_empty() && a.matching.is_empty() {
                return Err("name what to forget: `targets` (ids such as o12, m7, DR-…) or `matching` (a phrase)".into());
            }
            let f = m.forget(&a.targets, &a.matching, a.dry_run).map_err(said)?;
            Ok(to_text(&serde_json::to_value(f).map_err(|e| e.to_string())?))
        })
        .await
    }

    #[tool(
        description = "End your session: checkpoint, summary, archive, updated project documents, and a fresh window for what comes next."
    )]
    async fn session_end(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ext: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&ext, |m| stored(&m.end_session(None).map_err(said)?))
            .await
    }
}
