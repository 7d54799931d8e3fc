//! `mnemon chat`: the REPL (rustyline, on a terminal) and the same session
//! run from a script or piped lines. mnemon-core's `Chat` understands and
//! runs each line; this file reads lines, writes the files a reply changed,
//! and prints.

use std::io::{BufRead, IsTerminal};

use anyhow::{Context, Result};
use mnemon::{ChatReply, ChatSession};
use mnemon_chat::ReplyKind;
use mnemon_core::engine::EngineStatus;
use rustyline::error::ReadlineError;

use crate::cli::{ChatArgs, Global};
use crate::output::{BOLD, DIM, Paint, stored, thousands, zone_style};
use crate::project::Project;

const PROMPT: &str = "mnemon> ";
const HISTORY: &str = mnemon::CHAT_HISTORY;

pub fn run(g: &Global, a: &ChatArgs) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let mut chat = project.open(a.agent.agent.as_deref())?.chat()?;
    let interactive = a.script.is_none() && std::io::stdin().is_terminal();
    if interactive {
        return repl(g, a, &project, &mut chat);
    }
    let mut input: Box<dyn std::io::BufRead> = match &a.script {
        Some(path) => {
            let f = std::fs::File::open(path).with_context(|| {
                format!(
                    "cannot read the script {}: give a file with one command per line",
                    path.display()
                )
            })?;
            Box::new(std::io::BufReader::new(f))
        }
        None => Box::new(std::io::stdin().lock()),
    };
    let mut before = Some(chat.status()?.window.used);
    let lines = std::iter::from_fn(move || bounded_line(&mut input).transpose());
    for line in lines {
        let line = line?;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !g.json {
            println!("{BOLD}>{BOLD:#} {}", stored(&echo(trimmed)));
        }
        let reply = chat.handle(trimmed)?;
        show(g, &reply, true, &mut before);
        if reply.reply.kind == ReplyKind::Ended {
            return Ok(());
        }
    }
    if !a.keep_session {
        let reply = chat.end()?;
        show(g, &reply, true, &mut before);
    }
    Ok(())
}

/// The longest line a script may have: far above any command, and bounded
/// so that an endless line without a newline is refused, not buffered.
const MAX_LINE: u64 = 4 * 1024 * 1024;

/// The next line of a script or of piped input, without its newline;
/// `None` at the end.
fn bounded_line(input: &mut dyn std::io::BufRead) -> Result<Option<String>> {
    use std::io::Read;
    let mut buf = Vec::new();
    let n = input
        .take(MAX_LINE + 1)
        .read_until(b'\n', &mut buf)
        .context("cannot read the next line of input")?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() as u64 > MAX_LINE {
        anyhow::bail!(
            "a line of the input is longer than {} bytes; keep long text in a file and refer to it",
            thousands(MAX_LINE)
        );
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("a line of the input is not UTF-8 text (invalid byte at offset {}); convert it first, for example with `iconv -t UTF-8`", e.utf8_error().valid_up_to()))
}

/// A script line as echoed: whole up to 300 characters, else its start and
/// its size (a pasted megabyte is not printed back).
fn echo(line: &str) -> std::borrow::Cow<'_, str> {
    const SHOWN: usize = 300;
    match line.char_indices().nth(SHOWN) {
        None => std::borrow::Cow::Borrowed(line),
        Some((cut, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} bytes)",
            &line[..cut],
            thousands(line.len() as u64)
        )),
    }
}

