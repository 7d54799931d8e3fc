//! mnemon-core must stay free of IO: storage, HTTP, the CLI and async
//! runtimes live in other crates, and the filesystem, environment and clock
//! come in as values.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::Path;
use std::process::Command;

const FORBIDDEN_CRATES: &[&str] = &[
    "rusqlite", "reqwest", "tokio", "axum", "clap", "hyper", "postgres",
];

#[test]
fn dependency_tree_has_no_io_crates() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "mnemon-core",
            "--all-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(tree.contains("regex-automata"), "the tree was read: {tree}");
    for line in tree.lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        assert!(
            !FORBIDDEN_CRATES
                .iter()
                .any(|f| name == *f || name.starts_with(&format!("{f}-"))),
            "mnemon-core depends on `{name}`; IO belongs in another crate"
        );
    }
}

#[test]
fn sources_do_not_reach_for_the_filesystem_environment_clock_or_threads() {
    let forbidden = [
        "std::fs",
        "std::env",
        "std::net",
        "std::process",
        "SystemTime::now",
        "Instant::now",
        "File::open",
        // Waiting and parallel work are the caller's runtime's
        // (`mnemon_core::runtime`).
        "std::thread",
        "thread::sleep",
    ];
    let mut offenders = Vec::new();
    visit(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut |path, text| {
            for f in forbidden {
                if text.contains(f) {
                    offenders.push(format!("{} uses {f}", path.display()));
                }
            }
        },
    );
    assert!(offenders.is_empty(), "{offenders:#?}");
}

fn visit(dir: &Path, f: &mut dyn FnMut(&Path, &str)) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            visit(&path, f);
        } else if path.extension().is_some_and(|e| e == "rs") {
            f(&path, &std::fs::read_to_string(&path).unwrap());
        }
    }
}
