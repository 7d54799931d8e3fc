//! `mnemon._native`: the `mnemon` crate's handle for Python.
//!
//! This module has no logic of its own: each method parses its arguments
//! into the library's request types, calls the verb with the GIL released
//! (so Python threads sharing a handle write concurrently, as Rust threads
//! do), and answers with the value's JSON, which the pure-Python layer
//! (`python/mnemon/__init__.py`) turns into typed objects. JSON keeps the
//! shapes identical to what `--json` and the HTTP API print, so one
//! document describes all three. An assembled context is the exception: it
//! stays a Rust object (`Assembled`) whose parts Python reads as needed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mnemon::mnemon_core::memory::{
    DecisionStatus, HotItemChange, HotKind, HotStatus, MessageQuery, NewMessage, NewOperation,
    OperationQuery, Phase, Priority,
};
use mnemon::mnemon_core::tokens::TokenCounter;
use mnemon::{AskOptions, ContextQuery, Format, InitOptions, Mnemon, OpenOptions, Role};
use pyo3::prelude::*;

mod assembled;
mod convert;

use assembled::Assembled;
use convert::{
    ConflictError, Error, InputError, LlmError, StorageError, call, input, json, new_decision,
    parse, raise, unsigned, value,
};

/// A project's handle. Cheap to share: every thread may call it at once.
#[pyclass(frozen, skip_from_py_object, module = "mnemon._native")]
#[derive(Debug, Clone)]
struct Handle {
    m: Mnemon,
    /// Counters of other models' tokenizers, by model, made on first use:
    /// a local model's `tokenizer.json` takes a fifth of a second to load,
    /// too much to pay on every `count_tokens(model=...)`. Shared by the
    /// handles of every agent.
    counters: Arc<Mutex<HashMap<String, Arc<dyn TokenCounter>>>>,
}

impl Handle {
    fn new(m: Mnemon) -> Handle {
        Handle {
            m,
            counters: Arc::default(),
        }
    }

    fn counter_for(&self, model: &str) -> mnemon::Result<Arc<dyn TokenCounter>> {
        let mut made = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = made.get(model) {
            return Ok(Arc::clone(c));
        }
        let settings = self.m.settings();
        let setup = settings.setup(Some(model))?;
        let c: Arc<dyn TokenCounter> = Arc::from(settings.counter(&setup.tokenizer)?);
        made.insert(model.to_string(), Arc::clone(&c));
        Ok(c)
    }
}

#[pymethods]
impl Handle {
    /// The project whose `.mnemon/` is in `path` or the nearest directory
    /// above it, with `MNEMON_*` variables applied as the CLI applies them.
    #[staticmethod]
    #[pyo3(signature = (path, agent=None))]
    fn open(py: Python<'_>, path: PathBuf, agent: Option<String>) -> PyResult<Handle> {
        py.detach(move || {
            let mut opts = OpenOptions::from_process_env()?;
            if let Some(a) = agent {
                opts = opts.agent(a);
            }
            let m = opts.discover(&path, None)?;
            Ok(Handle::new(m))
        })
        .map_err(raise)
    }

    /// A project with no files; `config` is a `config.toml` text.
    #[staticmethod]
    #[pyo3(signature = (config=None))]
    fn in_memory(py: Python<'_>, config: Option<String>) -> PyResult<Handle> {
        py.detach(move || {
            let m = OpenOptions::new().in_memory(config.as_deref())?;
            Ok(Handle::new(m))
        })
        .map_err(raise)
    }

    /// Creates `.mnemon/` in `path`; answers with the config file's path.
    #[staticmethod]
    #[pyo3(signature = (path, model=None, window=None))]
    fn init(
        py: Python<'_>,
        path: PathBuf,
        model: Option<String>,
        window: Option<i64>,
    ) -> PyResult<String> {
        let window = unsigned("window", window)?;
        let done = py
            .detach(move || mnemon::init(&path, &InitOptions { model, window }))
            .map_err(raise)?;
        Ok(done.config_path.display().to_string())
    }

