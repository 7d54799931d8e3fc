"""Typed results.

Every result is the JSON that ``mnemon ... --json`` and the HTTP API answer
with, read through attributes. The annotations below tell editors and
mypy what each field holds; fields a newer library adds are readable too,
and ``to_dict()`` gives the whole value back as plain data.
"""

from __future__ import annotations

import copy
import json
from typing import Any, ClassVar, Dict, Generic, List, Mapping, Optional, Type, TypeVar

T = TypeVar("T")

_REPR_TEXT = 60


class Record:
    """A result whose fields are attributes; ``to_dict()`` is its JSON."""

    __slots__ = ("_data",)
    #: Fields holding another record (or a list of them), by name.
    _nested: ClassVar[Mapping[str, Type["Record"]]] = {}
    #: Fields shown by ``repr``, in order.
    _shown: ClassVar[tuple] = ()

    def __init__(self, data: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._data[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; it has {', '.join(sorted(self._data))}"
            ) from None
        kind = self._nested.get(name)
        if kind is None or value is None:
            return value
        if isinstance(value, list):
            return [kind(v) for v in value]
        return kind(value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._data))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data == self._data  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self._data.items(), key=lambda kv: kv[0]))))

    def __repr__(self) -> str:
        names = self._shown or tuple(self._data)
        parts = []
        for name in names:
            if name not in self._data:
                continue
            value = getattr(self, name) if name in self._nested else self._data[name]
            if isinstance(value, str) and len(value) > _REPR_TEXT:
                value = value[: _REPR_TEXT - 1] + "…"
            parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def to_dict(self) -> Dict[str, Any]:
        """The value as plain data (a deep copy)."""
        return copy.deepcopy(self._data)


class Thresholds(Record):
    """Where each zone starts, in tokens."""

    yellow_from: int
    orange_from: int
    red_from: int
    emergency_from: int


class Window(Record):
    """How full an agent's window is, and what to do about it."""

    _nested = {"thresholds": Thresholds}
    _shown = ("zone", "used", "effective_max", "fraction", "action")
    used: int
    configured_max: int
    effective_max: int
    utilization_limit: float
    fraction: float
    available: int
    #: ``green``, ``yellow``, ``orange`` or ``red``.
    zone: str
    #: What the orchestrator should do now (``continue``, ``optimize``, ``checkpoint``, ``refresh``...).
    action: str
    emergency: bool
    thresholds: Thresholds


class Status(Record):
    """An agent's window and epoch."""

    _nested = {"window": Window}
    _shown = ("agent", "model", "window", "session_id", "epoch")
    window: Window
    model: str
    agent: str
    session_id: Optional[str]
    epoch: int
    baseline: int
    added: int
    local_usage: int
    reported: Optional[int]
    calibration: float
    calibration_samples: int
    working_memory_operations: int
    refreshes: int
    last_checkpoint: Optional[str]
    last_checkpoint_at: Optional[str]


class Operation(Record):
    """A recorded operation (``o12``)."""

    _shown = ("handle", "kind", "data", "tokens", "importance", "pinned")
    id: str
    seq: int
    handle: str
    session_id: Optional[str]
    agent: str
    #: The operation's type (``task_execution``, ``decision``, ...).
    kind: str
    data: Any
    tokens: int
    phase: Optional[str]
    status: Optional[str]
    importance: float
    pinned: bool
    created_at: str


class Message(Record):
    """A conversation turn (``m7``)."""

    _shown = ("handle", "role", "content", "tokens")
    id: str
    seq: int
    handle: str
    session_id: Optional[str]
    role: str
    agent: str
    content: str
    tokens: int
    importance: float
    pinned: bool
    created_at: str


class HotItem(Record):
    """A goal, constraint or remembered note of the hot context (``h3``)."""

    _shown = ("handle", "kind", "text", "status", "version")
    id: str
    seq: int
    handle: str
    kind: str
    text: str
    detail: Optional[str]
    parent_id: Optional[str]
    priority: Optional[str]
    status: str
    agent: str
    version: int
    created_at: str
    updated_at: str


class Hot(Record):
    """The hot context, in the shape ``mnemon hot --json`` prints."""

    _shown = ("version", "active_goals", "important_constraints", "remember")
    version: int
    active_goals: List[Dict[str, Any]]
    pending_actions: List[Dict[str, Any]]
    important_constraints: List[Dict[str, Any]]
    key_decisions: List[Dict[str, Any]]
    #: What ``remember`` keeps.
    remember: List[Dict[str, Any]]
    current_file_context: List[Dict[str, Any]]
    key_entities: Dict[str, List[str]]


class Decision(Record):
    """A decision record (``DR-…``)."""

    _shown = ("id", "title", "decision", "status")
    id: str
    timestamp: str
    title: str
    context: str
    decision: str
    consequences: Dict[str, List[str]]
    alternatives: List[Dict[str, str]]
    assumptions: List[str]
    status: str
    superseded_by: Optional[str]
    agent: str


class Session(Record):
    _shown = ("id", "title", "status", "operation_count", "message_count", "tokens")
    id: str
    title: Optional[str]
    agent: str
    status: str
    started_at: str
    ended_at: Optional[str]
    summary: Optional[str]
    operation_count: int
    message_count: int
    tokens: int
    last_activity: str


