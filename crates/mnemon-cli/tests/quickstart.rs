//! The README's quick start, run as a reader would type it: every line
//! but the install, the directory change and the two that stay in the
//! foreground (`chat`, `serve`, whose commands are checked to exist).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use common::shell_words::words;

#[test]
fn the_readme_quick_start_runs() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let block = readme
        .split("## Quick start")
        .nth(1)
        .and_then(|s| s.split("```sh\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("a quick start block");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut ran = Vec::new();
    for line in block.lines() {
        let w = words(line);
        match w.first().map(String::as_str) {
            Some("mnemon") => {}
            _ => continue,
        }
        let args: Vec<&str> = w[1..].iter().map(String::as_str).collect();
        if matches!(args.first(), Some(&("chat" | "serve"))) {
            let help = common::mnemon(d, &[args[0], "--help"]);
            assert!(help.status.success(), "mnemon {} exists", args[0]);
            continue;
        }
        let out = common::mnemon(d, &args);
        assert!(
            out.status.success(),
            "`{line}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran.push((
            args[0].to_string(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ));
    }
    let names: Vec<&str> = ran.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["init", "record", "remember", "message", "context", "status"]
    );
    let context = &ran[4].1;
    assert!(
        context.contains("Sessions live in Redis, database 2"),
        "{context}"
    );
    assert!(ran[5].1.contains("gpt-4o"), "{}", ran[5].1);
}
