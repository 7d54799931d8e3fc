//! MCP with a client its users have: the official Python SDK (`mcp` on
//! PyPI, pinned below) drives `mnemon mcp` over stdio and `/mcp` on
//! `mnemon serve` over streamable HTTP, through every tool and resource
//! (`tests/mcp_client.py` holds the checks). The SDK is installed once into
//! `~/.cache/mnemon/mcp-venv` from PyPI; `MNEMON_TEST_PYTHON` names another
//! interpreter that has it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The SDK release the checks are written against.
const SDK: &str = "mcp==2.3.0";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py")
}

/// A Python with the SDK, installed on first use: once per test process
/// (the tests of this file run on threads of one process and wait for the
/// first), and two test processes may install at once: each builds its
/// own directory and renames it into place, so the cache is never
/// half-made.
fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON.get_or_init(install).clone()
}

fn install() -> PathBuf {
    common::python::venv("mcp-venv", &[SDK], "import mcp, httpx2")
}

fn run_client(args: &[&str]) -> String {
    let out = Command::new(python())
        .arg(script())
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_python_sdk_uses_every_tool_over_stdio() {
    let tmp = common::project();
    let out = run_client(&[
        "stdio",
        env!("CARGO_BIN_EXE_mnemon"),
        tmp.path().to_str().unwrap(),
    ]);
    assert!(out.contains("\"ok\": true"), "{out}");
    // What the tools stored is in the project, for the CLI to see.
    let hot = common::ok(tmp.path(), &["hot"]);
    assert!(hot.contains("ops/deploy-key"), "{hot}");
}

#[test]
fn the_python_sdk_uses_every_tool_over_http_with_a_token_and_is_refused_without() {
    let tmp = common::project();
    let d = tmp.path();
    let token = common::token(d, "default");
    let server = common::serve(d);
    let url = format!("http://{}/mcp", server.addr);
    let out = run_client(&["http", &url, &token]);
    assert!(out.contains("\"ok\": true"), "{out}");
    let refused = run_client(&["http-unauthorized", &url]);
    assert!(refused.contains("refused"), "{refused}");
    // A token of another project opens that project, not this one.
    let other = common::token(d, "other");
    let out = run_client(&["http", &url, &other]);
    assert!(out.contains("\"ok\": true"), "{out}");
    let hot = common::ok(d, &["hot"]);
    assert_eq!(
        hot.matches("ops/deploy-key").count(),
        1,
        "the other project's writes stayed there: {hot}"
    );
}
