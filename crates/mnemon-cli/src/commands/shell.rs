//! `mnemon completions SHELL` and `mnemon man`: what a shell and `man`
//! need, generated from the same definition `--help` prints, so they never
//! fall behind the commands.

use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;

pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = crate::examples::attach(Cli::command());
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "mnemon", &mut out);
    emit(&out)
}

/// Writes to standard output; a reader gone (`| head`) ends the process
/// as SIGPIPE would, as every other command does.
fn emit(bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(141),
        r => r.context("cannot write to standard output"),
    }
}

/// The top page on standard output, or every command's page in `out`.
pub fn man(out: Option<&Path>) -> Result<()> {
    let cmd = crate::examples::attach(Cli::command());
    match out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .context("cannot render the manual page")?;
            emit(&page)
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("cannot write the manual pages into {}", dir.display()))?;
            println!("manual pages written to {}", dir.display());
            Ok(())
        }
    }
}
