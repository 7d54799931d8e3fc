//! A question shapes every context, through the CLI as a user runs it: the
//! record the question names leads what is sent whatever the preset, an
//! empty document is never sent as a match, a user asking what they said
//! gets their own turns first, and a refresh never leaves the window
//! fuller.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use common::{json, ok, project};

/// `mnemon record --type KIND --data {"text": TEXT}`.
fn record(dir: &std::path::Path, kind: &str, text: &str) {
    let data = serde_json::json!({ "text": text }).to_string();
    ok(dir, &["record", "--type", kind, "--data", &data]);
}

/// 300 imported turns and 40 recorded steps: a session summary, working
/// memory and documents that would fill any budget on their own.
fn busy() -> tempfile::TempDir {
    let p = project();
    let lines: Vec<String> = (1..=300)
        .map(|i| {
            serde_json::json!({
                "role": if i % 2 == 0 { "assistant" } else { "user" },
                "content": format!("step {i}: ran the build of module m{} and checked the logs for warnings", i % 17),
                "timestamp": format!("2025-01-{:02}T10:{:02}:00Z", 1 + i / 60, i % 60),
            })
            .to_string()
        })
        .collect();
    std::fs::write(p.path().join("h.jsonl"), lines.join("\n")).unwrap();
    ok(p.path(), &["import", "h.jsonl"]);
    for i in 0..40 {
        record(
            p.path(),
            "task_execution",
            &format!("step {} deployed service s{} to staging", 1000 + i, i % 5),
        );
    }
    p
}

#[test]
fn the_record_a_question_names_leads_the_context_in_every_preset() {
    let p = busy();
    for preset in ["tiers", "qa", "conversation"] {
        for budget in ["400", "2000"] {
            let out = json(
                p.path(),
                &[
                    "context", "--budget", budget, "--preset", preset, "--query", "step 242",
                    "--json",
                ],
            );
            let fragments = out["sections"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["kind"] == "fragments")
                .unwrap_or_else(|| panic!("{preset} at {budget}: no fragments in {out}"));
            let text = fragments.to_string();
            assert!(
                text.contains("step 242:"),
                "{preset} at {budget}: the named record is missing: {text}"
            );
            assert!(
                !text.contains("Nothing is planned yet") && !text.contains("doc:"),
                "{preset} at {budget}: an empty document was sent as a match: {text}"
            );
            assert!(out["tokens"].as_u64().unwrap() <= budget.parse::<u64>().unwrap());
        }
    }
}

#[test]
fn a_refresh_through_the_cli_never_leaves_the_window_fuller() {
    let p = project();
    for i in 0..6 {
        record(p.path(), "note", &format!("note {i} on the login flow"));
    }
    ok(
        p.path(),
        &[
            "decision",
            "add",
            "--title",
            "Use argon2id",
            "--decision",
            "argon2id with 64 MiB",
            "--context",
            "bcrypt is slow to tune",
        ],
    );
    for _ in 0..2 {
        let before = json(p.path(), &["status", "--json"])["window"]["used"]
            .as_u64()
            .unwrap();
        let out = ok(p.path(), &["refresh"]);
        let after = json(p.path(), &["status", "--json"])["window"]["used"]
            .as_u64()
            .unwrap();
        assert!(
            after <= before,
            "refresh took the window from {before} to {after}: {out}"
        );
    }
}

/// The README's advice for a fact too long for the hot context: `record
/// --type note` keeps it searchable, not sent every turn. A compaction may
/// summarize it like any record, but never pins it as it pins a decision;
/// a question finds it whole.
#[test]
fn a_note_is_found_by_a_question_and_not_pinned() {
    let p = project();
    let fact = "The staging cluster kestrel-7 rotates its TLS certificates every 45 days through the vault-pki role, and the on-call runbook lives in ops/runbooks/tls.md";
    record(p.path(), "note", fact);
    record(p.path(), "decision", "hash passwords with argon2id");
    for i in 0..10 {
        record(
            p.path(),
            "task_execution",
            &format!("step {i}: built and tested the login flow"),
        );
    }
    let c = json(p.path(), &["compact", "--dry-run", "--json"]);
    let lines = c["summary"]["lines"].as_array().unwrap();
    let pinned: Vec<&str> = lines
        .iter()
        .filter(|l| l["pinned"] == true)
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(pinned.iter().any(|t| t.contains("argon2id")), "{c}");
    assert!(
        !pinned.iter().any(|t| t.contains("kestrel-7")),
        "a note is not pinned: {c}"
    );
    let asked = ok(
        p.path(),
        &[
            "context",
            "--budget",
            "800",
            "--query",
            "how often do the kestrel-7 TLS certificates rotate",
        ],
    );
    assert!(asked.contains("every 45 days"), "{asked}");
}

const MINE: &str = "I want the backup job to run nightly";
const ANSWER: &str = "A backup job can run nightly, weekly or hourly: a nightly backup job suits most teams, and each backup job writes its own log";

/// The places of the user's turn and of the assistant's answer among the
/// fragments `mnemon context --query QUERY` sends, in a conversation
/// recorded with `mnemon message --role`.
fn places(query: &str) -> (usize, usize) {
    let p = project();
    ok(p.path(), &["message", "--role", "user", MINE]);
    ok(p.path(), &["message", "--role", "assistant", ANSWER]);
    for _ in 0..5 {
        ok(
            p.path(),
            &["message", "--role", "user", "Thanks, that helps"],
        );
        ok(
            p.path(),
            &["message", "--role", "assistant", "Glad to help"],
        );
    }
    let out = json(
        p.path(),
        &[
            "context", "--budget", "300", "--preset", "qa", "--query", query, "--json",
        ],
    );
    let items: Vec<String> = out["sections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "fragments")
        .flat_map(|s| s["items"].as_array().unwrap().iter())
        .map(|i| i["text"].as_str().unwrap().to_string())
        .collect();
    let at = |t: &str| {
        items
            .iter()
            .position(|i| i.contains(t))
            .unwrap_or_else(|| panic!("{t:?} is not among the fragments: {out}"))
    };
    (at(MINE), at(ANSWER))
}

#[test]
fn asking_what_i_brought_up_leads_with_my_own_turns() {
    let (mine, answer) = places("What did I mention about the backup job in our conversations?");
    assert!(mine < answer, "the user's turn comes first");
    let (mine, answer) = places("Which backup job suits most teams, and where is its log?");
    assert!(
        answer < mine,
        "a question about the topic keeps the words' order"
    );
}
