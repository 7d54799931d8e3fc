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
    let bytes = common::all_bytes(dir);
    assert!(
        !common::contains(&bytes, KEY),
        "the key is nowhere under .mnemon/"
    );
    assert!(
        !common::contains(&bytes, "s3cr3t-pw"),
        "nor the URL's password"
    );
    assert!(common::contains(&bytes, "[redacted: password]"));
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

/// Every operation id in a project.
fn op_ids(dir: &Path) -> Vec<String> {
    let v = common::json(dir, &["recent", "--limit", "100000", "--json"]);
    v.as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_backup_taken_during_eight_writers_restores_to_a_healthy_store() {
    let p = common::project();
    let dir = p.path().to_path_buf();
    common::ok(&dir, &["remember", "the backup drill runs on Tuesdays"]);
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    common::ok(
                        &dir,
                        &[
                            "record",
                            "--type",
                            "note",
                            "--data",
                            &format!(r#"{{"writer": {w}, "i": {i}}}"#),
                        ],
                    );
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let backup = dir.join("snapshot.db");
    let out = common::mnemon(&dir, &["backup", backup.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for w in writers {
        w.join().unwrap();
    }
    // The snapshot is one moment: a prefix of what the writers stored.
    let fresh = tempfile::tempdir().unwrap();
    let out = common::mnemon(fresh.path(), &["restore", backup.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doctor = common::mnemon(fresh.path(), &["doctor", "--json"]);
    assert!(
        doctor.status.success(),
        "{}",
        String::from_utf8_lossy(&doctor.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(report["problems"].as_array().unwrap().len(), 0, "{report}");
    let restored = op_ids(fresh.path());
    let all = op_ids(&dir);
    assert!(restored.len() <= all.len());
    assert!(
        restored.iter().all(|id| all.contains(id)),
        "nothing in the backup that was not written"
    );
    let unique: std::collections::HashSet<_> = restored.iter().collect();
    assert_eq!(unique.len(), restored.len(), "no duplicates");
    assert!(common::ok(fresh.path(), &["hot"]).contains("the backup drill runs on Tuesdays"));
    // The restored project works: it takes writes and keeps its identity.
    common::ok(
        fresh.path(),
        &["record", "--type", "note", "--data", "{\"after\": 1}"],
    );
    assert!(common::mnemon(fresh.path(), &["doctor"]).status.success());

    // Restoring over a project with history needs --force, and keeps the
    // database it replaces.
    let out = common::mnemon(&dir, &["restore", backup.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    let out = common::mnemon(&dir, &["restore", "--force", backup.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept: Vec<String> = std::fs::read_dir(dir.join(".mnemon"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.starts_with("mnemon.db.replaced-") && !n.ends_with("-wal") && !n.ends_with("-shm")
        })
        .collect();
    assert_eq!(kept.len(), 1, "the replaced database is set aside");
    // Named with a readable UTC time: replaced-YYYYMMDD-HHMMSS.
    let when = &kept[0]["mnemon.db.replaced-".len()..];
    assert!(
        when.len() == 15
            && when.as_bytes()[8] == b'-'
            && when.starts_with("20")
            && when.chars().filter(char::is_ascii_digit).count() == 14,
        "{}",
        kept[0]
    );
    assert_eq!(op_ids(&dir).len(), restored.len());
}

#[test]
fn doctor_finds_a_damaged_store_and_backup_refuses_to_overwrite() {
    let p = common::project();
    let dir = p.path();
    common::ok(dir, &["remember", "x marks the spot"]);
    let file = dir.join("b.db");
    common::ok(dir, &["backup", file.to_str().unwrap()]);
    let again = common::mnemon(dir, &["backup", file.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));
    // Not a backup at all.
    let junk = dir.join("junk.db");
    std::fs::write(&junk, b"not a database").unwrap();
    let out = common::mnemon(dir, &["restore", "--force", junk.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an SQLite database"));
    assert!(
        common::ok(dir, &["hot"]).contains("x marks the spot"),
        "nothing changed"
    );

    // An orphan: a checkpoint naming a session that is gone.
    let db = dir.join(".mnemon/mnemon.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "INSERT INTO checkpoints (id, project_id, agent, session_id, trigger, created_at, json)
         SELECT 'CP-X', project_id, 'orchestrator', 'no-such-session', 'manual', 0, '{}' FROM sessions LIMIT 1;",
    )
    .unwrap();
    drop(conn);
    let out = common::mnemon(dir, &["doctor"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("orphan: 1 checkpoints name a session that does not exist"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(3), "{err}");
}

#[test]
fn a_backup_restored_into_an_empty_directory_keeps_its_model_and_window() {
    let src = tempfile::tempdir().unwrap();
    let s = src.path();
    common::ok(s, &["init", "--model", "gpt-4o"]);
    common::ok(s, &["config", "set", "context_window.max_tokens", "64000"]);
    common::ok(s, &["remember", "The release train leaves on Thursdays"]);
    let backup = s.join("backup.db");
    common::ok(s, &["backup", backup.to_str().unwrap()]);

    let empty = tempfile::tempdir().unwrap();
    let d = empty.path();
    let out = common::mnemon(d, &["restore", backup.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = common::json(d, &["status", "--json"]);
    assert_eq!(status["model"]["id"], "gpt-4o", "{status}");
    assert_eq!(status["window"]["configured_max"], 64000, "{status}");
    assert!(common::ok(d, &["hot"]).contains("release train leaves on Thursdays"));
    // The configuration lives in config.toml, not in the restored database.
    let db = rusqlite::Connection::open(d.join(".mnemon/mnemon.db")).unwrap();
    let carried: i64 = db
        .query_row(
            "SELECT count(*) FROM meta WHERE key = 'backup_config_toml'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(carried, 0);
}
