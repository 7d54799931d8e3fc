"""mnemon: a context-window manager and tiered memory for LLM orchestrators.

The library itself, in-process: every call goes into mnemon's Rust core with
the GIL released, so threads sharing one :class:`Mnemon` write at once, and
several processes may share one project as several ``mnemon`` commands do.

>>> import mnemon
>>> m = mnemon.Mnemon.in_memory()
>>> w = m.record("task_execution", task=15, result="login form done")
>>> ctx = m.context(budget=400, query="login")
>>> ctx.tokens <= 400
True
"""

from __future__ import annotations

import json as _json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _native
from ._native import ConflictError, Error, InputError, LlmError, StorageError
from ._records import (
    Answer,
    Checkpoint,
    Compaction,
    Context,
    Decision,
    Hit,
    Hot,
    HotItem,
    Message,
    Operation,
    Record,
    Report,
    Resumed,
    Section,
    Session,
    Status,
    StoredCheckpoint,
    Window,
    Written,
)

__version__: str = _native.__version__

__all__ = [
    "Mnemon",
    "Error",
    "InputError",
    "StorageError",
    "ConflictError",
    "LlmError",
    "Answer",
    "Checkpoint",
    "Compaction",
    "Context",
    "Decision",
    "Hit",
    "Hot",
    "HotItem",
    "Message",
    "Operation",
    "Record",
    "Report",
    "Resumed",
    "Section",
    "Session",
    "Status",
    "StoredCheckpoint",
    "Window",
    "Written",
]

PathLike = Union[str, "os.PathLike[str]"]


def _load(text: str) -> Any:
    return _json.loads(text)


def _dumps(value: Any, what: str) -> str:
    try:
        return _json.dumps(value)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} must be JSON data (dict, list, str, number, bool, None): {e}") from None


