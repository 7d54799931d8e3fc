//! The project's sentence-embedding model, from `[embeddings]`: loaded on
//! first use (most commands never embed anything, and loading a model
//! costs a fraction of a second), then shared by every agent's engine with
//! one in-memory index of the stored vectors.

use std::path::Path;
#[cfg(feature = "embeddings")]
use std::path::PathBuf;
use std::sync::Arc;
#[cfg(feature = "embeddings")]
use std::sync::Mutex;

use mnemon_core::assemble::semantic::{EmbedError, Embedder, VectorIndex};
use mnemon_core::config::{EmbeddingProvider, EmbeddingsSection};

/// What retrieval by meaning needs: the model and its vectors' index.
#[derive(Clone)]
pub(crate) struct Semantic {
    pub embedder: Arc<dyn Embedder>,
    pub index: Arc<VectorIndex>,
}

impl std::fmt::Debug for Semantic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic")
            .field("model", &self.embedder.model())
            .finish()
    }
}

/// The embedder `section` describes, `None` when it names none. Relative
/// paths are taken from the project's root.
pub(crate) fn from_config(section: &EmbeddingsSection, root: &Path) -> Option<Semantic> {
    let provider = section.provider?;
    let embedder: Arc<dyn Embedder> = match provider {
        EmbeddingProvider::Local => {
            let dir = root.join(section.path.as_deref().unwrap_or_default());
            let name = section.model.clone().unwrap_or_else(|| {
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| dir.display().to_string())
            });
            #[cfg(feature = "embeddings")]
            let local = Arc::new(Lazy::local(dir, name));
            #[cfg(not(feature = "embeddings"))]
            let local = Arc::new(Missing {
                name,
                feature: "embeddings",
            });
            local
        }
        EmbeddingProvider::Ollama | EmbeddingProvider::Openai => {
            #[cfg(feature = "llm")]
            let remote = Arc::new(mnemon_llm::HttpEmbedder::new(
                provider == EmbeddingProvider::Ollama,
                section.base_url.as_deref(),
                section.model.as_deref().unwrap_or_default(),
                section.api_key_env.as_deref(),
            ));
            #[cfg(not(feature = "llm"))]
            let remote = Arc::new(Missing {
                name: section.model.clone().unwrap_or_default(),
                feature: "llm",
            });
            remote
        }
    };
    Some(Semantic {
        embedder,
        index: Arc::default(),
    })
}

/// A model this build cannot run (its feature is off). Its vectors'
/// name stays the configured one, so what is stored stays found once a
/// build with the feature runs; each query says why meaning is off.
#[cfg(any(not(feature = "embeddings"), not(feature = "llm")))]
struct Missing {
    name: String,
    feature: &'static str,
}

#[cfg(any(not(feature = "embeddings"), not(feature = "llm")))]
impl Embedder for Missing {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::Failed {
            model: self.name.clone(),
            reason: format!(
                "this build of the mnemon library cannot run it (build it with the `{}` feature; the mnemon CLI and server have it)",
                self.feature
            ),
        })
    }
}

/// A local model, loaded when it is first asked for a vector.
#[cfg(feature = "embeddings")]
struct Lazy {
    dir: PathBuf,
    name: String,
    loaded: Mutex<Option<Arc<mnemon_embed::LocalEmbedder>>>,
}

#[cfg(feature = "embeddings")]
impl Lazy {
    fn local(dir: PathBuf, name: String) -> Lazy {
        Lazy {
            dir,
            name,
            loaded: Mutex::new(None),
        }
    }

    fn get(&self) -> Result<Arc<mnemon_embed::LocalEmbedder>, EmbedError> {
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = slot.as_ref() {
            return Ok(Arc::clone(m));
        }
        let m = mnemon_embed::LocalEmbedder::open(&self.dir, Some(&self.name)).map_err(|e| {
            EmbedError::Failed {
                model: self.name.clone(),
                reason: e.to_string(),
            }
        })?;
        let m = Arc::new(m);
        *slot = Some(Arc::clone(&m));
        Ok(m)
    }
}

#[cfg(feature = "embeddings")]
impl Embedder for Lazy {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.get()?.embed(texts)
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        self.get()?.embed_query(query)
    }
}

/// What `mnemon reindex` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reindexed {
    /// The model the vectors are stored under.
    pub model: String,
    /// Records embedded now.
    pub embedded: u64,
    /// Records still without a vector (written meanwhile).
    pub remaining: u64,
}

impl crate::Mnemon {
    /// The configured embedding model's name, if any.
    pub fn embedding_model(&self) -> Option<&str> {
        self.inner.semantic.as_ref().map(|s| s.embedder.model())
    }

    /// How many records of the logs have no vector of the configured
    /// model (0 without one).
    pub fn unembedded(&self) -> crate::Result<u64> {
        let Some(s) = &self.inner.semantic else {
            return Ok(0);
        };
        let e = self.engine()?;
        let store = e.memory().store();
        let mut n = 0;
        for source in mnemon_core::assemble::retrieve::LOG_SOURCES {
            n += mnemon_core::assemble::semantic::VectorStore::unembedded_count(
                store,
                s.embedder.model(),
                source,
            )?;
        }
        Ok(n)
    }

    /// Embeds every stored record that has no vector of the configured
    /// model yet; `progress` hears (done, total). Each batch is committed
    /// as it is made, so an interrupted reindex keeps what it did and the
    /// next one goes on from there.
    pub fn reindex(&self, progress: &mut dyn FnMut(u64, u64)) -> crate::Result<Reindexed> {
        let Some(s) = &self.inner.semantic else {
            return Err(crate::Error::Input(
                "no embedding model is configured: set [embeddings] provider (and path or model) in .mnemon/config.toml; `mnemon embeddings fetch` downloads all-MiniLM-L6-v2".into(),
            ));
        };
        let total = self.unembedded()?;
        let e = self.engine()?;
        let store = e.memory().store();
        progress(0, total);
        let embedded = mnemon_core::assemble::semantic::backfill(
            store,
            s.embedder.as_ref(),
            mnemon_core::assemble::semantic::Backlog::All,
            &mut |done| progress(done, total),
        )
        .map_err(mnemon_core::engine::EngineError::from)?;
        Ok(Reindexed {
            model: s.embedder.model().to_string(),
            embedded,
            remaining: self.unembedded()?,
        })
    }
}
