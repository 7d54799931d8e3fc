//! `mnemon import`: histories come in with their dates and speakers,
//! importing twice stores once, and what was imported is found by
//! context; `--at` dates a single record.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::{Path, PathBuf};

mod common;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/synth_small.json")
}

#[test]
fn an_eval_file_imports_once_with_its_dates_and_is_found_by_context() {
    let p = common::project();
    let dir = p.path();
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let convs = data["conversations"].as_array().unwrap();
    let sessions: usize = convs
        .iter()
        .map(|c| c["sessions"].as_array().unwrap().len())
        .sum();
    let turns: usize = convs
        .iter()
        .flat_map(|c| c["sessions"].as_array().unwrap())
        .map(|s| s["turns"].as_array().unwrap().len())
        .sum();

    let first = common::json(dir, &["import", fixture().to_str().unwrap(), "--json"]);
    assert_eq!(first["messages"], turns as u64, "{first}");
    assert_eq!(first["sessions"], sessions as u64, "{first}");
    assert_eq!(first["already_stored"], 0);
    assert_eq!(first["from"], "2023-01-01T13:05:00.000Z", "{first}");

    // Twice: nothing new.
    let again = common::json(dir, &["import", fixture().to_str().unwrap(), "--json"]);
    assert_eq!(again["messages"], 0, "{again}");
    assert_eq!(again["sessions"], 0);
    assert_eq!(again["already_stored"], turns as u64);

    // Sessions carry the conversation's dates, and are closed.
    let list = common::json(dir, &["session", "list", "--json", "--limit", "100"]);
    let list = list.as_array().expect("a list of sessions");
    assert_eq!(list.len(), sessions, "{list:?}");
    let started: Vec<&str> = list
        .iter()
        .map(|s| s["started_at"].as_str().unwrap())
        .collect();
    assert!(started.contains(&"2023-01-10T13:53:00.000Z"), "{started:?}");

    // A question finds its evidence turn, verbatim.
    let q = &convs[0]["questions"][0];
    let evidence = q["evidence"][0].as_str().unwrap();
    let turn = convs[0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["turns"].as_array().unwrap())
        .find(|t| t["id"] == evidence)
        .unwrap();
    let ctx = common::ok(
        dir,
        &[
            "context",
            "--preset",
            "qa",
            "--budget",
            "1000",
            "--query",
            q["question"].as_str().unwrap(),
        ],
    );
    assert!(
        ctx.contains(turn["text"].as_str().unwrap()),
        "{} not in\n{ctx}",
        turn["text"]
    );
}

