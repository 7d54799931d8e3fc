//! `mnemon status`: how full the window is and what to do about it.

use anyhow::Result;
use mnemon_core::profile::Provenance;
use mnemon_core::setup::{ProfileSource, Setup, WindowSource};

use crate::cli::{Global, StatusArgs};
use crate::output::{BOLD, DIM, WARN, bar, counted, json, thousands, zone_style};
use crate::project::Project;

pub fn run(g: &Global, args: &StatusArgs) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    // The live context as the engine accounts for it, unless a usage is
    // given to evaluate, or there is no project to read it from.
    let engine = match (args.used, &project.dir, &args.model) {
        (None, Some(_), None) => Some(project.open(args.agent.agent.as_deref())?.status()?),
        _ => None,
    };
    let report = mnemon::evaluate(project.settings(), args.model.as_deref(), args.used, engine)?;
    if g.json {
        return json(&report);
    }
    let setup = project.setup(args.model.as_deref())?;
    let counter = project.counter(&setup.tokenizer)?;
    let engine = &report.engine;
    let usage_source = report.usage_source.describe();
    let status = &report.window;
    let project_dir = report.project.clone();

    let z = zone_style(status.zone);
    let out = &mut String::new();
    let mut line =
        |label: &str, value: String| out.push_str(&format!("{BOLD}{label:<11}{BOLD:#} {value}\n"));
    line(
        "project",
        project_dir.unwrap_or_else(|| {
            format!(
                "none (run `mnemon init` here to create {})",
                crate::project::DIR_NAME
            )
        }),
    );
    line("model", model_line(&setup));
    let source = match setup.window_source {
        WindowSource::Config => "from context_window.max_tokens",
        WindowSource::Registry => "from the model registry",
        WindowSource::Fallback => "fallback_size: no model or max_tokens set",
        WindowSource::Served => "the window the server serves",
        WindowSource::Model => "the model's maximum, as its server reports it",
    };
    line(
        "window",
        format!(
            "{} configured × {:.2} = {} effective  {DIM}({source}){DIM:#}",
            thousands(status.configured_max),
            status.utilization_limit,
            thousands(status.effective_max)
        ),
    );
    let sizes = &setup.window_sizes;
    if sizes.server.is_some() {
        let show = |n: Option<u64>| n.map_or_else(|| "–".to_string(), thousands);
        line(
            "sizes",
            format!(
                "served {} · model max {} · registry {} · max_tokens {}  {DIM}({}){DIM:#}",
                show(sizes.served),
                show(sizes.model_max),
                show(sizes.registry),
                show(sizes.config),
                sizes.server.as_deref().map_or_else(
                    || "no server asked".to_string(),
                    |s| format!("detected from {s}")
                )
            ),
        );
    }
    let f = setup.chat_format;
    line(
        "tokenizer",
        format!(
            "{} ({})  {DIM}chat format {} = {}/{}/{} per message/name/reply{DIM:#}",
            counter.name(),
            if counter.is_exact() {
                "exact"
            } else {
                "estimate"
            },
            setup.chat_format_name,
            f.tokens_per_message,
            f.tokens_per_name,
            f.reply_priming
        ),
    );
    line(
        "usage",
        format!(
            "{} / {} tokens ({:.1} %), {} available  {DIM}({usage_source}){DIM:#}",
            thousands(status.used),
            thousands(status.effective_max),
            status.fraction * 100.0,
            thousands(status.available)
        ),
    );
    let emergency = if status.emergency {
        format!("  {WARN}EMERGENCY{WARN:#}")
    } else {
        String::new()
    };
    line(
        "zone",
        format!(
            "{} {z}{}{z:#} → {}{emergency}",
            bar(status.fraction, 30, status.zone),
            status.zone.name().to_uppercase(),
            status.action
        ),
    );
    if let Some(s) = &engine {
        line(
            "epoch",
            format!(
                "{}: baseline {} + added {} = {} local tokens{}  {DIM}({}){DIM:#}",
                s.epoch,
                thousands(s.baseline),
                thousands(s.added),
                thousands(s.local_usage),
                if s.calibration_samples > 0 {
                    format!(
                        " × calibration {:.3} ({})",
                        s.calibration,
                        counted(s.calibration_samples, "report", "reports")
                    )
                } else {
                    String::new()
                },
                counted(s.refreshes, "refresh", "refreshes")
            ),
        );
        line(
            "working",
            format!(
                "{} in working memory",
                counted(
                    s.working_memory_operations as u64,
                    "operation",
                    "operations"
                )
            ),
        );
        line(
            "checkpoint",
            match (&s.last_checkpoint, s.last_checkpoint_at) {
                (Some(id), Some(at)) => format!("{id}  {DIM}({}){DIM:#}", at.rfc3339()),
                (Some(id), None) => id.clone(),
                _ => "none yet".to_string(),
            },
        );
    }
    let t = status.thresholds;
    line(
        "thresholds",
        format!(
            "yellow from {} · orange from {} · red from {} · emergency from {}",
            thousands(t.yellow_from),
            thousands(t.orange_from),
            thousands(t.red_from),
            thousands(t.emergency_from)
        ),
    );
    let why = match setup.profile_source {
        ProfileSource::Config => "set by profile.name",
        ProfileSource::Model => "the model's profile",
        ProfileSource::Window => "chosen from the effective window",
    };
    line(
        "profile",
        format!("{}  {DIM}({why}){DIM:#}", setup.profile.name),
    );
    for (name, value, source) in setup.profile.rows() {
        let note = match source {
            Provenance::Seed => "",
            Provenance::Derived => "  (derived: share of the window)",
            Provenance::Config => "  (config)",
        };
        out.push_str(&format!("  {name:<38} {value:>9}{DIM}{note}{DIM:#}\n"));
    }
    print!("{out}");
    for w in &setup.warnings {
        anstream::eprintln!("{WARN}warning:{WARN:#} {w}");
    }
    Ok(())
}

fn model_line(setup: &Setup) -> String {
    match &setup.model {
        Some(m) => format!("{} ({})", m.id, m.provider),
        None => "none configured".to_string(),
    }
}
