"""Python and the `mnemon` command on the same files and database."""

import json
from pathlib import Path

from conftest import run_cli

from mnemon import Mnemon


def test_a_checkpoint_written_from_python_resumes_from_the_cli(tmp_path: Path, mnemon_bin: str) -> None:
    m = Mnemon.init(tmp_path)
    m.add_goal("Ship the login flow")
    m.record("task_execution", task=1, result="login form done")
    cp = m.checkpoint().value
    assert (tmp_path / ".mnemon" / "checkpoints" / f"{cp.id}.json").exists()
    out = run_cli(mnemon_bin, tmp_path, "--json", "checkpoint", "resume", cp.id)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["resumed"]["checkpoint"] == cp.id
    listed = run_cli(mnemon_bin, tmp_path, "--json", "recent", "--limit", "5")
    assert "login form done" in listed.stdout


def test_a_checkpoint_written_by_the_cli_resumes_from_python(tmp_path: Path, mnemon_bin: str) -> None:
    init = run_cli(mnemon_bin, tmp_path, "init")
    assert init.returncode == 0, init.stderr
    rec = run_cli(mnemon_bin, tmp_path, "record", "--type", "task_execution", "--data", '{"task": 2, "result": "cli wrote this"}')
    assert rec.returncode == 0, rec.stderr
    made = run_cli(mnemon_bin, tmp_path, "--json", "checkpoint", "create")
    assert made.returncode == 0, made.stderr
    cp = json.loads(made.stdout)["id"]
    m = Mnemon.open(tmp_path)
    back = m.resume(cp).value
    assert back.checkpoint == cp and back.working_memory_operations >= 1
    assert "cli wrote this" in m.context(budget=500).text
    # And the CLI sees what Python writes.
    m.record("note", text="python wrote this")
    search = run_cli(mnemon_bin, tmp_path, "--json", "search", "python wrote")
    assert "python wrote this" in search.stdout
