//! Context plans from config: a plan of one's own by name, phase plans
//! from `[phase_budgets]`, and a clear error for a name that is neither.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use common::{json, mnemon, ok, project};

#[test]
fn a_plan_from_config_is_used_by_name() {
    let tmp = project();
    let d = tmp.path();
    let cfg = d.join(".mnemon/config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(
        "\n[plans.review]\nreserve = 0.1\nbudget = 300\nsections = [\n  { kind = \"hot_context\", required = true },\n  { kind = \"decisions\", share = 0.5 },\n  { kind = \"working_memory\", share = 0.4 },\n]\n",
    );
    std::fs::write(&cfg, text).unwrap();
    for i in 0..40 {
        ok(
            d,
            &[
                "record",
                "--type",
                "task_execution",
                "--data",
                &format!("\"ran step {i} of the login migration\""),
            ],
        );
    }
    let out = json(d, &["context", "--preset", "review", "--format", "json"]);
    assert_eq!(out["plan"], "review");
    assert_eq!(out["budget"], 300);
    let tokens = out["tokens"].as_u64().unwrap();
    assert!(tokens <= 270, "a 10 % reserve of 300 leaves 270: {tokens}");
    let kinds: Vec<&str> = out["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["working_memory"]);

    let bad = mnemon(d, &["context", "--preset", "reveiw"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("review") && err.contains("tiers"), "{err}");
}
