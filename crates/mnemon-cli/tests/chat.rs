//! `mnemon chat` as separate processes: design v1's acceptance tests 1-4,
//! run end to end through scripts with `--json` events.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::project;
use serde_json::Value;

const DAY1: &str = "2025-01-15T14:30:00Z";
const DAY2: &str = "2025-01-16T09:00:00Z";

/// Runs `mnemon chat --json` with `lines` on stdin at the clock `now`;
/// returns one reply per line (the last is the session end, unless
/// `keep` leaves the session open).
fn chat(dir: &Path, now: &str, lines: &[String], keep: bool) -> Vec<Value> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.args(["chat", "--json"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("MNEMON_NOW", now)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if keep {
        cmd.arg("--keep-session");
    }
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("MNEMON_") && k != "MNEMON_NOW") {
        cmd.env_remove(k);
    }
    let mut child = cmd.spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "mnemon chat failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn kind(r: &Value) -> &str {
    r["kind"].as_str().unwrap()
}

/// Every entity, read from the project's database.
fn entities(dir: &Path) -> Vec<Value> {
    use mnemon_core::memory::{EntityQuery, EntityStore};
    let store = mnemon_sqlite::SqliteStore::open(&dir.join(".mnemon/mnemon.db")).unwrap();
    store
        .entities(&EntityQuery::default())
        .unwrap()
        .into_iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

fn set_window(dir: &Path, tokens: u64) {
    let cfg = dir.join(".mnemon/config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replace(
        "[context_window]",
        &format!("[context_window]\nmax_tokens = {tokens}"),
    );
    std::fs::write(&cfg, text).unwrap();
}

/// Test 1, long session continuity: 120 commands in one session at an
/// 8,192-token window. Usage passes 85 %, the engine refreshes on its own,
/// nothing recorded is lost, and references keep resolving afterwards.
#[test]
fn acceptance_1_a_long_session_refreshes_without_losing_anything() {
    let tmp = project();
    let d = tmp.path();
    set_window(d, 8_192);
    let mut script = Vec::new();
    for i in 1..=30 {
        script.push(format!("create an epic for feature {i}"));
        script.push(format!("add 2 stories to it: api {i}, ui {i}"));
        script.push("start the first story".to_string());
        script.push("what's the status of the epic?".to_string());
    }
    assert_eq!(script.len(), 120);
    let replies = chat(d, DAY1, &script, false);
    assert_eq!(
        replies.len(),
        121,
        "one reply per line, then the session end"
    );
    for (line, r) in script.iter().zip(&replies) {
        assert!(
            matches!(kind(r), "done" | "answer"),
            "{line}: {} {}",
            kind(r),
            r["text"]
        );
    }
    let refreshes: Vec<&Value> = replies
        .iter()
        .flat_map(|r| r["events"].as_array().unwrap())
        .filter(|e| e["event"] == "refreshed")
        .collect();
    assert!(
        !refreshes.is_empty(),
        "usage passed 85 % and the engine refreshed"
    );
    for r in &refreshes {
        assert!(r["tokens_after"].as_u64() < r["tokens_before"].as_u64());
    }
    // Usage stayed under the window the whole time.
    for r in &replies {
        let w = &r["status"]["window"];
        assert!(w["used"].as_u64().unwrap() < w["effective_max"].as_u64().unwrap());
    }
    // Nothing lost: every epic and story, each story under its own epic,
    // the first story of each started.
    let all = entities(d);
    let titled = |t: &str| {
        all.iter()
            .find(|e| e["title"] == t)
            .unwrap_or_else(|| panic!("{t} missing"))
    };
    for i in 1..=30 {
        let epic = titled(&format!("feature {i}"));
        let api = titled(&format!("api {i}"));
        let ui = titled(&format!("ui {i}"));
        assert_eq!(api["parent"], epic["number"], "api {i}");
        assert_eq!(ui["parent"], epic["number"], "ui {i}");
        assert_eq!(api["status"], "in_progress", "api {i}");
        assert_eq!(ui["status"], "pending", "ui {i}");
    }
    // And the log holds every command.
    let ops = common::json(
        d,
        &[
            "recent",
            "--type",
            "nl_command",
            "--limit",
            "1000",
            "--json",
        ],
    );
    assert_eq!(
        ops.as_array().unwrap().len(),
        120,
        "every command is recorded once"
    );
}

/// Test 2, cross-session continuity: session 1 creates Epic #5 with three
/// stories; session 2, the next day in a new process, knows it.
#[test]
fn acceptance_2_the_next_day_a_new_session_knows_epic_5() {
    let tmp = project();
    let d = tmp.path();
    let day1 = chat(
        d,
        DAY1,
        &lines(&[
            "create a milestone called v1",
            "create epics: Onboarding, Billing and Search",
            "Create an epic for user authentication",
            "Add 3 stories to it: login, signup, and MFA",
        ]),
        false,
    );
    assert_eq!(day1[2]["entities"][0]["number"], 5);
    assert_eq!(kind(day1.last().unwrap()), "ended");
    let state = std::fs::read_to_string(d.join(".mnemon/memory/project_state.md")).unwrap();
    assert!(
        state.contains(
            "Epic #5 \"user authentication\" (pending, priority 3): 3 items, 0 completed"
        ),
        "{state}"
    );
    let day2 = chat(
        d,
        DAY2,
        &lines(&["what's the status of epic 5?", "what did we do yesterday?"]),
        false,
    );
    let status = day2[0]["text"].as_str().unwrap();
    assert!(
        status.starts_with("Epic #5 \"user authentication\": pending, priority 3."),
        "{status}"
    );
    assert!(status.contains("3 stories: 3 pending"), "{status}");
    assert!(status.contains("Story \"MFA\""), "{status}");
    let yesterday = day2[1]["text"].as_str().unwrap();
    assert!(
        yesterday.contains("Created Epic #5 \"user authentication\""),
        "{yesterday}"
    );
    // A new session, with day 1's archived.
    assert_ne!(
        day1[0]["status"]["session_id"],
        day2[0]["status"]["session_id"]
    );
    let archived = std::fs::read_dir(d.join(".mnemon/sessions/archive"))
        .unwrap()
        .count();
    assert_eq!(
        archived, 2,
        "both sessions ended gracefully and were archived"
    );
}

/// Test 3, reference resolution, across a restart: "it" in a second
/// process is the epic the first process created.
#[test]
fn acceptance_3_it_resolves_to_epic_5_in_the_next_process() {
    let tmp = project();
    let d = tmp.path();
    chat(
        d,
        DAY1,
        &lines(&[
            "create a milestone called v1",
            "create epics: Onboarding, Billing and Search",
        ]),
        true,
    );
    let first = chat(d, DAY1, &lines(&["Create epic for authentication"]), true);
    assert_eq!(first[0]["text"], "Created Epic #5 \"authentication\".");
    let second = chat(d, DAY1, &lines(&["Add 3 stories to it"]), true);
    assert_eq!(
        kind(&second[0]),
        "incomplete",
        "no titles given: it asks for them"
    );
    let third = chat(
        d,
        DAY1,
        &lines(&["Add 3 stories to it: login, signup, and MFA"]),
        true,
    );
    let r = &third[0];
    assert_eq!(kind(r), "done", "{}", r["text"]);
    assert_eq!(
        r["text"],
        "Created Story #6 \"login\", Story #7 \"signup\" and Story #8 \"MFA\" under Epic #5 \"authentication\"."
    );
    for s in r["entities"].as_array().unwrap() {
        assert_eq!(s["parent"], 5);
    }
}

/// Test 4, context compression: the session log passes 40,000 tokens (the
/// threshold of a 128K window), is compacted to at most 70 % of itself,
/// and the pinned items (decisions, constraints) come through verbatim.
#[test]
fn acceptance_4_a_40k_session_log_is_compacted_with_pinned_items_verbatim() {
    let tmp = project();
    let d = tmp.path();
    let mut script = lines(&[
        "create an epic for the data platform",
        "/log_decision Use PostgreSQL 15 for the event store | it gives us transactional outbox support",
        "/add_constraint Never drop a customer event without writing it to the dead-letter table",
    ]);
    let areas = [
        "ingest", "storage", "query", "billing", "alerts", "exports", "audit", "search",
    ];
    for i in 0..200 {
        let area = areas[i % areas.len()];
        script.push(format!(
            "add a task to epic 1: {area} step {i} covers schema review, load testing with {} synthetic tenants, a rollback rehearsal, dashboards for p95 latency and error budgets, runbook updates for the on-call rotation, and a written sign-off from the {area} owners before the change window opens on day {}",
            i * 37 % 1000,
            i % 28 + 1
        ));
    }
    let replies = chat(d, DAY1, &script, true);
    let compactions: Vec<&Value> = replies
        .iter()
        .flat_map(|r| r["events"].as_array().unwrap())
        .filter(|e| e["event"] == "session_log_compacted")
        .collect();
    assert!(!compactions.is_empty(), "the session log passed 40K tokens");
    let c = compactions[0];
    let (input, output) = (
        c["input_tokens"].as_u64().unwrap(),
        c["output_tokens"].as_u64().unwrap(),
    );
    assert!(input >= 40_000, "{input}");
    assert!(output * 10 <= input * 7, "ratio {output}/{input} above 0.7");
    assert!(
        output <= 28_000,
        "compacted to {output} tokens, above the seed's 28,000"
    );
    eprintln!("session log compacted: {input} -> {output} tokens");
    let session = replies[0]["status"]["session_id"].as_str().unwrap();
    let log =
        std::fs::read_to_string(d.join(format!(".mnemon/sessions/session_{session}.md"))).unwrap();
    for pinned in [
        "Use PostgreSQL 15 for the event store",
        "Never drop a customer event without writing it to the dead-letter table",
    ] {
        assert!(log.contains(pinned), "{pinned} is kept verbatim");
    }
}

/// Unknown lines get help and change nothing; usage errors exit 2.
#[test]
fn a_script_with_nonsense_changes_nothing_and_a_missing_script_is_named() {
    let tmp = project();
    let d = tmp.path();
    let r = chat(
        d,
        DAY1,
        &lines(&["frobnicate the widget", "list everything"]),
        true,
    );
    assert_eq!(kind(&r[0]), "not_understood");
    assert!(
        r[0]["text"]
            .as_str()
            .unwrap()
            .contains("Closest supported forms")
    );
    assert!(r[0].get("recorded").is_none());
    assert_eq!(r[1]["text"], "No items.");
    let o = common::mnemon(d, &["chat", "--script", "nope.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read the script nope.txt"));
    let o = common::mnemon(d, &["chat", "--scrip", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

/// What a person reads when a script runs: replies, notices, status lines.
#[test]
fn a_scripted_session_reads_well() {
    let tmp = project();
    let d = tmp.path();
    std::fs::write(
        d.join("plan.txt"),
        "# a comment line is skipped\n\
         Create an epic for user authentication\n\
         Add 3 stories to it: login, signup, and MFA\n\
         start it\n\
         the second\n\
         add a high priority task to the first story: write the login form\n\
         block it until the design is approved\n\
         what's blocked?\n\
         what did we just do?\n\
         list stories in epic 1\n\
         make coffee\n\
         /set_goal\n",
    )
    .unwrap();
    let out = common::ok(d, &["chat", "--script", "plan.txt", "--keep-session"]);
    let start = out
        .find("session started ")
        .expect("a session-start notice")
        + 16;
    let id = &out[start..start + 13];
    insta::assert_snapshot!("chat_script", out.replace(id, "<session>"));
    // Each status line's change is the change of the usage it shows: the
    // counts a reader sees add up.
    let re =
        regex::Regex::new(r"── \w+ · ([\d,]+) / [\d,]+ tokens \([\d.]+ %\)(?: · ([+−])([\d,]+))?")
            .unwrap();
    let num = |s: &str| s.replace(',', "").parse::<i64>().unwrap();
    let mut last = 0i64;
    let mut seen = 0;
    for c in re.captures_iter(&out) {
        let used = num(&c[1]);
        if let (Some(sign), Some(n)) = (c.get(2), c.get(3)) {
            let delta = if sign.as_str() == "−" {
                -num(n.as_str())
            } else {
                num(n.as_str())
            };
            assert_eq!(used - last, delta, "{}", &c[0]);
            seen += 1;
        }
        last = used;
    }
    assert!(seen >= 5, "{out}");
}

#[test]
fn a_checkpoint_reports_the_share_of_the_window_as_a_percent() {
    let tmp = common::project();
    let d = tmp.path();
    for i in 0..20 {
        let text = format!(
            "step {i}: {}",
            "the migration copied another batch of rows ".repeat(8)
        );
        common::ok(
            d,
            &[
                "record",
                "--type",
                "task_execution",
                "--data",
                &serde_json::json!({"task": text}).to_string(),
            ],
        );
    }
    std::fs::write(d.join("cp.txt"), "/checkpoint\n").unwrap();
    let out = common::ok(d, &["chat", "--script", "cp.txt", "--keep-session"]);
    let re = regex::Regex::new(r"taken at ([\d,]+) tokens \(([\d.]+) %\)").unwrap();
    let caps = re.captures(&out).unwrap_or_else(|| panic!("{out}"));
    let tokens: f64 = caps[1].replace(',', "").parse().unwrap();
    let shown: f64 = caps[2].parse().unwrap();
    let window = common::json(d, &["status", "--json"])["window"]["effective_max"]
        .as_f64()
        .unwrap();
    assert!(shown > 0.0, "{out}");
    assert!(
        (shown - tokens / window * 100.0).abs() <= 0.05,
        "{shown} % for {tokens} of {window} tokens"
    );
}
