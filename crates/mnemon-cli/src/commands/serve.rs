//! `mnemon serve` and `mnemon token create`: the HTTP server is the
//! `mnemon-server` crate's; this finds the project and starts it.

use anyhow::{Result, bail};

use crate::cli::{Global, ServeArgs};
use crate::output::{BOLD, json};
use crate::project::Project;

pub fn serve(g: &Global, a: &ServeArgs) -> Result<()> {
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
