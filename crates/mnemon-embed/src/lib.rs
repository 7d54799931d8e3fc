//! A sentence-embedding model run in-process: BERT-family encoders such
//! as all-MiniLM-L6-v2 or bge-small-en-v1.5, from the files of a
//! sentence-transformers directory (`config.json`, `tokenizer.json`,
//! `model.safetensors`), on the CPU.
//!
//! No server and no network: the files are read once, into one encoder
//! with 8-bit weights (`encoder.rs`) that embeds documents and queries
//! alike. Vectors are the mean of the last layer over the text's tokens
//! (sentence-transformers' pooling for these models), unit length.

mod encoder;
pub mod hub;
mod safetensors;

use rayon::prelude::*;
use std::path::{Path, PathBuf};

use mnemon_core::assemble::semantic::{EmbedError, Embedder};
use tokenizers::{Tokenizer, TruncationParams};

/// Why a model directory could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "{path}: {reason}. Point `[embeddings] path` at a sentence-transformers model directory (config.json, tokenizer.json, model.safetensors), e.g. all-MiniLM-L6-v2"
    )]
    Files { path: String, reason: String },
    #[error("{path}: the model could not be built: {reason}")]
    Model { path: String, reason: String },
}

/// Word pieces read per text: what these models were trained with.
/// Longer texts are cut into chunks before they get here.
const MAX_TOKENS: usize = 256;

/// bge models are trained to find passages for a query that carries this
/// instruction; documents go without it.
const BGE_QUERY: &str = "Represent this sentence for searching relevant passages: ";

/// Threads that embed one query. One: the words' ranking runs beside it
/// on the other core of a small machine, and on the 2-vCPU machine of
/// BENCHMARKS.md a second thread for the 8-bit encoder changed a fused
/// context's p95 by less than the noise (15.7 and 15.8 ms with one
/// thread, 16.5 and 16.0 ms with two, alternated in one window).
const QUERY_THREADS: usize = 1;

pub struct LocalEmbedder {
    name: String,
    tokenizer: Tokenizer,
    encoder: encoder::Encoder,
    query_prefix: &'static str,
    /// A pool of its own for queries ([`QUERY_THREADS`]): on the global
    /// pool a query waited behind documents being embedded.
    query_pool: rayon::ThreadPool,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("name", &self.name)
            .finish()
    }
}

fn read(dir: &Path, file: &str) -> Result<Vec<u8>, LoadError> {
    let path: PathBuf = dir.join(file);
    std::fs::read(&path).map_err(|e| LoadError::Files {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

impl LocalEmbedder {
    /// Loads the model in `dir`. `name` is what its vectors are stored
    /// under (the directory's name when `None`): change it when the model
    /// changes, and `mnemon reindex` embeds everything again.
    pub fn open(dir: &Path, name: Option<&str>) -> Result<LocalEmbedder, LoadError> {
        let shown = dir.display().to_string();
        let files = |reason: String| LoadError::Files {
            path: shown.clone(),
            reason,
        };
        let config_json = read(dir, "config.json")?;
        let shape: encoder::Shape = serde_json::from_slice(&config_json)
            .map_err(|e| files(format!("config.json is not a BERT configuration: {e}")))?;
        let mut tokenizer = Tokenizer::from_bytes(read(dir, "tokenizer.json")?)
            .map_err(|e| files(format!("tokenizer.json could not be read: {e}")))?;
        // One text at a time: no padding, so no token is computed only to
        // be masked out.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| files(format!("tokenizer.json: {e}")))?;
        let weights_path = dir.join("model.safetensors");
        let weights =
            safetensors::Safetensors::open(&weights_path).map_err(|reason| LoadError::Files {
                path: weights_path.display().to_string(),
                reason,
            })?;
        let encoder = encoder::Encoder::build(&shape, &weights).map_err(|e| LoadError::Model {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        drop(weights);
        let name = name.map(str::to_string).unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| shown.clone())
        });
        let query_prefix = if name.to_lowercase().contains("bge-") {
            BGE_QUERY
        } else {
            ""
        };
        let query_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(QUERY_THREADS)
            .thread_name(|_| "mnemon-embed-query".to_string())
            .build()
            .map_err(|e| LoadError::Model {
                path: shown.clone(),
                reason: format!("no thread for queries: {e}"),
            })?;
        Ok(LocalEmbedder {
            name,
            tokenizer,
            encoder,
            query_prefix,
            query_pool,
        })
    }

    fn fail(&self, reason: impl std::fmt::Display) -> EmbedError {
        EmbedError::Failed {
            model: self.name.clone(),
            reason: reason.to_string(),
        }
    }

    /// One text through the encoder, on the current rayon pool.
    fn vector(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| self.fail(e))?;
        let v = self
            .encoder
            .encode(enc.get_ids(), enc.get_type_ids())
            .map_err(|e| self.fail(e))?;
        Ok(unit(v))
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.into_iter().map(|x| x / n).collect()
    } else {
        v
    }
}

impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Texts side by side, each one's products split further when a
        // core is idle: a short text leaves most of a core to the next.
        texts.par_iter().map(|t| self.vector(t)).collect()
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{query}", self.query_prefix);
        self.query_pool.install(|| self.vector(&text))
    }
}
