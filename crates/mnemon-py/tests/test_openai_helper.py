"""The OpenAI-SDK helper against a real llama-server (SmolLM2-135M, -c 2048)."""

from pathlib import Path

import openai
import pytest

import mnemon
from mnemon import Mnemon
from mnemon.openai import run_turn


def test_a_turn_fits_the_window_and_is_recorded(tmp_path: Path, llm_url: str) -> None:
    m = Mnemon.init(tmp_path, window=2048)
    for i in range(60):
        m.record("task_execution", task=i, result=f"step {i}: the parser now handles case {i} of the grammar")
    m.remember("The project codename is Bluebird")
    client = openai.OpenAI(base_url=llm_url, api_key="unused", max_retries=0)
    turn = run_turn(m, client, "What is the project codename?", model="smollm2", max_tokens=32, temperature=0)
    assert turn.answer.strip()
    assert turn.finish_reason in {"stop", "length"}
    assert turn.prompt_tokens + 32 <= 2048
    assert turn.server_prompt_tokens and turn.server_prompt_tokens + 32 <= 2048
    assert turn.messages[-1] == {"role": "user", "content": "What is the project codename?"}
    assert "Bluebird" in turn.messages[0]["content"]
    said = [(x.role, x.content) for x in reversed(m.messages(limit=2))]
    assert said == [("user", "What is the project codename?"), ("assistant", turn.answer)]
    st = m.status()
    assert st.reported == turn.server_prompt_tokens
    assert turn.window.zone in {"green", "yellow", "orange", "red"}
    # The next turn carries the first in its context and fits as well.
    second = run_turn(m, client, "And what was step 7?", model="smollm2", max_tokens=32, temperature=0)
    assert second.server_prompt_tokens and second.server_prompt_tokens + 32 <= 2048
    assert len(m.messages(limit=10)) == 4


def test_nothing_is_recorded_when_the_call_fails(tmp_path: Path) -> None:
    m = Mnemon.init(tmp_path, window=2048)
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        run_turn(m, client, "hello?", model="smollm2", max_tokens=16)
    assert m.messages(limit=5) == []


def test_a_window_too_small_is_refused_by_name(tmp_path: Path) -> None:
    m = Mnemon.init(tmp_path, window=2048)
    with pytest.raises(mnemon.InputError, match="lower max_tokens"):
        run_turn(m, object(), "hello?", model="x", max_tokens=4096)


def test_ask_streams_from_the_project_llm(tmp_path: Path, llm_url: str) -> None:
    m = Mnemon.init(tmp_path, window=2048)
    cfg = tmp_path / ".mnemon" / "config.toml"
    text = cfg.read_text()
    text = text.replace('# provider = "openai"', f'provider = "openai"\nbase_url = "{llm_url}"\n#', 1)
    cfg.write_text(text)
    m = Mnemon.open(tmp_path)
    pieces: list = []
    a = m.ask("Say hello.", answer_tokens=32, on_text=pieces.append)
    assert a.answer.strip() and "".join(pieces) == a.answer
    assert a.window.used > 0
    # A callback that fails cannot undo the recorded answer: it is told.
    again = m.ask("Say hello again.", answer_tokens=32, on_text=lambda _: 1 / 0)
    assert again.answer.strip()
    assert any("on_text raised" in w and "division by zero" in w for w in again.written.warnings)
    assert m.messages(limit=1)[0].content == again.answer
