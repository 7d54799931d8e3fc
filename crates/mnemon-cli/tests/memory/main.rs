//! The memory commands end to end, on a real `.mnemon/mnemon.db`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

#[path = "../common/mod.rs"]
mod common;

mod engine;
mod tiers;

use common::{json, mnemon, ok, project};

#[test]
fn records_survive_across_processes() {
    let tmp = project();
    let d = tmp.path();
    let op = json(
        d,
        &[
            "record",
            "--type",
            "nl_command",
            "--data",
            r#"{"input": "Create an epic for user authentication"}"#,
            "--json",
        ],
    );
    assert!(
        op["tokens"].as_u64().unwrap() > 5,
        "counted with o200k_base"
    );
    json(
        d,
        &[
            "record",
            "--type",
            "task_execution",
            "--status",
            "failed",
            "--data",
            r#"{"task": 15}"#,
            "--json",
        ],
    );
    json(
        d,
        &[
            "message",
            "--role",
            "user",
            "Use RS256 for signing",
            "--json",
        ],
    );
    let recent = json(d, &["recent", "--json"]);
    assert_eq!(recent.as_array().unwrap().len(), 2);
    assert_eq!(recent[0]["kind"], "task_execution");
    assert_eq!(recent[0]["pinned"], true);
    let found = json(d, &["recent", "--search", "authentication", "--json"]);
    assert_eq!(found[0]["id"], op["id"]);
    let sessions = json(d, &["session", "list", "--json"]);
    assert_eq!(sessions[0]["operation_count"], 2);
    assert_eq!(sessions[0]["message_count"], 1);
    assert!(d.join(".mnemon/mnemon.db").is_file());
}

