"""The README's Python code runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def blocks() -> list:
    text = README.read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_python_blocks_run(tmp_path: Path, monkeypatch, capsys) -> None:
    found = blocks()
    assert found, "README.md has no ```python block"
    monkeypatch.chdir(tmp_path)
    for code in found:
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out
    assert "Sessions live in Redis" in printed
    assert "-- green" in printed