class Mnemon:
    """A project's memory, for one agent.

    Open one with :meth:`open` (a directory with a ``.mnemon/``, as
    ``mnemon init`` makes), :meth:`init` or :meth:`in_memory`. The handle is
    safe to share between threads; :meth:`for_agent` gives a handle whose
    writes and window belong to another agent of the same project.
    """

    __slots__ = ("_h",)

    def __init__(self, handle: "_native.Handle") -> None:
        self._h = handle

    # -- opening ---------------------------------------------------------

    @classmethod
    def open(cls, path: PathLike = ".", *, agent: Optional[str] = None) -> "Mnemon":
        """The project whose ``.mnemon/`` is in ``path`` or the nearest
        directory above it. ``MNEMON_*`` variables apply as they do to the
        ``mnemon`` command (``MNEMON_AGENT`` names the agent unless
        ``agent`` does)."""
        return cls(_native.Handle.open(os.fspath(path), agent))

    @classmethod
    def init(
        cls,
        path: PathLike = ".",
        *,
        model: Optional[str] = None,
        window: Optional[int] = None,
    ) -> "Mnemon":
        """Creates ``.mnemon/`` in ``path`` (as ``mnemon init``) and opens it.
        ``model`` is an id or alias from the registry (``gpt-4o``,
        ``claude-sonnet-4``, ``llama3.1:8b``); ``window`` overrides its
        context window."""
        _native.Handle.init(os.fspath(path), model, window)
        return cls.open(path)

    @classmethod
    def in_memory(cls, config: Optional[str] = None) -> "Mnemon":
        """A project with no files; ``config`` is a ``config.toml`` text."""
        return cls(_native.Handle.in_memory(config))

    def for_agent(self, name: str) -> "Mnemon":
        """A handle on the same project acting as agent ``name``: its own
        window, session and working memory; the project's memory is shared."""
        return Mnemon(self._h.for_agent(name))

    @property
    def dir(self) -> Optional[str]:
        """The project's ``.mnemon/`` directory, or ``None`` in memory."""
        return self._h.dir()

    # -- remember --------------------------------------------------------

    def record(
        self,
        type: str,
        data: Any = None,
        *,
        tokens: Optional[int] = None,
        phase: Optional[str] = None,
        status: Optional[str] = None,
        **fields: Any,
    ) -> Written[Operation]:
        """Records an operation of ``type`` (``task_execution``,
        ``validation``, ``decision``, ``error``, ``note`` or any other) with
        ``data``, or with the keyword ``fields`` as its data."""
        if fields:
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise InputError("give the data either as `data` or as keyword fields, not both")
            data = {**data, **fields}
        if data is None:
            data = {}
        out = self._h.record(type, _dumps(data, "data"), tokens, phase, status)
        return Written(_load(out), Operation)

    def message(self, role: str, content: str, *, tokens: Optional[int] = None) -> Written[Message]:
        """Records a conversation turn (``user``, ``assistant``, ``system``
        or ``tool``)."""
        return Written(_load(self._h.message(role, content, tokens)), Message)

    def remember(self, text: str, *, priority: Optional[str] = None) -> Written[HotItem]:
        """Keeps a fact in the hot context: sent with every context."""
        return Written(_load(self._h.add_hot("note", text, priority, None)), HotItem)

    def add_goal(
        self, text: str, *, priority: Optional[str] = None, parent: Optional[str] = None
    ) -> Written[HotItem]:
        """Adds a goal (``priority``: low, medium, high, critical; ``parent``:
        a goal's id)."""
        return Written(_load(self._h.add_hot("goal", text, priority, parent)), HotItem)

    def add_constraint(self, text: str, *, priority: Optional[str] = None) -> Written[HotItem]:
        """Adds a constraint every context carries."""
        return Written(_load(self._h.add_hot("constraint", text, priority, None)), HotItem)

    def update_hot(
        self,
        id: str,
        *,
        version: Optional[int] = None,
        text: Optional[str] = None,
        priority: Optional[str] = None,
        status: Optional[str] = None,
    ) -> Written[HotItem]:
        """Changes a hot item (``status``: pending, in-progress, complete,
        active, removed). With ``version``, the change applies only if the
        item is still at it, else :class:`ConflictError`."""
        out = self._h.update_hot(id, version, text, priority, status)
        return Written(_load(out), HotItem)

    def decide(
        self,
        title: str,
        decision: str,
        *,
        context: str = "",
        consequences: Optional[Dict[str, Sequence[str]]] = None,
        alternatives: Optional[Sequence[Dict[str, str]]] = None,
        assumptions: Optional[Sequence[str]] = None,
        status: str = "proposed",
    ) -> Written[Decision]:
        """Records a decision: its ADR file, a pinned operation and a hot
        item. ``consequences`` has ``positive``, ``negative`` and
        ``mitigations`` lists; each alternative is ``{"option": ...,
        "rejected_because": ...}``."""
        body = _decision(title, decision, context, consequences, alternatives, assumptions)
        return Written(_load(self._h.decide(body, status)), Decision)

    def supersede(
        self,
        old: str,
        title: str,
        decision: str,
        *,
        context: str = "",
        consequences: Optional[Dict[str, Sequence[str]]] = None,
        alternatives: Optional[Sequence[Dict[str, str]]] = None,
        assumptions: Optional[Sequence[str]] = None,
        status: str = "accepted",
    ) -> Written[List[Decision]]:
        """Replaces decision ``old``; the value is ``[old, new]``."""
        body = _decision(title, decision, context, consequences, alternatives, assumptions)
        return Written(_load(self._h.supersede(old, body, status)), Decision)

    def set_decision_status(self, id: str, status: str) -> Written[Decision]:
        """Moves a decision along its lifecycle (proposed, accepted,
        deprecated)."""
        return Written(_load(self._h.set_decision_status(id, status)), Decision)

    # -- sessions and checkpoints ---------------------------------------

    def start_session(self, title: Optional[str] = None) -> Written[Session]:
        return Written(_load(self._h.start_session(title)), Session)

    def end_session(self, id: Optional[str] = None) -> Written[Dict[str, Any]]:
        """Ends the agent's session (or session ``id``): a checkpoint, a
        structured summary, the archive, and a fresh epoch."""
        return Written(_load(self._h.end_session(id)))

    def checkpoint(self, trigger: str = "manual") -> Written[Checkpoint]:
        """Saves the agent's state now, as ``mnemon checkpoint`` does."""
        return Written(_load(self._h.checkpoint(trigger)), Checkpoint)

    def resume(self, checkpoint: str) -> Written[Resumed]:
        """Restores a checkpoint: an id, a unique prefix, or a file's path."""
        return Written(_load(self._h.resume(checkpoint)), Resumed)

    def refresh(self, *, llm: bool = False) -> Written[None]:
        """Starts a fresh epoch from a summary of this one (by the project's
        ``[llm]`` when ``llm``)."""
        return Written(_load(self._h.refresh(llm)))

    def compact(self, *, dry_run: bool = False) -> Written[Compaction]:
        """Compresses the session log to the configured ratio; the
        originals stay in the store."""
        return Written(_load(self._h.compact(dry_run)), Compaction)

    def report_usage(self, prompt_tokens: int) -> Status:
        """Tells mnemon what the provider counted for the last prompt, so the
        window follows the model's own count."""
        return Status(_load(self._h.report_usage(prompt_tokens)))

    # -- what to send ----------------------------------------------------

    def context(
        self,
        budget: Optional[int] = None,
        query: Optional[str] = None,
        preset: Optional[str] = None,
        format: str = "markdown",
        *,
        messages_before: Optional[int] = None,
    ) -> Context:
        """The best context that fits ``budget`` tokens exactly (default:
        the plan's budget, else what the window has left), shaped by
        ``query``. ``preset``: tiers, qa, conversation, router, planner,
        ``phase:<name>`` or a plan of the config. ``format``: markdown,
        json or messages."""
        return Context(self._h.context(budget, query, preset, format, messages_before))

    def search(self, query: str, limit: int = 10) -> List[Hit]:
        """Everything stored, ranked for ``query``."""
        return [Hit(h) for h in _load(self._h.search(query, limit))]

    def count_tokens(self, text: str, model: Optional[str] = None) -> int:
        """Exact tokens of ``text`` with the project's tokenizer, or with
        ``model``'s (an id or alias from the registry)."""
        return self._h.count_tokens(text, model)

    def count_chat(self, messages: Sequence[Dict[str, Any]]) -> int:
        """Exact tokens of a chat request with the project's tokenizer and
        the model's chat framing."""
        return self._h.count_chat(_dumps(list(messages), "messages"))

    def ask(
        self,
        question: str,
        *,
        preset: Optional[str] = None,
        answer_tokens: Optional[int] = None,
        on_text: Optional[Callable[[str], Any]] = None,
    ) -> Answer:
        """Asks the project's ``[llm]`` with the context that fits its
        window, records the question and the answer, and reports usage.
        ``on_text`` receives the answer as it streams."""
        return Answer(_load(self._h.ask(question, preset, answer_tokens, on_text)))

    # -- reading ---------------------------------------------------------

    def status(self) -> Status:
        """How full the agent's window is, its zone and what to do."""
        return Status(_load(self._h.status()))

    def report(self) -> Report:
        """Everything ``mnemon status --json`` shows."""
        return Report(_load(self._h.report()))

    def hot(self) -> Hot:
        """The hot context: goals, constraints, notes, with versions."""
        return Hot(_load(self._h.hot()))

    def recent(
        self,
        limit: int = 20,
        *,
        type: Optional[str] = None,
        session: Optional[str] = None,
        keywords: Optional[str] = None,
    ) -> List[Operation]:
        """Operations, most recent first."""
        return [Operation(o) for o in _load(self._h.recent(limit, type, session, keywords))]

    def messages(
        self, limit: int = 20, *, session: Optional[str] = None, keywords: Optional[str] = None
    ) -> List[Message]:
        """Conversation turns, most recent first."""
        return [Message(m) for m in _load(self._h.messages(limit, session, keywords))]

    def decision(self, id: str) -> Decision:
        return Decision(_load(self._h.decision(id)))

    def decisions(self, limit: Optional[int] = None) -> List[Decision]:
        return [Decision(d) for d in _load(self._h.decisions(limit))]

    def session(self, id: Optional[str] = None) -> Session:
        """Session ``id``, or the agent's active one."""
        return Session(_load(self._h.session(id)))

    def sessions(self, limit: int = 20) -> List[Session]:
        return [Session(s) for s in _load(self._h.sessions(limit))]

    def checkpoints(self, limit: int = 20) -> List[StoredCheckpoint]:
        return [StoredCheckpoint(c) for c in _load(self._h.checkpoints(limit))]

    def flush_views(self) -> None:
        """Waits until the files under ``.mnemon/`` show every write."""
        self._h.flush_views()

    def __repr__(self) -> str:
        where = self.dir or "in memory"
        return f"Mnemon({where})"


def _decision(
    title: str,
    decision: str,
    context: str,
    consequences: Optional[Dict[str, Sequence[str]]],
    alternatives: Optional[Sequence[Dict[str, str]]],
    assumptions: Optional[Sequence[str]],
) -> str:
    body: Dict[str, Any] = {"title": title, "context": context, "decision": decision}
    if consequences is not None:
        body["consequences"] = {k: list(v) for k, v in consequences.items()}
    if alternatives is not None:
        body["alternatives"] = [dict(a) for a in alternatives]
    if assumptions is not None:
        body["assumptions"] = list(assumptions)
    return _dumps(body, "the decision")
