"""Editors and mypy know every signature: the package is typed."""

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """
import mnemon
from mnemon.openai import Turn, run_turn

m: mnemon.Mnemon = mnemon.Mnemon.in_memory()
w: mnemon.Written[mnemon.Operation] = m.record("note", text="x")
op: mnemon.Operation = w.value
zone: str = w.window.zone
ctx: mnemon.Context = m.context(budget=100, query="x", preset="qa", format="markdown")
tokens: int = ctx.tokens + m.count_tokens("hello", model="gpt-4o")
hits: list[mnemon.Hit] = m.search("x", limit=3)
st: mnemon.Status = m.report_usage(10)
"""

BAD = """
import mnemon

m = mnemon.Mnemon.in_memory()
m.context(budget="lots")
m.record(15)
m.count_tokens("x").upper()
"""


def mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    f = tmp_path / "sample.py"
    f.write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(f)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )


def test_a_typed_program_passes_mypy_strict(tmp_path: Path) -> None:
    out = mypy(tmp_path, GOOD)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mistakes_are_caught(tmp_path: Path) -> None:
    out = mypy(tmp_path, BAD)
    assert out.returncode == 1, out.stdout
    assert 'Argument "budget" to "context" of "Mnemon" has incompatible type "str"' in out.stdout
    assert 'Argument 1 to "record" of "Mnemon" has incompatible type "int"' in out.stdout
    assert '"int" has no attribute "upper"' in out.stdout
