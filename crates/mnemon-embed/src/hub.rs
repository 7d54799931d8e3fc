//! A model's files from the Hugging Face hub, for users who have none on
//! disk: `config.json`, `tokenizer.json` and `model.safetensors` of a
//! sentence-transformers repository, into the hub's own cache layout
//! (`models--org--name/snapshots/<commit>/`), which Python's
//! `huggingface_hub` shares. A file already there is not fetched again.
//!
//! `HF_HOME` and `HF_ENDPOINT` are honoured as the hub's tools do; a
//! token saved by `huggingface-cli login` is sent for gated models.

use std::path::{Path, PathBuf};

use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Repo, RepoType};

/// What a model directory must hold for [`crate::LocalEmbedder::open`].
pub const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The model mnemon suggests: small (90 MB), fast on a CPU, and the one
/// retrieval was measured with.
pub const DEFAULT_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "cannot fetch {file} of {repo} (revision {revision}) from {endpoint}: {reason}. Check the repository name and your network (HF_ENDPOINT names another hub; a gated model needs `huggingface-cli login`), or put the files in a directory yourself and set `[embeddings] path`"
    )]
    Download {
        repo: String,
        revision: String,
        file: String,
        endpoint: String,
        reason: String,
    },
    #[error(
        "cannot fetch {file} of {repo} from {endpoint}: {reason}. Check your network (HF_ENDPOINT names another hub; a gated model needs `huggingface-cli login`)"
    )]
    File {
        repo: String,
        file: String,
        endpoint: String,
        reason: String,
    },
    #[error("cannot use {path} as the hub's cache: {reason}")]
    Cache { path: String, reason: String },
}

/// Where the files went.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Fetched {
    pub repo: String,
    pub revision: String,
    /// The snapshot directory holding [`FILES`]: `[embeddings] path`.
    pub dir: PathBuf,
}

/// The hub's blocking client over `cache` (the hub's default when
/// `None`), and the endpoint it talks to, for error messages.
fn client(
    cache: Option<&Path>,
    progress: bool,
) -> Result<(hf_hub::api::sync::Api, String), FetchError> {
    let mut builder = ApiBuilder::from_env()
        .with_progress(progress)
        .with_retries(3);
    if let Some(dir) = cache {
        builder = builder.with_cache_dir(dir.to_path_buf());
    }
    let endpoint =
        std::env::var("HF_ENDPOINT").unwrap_or_else(|_| "https://huggingface.co".to_string());
    let api = builder.build().map_err(|e| FetchError::Cache {
        path: cache.map_or_else(|| "$HF_HOME/hub".to_string(), |c| c.display().to_string()),
        reason: e.to_string(),
    })?;
    Ok((api, endpoint))
}

/// Fetches [`FILES`] of `repo` at `revision` into `cache` (the hub's
/// default, `$HF_HOME/hub`, when `None`), with a progress bar per file
/// when `progress`.
pub fn fetch(
    repo: &str,
    revision: &str,
    cache: Option<&Path>,
    progress: bool,
) -> Result<Fetched, FetchError> {
    let (api, endpoint) = client(cache, progress)?;
    let remote = api.repo(Repo::with_revision(
        repo.to_string(),
        RepoType::Model,
        revision.to_string(),
    ));
    let mut dir: Option<PathBuf> = None;
    for file in FILES {
        let path = remote.get(file).map_err(|e| FetchError::Download {
            repo: repo.to_string(),
            revision: revision.to_string(),
            file: file.to_string(),
            endpoint: endpoint.clone(),
            reason: e.to_string(),
        })?;
        dir = dir.or_else(|| path.parent().map(Path::to_path_buf));
    }
    Ok(Fetched {
        repo: repo.to_string(),
        revision: revision.to_string(),
        dir: dir.unwrap_or_default(),
    })
}

/// `file` of `repo` (main revision) when the hub's cache on this machine
/// already holds it (`$HF_HOME/hub`, as Python's `huggingface_hub` left
/// it): no network.
pub fn cached_file(repo: &str, file: &str) -> Option<PathBuf> {
    hf_hub::Cache::from_env()
        .model(repo.to_string())
        .get(file)
        .filter(|p| p.is_file())
}

/// Fetches one `file` of `repo` at `revision` into the hub's cache (or
/// finds it there), with a progress bar when `progress`.
pub fn fetch_file(
    repo: &str,
    revision: &str,
    file: &str,
    progress: bool,
) -> Result<PathBuf, FetchError> {
    let (api, endpoint) = client(None, progress)?;
    api.repo(Repo::with_revision(
        repo.to_string(),
        RepoType::Model,
        revision.to_string(),
    ))
    .get(file)
    .map_err(|e| FetchError::File {
        repo: format!("{repo}@{revision}"),
        file: file.to_string(),
        endpoint,
        reason: e.to_string(),
    })
}
