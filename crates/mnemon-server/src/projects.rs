//! The projects one server serves. `default` is the project `mnemon init`
//! made in the served directory; others live under
//! `.mnemon/server/projects/<name>/`, each with its own store and windows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use mnemon::{Mnemon, OpenOptions};

use crate::error::ServerError;
use crate::tokens::{Tokens, check_project_name};

/// The name of the served directory's own project.
pub const DEFAULT: &str = "default";

/// Open projects, each a library handle shared by every request.
#[derive(Debug)]
pub struct Projects {
    root: PathBuf,
    opts: OpenOptions,
    open: RwLock<HashMap<String, Mnemon>>,
}

impl Projects {
    /// The projects of the directory `root` (which holds `.mnemon/`).
    pub fn new(root: PathBuf, opts: OpenOptions) -> Projects {
        Projects {
            root,
            opts,
            open: RwLock::default(),
        }
    }

    /// `.mnemon/server/`: tokens and the other projects.
    pub fn server_dir(&self) -> PathBuf {
        server_dir(&self.root)
    }

    /// The bearer tokens of this server.
    pub fn tokens(&self) -> Tokens {
        Tokens::at(&self.server_dir())
    }

    /// Waits until every open project's views are rendered.
    pub fn flush_all(&self) {
        let open: Vec<Mnemon> = self
            .open
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for m in open {
            m.flush_views();
        }
    }

    /// How `name` is opened. Projects other than `default` that share the
    /// server's PostgreSQL database (`--database`) get a schema of their
    /// own, `project_<name>`, unless the environment names one.
    fn opts_for(&self, name: &str) -> OpenOptions {
        let env = self.opts.env();
        if name == DEFAULT
            || env.get("MNEMON_STORAGE__URL").is_none()
            || env.get("MNEMON_STORAGE__SCHEMA").is_some()
        {
            return self.opts.clone();
        }
        let mut schema = format!("project_{}", name.to_ascii_lowercase().replace('-', "_"));
        schema.truncate(63);
        let env = env.clone().with("MNEMON_STORAGE__SCHEMA", &schema);
        self.opts.clone().environment(env)
    }

    /// The handle of `name`, opened on first use and kept.
    pub fn get(&self, name: &str) -> Result<Mnemon, ServerError> {
        if let Some(m) = self
            .open
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
        {
            return Ok(m.clone());
        }
        check_project_name(name)?;
        let dir = project_dir(&self.root, name);
        if !dir.join(mnemon::DIR_NAME).is_dir() {
            return Err(ServerError::NotFound(format!(
                "no project `{name}` on this server; create it with `mnemon token create --project {name}`"
            )));
        }
        let m = self.opts_for(name).open(&dir)?;
        let mut open = self.open.write().unwrap_or_else(|p| p.into_inner());
        Ok(open.entry(name.to_string()).or_insert(m).clone())
    }
}

fn server_dir(root: &Path) -> PathBuf {
    root.join(mnemon::DIR_NAME).join("server")
}

/// Where project `name` of the server at `root` lives.
pub fn project_dir(root: &Path, name: &str) -> PathBuf {
    if name == DEFAULT {
        root.to_path_buf()
    } else {
        server_dir(root).join("projects").join(name)
    }
}

/// Creates project `name` of the server at `root` if it does not exist
/// (the default project must have been made by `mnemon init`), then a
/// token for it. Returns the token.
pub fn create_token(root: &Path, name: &str, now: &str) -> Result<String, ServerError> {
    check_project_name(name)?;
    if !root.join(mnemon::DIR_NAME).is_dir() {
        return Err(ServerError::NotFound(format!(
            "no .mnemon/ in {}; run `mnemon init` there first",
            root.display()
        )));
    }
    let dir = project_dir(root, name);
    if !dir
        .join(mnemon::DIR_NAME)
        .join(mnemon::CONFIG_NAME)
        .is_file()
    {
        std::fs::create_dir_all(&dir)
            .map_err(|e| ServerError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        match mnemon::init(&dir, &mnemon::InitOptions::default()) {
            Ok(_) => {}
            // Another `token create` made it at the same moment.
            Err(_)
                if dir
                    .join(mnemon::DIR_NAME)
                    .join(mnemon::CONFIG_NAME)
                    .is_file() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Tokens::at(&server_dir(root)).create(name, now)
}
