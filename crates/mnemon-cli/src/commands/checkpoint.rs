//! `mnemon checkpoint`, `compact`, `refresh`, `report-usage`, and the
//! notices every engine-driven command prints.

use anyhow::Result;
use mnemon::Written;
use mnemon_core::engine::{Checkpoint, EngineEvent, EngineStatus};

use crate::cli::{AgentArg, CheckpointCommand, CompactArgs, Global, ReportUsageArgs};
use crate::output::{BOLD, DIM, WARN, json, thousands, zone_style};
use crate::project::Project;

/// After a write: one line per thing the engine did on its own, and any
/// warning from after the commit (on stderr, so stdout stays the result).
/// The write is durable whatever these say.
pub fn after<T>(g: &Global, out: &Written<T>) {
    if !g.json {
        for ev in &out.events {
            anstream::eprintln!("{}", notice(ev));
        }
    }
    warnings(&out.warnings);
}

pub fn warnings(warnings: &[String]) {
    for w in warnings {
        anstream::eprintln!("{WARN}warning:{WARN:#} {w}");
    }
}

pub fn notice(ev: &EngineEvent) -> String {
    match ev {
        EngineEvent::SessionStarted { session_id } => {
            format!(
                "{DIM}session{DIM:#} started {}",
                crate::output::short(session_id)
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
            summarized_by,
            fell_back,
            ..
        } => {
            let deferred = if *pinned_deferred > 0 {
                format!(", {pinned_deferred} pinned items kept in the store only")
            } else {
                String::new()
            };
            let by = if summarized_by == "extractive" && fell_back.is_empty() {
                String::new()
            } else {
                format!(", summary by {summarized_by}")
            };
            let mut line = format!(
                "{BOLD}refreshed{BOLD:#} ({trigger}): {} → {} tokens, epoch {epoch}, {kept_verbatim} items verbatim{deferred}{by}",
                thousands(*tokens_before),
                thousands(*tokens_after)
            );
            for reason in fell_back {
                line.push_str(&format!("\n  fell back to extractive in {reason}"));
            }
            line
        }
        EngineEvent::Redacted { secrets } => {
            let mut kinds: Vec<&str> = secrets.iter().map(String::as_str).collect();
            kinds.sort_unstable();
            kinds.dedup();
            format!(
                "{BOLD}redacted{BOLD:#} {} secret{} before storing ({}); the text keeps a placeholder. Keep secrets out of memory, or turn this off with [redaction] enabled = false",
                secrets.len(),
                if secrets.len() == 1 { "" } else { "s" },
                kinds.join(", ")
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
            let out = project.open(agent.agent.as_deref())?.checkpoint(trigger)?;
            warnings(&out.warnings);
            if g.json {
                return json(&out.value);
            }
            show(&out.value);
            Ok(())
        }
        CheckpointCommand::List { limit } => {
            let cps = project.open(None)?.checkpoints(*limit)?;
            let parsed: Vec<Checkpoint> = cps
                .iter()
                .filter_map(|c| Checkpoint::from_json(&c.json, &c.id).ok())
                .collect();
            if g.json {
                return json(&parsed);
            }
            if parsed.is_empty() {
                println!("no checkpoints yet; create one with `mnemon checkpoint create`");
            }
            for cp in &parsed {
                let s = &cp.context_snapshot;
                println!(
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
            let stored = project.open(None)?.stored_checkpoint(id)?;
            if g.json {
                println!("{}", stored.json);
                return Ok(());
            }
            show(&Checkpoint::from_json(&stored.json, id)?);
            Ok(())
        }
        CheckpointCommand::Resume { id, agent } => {
            let m = project.open(agent.agent.as_deref())?;
            let (out, cp) = m.resume_from(id)?;
            warnings(&out.warnings);
            let r = &out.value;
            if g.json {
                return json(&serde_json::json!({"resumed": r, "status": out.status}));
            }
            println!(
                "{BOLD}resumed{BOLD:#} {}: {} operations in working memory, {} hot items restored, {} removed",
                r.checkpoint,
                r.working_memory_operations,
                r.hot_items_restored,
                r.hot_items_removed
            );
            print_status_line(&out.status);
            let ri = &cp.resume_instructions;
            if let Some(t) = &ri.next_task {
                println!("{BOLD}next task{BOLD:#}  {t}");
            }
            for b in &ri.blockers {
                println!("{WARN}blocker{WARN:#}    {b}");
            }
            for w in &ri.warnings {
                println!("{WARN}warning{WARN:#}    {w}");
            }
            Ok(())
        }
    }
}

fn show(cp: &Checkpoint) {
    let s = &cp.context_snapshot;
    let r = &cp.resume_instructions;
    let snap = cp.snapshot();
    println!("{BOLD}{}{BOLD:#}  {} ({})", cp.id, cp.timestamp, cp.trigger);
    println!(
        "usage      {} / {} tokens ({:.1} %), epoch {}, baseline {} + added {}",
        thousands(s.tokens_used),
        thousands(s.effective_max),
        s.percentage * 100.0,
        snap.epoch,
        thousands(snap.baseline),
        thousands(snap.added)
    );
    println!(
        "snapshot   {} operations in working memory, {} hot items, log position {}",
        snap.operations.len(),
        snap.hot_context.items.len(),
        snap.operation_position
    );
    println!(
        "model      {} ({} tokens, profile {}), session {} s",
        cp.metadata.model,
        thousands(cp.metadata.context_window),
        cp.metadata.optimization_profile,
        cp.metadata.session_duration_seconds
    );
    println!(
        "next task  {}",
        r.next_task.as_deref().unwrap_or("nothing pending")
    );
    println!("phase      {}", r.phase.as_deref().unwrap_or("not set"));
    println!(
        "load       {}",
        if r.context_to_load.is_empty() {
            "-".to_string()
        } else {
            r.context_to_load.join(", ")
        }
    );
    for b in &r.blockers {
        println!("{WARN}blocker{WARN:#}    {b}");
    }
    for w in &r.warnings {
        println!("{WARN}warning{WARN:#}    {w}");
    }
}

pub fn print_status_line(s: &EngineStatus) {
    let z = zone_style(s.window.zone);
    println!(
        "{z}{}{z:#} {} / {} tokens ({:.1} %), epoch {}",
        s.window.zone.name(),
        thousands(s.window.used),
        thousands(s.window.effective_max),
        s.window.fraction * 100.0,
        s.epoch
    );
}

pub fn compact(g: &Global, a: &CompactArgs) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(a.agent.agent.as_deref())?;
    let out = m.compact(a.dry_run)?;
    warnings(&out.warnings);
    let c = &out.value;
    if g.json {
        return json(c);
    }
    let s = &c.summary;
    let a_ = &s.audit;
    println!(
        "{BOLD}{}{BOLD:#} session {}: {} → {} tokens (ratio {:.2})",
        if c.dry_run {
            "would compact"
        } else {
            "compacted"
        },
        crate::output::short(&c.session_id),
        thousands(s.input_tokens),
        thousands(s.tokens),
        s.ratio()
    );
    println!(
        "kept verbatim {} · summarized {} · dropped {} · near-duplicates {}",
        a_.kept_verbatim.len(),
        a_.summarized.len(),
        a_.dropped.len(),
        a_.duplicates_removed
    );
    if !a_.dropped.is_empty() {
        println!(
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
    let m = Project::find(g.dir.as_deref())?.open(a.agent.as_deref())?;
    let out = m.refresh()?;
    after(g, &out);
    if g.json {
        return json(
            &serde_json::json!({"value": out.value, "events": out.events, "status": out.status}),
        );
    }
    print_status_line(&out.status);
    Ok(())
}

pub fn report_usage(g: &Global, a: &ReportUsageArgs) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(a.agent.agent.as_deref())?;
    let s = m.report_usage(a.prompt_tokens)?;
    if g.json {
        return json(&s);
    }
    print_status_line(&s);
    println!(
        "{DIM}calibration for {}: ×{:.3} from {} report(s){DIM:#}",
        s.model, s.calibration, s.calibration_samples
    );
    Ok(())
}