fn repl(g: &Global, a: &ChatArgs, project: &Project, chat: &mut ChatSession) -> Result<()> {
    let mut rl =
        rustyline::DefaultEditor::new().context("cannot set up line editing on this terminal")?;
    let history = project.dir.as_ref().map(|d| d.join(HISTORY));
    if let Some(h) = &history {
        // A missing history file is the normal first run.
        let _ = rl.load_history(h);
    }
    let st = chat.status()?;
    println!(
        "{BOLD}mnemon chat{BOLD:#} · {} · window {} tokens · agent {}\n{DIM}Type commands in your own words (\"create an epic for user authentication\"), /help for everything, Ctrl-D or Ctrl-C to end the session.{DIM:#}",
        st.model,
        thousands(st.window.effective_max),
        st.agent,
    );
    println!("{}", status_line(&st, None, None));
    let mut before = Some(st.window.used);
    loop {
        let prompt = if chat.awaiting_answer() {
            "which? "
        } else {
            PROMPT
        };
        match rl.readline(prompt) {
            Ok(line) => {
                let trimmed = line.trim();
                if trimmed.is_empty() {
                    continue;
                }
                // The history file is on disk like the database: a line
                // is kept as it would be stored, secrets redacted.
                let _ = rl.add_history_entry(chat.stored_text(trimmed));
                let reply = match chat.handle(trimmed) {
                    Ok(r) => r,
                    Err(e) => {
                        let style = anstyle::AnsiColor::Red.on_default().bold();
                        println!("{style}error:{style:#} {e}");
                        continue;
                    }
                };
                show(g, &reply, false, &mut before);
                if reply.reply.kind == ReplyKind::Ended {
                    break;
                }
            }
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => {
                if !a.keep_session {
                    let reply = chat.end()?;
                    show(g, &reply, false, &mut before);
                }
                break;
            }
            Err(e) => return Err(e).context("cannot read from the terminal"),
        }
    }
    if let Some(h) = &history {
        rl.save_history(h)
            .with_context(|| format!("cannot save the chat history to {}", h.display()))?;
    }
    Ok(())
}

/// Prints a reply; `before` is the window's usage before the line, and
/// becomes its usage after.
fn show(g: &Global, reply: &ChatReply, scripted: bool, before: &mut Option<u64>) {
    let was = before.replace(reply.reply.status.window.used);
    crate::commands::checkpoint::warnings(&reply.warnings);
    let reply = &reply.reply;
    if g.json {
        match serde_json::to_string(reply) {
            Ok(s) => println!("{s}"),
            Err(e) => anstream::eprintln!("cannot print the reply as JSON: {e}"),
        }
        return;
    }
    if reply.kind == ReplyKind::Empty {
        return;
    }
    let style = match reply.kind {
        ReplyKind::Error | ReplyKind::NotUnderstood => {
            Paint(anstyle::AnsiColor::Yellow.on_default())
        }
        ReplyKind::Clarify | ReplyKind::Incomplete => Paint(anstyle::AnsiColor::Cyan.on_default()),
        _ => Paint(anstyle::Style::new()),
    };
    println!("{style}{}{style:#}", stored(&reply.text));
    for ev in &reply.events {
        println!("{}", crate::commands::checkpoint::notice(ev));
    }
    let recorded = reply.recorded.as_ref().map(|r| r.tokens);
    if !scripted || reply.recorded.is_some() {
        println!("{}", status_line(&reply.status, was, recorded));
    }
}

/// How the window moved with a line: its usage after minus before, which is
/// what the gauge shows, with the line's own tokens beside it when the
/// engine's bookkeeping (working memory, the hot context, a summary, a
/// refresh) made the two differ.
fn change(before: Option<u64>, now: u64, recorded: Option<u64>) -> String {
    let Some(was) = before else {
        return String::new();
    };
    let delta = now as i64 - was as i64;
    if delta == 0 && recorded.is_none() {
        return String::new();
    }
    let sign = if delta < 0 { "−" } else { "+" };
    let line = match recorded {
        Some(t) if t as i64 != delta => format!(" (the line: {} tokens)", thousands(t)),
        _ => String::new(),
    };
    format!(" · {sign}{}{line}", thousands(delta.unsigned_abs()))
}

/// `── green · 1,234 / 128,000 tokens (1.0 %) · +57`
fn status_line(st: &EngineStatus, before: Option<u64>, recorded: Option<u64>) -> String {
    let w = &st.window;
    let z = zone_style(w.zone);
    format!(
        "{DIM}──{DIM:#} {z}{}{z:#} {DIM}· {} / {} tokens ({:.1} %){}{}{DIM:#}",
        w.zone.name(),
        thousands(w.used),
        thousands(w.effective_max),
        w.fraction * 100.0,
        change(before, w.used, recorded),
        if w.emergency { " · EMERGENCY" } else { "" },
    )
}
