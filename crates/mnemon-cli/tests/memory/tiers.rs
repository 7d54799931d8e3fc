//! Decision records, episodic documents and the session log file, end to
//! end through the CLI.

use super::*;

#[test]
fn decision_records_end_to_end() {
    let tmp = project();
    let d = tmp.path();
    let r = json(
        d,
        &[
            "decision",
            "add",
            "--title",
            "Use RS256 for JWT signing",
            "--context",
            "Several services verify tokens.",
            "--decision",
            "Sign with RS256.",
            "--positive",
            "No shared secret",
            "--negative",
            "Key rotation",
            "--mitigation",
            "JWKS endpoint",
            "--alternative",
            "HS256: every verifier holds the secret",
            "--assumption",
            "Services reach the JWKS",
            "--status",
            "accepted",
            "--json",
        ],
    );
    let id = r["id"].as_str().unwrap().to_string();
    let file = d
        .join(".mnemon/decisions")
        .join(format!("{id}_use-rs256-for-jwt-signing.md"));
    let md = std::fs::read_to_string(&file).unwrap();
    insta::assert_snapshot!(md.replace(&id, "DR-xxxxxxxx"), @r"
    # Decision Record: Use RS256 for JWT signing

    **Date**: 2025-01-15T14:30:00+00:00
    **Status**: Accepted
    **ID**: DR-xxxxxxxx

    ## Context

    Several services verify tokens.

    ## Decision

    Sign with RS256.

    ## Consequences

    **Positive**:
    - No shared secret

    **Negative**:
    - Key rotation

    **Mitigations**:
    - JWKS endpoint

    ## Alternatives Considered

    1. **HS256**: every verifier holds the secret

    ## Assumptions

    - Services reach the JWKS
    ");
    assert_eq!(
        ok(d, &["decision", "show", &id]),
        md,
        "the file is the stored record"
    );

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["decision", "add", "--from-json", "-"])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(
                br#"{"title": "t", "context": "c", "decision": "d", "scratchpad": "..."}"#,
            )?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never store raw reasoning"));

    let s = json(
        d,
        &[
            "decision",
            "supersede",
            &id,
            "--title",
            "Use EdDSA",
            "--context",
            "Faster.",
            "--decision",
            "Sign with Ed25519.",
            "--json",
        ],
    );
    assert_eq!(s["superseded"]["status"], "Superseded");
    assert_eq!(s["superseded"]["superseded_by"], s["new"]["id"]);
    let hot = ok(d, &["hot"]);
    assert!(!hot.contains(&id) && hot.contains("Ed25519"), "{hot}");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("**Superseded by**")
    );
    assert_eq!(
        mnemon(d, &["decision", "status", &id, "accepted"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        json(d, &["decision", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn episodic_documents_render_and_export_restores_files() {
    let tmp = project();
    let d = tmp.path();
    ok(
        d,
        &[
            "decision",
            "add",
            "--title",
            "Use RS256",
            "--context",
            "Several verifiers.",
            "--decision",
            "Sign with RS256.",
            "--status",
            "accepted",
        ],
    );
    let state = ok(d, &["doc", "show", "project_state"]);
    let session = json(d, &["session", "list", "--json"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    insta::assert_snapshot!(state.replace(&session, "<session>"), @r"
    # Project State

    **Last Updated**: 2025-01-15T14:30:00+00:00
    **Session**: <session>

    ## Epics

    - No open epics

    ## Active Work

    - Nothing is in progress

    ## Recent Progress

    - No changes this session

    ## Blockers

    - None

    ## Statistics

    - **Total Epics**: 0
    - **Total Stories**: 0
    - **Total Tasks**: 0
    - **Completed**: 0
    - **In Progress**: 0
    - **Blocked**: 0
    ");
    insta::assert_snapshot!(ok(d, &["doc", "show", "work_plan"]), @r"
    # Work Plan

    **Last Updated**: 2025-01-15T14:30:00+00:00

    ## Immediate Next Steps

    - Nothing is planned yet

    ## Prioritized Backlog

    - The backlog is empty

    ## Future Work

    - No milestones are planned
    ");
    let log = ok(d, &["doc", "show", "decision_log"]);
    assert!(
        log.contains("] DR-") && log.contains(": Use RS256 (Accepted)\nSign with RS256."),
        "{log}"
    );

    // A second decision changes the log: version 2, and version 1 stays readable.
    ok(
        d,
        &[
            "decision",
            "add",
            "--title",
            "Use Redis",
            "--context",
            "Key cache.",
            "--decision",
            "Cache keys in Redis.",
        ],
    );
    let v2 = json(d, &["doc", "show", "decision_log", "--json"]);
    assert_eq!(v2["version"], 2);
    assert_eq!(
        ok(d, &["doc", "show", "decision_log", "--version", "1"]),
        log
    );
    let versions = std::fs::read_dir(d.join(".mnemon/memory/versions"))
        .unwrap()
        .count();
    assert_eq!(versions, 1, "the old decision_log version is on disk");

    // Rendered files are views: deleting them loses nothing.
    std::fs::remove_dir_all(d.join(".mnemon/memory")).unwrap();
    std::fs::remove_dir_all(d.join(".mnemon/decisions")).unwrap();
    ok(d, &["export"]);
    assert_eq!(
        std::fs::read_dir(d.join(".mnemon/decisions"))
            .unwrap()
            .count(),
        2
    );
    assert!(
        std::fs::read_to_string(d.join(".mnemon/memory/decision_log.md"))
            .unwrap()
            .contains("Use Redis")
    );
}

#[test]
fn session_log_file_follows_the_session() {
    let tmp = project();
    let d = tmp.path();
    let op = json(
        d,
        &[
            "record",
            "--type",
            "nl_command",
            "--data",
            r#"{"title": "Create Epic", "input": "Create an epic for user authentication", "result": "Created Epic #5"}"#,
            "--json",
        ],
    );
    let id = op["session_id"].as_str().unwrap().to_string();
    let live = d.join(".mnemon/sessions").join(format!("session_{id}.md"));
    let text = std::fs::read_to_string(&live).unwrap();
    assert!(
        text.starts_with("# Orchestrator Session: 2025-01-15 14:30:00\n"),
        "{text}"
    );
    assert!(text.contains("### [14:30:00] NL Command: Create Epic\n**Input**: Create an epic for user authentication\n"), "{text}");
    assert!(text.contains("**Commands**: 1 NL command\n"), "{text}");
    assert!(text.contains("**Tokens Used**: "), "{text}");

    ok(d, &["session", "archive", "--title", "Kick-off"]);
    assert!(!live.exists(), "archiving moves the log");
    let archived: Vec<_> = std::fs::read_dir(d.join(".mnemon/sessions/archive"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(archived.len(), 1);
    let name = archived[0].to_string_lossy().to_string();
    assert!(
        name.starts_with("session_20250115_143000_") && name.ends_with(".md"),
        "{name}"
    );

    std::fs::remove_dir_all(d.join(".mnemon/sessions")).unwrap();
    ok(d, &["export"]);
    let back = std::fs::read_to_string(d.join(".mnemon/sessions/archive").join(&name)).unwrap();
    assert!(
        back.contains("**Status**: Archived\n**Title**: Kick-off"),
        "{back}"
    );
}