    fn for_agent(&self, name: &str) -> PyResult<Handle> {
        if name.trim().is_empty() {
            return Err(input("the agent's name is empty"));
        }
        Ok(Handle {
            m: self.m.for_agent(name),
            counters: Arc::clone(&self.counters),
        })
    }

    /// `.mnemon/`, or `None` in memory.
    fn dir(&self) -> Option<String> {
        self.m.dir().map(|d| d.display().to_string())
    }

    #[pyo3(signature = (kind, data, tokens=None, phase=None, status=None))]
    fn record(
        &self,
        py: Python<'_>,
        kind: String,
        data: &str,
        tokens: Option<i64>,
        phase: Option<&str>,
        status: Option<String>,
    ) -> PyResult<String> {
        if kind.trim().is_empty() {
            return Err(input("an operation needs a type, such as `task_execution`"));
        }
        let op = NewOperation {
            kind,
            data: value("data", data)?,
            tokens: unsigned("tokens", tokens)?,
            phase: parse::<Phase>("phase", phase)?,
            agent: None,
            status,
        };
        call(py, || self.m.record(op))
    }

    #[pyo3(signature = (role, content, tokens=None))]
    fn message(
        &self,
        py: Python<'_>,
        role: &str,
        content: String,
        tokens: Option<i64>,
    ) -> PyResult<String> {
        let role: Role = role
            .parse()
            .map_err(|e: String| input(format!("role: {e}")))?;
        let msg = NewMessage {
            tokens: unsigned("tokens", tokens)?,
            ..NewMessage::new(role, content)
        };
        call(py, || self.m.message(msg))
    }

    #[pyo3(signature = (budget=None, query=None, preset=None, format=None, messages_before=None))]
    fn context(
        &self,
        py: Python<'_>,
        budget: Option<i64>,
        query: Option<String>,
        preset: Option<String>,
        format: Option<&str>,
        messages_before: Option<i64>,
    ) -> PyResult<Assembled> {
        let mut q = ContextQuery {
            budget: unsigned("budget", budget)?,
            query: query.filter(|q| !q.trim().is_empty()),
            messages_before: unsigned("messages_before", messages_before)?,
            ..ContextQuery::default()
        };
        if let Some(p) = preset {
            q.preset = p;
        }
        if let Some(f) = parse::<Format>("format", format)? {
            q.format = f;
        }
        let a = py.detach(|| self.m.context(&q)).map_err(raise)?;
        Ok(Assembled { a })
    }

    #[pyo3(signature = (query, limit=10))]
    fn search(&self, py: Python<'_>, query: &str, limit: i64) -> PyResult<String> {
        let limit = unsigned("limit", Some(limit))?.unwrap_or(10) as usize;
        call(py, || self.m.search(query, limit))
    }

    #[pyo3(signature = (limit=20, kind=None, session=None, keywords=None))]
    fn recent(
        &self,
        py: Python<'_>,
        limit: i64,
        kind: Option<String>,
        session: Option<String>,
        keywords: Option<String>,
    ) -> PyResult<String> {
        let q = OperationQuery {
            session_id: session,
            kind,
            keywords,
            limit: unsigned("limit", Some(limit))?.map(|n| n as usize),
        };
        call(py, || self.m.recent(&q))
    }

    #[pyo3(signature = (limit=20, session=None, keywords=None))]
    fn messages(
        &self,
        py: Python<'_>,
        limit: i64,
        session: Option<String>,
        keywords: Option<String>,
    ) -> PyResult<String> {
        let q = MessageQuery {
            session_id: session,
            keywords,
            limit: unsigned("limit", Some(limit))?.map(|n| n as usize),
        };
        call(py, || self.m.messages(&q))
    }

    fn status(&self, py: Python<'_>) -> PyResult<String> {
        call(py, || self.m.status())
    }

    fn report(&self, py: Python<'_>) -> PyResult<String> {
        call(py, || self.m.report())
    }

