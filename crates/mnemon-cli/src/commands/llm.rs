//! `mnemon ask` and `mnemon llm probe`: the orchestrator loop against the
//! configured model server, and what that server serves.

use std::io::{Read, Write};

use anyhow::{Context, Result, bail};
use mnemon::AskOptions;

use crate::cli::{AskArgs, Global};
use crate::output::{BOLD, DIM, WARN, json, thousands};
use crate::project::Project;

/// The longest question read from standard input.
const MAX_QUESTION_BYTES: u64 = 4 << 20;

fn question(a: &AskArgs) -> Result<String> {
    let text = match a.question.as_deref() {
        Some(q) if q != "-" => q.to_string(),
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .take(MAX_QUESTION_BYTES + 1)
                .read_to_end(&mut bytes)
                .context("cannot read the question from standard input")?;
            if bytes.len() as u64 > MAX_QUESTION_BYTES {
                bail!(
                    "the question on standard input is over {} MiB; store long texts as a document (`mnemon doc`) and ask about them",
                    MAX_QUESTION_BYTES >> 20
                );
            }
            String::from_utf8(bytes).context("the question on standard input is not UTF-8 text")?
        }
    };
    if text.trim().is_empty() {
        bail!("the question is empty; give it as an argument or on standard input");
    }
    Ok(text)
}

pub fn ask(g: &Global, a: &AskArgs) -> Result<()> {
    let q = question(a)?;
    let m = Project::find(g.dir.as_deref())?.open(a.agent.agent.as_deref())?;
    let opts = AskOptions {
        preset: a.preset.clone(),
        answer_tokens: a.answer_tokens,
    };
    if a.dry_run {
        let req = m.ask_request(&q, &opts)?;
        if g.json {
            return json(&req);
        }
        for msg in &req.messages {
            println!("── {} ──", msg.role);
            println!("{}", crate::output::stored(&msg.content));
        }
        eprintln!(
            "{} tokens ({}), {} kept for the answer, window {}{}",
            thousands(req.tokens),
            match req.server_tokens {
                Some(n) => format!("{} by the server's tokenizer", thousands(n)),
                None => "this project's tokenizer".into(),
            },
            thousands(req.answer_tokens),
            thousands(req.window),
            if req.question_cut {
                "; the question was cut to fit, its start and end kept (recorded as sent)"
            } else {
                ""
            }
        );
        return Ok(());
    }
    let stream = !g.json;
    let mut stdout = std::io::stdout();
    let asked = m.ask(&q, &opts, &mut |t| {
        if stream {
            let _ = write!(stdout, "{}", crate::output::stored(t));
            let _ = stdout.flush();
        }
    })?;
    if g.json {
        return json(&asked);
    }
    println!();
    crate::commands::checkpoint::after(g, &asked.written);
    let u = &asked.usage;
    anstream::eprintln!(
        "{DIM}{} context tokens sent ({}), {} answered{}{}{DIM:#}",
        thousands(asked.request.tokens),
        u.prompt_tokens.map_or_else(
            || "server did not count".into(),
            |n| format!("server counted {}", thousands(n))
        ),
        u.completion_tokens.map_or_else(|| "?".into(), thousands),
        if asked.retried {
            "; the first request was too long for the server and was sent again smaller"
        } else {
            ""
        },
        if asked.request.question_cut {
            "; the question was cut to fit, its start and end kept (recorded as sent)"
        } else {
            ""
        }
    );
    crate::commands::checkpoint::print_status_line(&asked.written.status);
    Ok(())
}

pub fn probe(g: &Global) -> Result<()> {
    let m = Project::find(g.dir.as_deref())?.open(None)?;
    let r = m.llm_probe()?;
    if g.json {
        return json(&r);
    }
    let show = |n: Option<u64>| n.map_or_else(|| "not reported".to_string(), thousands);
    let p = &r.probe;
    let out = &mut String::new();
    let mut line =
        |label: &str, value: String| out.push_str(&format!("{BOLD}{label:<14}{BOLD:#} {value}\n"));
    line("provider", format!("{} ({})", p.provider, p.server));
    line("base url", p.base_url.clone());
    line("model", p.model.clone());
    line("model window", show(p.model_max));
    line("served window", show(p.served));
    line(
        "token counts",
        if p.exact_tokens {
            "exact (the server's own tokenizer)".into()
        } else {
            "estimated, calibrated by usage reports".into()
        },
    );
    line(
        "latency",
        format!("{:.0} ms for a one-token request", r.latency_ms),
    );
    line(
        "mnemon uses",
        format!(
            "{} tokens  {DIM}({}){DIM:#}",
            thousands(r.effective_window),
            serde_json::to_value(r.window_source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
    );
    anstream::print!("{out}");
    for w in r.warnings.iter().chain(&p.notes) {
        anstream::eprintln!("{WARN}warning{WARN:#}: {w}");
    }
    Ok(())
}
