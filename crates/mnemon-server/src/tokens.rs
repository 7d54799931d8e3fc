//! Bearer tokens, each scoped to one project. Only a token's SHA-256 is
//! kept (`.mnemon/server/tokens.json` beside the served project); the token
//! itself is shown once, when it is created.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ServerError;

/// A token as stored: never the token, only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    /// A short public handle, to name a token without revealing it.
    pub id: String,
    /// The project the token opens.
    pub project: String,
    /// Hex SHA-256 of the token.
    pub sha256: String,
    /// RFC 3339.
    pub created_at: String,
}

/// The tokens of one server's data directory.
#[derive(Debug, Clone)]
pub struct Tokens {
    path: PathBuf,
}

fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A project name that can be a directory name and a URL segment.
pub fn check_project_name(name: &str) -> Result<(), ServerError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ServerError::BadRequest {
            code: "invalid_project",
            message: format!(
                "project `{name}` is not a valid name: use 1 to 64 letters, digits, `-` or `_`"
            ),
        })
    }
}

impl Tokens {
    /// The token file under `server_dir` (`.mnemon/server/`).
    pub fn at(server_dir: &Path) -> Tokens {
        Tokens {
            path: server_dir.join("tokens.json"),
        }
    }

    /// Every stored token; none when the file does not exist yet.
    pub fn list(&self) -> Result<Vec<StoredToken>, ServerError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                ServerError::Internal(format!(
                    "{} is damaged ({e}); delete it and create the tokens again",
                    self.path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(ServerError::Internal(format!(
                "cannot read {}: {e}",
                self.path.display()
            ))),
        }
    }

    /// Whether any token exists: a server without one may only listen on
    /// loopback.
    pub fn any(&self) -> Result<bool, ServerError> {
        Ok(!self.list()?.is_empty())
    }

    /// Creates a token for `project` and returns it; only its hash is kept.
    pub fn create(&self, project: &str, now: &str) -> Result<String, ServerError> {
        check_project_name(project)?;
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let token = format!("mnm_{secret}");
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| ServerError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        // One writer at a time: two `token create` at once both land.
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("tokens.lock"))
            .and_then(|f| f.lock().map(|()| f))
            .map_err(|e| ServerError::Internal(format!("cannot lock the token file: {e}")))?;
        let mut all = self.list()?;
        all.push(StoredToken {
            id: secret[..8].to_string(),
            project: project.to_string(),
            sha256: hash(&token),
            created_at: now.to_string(),
        });
        let text =
            serde_json::to_string_pretty(&all).map_err(|e| ServerError::Internal(e.to_string()))?;
        mnemon::write_atomically(&self.path, text.as_bytes())
            .map_err(|e| ServerError::Internal(e.to_string()))?;
        drop(lock);
        Ok(token)
    }

    /// The project a presented token opens, if it is one of ours.
    pub fn project_of(&self, token: &str) -> Result<Option<String>, ServerError> {
        let h = hash(token);
        Ok(self
            .list()?
            .into_iter()
            .find(|t| constant_time_eq(t.sha256.as_bytes(), h.as_bytes()))
            .map(|t| t.project))
    }
}

/// Compares two hashes without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_its_project_and_is_kept_only_as_a_hash() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = Tokens::at(dir.path());
        assert!(!tokens.any().unwrap());
        let a = tokens.create("alpha", "2025-01-15T14:30:00Z").unwrap();
        let b = tokens.create("beta", "2025-01-15T14:30:00Z").unwrap();
        assert_ne!(a, b);
        assert_eq!(tokens.project_of(&a).unwrap().as_deref(), Some("alpha"));
        assert_eq!(tokens.project_of(&b).unwrap().as_deref(), Some("beta"));
        assert_eq!(tokens.project_of("mnm_guess").unwrap(), None);
        let file = std::fs::read_to_string(dir.path().join("tokens.json")).unwrap();
        assert!(!file.contains(&a[4..]), "the token itself is never stored");
    }

    #[test]
    fn project_names_are_checked() {
        assert!(check_project_name("default").is_ok());
        assert!(check_project_name("team-a_2").is_ok());
        for bad in ["", "../etc", "a/b", "with space", &"x".repeat(65)] {
            assert!(check_project_name(bad).is_err(), "{bad}");
        }
    }
}
