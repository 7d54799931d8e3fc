//! `mnemon eval` on the committed synthetic fixture
//! (`mnemon eval synth --seed 3 --conversations 2 --sessions 6 --turns 60`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::process::Command;

fn mnemon(args: &[&str]) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn recall(r: &serde_json::Value, budget: u64, method: &str, field: &str) -> f64 {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["budget"] == budget)
        .unwrap()["overall"][method][field]
        .as_f64()
        .unwrap()
}

#[test]
fn recall_on_the_fixture_against_both_baselines() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/synth_small.json");
    let r = mnemon(&[
        "eval",
        "recall",
        "--data",
        data,
        "--budgets",
        "500,1000,2000,4000",
        "--json",
    ]);
    assert_eq!(r["questions"], 16);
    // Ingest ran through the real engine at a small window.
    assert!(r["refreshes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["checkpoints"].as_u64().unwrap() > 0, "{r}");
    for b in [500, 1000, 2000, 4000] {
        let m = recall(&r, b, "mnemon", "recall");
        assert!(m > recall(&r, b, "recent", "recall"), "budget {b}");
        // mnemon ranks the evidence higher than BM25 alone.
        assert!(
            recall(&r, b, "mnemon", "mrr") > recall(&r, b, "bm25", "mrr"),
            "budget {b}"
        );
        // Never behind BM25 alone, even where both find everything.
        assert!(m >= recall(&r, b, "bm25", "recall"), "budget {b}");
        for method in ["mnemon", "recent", "bm25"] {
            let x = recall(&r, b, method, "recall");
            assert!((0.0..=1.0).contains(&x));
        }
    }
    assert!(recall(&r, 500, "mnemon", "recall") > recall(&r, 500, "bm25", "recall"));
    assert_eq!(recall(&r, 2000, "mnemon", "recall"), 1.0);
    // mnemon's lead over each baseline is the difference of the recalls,
    // with an interval around it that stays within what one question can
    // move.
    for b in r["results"].as_array().unwrap() {
        let budget = b["budget"].as_u64().unwrap();
        let leads = b["lead"].as_object().unwrap();
        assert_eq!(leads.len(), 2, "{b}");
        for baseline in ["recent", "bm25"] {
            let l = &leads[baseline];
            let (mean, low, high) = (
                l["mean"].as_f64().unwrap(),
                l["low"].as_f64().unwrap(),
                l["high"].as_f64().unwrap(),
            );
            let gap =
                recall(&r, budget, "mnemon", "recall") - recall(&r, budget, baseline, "recall");
            assert!((mean - gap).abs() < 1e-9, "{budget} {baseline}: {l}");
            assert!(-1.0 <= low && low <= high && high <= 1.0, "{l}");
            // Both with every evidence turn: level on every question.
            if recall(&r, budget, baseline, "recall") == 1.0
                && recall(&r, budget, "mnemon", "recall") == 1.0
            {
                assert_eq!((low, high), (0.0, 0.0), "{l}");
            }
        }
    }
    // A budget or baseline named twice is run once.
    let twice = mnemon(&[
        "eval",
        "recall",
        "--data",
        data,
        "--budgets",
        "500,500",
        "--baseline",
        "bm25,bm25",
        "--json",
    ]);
    let results = twice["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{twice}");
    assert_eq!(results[0]["overall"]["bm25"]["questions"], 16);
    assert_eq!(results[0]["lead"].as_object().unwrap().len(), 1, "{twice}");
    assert_eq!(results[0]["lead"]["bm25"], r["results"][0]["lead"]["bm25"]);
    // Every category is reported.
    let cats = r["results"][0]["by_category"].as_object().unwrap();
    for c in ["single-hop", "multi-hop", "temporal", "knowledge-update"] {
        assert!(cats.contains_key(c), "{c}");
    }
}

/// What a user reads: the recall table, mnemon's lead over each baseline
/// with its interval, and recall by category. Deterministic: the fixture
/// is committed and the draw of the interval is seeded.
#[test]
fn the_report_a_user_reads() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/synth_small.json");
    let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["eval", "recall", "--data", data, "--budgets", "500,1000"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    insta::assert_snapshot!("eval_recall_report", String::from_utf8_lossy(&o.stdout));
}

/// The fixture is small enough that plain BM25 finds every evidence turn
/// from 1,000 tokens up; a conversation of 48 sessions has the distractors
/// (other people's news, repeated phrasing, facts replaced later) that
/// separate the methods at every budget.
#[test]
fn mnemon_beats_both_baselines_at_every_budget_on_a_longer_generated_set() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("long.json");
    mnemon(&[
        "eval",
        "synth",
        "--out",
        data.to_str().unwrap(),
        "--seed",
        "2",
        "--conversations",
        "1",
        "--sessions",
        "48",
        "--turns",
        "80",
        "--json",
    ]);
    let budgets = [500, 1000, 2000, 4000, 8000, 16000];
    let list = budgets.map(|b| b.to_string()).join(",");
    let r = mnemon(&[
        "eval",
        "recall",
        "--data",
        data.to_str().unwrap(),
        "--budgets",
        &list,
        "--json",
    ]);
    for b in budgets {
        let m = recall(&r, b, "mnemon", "recall");
        for baseline in ["recent", "bm25"] {
            let other = recall(&r, b, baseline, "recall");
            // Ahead, or both with every evidence turn: the baselines read
            // every matching turn, so BM25 fills a large budget too.
            assert!(
                m > other || m == 1.0,
                "budget {b}: mnemon {m} against {baseline} {other}"
            );
        }
    }
}

#[test]
fn synth_writes_a_bare_file_name_into_the_working_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .current_dir(tmp.path())
        .args(["eval", "synth", "--out", "set.json", "--conversations", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(tmp.path().join("set.json")).unwrap();
    assert!(text.contains("\"conversations\""));
}

#[test]
fn synth_is_deterministic_and_bad_data_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.json");
    let b = tmp.path().join("b.json");
    for p in [&a, &b] {
        mnemon(&[
            "eval",
            "synth",
            "--out",
            p.to_str().unwrap(),
            "--seed",
            "9",
            "--conversations",
            "1",
            "--json",
        ]);
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, r#"{"conversations": [{"id": "c", "sessions": [], "questions": [{"id": "q", "question": "?", "evidence": ["D9:9"]}]}]}"#).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(["eval", "recall", "--data", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("names evidence turn `D9:9`"));
}
