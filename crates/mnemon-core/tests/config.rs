//! Loading configuration: defaults, file, environment, and the errors a
//! user sees for bad values (snapshots: these messages are the interface).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use mnemon_core::config::{Config, ConfigFile, DEFAULT_TOML, Origin, load};
use mnemon_core::window::Action;

fn file(text: &str) -> Option<ConfigFile<'_>> {
    Some(ConfigFile {
        path: ".mnemon/config.toml",
        text,
    })
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn error_text(text: &str, vars: &[(&str, &str)]) -> String {
    load(file(text), &env(vars)).unwrap_err().to_string()
}

#[test]
fn the_commented_default_file_is_the_default() {
    let loaded = load(file(DEFAULT_TOML), &[]).unwrap();
    assert_eq!(loaded.config, Config::default());
    assert_eq!(load(None, &[]).unwrap().config, Config::default());
}

#[test]
fn file_values_apply_and_remember_their_line() {
    let text = "[model]\nactive = \"gpt-4o\"\n\n[context_window]\nutilization_limit = 0.75\nmax_tokens = 64000\n";
    let loaded = load(file(text), &[]).unwrap();
    assert_eq!(loaded.config.model.active.as_deref(), Some("gpt-4o"));
    assert_eq!(loaded.config.context_window.utilization_limit, 0.75);
    assert_eq!(loaded.config.context_window.max_tokens, Some(64_000));
    assert_eq!(
        loaded.origin("context_window.max_tokens"),
        Origin::File {
            path: ".mnemon/config.toml".into(),
            line: 6
        }
    );
    assert_eq!(
        loaded.origin("context_window.red_threshold"),
        Origin::Default
    );
}

#[test]
fn environment_overrides_the_file() {
    let text = "[context_window]\nmax_tokens = 64000\n";
    let vars = env(&[
        ("MNEMON_CONTEXT_WINDOW__MAX_TOKENS", "8192"),
        (
            "MNEMON_CONTEXT_WINDOW__YELLOW_ACTION",
            "optimize_then_checkpoint",
        ),
        ("MNEMON_MODEL__ACTIVE", "phi3:mini"),
        ("MNEMON_PHASE_BUDGETS__PLANNING__TASK_BREAKDOWN", "0.02"),
        ("MNEMON_DIR", "/not/a/setting"),
        ("PATH", "/usr/bin"),
    ]);
    let loaded = load(file(text), &vars).unwrap();
    let c = &loaded.config;
    assert_eq!(c.context_window.max_tokens, Some(8_192));
    assert_eq!(
        c.context_window.yellow_action,
        Action::OptimizeThenCheckpoint
    );
    assert_eq!(c.model.active.as_deref(), Some("phi3:mini"));
    assert_eq!(c.phase_budgets.planning["task_breakdown"], 0.02);
    assert_eq!(
        loaded.origin("context_window.max_tokens"),
        Origin::Env {
            var: "MNEMON_CONTEXT_WINDOW__MAX_TOKENS".into()
        }
    );
}

#[test]
fn out_of_range_share() {
    insta::assert_snapshot!(error_text(
        "[context_window]\nutilization_limit = 1.5\n",
        &[]
    ));
}

#[test]
fn thresholds_out_of_order() {
    insta::assert_snapshot!(error_text(
        "[context_window]\n# warn earlier\nyellow_threshold = 0.4\n",
        &[]
    ));
}

#[test]
fn threshold_outside_the_unit_interval() {
    insta::assert_snapshot!(error_text("[context_window]\nred_threshold = 1.2\n", &[]));
}

#[test]
fn misspelt_key() {
    insta::assert_snapshot!(error_text("[context_window]\nmax_token = 8192\n", &[]));
}

#[test]
fn wrong_type() {
    insta::assert_snapshot!(error_text(
        "[working_memory]\nmax_operations = \"fifty\"\n",
        &[]
    ));
}

#[test]
fn raw_reasoning_is_refused() {
    insta::assert_snapshot!(error_text("[decisions]\nlog_raw_reasoning = true\n", &[]));
}