#[test]
fn jsonl_keeps_times_names_and_sessions_and_names_a_bad_line() {
    let p = common::project();
    let dir = p.path();
    let file = dir.join("chat.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"role":"user","name":"Ana","content":"The staging database moved to host pg-7.","timestamp":"2024-03-01T10:00:00Z"}"#,
            "\n",
            r#"{"role":"assistant","content":"Noted: staging is on pg-7.","timestamp":"2024-03-01T10:00:30Z"}"#,
            "\n",
            r#"{"role":"user","content":"Deploy freeze starts Friday.","timestamp":"2024-03-04T09:00:00.000Z"}"#,
            "\n"
        ),
    )
    .unwrap();
    let r = common::json(dir, &["import", file.to_str().unwrap(), "--json"]);
    assert_eq!(r["messages"], 3, "{r}");
    assert_eq!(r["sessions"], 2, "one per day: {r}");
    assert_eq!(r["to"], "2024-03-04T09:00:00.000Z");
    let hits = common::json(dir, &["search", "staging pg-7", "--json"]);
    let text = hits.to_string();
    assert!(text.contains("Ana: The staging database moved"), "{text}");
    assert!(text.contains("2024-03-01T10:00:00.000Z"), "{text}");

    let again = common::json(dir, &["import", file.to_str().unwrap(), "--json"]);
    assert_eq!(again["messages"], 0, "{again}");

    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"boss\",\"content\":\"x\"}\n",
    )
    .unwrap();
    let out = common::mnemon(dir, &["import", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl line 2"), "{err}");
    assert!(err.contains("boss"), "{err}");
    // Nothing of the bad file was stored.
    let after = common::json(dir, &["search", "ok", "--json"]).to_string();
    assert!(!after.contains("\"ok\""), "{after}");
}

#[test]
fn at_dates_a_message_and_a_record() {
    let p = common::project();
    let dir = p.path();
    common::ok(
        dir,
        &[
            "message",
            "--role",
            "user",
            "--at",
            "2021-06-01T08:00:00Z",
            "The quarterly report lives in the finance bucket.",
        ],
    );
    common::ok(
        dir,
        &[
            "record",
            "--type",
            "task_execution",
            "--data",
            r#"{"task": "archived the quarterly report"}"#,
            "--at",
            "2021-06-02T08:00:00Z",
        ],
    );
    let hits = common::json(dir, &["search", "quarterly report", "--json"]).to_string();
    assert!(hits.contains("2021-06-01T08:00:00.000Z"), "{hits}");
    assert!(hits.contains("2021-06-02T08:00:00.000Z"), "{hits}");
    let out = common::mnemon(dir, &["message", "--role", "user", "--at", "June", "x"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("RFC 3339"));
}

#[test]
fn a_turn_larger_than_the_window_is_stored_as_history() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    common::ok(dir, &["init", "--model", "gpt-4o", "--window", "4096"]);
    let huge = format!(
        "The zephyr manifest follows. {}",
        "lorem ipsum ".repeat(6_000)
    );
    let file = dir.join("big.jsonl");
    let lines = [
        serde_json::json!({"role": "user", "content": "Please keep the zephyr manifest.", "timestamp": "2024-05-01T10:00:00Z"}),
        serde_json::json!({"role": "user", "content": huge, "timestamp": "2024-05-01T10:01:00Z"}),
        serde_json::json!({"role": "assistant", "content": "Kept.", "timestamp": "2024-05-01T10:02:00Z"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let r = common::json(dir, &["import", file.to_str().unwrap(), "--json"]);
    assert_eq!(r["messages"], 3, "{r}");
    assert_eq!(r["outside_window"], 1, "{r}");
    let hits = common::json(dir, &["search", "zephyr manifest", "--json"]).to_string();
    assert!(hits.contains("The zephyr manifest follows."), "{hits}");
    let status = common::json(dir, &["status", "--json"]);
    assert!(status.to_string().contains("\"zone\""), "{status}");
}

#[test]
fn a_chatgpt_export_imports_the_branch_shown() {
    let p = common::project();
    let dir = p.path();
    let file = dir.join("conversations.json");
    std::fs::write(
        &file,
        r#"[{"title":"Lisbon trip","create_time":1700000000.5,"current_node":"b","mapping":{
          "r":{"id":"r","message":null,"parent":null,"children":["a"]},
          "a":{"id":"a","message":{"author":{"role":"user"},"create_time":1700000001,"content":{"content_type":"text","parts":["Which hotel did we book in Lisbon?"]}},"parent":"r","children":["x","b"]},
          "x":{"id":"x","message":{"author":{"role":"assistant"},"create_time":1700000002,"content":{"parts":["An abandoned answer about Porto."]}},"parent":"a","children":[]},
          "b":{"id":"b","message":{"author":{"role":"assistant"},"create_time":1700000003,"content":{"parts":["The Memmo Alfama, from 3 to 7 May."]}},"parent":"a","children":[]}}}]"#,
    )
    .unwrap();
    let r = common::json(dir, &["import", file.to_str().unwrap(), "--json"]);
    assert_eq!(r["messages"], 2, "{r}");
    assert_eq!(r["sessions"], 1, "{r}");
    assert_eq!(r["from"], "2023-11-14T22:13:21.000Z", "{r}");
    let list = common::json(dir, &["session", "list", "--json"]).to_string();
    assert!(list.contains("Lisbon trip"), "{list}");
    let ctx = common::ok(
        dir,
        &[
            "context",
            "--preset",
            "qa",
            "--budget",
            "500",
            "--query",
            "hotel Lisbon",
        ],
    );
    assert!(ctx.contains("The Memmo Alfama, from 3 to 7 May."), "{ctx}");
    assert!(!ctx.contains("Porto"), "{ctx}");
}

#[test]
fn a_relative_date_in_a_question_is_reckoned_from_the_historys_present() {
    let p = common::project();
    let dir = p.path();
    let turns = [
        (
            "2024-02-21T12:00:00Z",
            "The team lunch was at the Thai place on Elm Street, next to the old bookshop.",
        ),
        ("2024-02-20T09:00:00Z", "Sprint review moved to Thursday."),
        (
            "2024-03-07T12:30:00Z",
            "The team lunch was at the pizza place by the station.",
        ),
        (
            "2024-03-13T17:00:00Z",
            "Deploy of the billing service is done.",
        ),
    ];
    let mut lines: Vec<String> = turns
        .iter()
        .map(|(at, text)| {
            serde_json::json!({"role": "user", "content": text, "timestamp": at}).to_string()
        })
        .collect();
    // Enough other turns that "team" and "lunch" say something (BM25
    // gives a word in half of the records no weight).
    for d in 1..=10 {
        lines.push(
            serde_json::json!({
                "role": "assistant",
                "content": format!("Build {d} passed all checks."),
                "timestamp": format!("2024-03-{:02}T08:00:00Z", d),
            })
            .to_string(),
        );
    }
    let file = dir.join("lunch.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    common::ok(dir, &["import", file.to_str().unwrap()]);
    let ctx = common::json(
        dir,
        &[
            "context",
            "--preset",
            "qa",
            "--query",
            "Where was the team lunch last Thursday?",
            "--budget",
            "600",
            "--json",
        ],
    );
    let text = ctx["text"].as_str().unwrap();
    // By their words the Thai lunch leads; the Thursday before the newest
    // record (Wednesday 2024-03-13) is 2024-03-07, the pizza place.
    let pizza = text.find("pizza place").expect("last Thursday's lunch");
    let thai = text.find("Thai place").unwrap_or(usize::MAX);
    assert!(pizza < thai, "last Thursday's lunch ranks first: {text}");
    assert!(text.contains("2024-03-07"), "with its date: {text}");
}