    fn hot(&self, py: Python<'_>) -> PyResult<String> {
        let hot = py.detach(|| self.m.hot()).map_err(raise)?;
        json(&hot.to_json())
    }

    #[pyo3(signature = (kind, text, priority=None, parent=None))]
    fn add_hot(
        &self,
        py: Python<'_>,
        kind: &str,
        text: String,
        priority: Option<&str>,
        parent: Option<String>,
    ) -> PyResult<String> {
        let kind = match kind {
            "goal" => HotKind::Goal,
            "constraint" => HotKind::Constraint,
            "note" => HotKind::Note,
            other => {
                return Err(input(format!(
                    "kind `{other}` is not one to add: use goal, constraint or note"
                )));
            }
        };
        let priority = parse::<Priority>("priority", priority)?;
        call(py, || {
            self.m.add_hot(kind, &text, priority, parent.as_deref())
        })
    }

    #[pyo3(signature = (id, version=None, text=None, priority=None, status=None))]
    fn update_hot(
        &self,
        py: Python<'_>,
        id: String,
        version: Option<i64>,
        text: Option<String>,
        priority: Option<&str>,
        status: Option<&str>,
    ) -> PyResult<String> {
        let status = status
            .map(|s| {
                HotStatus::parse(s).ok_or_else(|| {
                    input(format!(
                        "status `{s}`: use pending, in-progress, complete, active or removed"
                    ))
                })
            })
            .transpose()?;
        let change = HotItemChange {
            text,
            priority: parse::<Priority>("priority", priority)?,
            status,
            ..HotItemChange::default()
        };
        let version = unsigned("version", version)?;
        call(py, || self.m.update_hot(&id, version, change))
    }

    /// `decision` is a JSON object with the fields of a decision record
    /// but its status, which is given by name.
    fn decide(&self, py: Python<'_>, decision: &str, status: &str) -> PyResult<String> {
        let d = new_decision(decision, status)?;
        call(py, || self.m.decide(&d))
    }

    fn supersede(
        &self,
        py: Python<'_>,
        old: String,
        decision: &str,
        status: &str,
    ) -> PyResult<String> {
        let d = new_decision(decision, status)?;
        call(py, || self.m.supersede(&old, &d))
    }

    fn set_decision_status(&self, py: Python<'_>, id: String, status: &str) -> PyResult<String> {
        let status: DecisionStatus = status
            .parse()
            .map_err(|e: String| input(format!("status: {e}")))?;
        call(py, || self.m.set_decision_status(&id, status))
    }

    fn decision(&self, py: Python<'_>, id: String) -> PyResult<String> {
        call(py, || self.m.decision(&id))
    }

    #[pyo3(signature = (limit=None))]
    fn decisions(&self, py: Python<'_>, limit: Option<i64>) -> PyResult<String> {
        let limit = unsigned("limit", limit)?.map(|n| n as usize);
        call(py, || self.m.decisions(limit))
    }

    #[pyo3(signature = (title=None))]
    fn start_session(&self, py: Python<'_>, title: Option<String>) -> PyResult<String> {
        call(py, || self.m.start_session(title.as_deref()))
    }

    #[pyo3(signature = (id=None))]
    fn end_session(&self, py: Python<'_>, id: Option<String>) -> PyResult<String> {
        call(py, || self.m.end_session(id.as_deref()))
    }

    #[pyo3(signature = (id=None))]
    fn session(&self, py: Python<'_>, id: Option<String>) -> PyResult<String> {
        call(py, || self.m.session(id.as_deref()))
    }

    #[pyo3(signature = (limit=20))]
    fn sessions(&self, py: Python<'_>, limit: i64) -> PyResult<String> {
        let limit = unsigned("limit", Some(limit))?.unwrap_or(20) as usize;
        call(py, || self.m.sessions(limit))
    }

    #[pyo3(signature = (trigger="manual".to_string()))]
    fn checkpoint(&self, py: Python<'_>, trigger: String) -> PyResult<String> {
        call(py, || self.m.checkpoint(&trigger))
    }