#[test]
fn unknown_active_model() {
    insta::assert_snapshot!(error_text("[model]\nactive = \"qwen2.5-coder:14b\"\n", &[]));
}

#[test]
fn window_below_the_minimum() {
    insta::assert_snapshot!(error_text("[context_window]\nmax_tokens = 1024\n", &[]));
}

#[test]
fn limit_that_leaves_too_small_a_window() {
    insta::assert_snapshot!(error_text(
        "[context_window]\nmax_tokens = 4096\nutilization_limit = 0.25\n",
        &[]
    ));
}

#[test]
fn phase_over_budget() {
    insta::assert_snapshot!(error_text(
        "[phase_budgets.execution]\ntask_context = 0.8\n",
        &[]
    ));
}

#[test]
fn broken_toml() {
    insta::assert_snapshot!(error_text("[context_window\nmax_tokens = 8192\n", &[]));
}

#[test]
fn bad_environment_value() {
    insta::assert_snapshot!(error_text(
        "",
        &[("MNEMON_CONTEXT_WINDOW__UTILIZATION_LIMIT", "2")]
    ));
}

#[test]
fn environment_naming_no_setting() {
    insta::assert_snapshot!(error_text(
        "",
        &[("MNEMON_CONTEXT_WINDOW__MAX_TOKEN", "8192")]
    ));
}

#[test]
fn new_model_without_a_window() {
    insta::assert_snapshot!(error_text(
        "[models.\"mistral-nemo:12b\"]\nprovider = \"ollama\"\n",
        &[]
    ));
}

#[test]
fn every_problem_at_once() {
    let text = "[context_window]\nutilization_limit = 0\n\n[episodic]\nkeep_versions = 0\n\n[session]\ncompression_target_ratio = 1.0\n";
    insta::assert_snapshot!(error_text(text, &[]));
}

#[test]
fn a_plan_of_ones_own_and_phase_plans_from_phase_budgets() {
    let text = "[plans.review]\nreserve = 0.1\nbudget = 2000\nsections = [\n  { kind = \"hot_context\", required = true },\n  { kind = \"decisions\", share = 0.4 },\n  { kind = \"fragments\", share = 0.4, min_tokens = 200 },\n]\n\n[phase_budgets.execution]\ntask_context = 0.5\ncode_generation = 0.2\nvalidation = 0.1\n";
    let c = load(file(text), &[]).unwrap().config;
    let p = c.plan("review").unwrap();
    assert_eq!(p.default_budget, Some(2_000));
    assert_eq!(p.reserve_ppm, 100_000);
    assert_eq!(p.sections.len(), 3);
    assert!(p.sections[0].required);
    let e = c.plan("phase:execution").unwrap();
    assert_eq!(
        e.sections[1].share_ppm, 500_000,
        "task_context fills working memory"
    );
    // Defaults reproduce the built-in phase presets exactly.
    let d = Config::default();
    for phase in ["phase:planning", "phase:execution", "phase:validation"] {
        assert_eq!(
            d.plan(phase).unwrap(),
            mnemon_core::assemble::BudgetPlan::preset(phase).unwrap()
        );
    }
    assert_eq!(
        d.plan("qa").unwrap(),
        mnemon_core::assemble::BudgetPlan::preset("qa").unwrap()
    );
    assert!(c.plan("nope").unwrap_err().to_string().contains("review"));
}

#[test]
fn bad_plans_and_components() {
    insta::assert_snapshot!(error_text(
        "[plans.qa]\nsections = [{ kind = \"fragments\", share = 1.0 }]\n\n[plans.mine]\nsections = [{ kind = \"fragmnets\", share = 0.5 }]\n\n[plans.big]\nsections = [{ kind = \"fragments\", share = 0.7 }, { kind = \"decisions\", share = 0.6 }]\n\n[phase_budgets.planning]\nrequirements = 0.1\n",
        &[]
    ));
}
