//! Sentence embeddings from a model server, on the core's `Embedder`
//! seam: Ollama's `/api/embed` or an OpenAI-compatible `/v1/embeddings`
//! (llama.cpp's `llama-server --embeddings`, vLLM, OpenAI).

use std::sync::OnceLock;

use mnemon_core::assemble::semantic::{EmbedError, Embedder};
use mnemon_core::config::LlmProvider;
use serde_json::{Value, json};

use crate::LlmError;
use crate::http::{Http, Limits, error_message};

/// A server's embedding model. The HTTP client is made on first use, so
/// a project that never embeds never sets one up.
#[derive(Debug)]
pub struct HttpEmbedder {
    ollama: bool,
    url: String,
    model: String,
    key_env: Option<String>,
    http: OnceLock<Result<Http, String>>,
}

impl HttpEmbedder {
    /// `ollama` picks Ollama's API, else OpenAI's. `base_url` defaults as
    /// in `[llm]`; `key_env` names the variable holding a bearer key.
    pub fn new(
        ollama: bool,
        base_url: Option<&str>,
        model: &str,
        key_env: Option<&str>,
    ) -> HttpEmbedder {
        let provider = if ollama {
            LlmProvider::Ollama
        } else {
            LlmProvider::Openai
        };
        let base = base_url
            .unwrap_or(provider.default_base_url())
            .trim_end_matches('/');
        let url = if ollama {
            format!("{base}/api/embed")
        } else {
            let root = base.strip_suffix("/v1").unwrap_or(base);
            format!("{root}/v1/embeddings")
        };
        HttpEmbedder {
            ollama,
            url,
            model: model.to_string(),
            key_env: key_env.map(str::to_string),
            http: OnceLock::new(),
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn fail(&self, reason: impl std::fmt::Display) -> EmbedError {
        EmbedError::Failed {
            model: self.model.clone(),
            reason: reason.to_string(),
        }
    }

    fn vectors(&self, body: &Value) -> Result<Vec<Vec<f32>>, EmbedError> {
        let list = |v: &Value| -> Option<Vec<f32>> {
            v.as_array()?
                .iter()
                .map(|x| x.as_f64().map(|f| f as f32))
                .collect()
        };
        let out: Option<Vec<Vec<f32>>> = if self.ollama {
            body["embeddings"]
                .as_array()
                .map(|a| a.iter().filter_map(list).collect())
        } else {
            body["data"].as_array().map(|a| {
                let mut items: Vec<(u64, Vec<f32>)> = a
                    .iter()
                    .enumerate()
                    .filter_map(|(i, d)| {
                        Some((
                            d["index"].as_u64().unwrap_or(i as u64),
                            list(&d["embedding"])?,
                        ))
                    })
                    .collect();
                items.sort_by_key(|i| i.0);
                items.into_iter().map(|i| i.1).collect()
            })
        };
        out.ok_or_else(|| self.fail(format!("{} answered without vectors", self.url)))
    }
}

impl Embedder for HttpEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let http = self
            .http
            .get_or_init(|| Http::new(Limits::default()).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| self.fail(e))?;
        let key = self.key_env.as_deref().and_then(|k| std::env::var(k).ok());
        let body = json!({"model": self.model, "input": texts});
        let classify = |status: u16, text: &str| LlmError::Status {
            url: self.url.clone(),
            status,
            message: error_message(text),
        };
        let reply = http
            .json(
                &self.url,
                || {
                    let rb = http.post(&self.url).json(&body);
                    match &key {
                        Some(k) => rb.bearer_auth(k),
                        None => rb,
                    }
                },
                &classify,
            )
            .map_err(|e| self.fail(e))?;
        let vectors = self.vectors(&reply)?;
        if vectors.len() != texts.len() {
            return Err(self.fail(format!(
                "{} answered {} vectors for {} texts",
                self.url,
                vectors.len(),
                texts.len()
            )));
        }
        Ok(vectors)
    }
}
