//! The Python package as its users get it: `pip install ./crates/mnemon-py`
//! into a fresh venv (with pytest, the official `openai` SDK and mypy from
//! PyPI beside it), then its pytest suite
//! (`crates/mnemon-py/tests/`) against the `mnemon` binary this build made
//! and a real llama-server. The wheel's Rust build is cached in
//! `~/.cache/mnemon/py-target`, so only what changed is rebuilt.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::llama::Llama;

const PACKAGES: [&str; 3] = ["pytest==9.2.0", "openai==3.57.0", "mypy==2.4.1"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cache() -> PathBuf {
    let home = std::env::var_os("HOME").expect("HOME is set");
    Path::new(&home).join(".cache/mnemon")
}

/// A fresh venv (under `dir`) with the package installed from the
/// repository as the README says, and the test tools beside it (from pip's
/// cache after the first run). PyPI now and then drops a connection: the
/// install is tried three times.
fn fresh_venv(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "python3 -m venv: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let python = venv.join("bin/python");
    let mut last = None;
    for attempt in 0..3 {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_secs(3));
        }
        let out = Command::new(&python)
            .args(["-m", "pip", "install", "-q", "--retries", "5"])
            .arg(repo().join("crates/mnemon-py"))
            .args(PACKAGES)
            .env("CARGO_TARGET_DIR", cache().join("py-target"))
            .output()
            .unwrap();
        if out.status.success() {
            return python;
        }
        last = Some(out);
    }
    let out = last.unwrap();
    panic!(
        "pip install ./crates/mnemon-py failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_python_package_installs_and_its_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    let python = fresh_venv(dir.path());
    let package = repo().join("crates/mnemon-py");

    let llama = Llama::start(&[]);
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"])
        .arg(package.join("tests"))
        .current_dir(&package)
        .env("MNEMON_BIN", env!("CARGO_BIN_EXE_mnemon"))
        .env("MNEMON_TEST_LLM_URL", llama.url())
        .env("MNEMON_PY_REQUIRE_ALL", "1")
        // The package under test is the installed one, not the sources.
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pytest failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains("skipped"),
        "no test may be skipped here:\n{stdout}"
    );
    assert!(stdout.contains(" passed"), "{stdout}");
}
