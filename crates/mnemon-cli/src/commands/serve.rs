//! `mnemon serve` and `mnemon token create`: the HTTP server is the
//! `mnemon-server` crate's; this finds the project and starts it.

use anyhow::{Result, bail};

use crate::cli::{Global, ServeArgs};
use crate::output::{BOLD, json};
use crate::project::Project;

/// The glibc allocator gives each thread that allocates under contention
/// an arena of its own (up to eight per core) and keeps what they freed:
/// under 16 writing clients at 100,000 operations that was half of the
/// server's 152 MiB peak. With two arenas the same run peaked at 68 MiB
/// with the same latencies (BENCHMARKS.md, 2026-11-27). glibc reads
/// `MALLOC_ARENA_MAX` only when a process starts, so a server started
/// without it starts again, in place, with it; one set by the user is
/// theirs to keep.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn with_two_arenas() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("MALLOC_ARENA_MAX", "2")
        .exec();
    // `exec` returns only when it failed: serve as this process is.
    anstream::eprintln!("note: serving with glibc's default arenas ({err})");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn with_two_arenas() {}

pub fn serve(g: &Global, a: &ServeArgs) -> Result<()> {
    with_two_arenas();
    let project = Project::find(g.dir.as_deref())?;
    if project.dir.is_none() {
        bail!("no .mnemon/ here or in any parent directory; run `mnemon init` first");
    }
    let mut open = mnemon::OpenOptions::from_process_env()?;
    if let Some(url) = &a.database {
        let env = open.env().clone().with("MNEMON_STORAGE__URL", url);
        open = open.environment(env);
        // Connect (and create the tables) now: a wrong URL or password is
        // reported before the server says it listens.
        open.clone().open(project.settings().root())?;
    }
    let opts = mnemon_server::ServeOptions {
        root: project.settings().root().to_path_buf(),
        open,
    };
    mnemon_server::run(a.listen, opts)?;
    Ok(())
}

/// `mnemon mcp`: the project of this directory on stdio.
pub fn mcp(g: &Global, agent: Option<&str>) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let m = project.open(agent)?;
    mnemon_server::mcp::run_stdio(m)?;
    Ok(())
}

pub fn token_create(g: &Global, project_name: &str) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    let root = project.settings().root();
    let now = mnemon::SystemClock::default();
    let at = mnemon_core::memory::Clock::now(&now).rfc3339();
    let token = mnemon_server::create_token(root, project_name, &at)?;
    if g.json {
        return json(&serde_json::json!({"project": project_name, "token": token}));
    }
    anstream::eprintln!(
        "{BOLD}created{BOLD:#} a token for project {project_name}; it is shown once, keep it (only its hash is stored):"
    );
    println!("{token}");
    Ok(())
}
