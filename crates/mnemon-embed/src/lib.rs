//! A sentence-embedding model run in-process: BERT-family encoders such
//! as all-MiniLM-L6-v2 or bge-small-en-v1.5, from the files of a
//! sentence-transformers directory (`config.json`, `tokenizer.json`,
//! `model.safetensors`), on the CPU with candle.
//!
//! No server and no network: the files are read once, and each call
//! encodes a batch. Vectors are the mean of the last layer over the real
//! tokens (sentence-transformers' pooling for these models), unit length.
//!
//! Documents go through candle's `f32` BERT; a query, which a context
//! waits for, through the same weights in 8 bits (`query.rs`).

pub mod hub;
mod query;

use rayon::prelude::*;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use mnemon_core::assemble::semantic::{EmbedError, Embedder};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

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

/// Texts encoded together: padded to the longest of them, so texts of
/// similar length are batched together.
const BATCH: usize = 16;

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
    model: BertModel,
    tokenizer: Tokenizer,
    query_prefix: &'static str,
    /// A pool of its own for queries ([`QUERY_THREADS`]): on candle's
    /// global pool a query waited behind other work.
    query_pool: rayon::ThreadPool,
    /// Queries in 8-bit weights (`query.rs`); `None` for a model it does
    /// not know.
    query_encoder: Option<query::QueryEncoder>,
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
        let config: Config = serde_json::from_slice(&config_json)
            .map_err(|e| files(format!("config.json is not a BERT configuration: {e}")))?;
        let mut tokenizer = Tokenizer::from_bytes(read(dir, "tokenizer.json")?)
            .map_err(|e| files(format!("tokenizer.json could not be read: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| files(format!("tokenizer.json: {e}")))?;
        let weights = read(dir, "model.safetensors")?;
        let tensors = candle_core::safetensors::load_buffer(&weights, &Device::Cpu)
            .map_err(|e| files(format!("model.safetensors: {e}")))?;
        drop(weights);
        // A model the query encoder does not know embeds its queries with
        // candle, as it does documents: slower, never wrong.
        let query_encoder = serde_json::from_slice::<query::Shape>(&config_json)
            .ok()
            .and_then(|shape| query::QueryEncoder::build(&shape, &tensors).ok());
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let model = BertModel::load(vb, &config).map_err(|e| LoadError::Model {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
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
            model,
            tokenizer,
            query_prefix,
            query_pool,
            query_encoder,
        })
    }

    fn fail(&self, reason: impl std::fmt::Display) -> EmbedError {
        EmbedError::Failed {
            model: self.name.clone(),
            reason: reason.to_string(),
        }
    }

    /// One padded batch through the model: mean of the last layer over
    /// the real tokens.
    fn batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| self.fail(e))?;
        let rows = enc.len();
        let len = enc.first().map_or(0, |e| e.get_ids().len());
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            enc.iter().flat_map(|e| f(e).iter().copied()).collect()
        };
        let dev = &Device::Cpu;
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), (rows, len), dev);
        let types = Tensor::from_vec(flat(&|e| e.get_type_ids()), (rows, len), dev);
        let mask = Tensor::from_vec(flat(&|e| e.get_attention_mask()), (rows, len), dev);
        let (ids, types, mask) = match (ids, types, mask) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return Err(self.fail(e)),
        };
        let pooled = (|| {
            let out = self.model.forward(&ids, &types, Some(&mask))?;
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = out.broadcast_mul(&m)?.sum(1)?;
            let count = m.sum(1)?.clamp(1e-9, f64::MAX)?;
            sum.broadcast_div(&count)?.to_vec2::<f32>()
        })()
        .map_err(|e: candle_core::Error| self.fail(e))?;
        Ok(pooled.into_iter().map(unit).collect())
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
        // Encoded shortest first, so each batch pads little; answered in
        // the order asked.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        // Batches run side by side: the model's own kernels leave most of
        // a second core idle at this size.
        let groups: Vec<&[usize]> = order.chunks(BATCH).collect();
        let vectors = groups
            .par_iter()
            .map(|group| {
                let batch: Vec<String> = group.iter().map(|&i| texts[i].to_string()).collect();
                self.batch(&batch)
            })
            .collect::<Result<Vec<_>, EmbedError>>()?;
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for (group, vs) in groups.iter().zip(vectors) {
            for (&i, v) in group.iter().zip(vs) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{query}", self.query_prefix);
        let Some(encoder) = &self.query_encoder else {
            return self
                .query_pool
                .install(|| self.batch(&[text]))?
                .pop()
                .ok_or_else(|| self.fail("no vector for the query"));
        };
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| self.fail(e))?;
        let v = self
            .query_pool
            .install(|| encoder.encode(enc.get_ids(), enc.get_type_ids()))
            .map_err(|e| self.fail(e))?;
        Ok(unit(v))
    }
}