class Checkpoint(Record):
    """A checkpoint as written to ``.mnemon/checkpoints/``."""

    _shown = ("id", "trigger", "timestamp")
    id: str
    timestamp: str
    trigger: str
    context_snapshot: Dict[str, Any]


class StoredCheckpoint(Record):
    """A checkpoint as the store keeps it: ``json`` is the file's text."""

    _shown = ("id", "agent", "trigger", "created_at")
    id: str
    agent: str
    session_id: Optional[str]
    trigger: str
    created_at: str
    json: str


class Resumed(Record):
    checkpoint: str
    session_id: Optional[str]
    working_memory_operations: int
    hot_items_restored: int
    hot_items_removed: int


class Compaction(Record):
    _shown = ("session_id", "dry_run")
    session_id: str
    dry_run: bool
    summary: Dict[str, Any]


class Section(Record):
    _shown = ("kind", "tokens", "left_out")
    kind: str
    tokens: int
    items: List[Dict[str, Any]]
    left_out: int


class Context(Record):
    """The best context that fits the budget: ``text`` (markdown) or
    ``messages`` (an OpenAI chat list for ``format="messages"``), ``tokens``
    of them exactly. ``sections`` tells what each section holds and what was
    left out; it is read from the library only when asked for."""

    __slots__ = ("_native", "_head")
    _shown = ("plan", "budget", "tokens", "format")

    def __init__(self, native: Any) -> None:
        super().__init__({})
        object.__setattr__(self, "_native", native)
        object.__setattr__(self, "_head", None)

    def _fields(self) -> Dict[str, Any]:
        head = self._head
        if head is None:
            head = json.loads(self._native.head())
            object.__setattr__(self, "_head", head)
        return head

    @property
    def text(self) -> str:
        return self._native.text  # type: ignore[no-any-return]

    @property
    def tokens(self) -> int:
        return self._native.tokens  # type: ignore[no-any-return]

    @property
    def budget(self) -> int:
        return self._native.budget  # type: ignore[no-any-return]

    @property
    def plan(self) -> str:
        return self._native.plan  # type: ignore[no-any-return]

    @property
    def format(self) -> str:
        return self._fields()["format"]  # type: ignore[no-any-return]

    @property
    def messages(self) -> List[Dict[str, Any]]:
        return copy.deepcopy(self._fields()["messages"])

    @property
    def warnings(self) -> List[str]:
        return self._native.warnings  # type: ignore[no-any-return]

    @property
    def sections(self) -> List[Section]:
        data = self._data
        if "sections" not in data:
            data["sections"] = json.loads(self._native.sections())
        return [Section(s) for s in data["sections"]]

    def to_dict(self) -> Dict[str, Any]:
        self.sections
        out = dict(copy.deepcopy(self._fields()))
        out["text"] = self.text
        out["sections"] = copy.deepcopy(self._data["sections"])
        return out

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"Context has no field {name!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is Context and other.to_dict() == self.to_dict()

    def __hash__(self) -> int:
        return hash((self.text, self.tokens, self.budget))

    def __repr__(self) -> str:
        return (
            f"Context(plan={self.plan!r}, budget={self.budget!r}, tokens={self.tokens!r}, "
            f"format={self.format!r})"
        )

    def __str__(self) -> str:
        return self.text


class Hit(Record):
    """A search result: ``id`` is the record's handle (``o12``, ``m7``, ``DR-…``)."""

    _shown = ("source", "id", "text", "score")
    source: str
    id: str
    text: str
    bm25: float
    at: str
    importance: float
    score: float


class Report(Record):
    """Everything ``mnemon status`` shows."""


class Written(Record, Generic[T]):
    """What a write stored (``value``), what the engine did on its own
    because of it (``events``), the window after it, and problems after the
    commit (``warnings``: the write itself is durable)."""

    _shown = ("value", "window", "events", "warnings")
    _value_kind: ClassVar[Optional[Type[Record]]] = None
    __slots__ = ("_kind",)
    events: List[Dict[str, Any]]
    warnings: List[str]

    def __init__(self, data: Mapping[str, Any], kind: Optional[Type[Record]] = None) -> None:
        super().__init__(data)
        object.__setattr__(self, "_kind", kind)

    @property
    def value(self) -> T:
        raw = self._data.get("value")
        kind = self._kind
        if kind is None or raw is None:
            return raw  # type: ignore[return-value]
        if isinstance(raw, list):
            return [kind(v) for v in raw]  # type: ignore[return-value]
        return kind(raw)  # type: ignore[return-value]

    @property
    def status(self) -> Status:
        return Status(self._data["status"])

    @property
    def window(self) -> Window:
        """The agent's window after the write."""
        return self.status.window

    def __repr__(self) -> str:
        return (
            f"Written(value={self.value!r}, window={self.window!r}, "
            f"events={self._data.get('events')!r}, warnings={self._data.get('warnings')!r})"
        )


class Answer(Record):
    """An LLM's answer to ``ask``, and what mnemon did with it."""

    _shown = ("answer", "finish_reason", "usage", "retried")
    answer: str
    usage: Dict[str, Any]
    request: Dict[str, Any]
    finish_reason: Optional[str]
    retried: bool

    @property
    def written(self) -> "Written[None]":
        return Written(self._data["written"])

    @property
    def window(self) -> Window:
        return self.written.window