#[test]
fn a_goal_is_completed_by_its_number_or_its_words() {
    let tmp = project();
    let d = tmp.path();
    ok(d, &["goal", "add", "Ship the login flow"]);
    ok(d, &["goal", "add", "Write the release notes"]);
    ok(d, &["goal", "add", "Ship the billing page"]);
    let listed = ok(d, &["goal", "list"]);
    assert!(listed.starts_with("1. "), "{listed}");
    assert!(listed.contains("\n2. "), "{listed}");

    let done = ok(d, &["goal", "complete", "2"]);
    assert!(done.contains("Write the release notes"), "{done}");
    let done = ok(d, &["goal", "complete", "Ship the login flow"]);
    assert!(done.contains("completed goal"), "{done}");
    assert!(done.contains("Ship the login flow"), "{done}");

    // Words two goals share, or none holds, name no goal.
    ok(d, &["goal", "add", "Ship the admin page"]);
    let two = mnemon(d, &["goal", "complete", "page"]);
    assert_eq!(two.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&two.stderr).contains("\"page\" matches 2 goals"),
        "{}",
        String::from_utf8_lossy(&two.stderr)
    );
    let none = mnemon(d, &["goal", "complete", "nothing like it"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no open goal matches"));
    let hot = json(d, &["hot", "--json"]);
    let open: Vec<&str> = hot["active_goals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["description"].as_str().unwrap())
        .collect();
    assert_eq!(open, ["Ship the billing page", "Ship the admin page"]);
}

#[test]
fn hot_context_commands_and_conflicts() {
    let tmp = project();
    let d = tmp.path();
    let goal = json(
        d,
        &[
            "goal",
            "add",
            "Implement JWT authentication",
            "--priority",
            "high",
            "--json",
        ],
    );
    let id = goal["id"].as_str().unwrap();
    ok(d, &["constraint", "add", "Token TTL must be 1 hour"]);
    ok(d, &["remember", "API keys rotate weekly"]);
    json(
        d,
        &[
            "goal",
            "update",
            id,
            "--status",
            "in-progress",
            "--if-version",
            "1",
            "--json",
        ],
    );
    let stale = mnemon(d, &["goal", "complete", id, "--if-version", "1"]);
    assert_eq!(stale.status.code(), Some(4), "a conflict exits 4");
    let err = String::from_utf8_lossy(&stale.stderr);
    assert!(err.contains("is at version 2, not 1"), "{err}");
    insta::assert_snapshot!(ok(d, &["hot"]), @r"
    # Current Context

    ## Active Goals
    - 🔄 Implement JWT authentication (high)

    ## Remember
    - API keys rotate weekly

    ## Important Constraints
    - Token TTL must be 1 hour
    ");
    let hot = json(d, &["hot", "--json"]);
    assert_eq!(hot["active_goals"][0]["version"], 2);
    // Every change re-renders the views: the session log shows it at once.
    let sessions: Vec<_> = std::fs::read_dir(d.join(".mnemon/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let log = std::fs::read_to_string(&sessions[0]).unwrap();
    assert!(
        log.contains("] Goal Updated\n") && log.contains("] Constraint Added\n"),
        "{log}"
    );
    assert!(d.join(".mnemon/memory/project_state.md").is_file());
    assert_eq!(
        hot["important_constraints"][0]["text"],
        "Token TTL must be 1 hour"
    );
}

#[test]
fn bad_input_is_refused_and_nothing_changes() {
    let tmp = project();
    let d = tmp.path();
    let o = mnemon(d, &["record", "--type", "x", "--data", "{bad"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--data is not valid JSON"));
    assert_eq!(
        mnemon(d, &["message", "--role", "bot", "hi"]).status.code(),
        Some(2)
    );
    let o = mnemon(d, &["session", "restore", "nope"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no session with id `nope`"));
    assert_eq!(json(d, &["recent", "--json"]).as_array().unwrap().len(), 0);

    let elsewhere = tempfile::tempdir().unwrap();
    let o = mnemon(elsewhere.path(), &["recent"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("run `mnemon init`"));
    std::fs::create_dir_all(elsewhere.path().join(".mnemon")).unwrap();
    std::fs::write(elsewhere.path().join(".mnemon/mnemon.db"), "not a database").unwrap();
    let o = mnemon(elsewhere.path(), &["recent"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is not a mnemon database"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn context_presets_budgets_formats_and_search() {
    let tmp = project();
    let d = tmp.path();
    ok(d, &["goal", "add", "Ship user authentication"]);
    ok(d, &["constraint", "add", "No new runtime dependencies"]);
    for (kind, text) in [
        ("nl_command", "Create an epic for user authentication"),
        (
            "task_execution",
            "Implemented password hashing with bcrypt and a per-user salt",
        ),
        ("validation", "Login tests passed: 42 of 42"),
        (
            "error",
            "Signup failed: the email normaliser rejected plus addresses",
        ),
    ] {
        let data = format!("{{\"text\": \"{text}\"}}");
        ok(d, &["record", "--type", kind, "--data", &data]);
    }
    ok(
        d,
        &[
            "message",
            "--role",
            "user",
            "Why did signup fail yesterday?",
        ],
    );
    for preset in [
        "tiers",
        "qa",
        "conversation",
        "router",
        "planner",
        "phase:planning",
        "phase:execution",
        "phase:validation",
    ] {
        let out = ok(
            d,
            &[
                "context",
                "--preset",
                preset,
                "--budget",
                "400",
                "--query",
                "signup email",
            ],
        );
        insta::assert_snapshot!(
            format!("context_{}", preset.replace(':', "_")),
            redact(&out)
        );
        let j = json(
            d,
            &[
                "context", "--preset", preset, "--budget", "400", "--query", "signup", "--format",
                "json",
            ],
        );
        assert!(j["tokens"].as_u64().unwrap() <= 400, "{preset}: {j}");
    }
    // The messages format counts chat framing within the budget.
    let m = json(
        d,
        &[
            "context",
            "--preset",
            "conversation",
            "--budget",
            "120",
            "--format",
            "messages",
        ],
    );
    assert!(m.as_array().unwrap().iter().any(|x| x["role"] == "user"));
    // Too small for the required hot context: says what it needs.
    let o = mnemon(d, &["context", "--budget", "5"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("need") && err.contains("hot_context"), "{err}");
    // Search across tiers.
    let hits = json(d, &["search", "signup", "--json"]);
    let ids: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.iter().any(|i| i.starts_with('o')) && ids.iter().any(|i| i.starts_with('m')),
        "{ids:?}"
    );
    let hot = json(d, &["search", "dependencies", "--json"]);
    assert!(
        hot[0]["id"]
            .as_str()
            .unwrap()
            .strip_prefix('h')
            .is_some_and(|n| n.parse::<u64>().is_ok()),
        "{hot}"
    );
}

#[test]
fn counts_agree_with_their_nouns() {
    let tmp = project();
    let d = tmp.path();
    ok(
        d,
        &[
            "record",
            "--type",
            "task_execution",
            "--data",
            r#"{"task": "one"}"#,
        ],
    );
    let s = ok(d, &["status"]);
    assert!(s.contains("(0 refreshes)"), "{s}");
    assert!(s.contains("1 operation in working memory"), "{s}");
    ok(d, &["refresh"]);
    let s = ok(d, &["status"]);
    assert!(s.contains("(1 refresh)"), "{s}");
}

/// Issue 37 item 4: what a command prints is what every command accepts,
/// and two things recorded in the same millisecond never share a handle
/// (the clock is fixed here, so every UUID starts alike).
#[test]
fn one_handle_per_thing_printed_and_accepted() {
    let tmp = project();
    let d = tmp.path();
    let mut printed = Vec::new();
    for n in 1..=3 {
        let out = ok(
            d,
            &[
                "record",
                "--type",
                "note",
                "--data",
                &format!(r#"{{"text": "fact {n}"}}"#),
            ],
        );
        let handle = out.split_whitespace().nth(2).unwrap().to_string();
        printed.push(handle);
    }
    assert_eq!(printed, ["o1", "o2", "o3"], "record prints the handle");
    let listed = json(d, &["recent", "--json"]);
    assert_eq!(listed[0]["handle"], "o3", "--json carries it too: {listed}");
    let recent = ok(d, &["recent"]);
    for h in &printed {
        assert!(recent.contains(&format!("· {h}]")), "{recent}");
    }
    let said = ok(
        d,
        &["message", "--role", "user", "the deploy key rotates weekly"],
    );
    assert!(said.contains(" m1 "), "{said}");

    let goal = ok(d, &["goal", "add", "Ship the login flow"]);
    let h = goal.split_whitespace().nth(2).unwrap().to_string();
    assert!(h.starts_with('h'), "{goal}");
    assert!(ok(d, &["goal", "list"]).contains(&format!("1. {h} ")));
    let found = ok(d, &["search", "login"]);
    assert!(
        found.starts_with(&h),
        "search cites the item by its handle: {found}"
    );
    let done = ok(d, &["goal", "complete", &h]);
    assert!(
        done.contains("completed goal") && done.contains(&h),
        "{done}"
    );

    let c = ok(d, &["constraint", "add", "Never log tokens"]);
    let ch = c.split_whitespace().nth(2).unwrap().to_string();
    ok(d, &["constraint", "remove", &ch]);
    assert!(!ok(d, &["constraint", "list"]).contains("Never log tokens"));

    // The same handles name things to forget, and the report uses them.
    let gone = ok(d, &["forget", "o2", "m1"]);
    assert!(gone.contains("forgot 1 operation, 1 message"), "{gone}");
    let recent = ok(d, &["recent"]);
    assert!(
        recent.contains("fact 1") && !recent.contains("fact 2"),
        "{recent}"
    );
    let r = ok(d, &["remember", "the staging host is blue-7"]);
    let rh = r.split_whitespace().nth(2).unwrap().to_string();
    let gone = ok(d, &["forget", &rh, "--dry-run"]);
    assert!(
        gone.contains(&rh),
        "hot items are reported by handle: {gone}"
    );
    let missing = mnemon(d, &["forget", "o99"]);
    assert_eq!(missing.status.code(), Some(1));
}

/// Replaces UUIDs (ids change every run) with `<id>`.
fn redact(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        let is_uuid = i + 36 <= b.len()
            && b[i..i + 36].iter().enumerate().all(|(k, c)| {
                if [8, 13, 18, 23].contains(&k) {
                    *c == b'-'
                } else {
                    c.is_ascii_hexdigit()
                }
            });
        if is_uuid {
            out.push_str("<id>");
            i += 36;
        } else {
            let ch = s[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}
