//! `mnemon checkpoint`, `compact`, `refresh`, `report-usage`, and the
//! notices every engine-driven command prints.

use std::path::Path;

use anyhow::{Context, Result};
use mnemon_core::engine::{Checkpoint, EngineEvent, EngineStatus, EngineStore, Outcome};

use crate::cli::{AgentArg, CheckpointCommand, CompactArgs, Global, ReportUsageArgs};
use crate::output::{BOLD, DIM, WARN, json, thousands, zone_style};
use crate::project::{Project, ProjectEngine};

/// After an engine write: checkpoint files and views, then one line per
/// thing the engine did on its own (on stderr, so stdout stays the result).
pub fn after<T>(project: &Project, e: &ProjectEngine, g: &Global, out: &Outcome<T>) -> Result<()> {
    crate::files::write_checkpoints(project, e.memory(), &out.checkpoints)?;
    for ev in &out.events {
        if let EngineEvent::Optimized { artifacts, .. } = ev {
            crate::files::write_artifacts(project, e.memory(), Some(artifacts))?;
        }
    }
    crate::files::refresh_views(project, e.memory())?;
    if !g.json {
        for ev in &out.events {
            anstream::eprintln!("{}", notice(ev));
        }
    }
    Ok(())
}

pub fn notice(ev: &EngineEvent) -> String {
    match ev {
        EngineEvent::SessionStarted { session_id } => {
            format!(
                "{DIM}session{DIM:#} started {}",
                crate::commands::log::short(session_id)
            )
        }
        EngineEvent::ZoneChanged {
            from,
            to,
            used,
            action,
        } => {
            let z = zone_style(*to);
            format!(
                "{BOLD}zone{BOLD:#} {} → {z}{}{z:#} at {} tokens: {action}",
                from.name(),
                to.name(),
                thousands(*used)
            )
        }
        EngineEvent::EmergencyEntered { used } => {
            format!(
                "{WARN}emergency{WARN:#}: {} tokens, at the 95 % line",
                thousands(*used)
            )
        }
        EngineEvent::EmergencyCleared { used } => {
            format!(
                "{DIM}emergency cleared{DIM:#} at {} tokens",
                thousands(*used)
            )
        }
        EngineEvent::CheckpointCreated { id, trigger } => {
            format!("{BOLD}checkpoint{BOLD:#} {id} ({trigger})")
        }
        EngineEvent::Optimized {
            items,
            tokens_before,
            tokens_after,
            artifacts,
        } => format!(
            "{BOLD}optimized{BOLD:#}: {items} items replaced or pruned, {} → {} tokens{}",
            thousands(*tokens_before),
            thousands(*tokens_after),
            if artifacts.is_empty() {
                String::new()
            } else {
                format!(", {} files written", artifacts.len())
            }
        ),
        EngineEvent::Refreshed {
            trigger,
            tokens_before,
            tokens_after,
            epoch,
            kept_verbatim,
            pinned_deferred,
            ..
        } => {
            let deferred = if *pinned_deferred > 0 {
                format!(", {pinned_deferred} pinned items kept in the store only")
            } else {
                String::new()
            };
            format!(
                "{BOLD}refreshed{BOLD:#} ({trigger}): {} → {} tokens, epoch {epoch}, {kept_verbatim} items verbatim{deferred}",
                thousands(*tokens_before),
                thousands(*tokens_after)
            )
        }
        EngineEvent::SessionLogCompacted {
            input_tokens,
            output_tokens,
        } => format!(
            "{BOLD}session log compacted{BOLD:#}: {} → {} tokens",
            thousands(*input_tokens),
            thousands(*output_tokens)
        ),
    }
}

pub fn run(g: &Global, c: &CheckpointCommand) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    match c {
        CheckpointCommand::Create { trigger, agent } => {
            let e = project.engine(agent.agent.as_deref())?;
            let cp = e.checkpoint(trigger)?;
            crate::files::write_checkpoints(&project, e.memory(), std::slice::from_ref(&cp))?;
            if g.json {
                return json(&cp);
            }
            show(&cp);
            Ok(())
        }
        CheckpointCommand::List { limit } => {
            let e = project.engine(None)?;
            let cps = e.memory().store().checkpoints(*limit)?;
            let parsed: Vec<Checkpoint> = cps
                .iter()
                .filter_map(|c| Checkpoint::from_json(&c.json, &c.id).ok())
                .collect();
            if g.json {
                return json(&parsed);
            }
            if parsed.is_empty() {
                anstream::println!(
                    "no checkpoints yet; create one with `mnemon checkpoint create`"
                );
            }
            for cp in &parsed {
                let s = &cp.context_snapshot;
                anstream::println!(
                    "{BOLD}{}{BOLD:#}  {:<24} {:>9} tokens ({:.1} %)  {DIM}next: {}{DIM:#}",
                    cp.id,
                    cp.trigger,
                    thousands(s.tokens_used),
                    s.percentage * 100.0,
                    cp.resume_instructions
                        .next_task
                        .as_deref()
                        .unwrap_or("nothing pending")
                );
            }
            Ok(())
        }
        CheckpointCommand::Show { id } => {
            let e = project.engine(None)?;
            let stored = e.memory().store().checkpoint(id)?;
            if g.json {
                anstream::println!("{}", stored.json);
                return Ok(());
            }
            show(&Checkpoint::from_json(&stored.json, id)?);
            Ok(())
        }
        CheckpointCommand::Resume { id, agent } => {
            let e = project.engine(agent.agent.as_deref())?;
            let (text, source) = read_checkpoint(&project, &e, id)?;
            let cp = Checkpoint::from_json(&text, &source)?;
            let r = e.resume(&cp)?;
            crate::files::refresh_views(&project, e.memory())?;
            if g.json {
                return json(&serde_json::json!({"resumed": r, "status": e.status()?}));
            }
            anstream::println!(
                "{BOLD}resumed{BOLD:#} {}: {} operations in working memory, {} hot items restored, {} removed",
                r.checkpoint,
                r.working_memory_operations,
                r.hot_items_restored,
                r.hot_items_removed
            );
            print_status_line(&e.status()?);
            let ri = &cp.resume_instructions;
            if let Some(t) = &ri.next_task {
                anstream::println!("{BOLD}next task{BOLD:#}  {t}");
            }
            for b in &ri.blockers {
                anstream::println!("{WARN}blocker{WARN:#}    {b}");
            }
            for w in &ri.warnings {
                anstream::println!("{WARN}warning{WARN:#}    {w}");
            }
            Ok(())
        }
    }
}

