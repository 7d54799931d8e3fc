"""Fixtures for the Python package's tests.

`cargo test` runs these through `crates/mnemon-cli/tests/python_package.rs`,
which builds the package with `pip install ./crates/mnemon-py`, starts a real
llama-server and names the `mnemon` binary it built. Run alone, a test
whose part is missing is skipped, unless `MNEMON_PY_REQUIRE_ALL=1` (as the
driver sets), where it fails.
"""

import os
import subprocess
from pathlib import Path

import pytest

import mnemon


def _need(var: str, what: str) -> str:
    value = os.environ.get(var)
    if value:
        return value
    if os.environ.get("MNEMON_PY_REQUIRE_ALL") == "1":
        pytest.fail(f"{var} is not set: {what}")
    pytest.skip(f"{var} is not set: {what}")


@pytest.fixture
def mnemon_bin() -> str:
    return _need("MNEMON_BIN", "the path of a built `mnemon` binary")


@pytest.fixture
def llm_url() -> str:
    return _need("MNEMON_TEST_LLM_URL", "a llama-server's /v1 address")


@pytest.fixture
def project(tmp_path: Path) -> mnemon.Mnemon:
    return mnemon.Mnemon.init(tmp_path)


def run_cli(binary: str, root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    return subprocess.run(
        [binary, "--dir", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
