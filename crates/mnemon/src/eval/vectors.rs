//! Vectors of an evaluation's texts kept on disk between runs.
//!
//! Embedding is what an evaluation with a model spends its time on (a few
//! kilobytes of text a second on a small CPU), and the same turns are
//! embedded again on every run that compares one retrieval choice with
//! another. [`CachedEmbedder`] answers a text it has seen from a file and
//! asks the model only for the rest, so a second run costs what its
//! queries and assembly cost.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mnemon_core::assemble::semantic::{EmbedError, Embedder};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// An [`Embedder`] that remembers every vector it returns in a file.
///
/// Records are appended as `key (8 bytes), dims (u32 LE), dims × f32 LE`,
/// the key being the first 8 bytes of SHA-256 over the model's name, the
/// kind (a stored text or a query) and the text. A run killed mid-write
/// leaves a short last record, which the next open ignores.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    path: PathBuf,
    known: Mutex<HashMap<[u8; 8], Vec<f32>>>,
    file: Mutex<File>,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("model", &self.inner.model())
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Stored,
    Query,
}

impl CachedEmbedder {
    /// Opens (or creates) the cache at `path` in front of `inner`.
    pub fn open(inner: Arc<dyn Embedder>, path: &Path) -> Result<CachedEmbedder> {
        let io = |e: std::io::Error| {
            Error::Input(format!(
                "vector cache {}: {e}; pass another --vector-cache file or remove this one",
                path.display()
            ))
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut known = HashMap::new();
        // Where the last whole record ends: a torn one after it is cut
        // off, so what is appended next is read back whole.
        let mut good = 0u64;
        if path.exists() {
            let mut r = BufReader::new(File::open(path).map_err(io)?);
            loop {
                let mut head = [0u8; 12];
                if r.read_exact(&mut head).is_err() {
                    break;
                }
                let mut key = [0u8; 8];
                key.copy_from_slice(&head[..8]);
                let dims = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
                let mut body = vec![0u8; dims * 4];
                if r.read_exact(&mut body).is_err() {
                    break;
                }
                let v = body
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                known.insert(key, v);
                good += 12 + dims as u64 * 4;
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if file.metadata().map_err(io)?.len() > good {
            file.set_len(good).map_err(io)?;
        }
        Ok(CachedEmbedder {
            inner,
            path: path.to_path_buf(),
            known: Mutex::new(known),
            file: Mutex::new(file),
        })
    }

    fn key(&self, kind: Kind, text: &str) -> [u8; 8] {
        let mut h = Sha256::new();
        h.update(self.inner.model().as_bytes());
        h.update([0, kind as u8]);
        h.update(text.as_bytes());
        let mut key = [0u8; 8];
        key.copy_from_slice(&h.finalize()[..8]);
        key
    }

    fn keep(&self, fresh: &[([u8; 8], Vec<f32>)]) -> std::result::Result<(), EmbedError> {
        let mut bytes = Vec::new();
        for (key, v) in fresh {
            bytes.extend_from_slice(key);
            bytes.extend_from_slice(&(v.len() as u32).to_le_bytes());
            for x in v {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(&bytes).map_err(|e| EmbedError::Failed {
            model: self.inner.model().to_string(),
            reason: format!("cannot append to {}: {e}", self.path.display()),
        })?;
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        for (key, v) in fresh {
            known.insert(*key, v.clone());
        }
        Ok(())
    }
}

impl Embedder for CachedEmbedder {
    fn model(&self) -> &str {
        self.inner.model()
    }

    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<[u8; 8]> = texts.iter().map(|t| self.key(Kind::Stored, t)).collect();
        let mut out: Vec<Option<Vec<f32>>> = {
            let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
            keys.iter().map(|k| known.get(k).cloned()).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|i| out[*i].is_none()).collect();
        if !missing.is_empty() {
            let asked: Vec<&str> = missing.iter().map(|i| texts[*i]).collect();
            let got = self.inner.embed(&asked)?;
            let fresh: Vec<([u8; 8], Vec<f32>)> = missing
                .iter()
                .zip(got)
                .map(|(i, v)| (keys[*i], v))
                .collect();
            self.keep(&fresh)?;
            for ((i, _), (_, v)) in missing.iter().zip(&asked).zip(fresh) {
                out[*i] = Some(v);
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn embed_query(&self, query: &str) -> std::result::Result<Vec<f32>, EmbedError> {
        let key = self.key(Kind::Query, query);
        if let Some(v) = self
            .known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(v.clone());
        }
        let v = self.inner.embed_query(query)?;
        self.keep(&[(key, v.clone())])?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    //! A counting stand-in for the model: what is under test is the cache,
    //! which must ask the model only for texts it has not seen, across
    //! opens. The real model's vectors are tested in `mnemon-embed`.

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn model(&self) -> &str {
            "counting"
        }
        fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
        fn embed_query(&self, q: &str) -> std::result::Result<Vec<f32>, EmbedError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(vec![q.len() as f32, -1.0])
        }
    }

    #[test]
    fn a_text_seen_before_is_answered_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.bin");
        let model = Arc::new(Counting(AtomicUsize::new(0)));
        let c = CachedEmbedder::open(model.clone(), &path).unwrap();
        let first = c.embed(&["a", "bbb"]).unwrap();
        assert_eq!(first, vec![vec![1.0, 1.0], vec![3.0, 1.0]]);
        assert_eq!(c.embed_query("a").unwrap(), vec![1.0, -1.0]);
        assert_eq!(model.0.load(Ordering::SeqCst), 3);
        drop(c);
        let again = CachedEmbedder::open(model.clone(), &path).unwrap();
        assert_eq!(
            again.embed(&["bbb", "cc", "a"]).unwrap(),
            vec![vec![3.0, 1.0], vec![2.0, 1.0], vec![1.0, 1.0]]
        );
        assert_eq!(again.embed_query("a").unwrap(), vec![1.0, -1.0]);
        // Only "cc" was new.
        assert_eq!(model.0.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn a_torn_last_record_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.bin");
        let model = Arc::new(Counting(AtomicUsize::new(0)));
        CachedEmbedder::open(model.clone(), &path)
            .unwrap()
            .embed(&["a", "bb"])
            .unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 3).unwrap();
        let c = CachedEmbedder::open(model.clone(), &path).unwrap();
        assert_eq!(c.embed(&["a", "bb"]).unwrap()[1], vec![2.0, 1.0]);
        assert_eq!(model.0.load(Ordering::SeqCst), 3);
        drop(c);
        // What was appended after the cut is read back whole.
        let c = CachedEmbedder::open(model.clone(), &path).unwrap();
        assert_eq!(c.embed(&["a", "bb"]).unwrap()[1], vec![2.0, 1.0]);
        assert_eq!(model.0.load(Ordering::SeqCst), 3);
    }
}