    #[pyo3(signature = (limit=20))]
    fn checkpoints(&self, py: Python<'_>, limit: i64) -> PyResult<String> {
        let limit = unsigned("limit", Some(limit))?.unwrap_or(20) as usize;
        call(py, || self.m.checkpoints(limit))
    }

    fn resume(&self, py: Python<'_>, id_or_path: String) -> PyResult<String> {
        call(py, || self.m.resume(&id_or_path))
    }

    #[pyo3(signature = (llm=false))]
    fn refresh(&self, py: Python<'_>, llm: bool) -> PyResult<String> {
        call(py, || self.m.refresh_with(llm))
    }

    #[pyo3(signature = (dry_run=false))]
    fn compact(&self, py: Python<'_>, dry_run: bool) -> PyResult<String> {
        call(py, || self.m.compact(dry_run))
    }

    fn report_usage(&self, py: Python<'_>, prompt_tokens: i64) -> PyResult<String> {
        let tokens = unsigned("prompt_tokens", Some(prompt_tokens))?.unwrap_or(0);
        call(py, || self.m.report_usage(tokens))
    }

    /// Exact tokens of `text` with the project's tokenizer, or with the
    /// tokenizer of `model` (an id or alias from the model registry).
    #[pyo3(signature = (text, model=None))]
    fn count_tokens(&self, py: Python<'_>, text: &str, model: Option<String>) -> PyResult<u64> {
        py.detach(|| match model {
            None => self.m.count_tokens(text),
            Some(model) => Ok(self.counter_for(&model)?.count(text) as u64),
        })
        .map_err(raise)
    }

    /// Exact tokens of a chat request (`[{"role": .., "content": ..}]`,
    /// as JSON) with the project's tokenizer and chat framing.
    fn count_chat(&self, py: Python<'_>, messages: &str) -> PyResult<u64> {
        let messages: Vec<mnemon::mnemon_core::tokens::ChatMessage> =
            serde_json::from_str(messages).map_err(|e| {
                input(format!(
                    "messages must be a list of {{\"role\": .., \"content\": ..}}: {e}"
                ))
            })?;
        py.detach(|| self.m.count_chat(&messages)).map_err(raise)
    }

    /// Asks the project's `[llm]`; `on_text` (if given) receives the answer
    /// as it streams, with the GIL taken for each piece.
    #[pyo3(signature = (question, preset=None, answer_tokens=None, on_text=None))]
    fn ask(
        &self,
        py: Python<'_>,
        question: String,
        preset: Option<String>,
        answer_tokens: Option<i64>,
        on_text: Option<Py<PyAny>>,
    ) -> PyResult<String> {
        let mut opts = AskOptions {
            answer_tokens: unsigned("answer_tokens", answer_tokens)?,
            ..AskOptions::default()
        };
        if let Some(p) = preset {
            opts.preset = p;
        }
        let mut failed: Option<PyErr> = None;
        let asked = py.detach(|| {
            let mut sink = |piece: &str| {
                if let (Some(cb), None) = (&on_text, &failed) {
                    Python::attach(|py| {
                        if let Err(e) = cb.call1(py, (piece,)) {
                            failed = Some(e);
                        }
                    });
                }
            };
            self.m.ask(&question, &opts, &mut sink)
        });
        let mut asked = asked.map_err(raise)?;
        // The answer is recorded by now: a failing callback must not turn a
        // committed write into an error, so it becomes a warning.
        if let Some(e) = failed {
            asked.written.warnings.push(format!(
                "on_text raised {e}; it was not called again, and the whole answer was recorded"
            ));
        }
        json(&asked)
    }

    /// Waits until the views under `.mnemon/` show every write so far.
    fn flush_views(&self, py: Python<'_>) {
        py.detach(|| self.m.flush_views());
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Handle>()?;
    m.add_class::<Assembled>()?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("LlmError", py.get_type::<LlmError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
