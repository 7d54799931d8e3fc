"""Every verb of the Python package, on a project in memory and on disk."""

import json
from pathlib import Path

import pytest

import mnemon
from mnemon import Mnemon


def test_record_and_context_fit_the_budget(project: Mnemon) -> None:
    w = project.record("task_execution", task=15, result="login form validates e-mail and password")
    op = w.value
    assert isinstance(op, mnemon.Operation)
    assert op.kind == "task_execution"
    assert op.data == {"task": 15, "result": "login form validates e-mail and password"}
    assert op.handle.startswith("o")
    assert op.tokens > 0
    assert w.window.zone == "green"
    assert w.warnings == []
    ctx = project.context(budget=300, query="login form")
    assert isinstance(ctx, mnemon.Context)
    assert ctx.tokens <= 300 and ctx.budget == 300
    assert "login form validates" in ctx.text
    assert ctx.tokens == project.count_tokens(ctx.text)
    assert all(isinstance(s, mnemon.Section) for s in ctx.sections)
    assert str(ctx) == ctx.text


def test_data_given_as_a_dict_or_fields(project: Mnemon) -> None:
    a = project.record("note", {"text": "from a dict"}).value
    b = project.record("note", {"text": "base"}, extra=1).value
    assert a.data == {"text": "from a dict"}
    assert b.data == {"text": "base", "extra": 1}
    with pytest.raises(mnemon.InputError, match="either as `data` or as keyword"):
        project.record("note", "plain", extra=1)
    with pytest.raises(mnemon.InputError, match="must be JSON data"):
        project.record("note", {"when": object()})


def test_context_formats(project: Mnemon) -> None:
    project.message("user", "Where do sessions live?")
    project.message("assistant", "Sessions live in Redis so that they survive restarts.")
    msgs = project.context(budget=500, format="messages", preset="conversation")
    assert msgs.format == "messages"
    assert [x["role"] for x in msgs.messages] == ["user", "assistant"]
    assert msgs.tokens == project.count_chat(msgs.messages)
    as_json = project.context(budget=500, format="json", preset="conversation")
    assert as_json.format == "json"
    items = [i for sec in as_json.sections for i in sec.items]
    assert [i["id"] for i in items] == ["m1", "m2"]
    assert json.dumps(as_json.to_dict())
    qa = project.context(budget=200, query="redis", preset="qa")
    assert "Redis" in qa.text and qa.plan == "qa"
    with pytest.raises(mnemon.InputError, match="unknown format"):
        project.context(format="yaml")
    with pytest.raises(mnemon.InputError, match="budget must be zero or more"):
        project.context(budget=-1)
    # The range is the library's, the same as the CLI's, HTTP's and MCP's.
    with pytest.raises(mnemon.InputError, match="budget 0 is out of range: give 1 to 100000000 tokens"):
        project.context(budget=0)


def test_messages_search_and_recent(project: Mnemon) -> None:
    m = project.message("user", "We picked argon2id for password hashing").value
    assert isinstance(m, mnemon.Message) and m.role == "user"
    project.record("decision", decision="hash passwords with argon2id")
    hits = project.search("argon2id", limit=5)
    assert hits and all(isinstance(h, mnemon.Hit) for h in hits)
    assert any("argon2id" in h.text for h in hits)
    assert project.messages(limit=5)[0].content == "We picked argon2id for password hashing"
    assert project.recent(limit=5, type="decision")[0].kind == "decision"
    with pytest.raises(mnemon.InputError, match="role"):
        project.message("narrator", "once upon a time")


def test_hot_context(project: Mnemon) -> None:
    g = project.add_goal("Ship the login flow by Friday", priority="high").value
    assert isinstance(g, mnemon.HotItem) and g.kind == "goal" and g.version == 1
    project.add_constraint("Never store plain-text passwords")
    project.remember("The staging database is db-staging-2")
    hot = project.hot()
    assert [x["description"] for x in hot.active_goals] == ["Ship the login flow by Friday"]
    assert [x["text"] for x in hot.important_constraints] == ["Never store plain-text passwords"]
    assert [x["text"] for x in hot.remember] == ["The staging database is db-staging-2"]
    assert "db-staging-2" in project.context(budget=400).text
    done = project.update_hot(g.id, version=1, status="complete").value
    assert done.status == "complete" and done.version == 2
    with pytest.raises(mnemon.ConflictError) as stale:
        project.update_hot(g.id, version=1, text="stale")
    assert isinstance(stale.value, mnemon.Error)
    with pytest.raises(mnemon.InputError, match="priority"):
        project.add_goal("x", priority="urgent-ish")


