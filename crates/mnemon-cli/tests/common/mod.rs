//! Running the built `mnemon` in a temporary project, as a user would.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs with a fixed clock and no colour, ignoring the caller's `MNEMON_*`.
pub fn mnemon(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("MNEMON_NOW", "2025-01-15T14:30:00Z");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("MNEMON_") && k != "MNEMON_NOW") {
        cmd.env_remove(k);
    }
    cmd.output().unwrap()
}

pub fn ok(dir: &Path, args: &[&str]) -> String {
    let o = mnemon(dir, args);
    assert!(
        o.status.success(),
        "mnemon {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

pub fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

pub fn project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    ok(tmp.path(), &["init", "--model", "gpt-4o"]);
    tmp
}
