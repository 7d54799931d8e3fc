//! `mnemon optimize` end to end: the dry run reports and changes nothing;
//! the real run writes the files holding what left the context.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use common::{json, ok, project};

fn sentence(i: usize) -> String {
    let topics = [
        "login form",
        "signup flow",
        "MFA codes",
        "password hashing",
        "session tokens",
    ];
    format!(
        "Step {i} worked on the {} and recorded result {} for story #{}.",
        topics[i % topics.len()],
        i * 7 % 13,
        i % 5 + 1
    )
}

#[test]
fn dry_run_then_optimize_writes_archive_registry_and_artifacts() {
    let tmp = project();
    let d = tmp.path();
    for i in 0..8 {
        let text = (i * 6..i * 6 + 6)
            .map(sentence)
            .collect::<Vec<_>>()
            .join(" ");
        let data = serde_json::json!({"step": text}).to_string();
        ok(
            d,
            &[
                "record",
                "--type",
                "task_execution",
                "--phase",
                "planning",
                "--data",
                &data,
            ],
        );
    }
    let content = (0..150).map(sentence).collect::<Vec<_>>().join(" ");
    let file = serde_json::json!({"path": "src/auth.rs", "content": content}).to_string();
    ok(
        d,
        &[
            "record",
            "--type",
            "file_read",
            "--phase",
            "execution",
            "--data",
            &file,
        ],
    );
    let log = (0..260).map(sentence).collect::<Vec<_>>().join(" ");
    let big = json(
        d,
        &[
            "record",
            "--type",
            "test_output",
            "--data",
            &serde_json::json!(log).to_string(),
            "--json",
        ],
    );
    let big_seq = big["seq"].as_i64().unwrap();
    for i in 0..7 {
        ok(
            d,
            &[
                "record",
                "--type",
                "validation",
                "--data",
                &format!("\"validation {i} passed\""),
            ],
        );
    }
    let used = |d| {
        json(d, &["status", "--json"])["engine"]["window"]["used"]
            .as_u64()
            .unwrap()
    };
    let before = used(d);

    let dry = ok(d, &["optimize", "--dry-run"]);
    assert_eq!(used(d), before, "a dry run changes nothing");
    assert!(!d.join(".mnemon/artifacts").exists());
    insta::assert_snapshot!("optimize_dry_run", dry);

    let r = json(d, &["optimize", "--json"]);
    let saved = r["value"]["tokens_saved"].as_u64().unwrap();
    assert_eq!(
        used(d),
        before - saved,
        "usage drops by exactly what was saved"
    );
    let by: std::collections::BTreeMap<String, u64> = r["value"]["techniques"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["technique"].as_str().unwrap().to_string(),
                t["tokens_saved"].as_u64().unwrap(),
            )
        })
        .collect();
    for t in [
        "phase_summaries",
        "artifact_registry",
        "externalize",
        "pruning",
    ] {
        assert!(by[t] > 0, "{t} saved nothing: {by:?}");
    }
    let m = d.join(".mnemon");
    let registry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(m.join("artifacts/registry.json")).unwrap())
            .unwrap();
    assert!(registry["src/auth.rs"]["size_tokens"].as_u64().unwrap() > 1_000);
    let ext: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(m.join(format!("artifacts/o{big_seq}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(ext["operation"]["data"], serde_json::json!(log));
    let phases: Vec<_> = std::fs::read_dir(m.join("archive/phases"))
        .unwrap()
        .collect();
    assert_eq!(phases.len(), 1);

    // Files deleted by hand come back from the database on export.
    std::fs::remove_dir_all(m.join("artifacts")).unwrap();
    ok(d, &["export"]);
    assert!(m.join("artifacts/registry.json").exists());
    assert!(ok(d, &["optimize"]).contains("nothing to optimize"));
}