def test_decisions(project: Mnemon) -> None:
    d = project.decide(
        "Sessions in Redis",
        "Keep sessions in Redis",
        context="sessions must survive restarts",
        consequences={"positive": ["survive restarts"], "negative": ["one more service"]},
        alternatives=[{"option": "in process", "rejected_because": "lost on restart"}],
    ).value
    assert isinstance(d, mnemon.Decision) and d.id.startswith("DR-")
    # Statuses read back as the library's JSON spells them.
    assert d.status == "Proposed"
    assert project.decision(d.id).title == "Sessions in Redis"
    assert project.set_decision_status(d.id, "accepted").value.status == "Accepted"
    old, new = project.supersede(
        d.id, "Sessions in Postgres", "Keep sessions in Postgres", context="one database fewer"
    ).value
    assert old.status == "Superseded" and old.superseded_by == new.id
    assert {x.id for x in project.decisions()} == {d.id, new.id}
    with pytest.raises(mnemon.InputError, match="needs a context"):
        project.decide("Cache", "Use a cache")
    with pytest.raises(mnemon.InputError, match="status"):
        project.decide("Cache", "Use a cache", context="slow reads", status="maybe")


def test_sessions_checkpoints_refresh_compact(project: Mnemon) -> None:
    s = project.start_session("login work").value
    assert isinstance(s, mnemon.Session) and s.title == "login work"
    for i in range(20):
        project.record("task_execution", task=i, result=f"step {i} of the login flow done")
    assert project.session().id == s.id
    cp = project.checkpoint().value
    assert isinstance(cp, mnemon.Checkpoint) and cp.trigger == "manual"
    assert project.checkpoints()[0].id == cp.id
    before = project.status().window.used
    r = project.refresh()
    assert r.value is None and r.window.used <= before
    c = project.compact(dry_run=True).value
    assert isinstance(c, mnemon.Compaction) and c.dry_run
    back = project.resume(cp.id).value
    assert isinstance(back, mnemon.Resumed) and back.checkpoint == cp.id
    ended = project.end_session().value
    assert ended["ended"] == "summarized"
    assert any(x.id == s.id for x in project.sessions())


def test_status_usage_and_tokens(project: Mnemon) -> None:
    st = project.status()
    assert isinstance(st, mnemon.Status) and isinstance(st.window, mnemon.Window)
    assert st.window.zone in {"green", "yellow", "orange", "red"}
    assert st.window.effective_max > 0
    with pytest.raises(mnemon.InputError, match="nothing to calibrate"):
        project.report_usage(1234)
    project.record("note", text="something to count")
    used = project.status().window.used
    after = project.report_usage(used + 3)
    assert after.reported == used + 3
    assert project.count_tokens("hello world", model="gpt-4o") == 2
    assert project.count_tokens("hello world", model="gpt-4") == 2
    with pytest.raises(mnemon.InputError, match="no-such-model"):
        project.count_tokens("x", model="no-such-model")
    report = project.report()
    assert isinstance(report, mnemon.Report) and report.to_dict()


def test_agents_have_their_own_windows(project: Mnemon) -> None:
    planner = project.for_agent("planner")
    planner.record("note", text="only the planner's")
    assert planner.status().agent == "planner"
    assert planner.status().working_memory_operations == 1
    assert project.status().working_memory_operations == 0
    with pytest.raises(mnemon.InputError, match="empty"):
        project.for_agent(" ")


def test_records_are_typed_and_plain(project: Mnemon) -> None:
    w = project.record("note", text="x")
    d = w.to_dict()
    assert set(d) == {"value", "events", "status", "warnings"}
    assert d["value"]["data"] == {"text": "x"}
    assert "Operation(handle=" in repr(w.value)
    assert "Written(value=Operation(" in repr(w)
    with pytest.raises(AttributeError, match="no field 'nope'"):
        w.value.nope
    with pytest.raises(AttributeError, match="read-only"):
        w.value.kind = "y"  # type: ignore[misc]
    assert w.value == project.recent(limit=1)[0]


def test_in_memory_and_errors_carry_the_library_messages(tmp_path: Path) -> None:
    m = Mnemon.in_memory()
    assert m.dir is None and repr(m) == "Mnemon(in memory)"
    m.record("note", text="kept in memory")
    assert m.search("kept")
    empty = tmp_path / "empty"
    empty.mkdir()
    if not any((p / ".mnemon").exists() for p in [empty, *empty.parents]):
        with pytest.raises(mnemon.InputError, match=r"no \.mnemon/ in .*run `mnemon init`"):
            Mnemon.open(empty)
    Mnemon.init(tmp_path / "empty")
    with pytest.raises(mnemon.InputError, match="exists"):
        Mnemon.init(tmp_path / "empty")
    with pytest.raises(mnemon.InputError) as bad:
        Mnemon.in_memory("context_window = 'lots'\n")
    assert "context_window" in str(bad.value)
    with pytest.raises(mnemon.InputError, match="not found|no checkpoint"):
        m.resume("CP-nope")
    with pytest.raises(mnemon.InputError, match=r"llm"):
        m.ask("what now?")
    assert issubclass(mnemon.StorageError, mnemon.Error)
    assert issubclass(mnemon.LlmError, mnemon.Error)
