//! Running the built `mnemon` in a temporary project, as a user would.
#![allow(dead_code)]

pub mod llama;
pub mod python;
pub mod shell_words;

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
    // A cache of its own, so what this machine has fetched shows nowhere.
    cmd.env("MNEMON_CACHE", dir.join(".mnemon-test-cache"));
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

/// `mnemon serve` on a free port of loopback, stopped (SIGKILL) when
/// dropped unless [`Served::stop`] stopped it gracefully first.
pub struct Served {
    pub child: std::process::Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Served {
    /// Sends SIGTERM and waits: `true` when the server stopped cleanly.
    pub fn stop(mut self) -> bool {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        killed.success() && self.child.wait().unwrap().success()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The token `mnemon token create --project P` prints on its last line.
pub fn token(dir: &Path, project: &str) -> String {
    ok(dir, &["token", "create", "--project", project])
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string()
}

/// Starts `mnemon serve` in `dir` and reads the address it printed.
pub fn serve(dir: &Path) -> Served {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("the address it listens on")
        .to_string();
    Served { child, addr }
}

/// Every byte under `dir/.mnemon/` (database, WAL, views, checkpoints).
pub fn all_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join(".mnemon")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                out.extend(b);
            }
        }
    }
    out
}

/// Whether `needle`'s bytes are anywhere in `hay`.
pub fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Whether any file under `dir/.mnemon/` holds `needle`.
pub fn on_disk(dir: &Path, needle: &str) -> bool {
    contains(&all_bytes(dir), needle)
}
