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
    if let Some(p) = std::env::var_os("MNEMON_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    let cache = Path::new(&home).join(".cache/mnemon");
    let venv = cache.join("mcp-venv");
    let py = venv.join("bin/python");
    let has_sdk = |py: &Path| {
        Command::new(py)
            .args(["-c", "import mcp, httpx2"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if has_sdk(&py) {
        return py;
    }
    std::fs::create_dir_all(&cache).unwrap();
    let building = cache.join(format!("mcp-venv.{}", std::process::id()));
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Command::new("python3").args(["-m", "venv"]).arg(&building));
    // PyPI now and then drops a connection; an install is tried three times.
    let pip = || {
        Command::new(building.join("bin/pip"))
            .args(["install", "-q", "--retries", "5", SDK])
            .output()
            .unwrap()
    };
    let mut installed = pip();
    for _ in 0..2 {
        if installed.status.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(3));
        installed = pip();
    }
    assert!(
        installed.status.success(),
        "pip install {SDK}: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    // Python's venv records its own path; rebuild it in place after the rename.
    if std::fs::rename(&building, &venv).is_ok() {
        run(Command::new("python3")
            .args(["-m", "venv", "--upgrade"])
            .arg(&venv));
    } else {
        let _ = std::fs::remove_dir_all(&building);
    }
    assert!(has_sdk(&py), "the MCP SDK is not importable from {py:?}");
    py
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
