//! What people paste into memory: secrets are redacted before anything is
//! stored, everywhere they could be written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::Path;

mod common;

const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";

/// Every byte under `.mnemon/` (database, WAL, views, checkpoints).
fn all_bytes(dir: &Path) -> Vec<u8> {
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

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_pasted_key_is_stored_and_rendered_as_a_placeholder_everywhere() {
    let p = common::project();
    let dir = p.path();
    let out = common::mnemon(dir, &["remember", &format!("my key is {KEY}")]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("redacted 1 secret before storing (openai key)"),
        "{err}"
    );

    // Every other way in: an operation's data, a message, a goal, a
    // decision, an entity through chat, a session title.
    common::ok(
        dir,
        &[
            "record",
            "--type",
            "config_change",
            "--data",
            &format!(
                r#"{{"env": {{"OPENAI_API_KEY": "{KEY}"}}, "db": "postgres://app:s3cr3t-pw@db:5432/x"}}"#
            ),
        ],
    );
    common::ok(dir, &["message", "--role", "user", &format!("here: {KEY}")]);
    common::ok(dir, &["goal", "add", &format!("rotate {KEY} today")]);
    common::ok(
        dir,
        &[
            "decision",
            "add",
            "--title",
            "Rotate keys",
            "--context",
            &format!("the key {KEY} leaked"),
            "--decision",
            "rotate every key monthly",
        ],
    );
    common::ok(
        dir,
        &["session", "start", "--title", &format!("cleanup {KEY}")],
    );
    common::ok(dir, &["checkpoint", "create"]);

    let hot = common::ok(dir, &["hot"]);
    assert!(hot.contains("my key is [redacted: openai key]"), "{hot}");
    let ctx = common::ok(dir, &["context", "--budget", "2000"]);
    assert!(!ctx.contains(KEY), "{ctx}");
    assert!(ctx.contains("[redacted: openai key]"), "{ctx}");
    let found = common::ok(dir, &["search", "abcdefghijklmnopqrstuvwxyz0123456789ABCD"]);
    assert!(!found.contains(KEY), "{found}");
    common::ok(dir, &["export"]);
    let bytes = all_bytes(dir);
    assert!(!contains(&bytes, KEY), "the key is nowhere under .mnemon/");
    assert!(!contains(&bytes, "s3cr3t-pw"), "nor the URL's password");
    assert!(contains(&bytes, "[redacted: password]"));
}

#[test]
fn redaction_can_be_extended_and_turned_off() {
    let p = common::project();
    let dir = p.path();
    let cfg = dir.join(".mnemon/config.toml");
    let original = std::fs::read_to_string(&cfg).unwrap();
    let with = |patterns: &str| original.replacen("patterns = []", patterns, 1);
    let text = with(r#"patterns = [{ name = "employee id", regex = '\bEMP-\d{6}\b' }]"#);
    std::fs::write(&cfg, &text).unwrap();
    common::ok(dir, &["remember", "ask EMP-123456 about it"]);
    assert!(common::ok(dir, &["hot"]).contains("ask [redacted: employee id] about it"));

    // A pattern that is no regular expression is refused with its key.
    std::fs::write(
        &cfg,
        with(r#"patterns = [{ name = "employee id", regex = '(unclosed' }]"#),
    )
    .unwrap();
    let out = common::mnemon(dir, &["config", "validate"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("redaction.patterns[0].regex"), "{err}");

    std::fs::write(&cfg, text.replacen("enabled = true", "enabled = false", 1)).unwrap();
    let out = common::mnemon(dir, &["remember", &format!("kept {KEY}")]);
    assert!(out.status.success());
    assert!(common::ok(dir, &["hot"]).contains(KEY), "off means off");
}