/// The checkpoint's file if there is one (so a damaged or edited file is
/// refused), else the database's copy. `id` may also be a path.
fn read_checkpoint(project: &Project, e: &ProjectEngine, id: &str) -> Result<(String, String)> {
    let as_path = Path::new(id);
    if id.ends_with(".json") && as_path.exists() {
        let text = std::fs::read_to_string(as_path)
            .with_context(|| format!("cannot read {}", as_path.display()))?;
        return Ok((text, as_path.display().to_string()));
    }
    if let Some(dir) = &project.dir {
        let file = dir.join("checkpoints").join(format!("{id}.json"));
        if file.exists() {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            return Ok((text, crate::project::display_path(&file)));
        }
    }
    let stored = e.memory().store().checkpoint(id)?;
    Ok((stored.json, id.to_string()))
}

fn show(cp: &Checkpoint) {
    let s = &cp.context_snapshot;
    let r = &cp.resume_instructions;
    let snap = cp.snapshot();
    anstream::println!("{BOLD}{}{BOLD:#}  {} ({})", cp.id, cp.timestamp, cp.trigger);
    anstream::println!(
        "usage      {} / {} tokens ({:.1} %), epoch {}, baseline {} + added {}",
        thousands(s.tokens_used),
        thousands(s.effective_max),
        s.percentage * 100.0,
        snap.epoch,
        thousands(snap.baseline),
        thousands(snap.added)
    );
    anstream::println!(
        "snapshot   {} operations in working memory, {} hot items, log position {}",
        snap.operations.len(),
        snap.hot_context.items.len(),
        snap.operation_position
    );
    anstream::println!(
        "model      {} ({} tokens, profile {}), session {} s",
        cp.metadata.model,
        thousands(cp.metadata.context_window),
        cp.metadata.optimization_profile,
        cp.metadata.session_duration_seconds
    );
    anstream::println!(
        "next task  {}",
        r.next_task.as_deref().unwrap_or("nothing pending")
    );
    anstream::println!("phase      {}", r.phase.as_deref().unwrap_or("not set"));
    anstream::println!(
        "load       {}",
        if r.context_to_load.is_empty() {
            "-".to_string()
        } else {
            r.context_to_load.join(", ")
        }
    );
    for b in &r.blockers {
        anstream::println!("{WARN}blocker{WARN:#}    {b}");
    }
    for w in &r.warnings {
        anstream::println!("{WARN}warning{WARN:#}    {w}");
    }
}

pub fn print_status_line(s: &EngineStatus) {
    let z = zone_style(s.window.zone);
    anstream::println!(
        "{z}{}{z:#} {} / {} tokens ({:.1} %), epoch {}",
        s.window.zone.name(),
        thousands(s.window.used),
        thousands(s.window.effective_max),
        s.window.fraction * 100.0,
        s.epoch
    );
}

pub fn compact(g: &Global, a: &CompactArgs) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let e = project.engine(a.agent.agent.as_deref())?;
    let c = e.compact(a.dry_run)?;
    if !a.dry_run {
        crate::files::refresh_views(&project, e.memory())?;
    }
    if g.json {
        return json(&c);
    }
    let s = &c.summary;
    let a_ = &s.audit;
    anstream::println!(
        "{BOLD}{}{BOLD:#} session {}: {} → {} tokens (ratio {:.2})",
        if c.dry_run {
            "would compact"
        } else {
            "compacted"
        },
        crate::commands::log::short(&c.session_id),
        thousands(s.input_tokens),
        thousands(s.tokens),
        s.ratio()
    );
    anstream::println!(
        "kept verbatim {} · summarized {} · dropped {} · near-duplicates {}",
        a_.kept_verbatim.len(),
        a_.summarized.len(),
        a_.dropped.len(),
        a_.duplicates_removed
    );
    if !a_.dropped.is_empty() {
        anstream::println!(
            "{DIM}dropped items stay in the store (o = operation log position, m = message): {}{DIM:#}",
            preview(&a_.dropped)
        );
    }
    Ok(())
}

fn preview(ids: &[String]) -> String {
    let mut out = ids.iter().take(12).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > 12 {
        out.push_str(&format!(" and {} more", ids.len() - 12));
    }
    out
}

pub fn refresh(g: &Global, a: &AgentArg) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let e = project.engine(a.agent.as_deref())?;
    let out = e.refresh("manual")?;
    after(&project, &e, g, &out)?;
    if g.json {
        return json(&out);
    }
    print_status_line(&out.status);
    Ok(())
}

pub fn report_usage(g: &Global, a: &ReportUsageArgs) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let e = project.engine(a.agent.agent.as_deref())?;
    let s = e.report_usage(a.prompt_tokens)?;
    if g.json {
        return json(&s);
    }
    print_status_line(&s);
    anstream::println!(
        "{DIM}calibration for {}: ×{:.3} from {} report(s){DIM:#}",
        s.model,
        s.calibration,
        s.calibration_samples
    );
    Ok(())
}
