//! The search seam: what a store provides for retrieval (full-text
//! matches, postings, records by key, vectors) and the values that cross
//! it. Retrieval (`retrieve`, `postings`, `neighbours`), retrieval by
//! meaning (`semantic`, `index`) and every backend depend on this module;
//! it depends on none of them.

use serde::Serialize;

use crate::memory::{Page, StoreError, StoreResult, Timestamp};
use crate::tokens::TokenCounter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HitSource {
    Operation,
    Message,
    Decision,
    Document,
    Hot,
    Entity,
}

impl HitSource {
    /// How stored vectors name their source: only the logs are embedded.
    pub fn vector_name(self) -> StoreResult<&'static str> {
        match self {
            HitSource::Operation => Ok("operation"),
            HitSource::Message => Ok("message"),
            other => Err(StoreError::Invalid(format!(
                "vectors are kept for operations and messages, not {other:?} records"
            ))),
        }
    }

    /// The source a stored vector's name stands for.
    pub fn from_vector_name(name: &str) -> Option<HitSource> {
        match name {
            "operation" => Some(HitSource::Operation),
            "message" => Some(HitSource::Message),
            _ => None,
        }
    }

    /// Who said a record, from the label a store reads with it: a
    /// message's role; other records are nobody's turn.
    pub fn role_of(self, label: &str) -> Option<crate::importance::Role> {
        (self == HitSource::Message)
            .then(|| label.parse().ok())
            .flatten()
    }

    /// A record's text as retrieval shows it, from the label and body a
    /// store reads (an operation's kind and data, a decision's title and
    /// decision, ...). Stored operation data is serde's compact JSON, which
    /// is what `data_text` prints for anything but a string.
    pub fn hit_text(self, label: &str, body: String) -> String {
        match self {
            HitSource::Operation if body.starts_with('"') => {
                let data = serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body));
                format!("{label}: {}", crate::memory::data_text(&data))
            }
            HitSource::Message | HitSource::Document => body,
            HitSource::Operation | HitSource::Decision | HitSource::Hot | HitSource::Entity => {
                format!("{label}: {body}")
            }
        }
    }
}

/// One full-text match, as the store found it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub source: HitSource,
    /// `o12`, `m7`, `DR-…`, `doc:project_state`, `hot:<id>`, `#15`.
    pub id: String,
    pub text: String,
    /// BM25, negated as SQLite's `bm25()` is: lower (more negative) is a
    /// better match.
    pub bm25: f64,
    pub at: Timestamp,
    pub importance: f64,
    /// The record's key in its index (what [`SearchStore::postings`] lists).
    #[serde(skip)]
    pub row: i64,
    /// A message's role as stored (`user`, `assistant`, ...); `None` for
    /// other records. A message's text has no label of its own, and the
    /// cues that raise what one party said need to know who spoke.
    #[serde(skip)]
    pub role: Option<crate::importance::Role>,
}

/// The tokens retrieved text competes for, and how to count them.
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    pub tokens: u64,
    pub counter: &'a dyn TokenCounter,
    /// The tokens the records that share only the question's common words
    /// may fill when its selective words' matches offer fewer. Retrieval by
    /// words alone sets it (BM25 would send them) to what the other
    /// sections leave; with meaning on, the model's nearest records fill
    /// the budget, and weak matches by words would only blur the fusion.
    pub fill: Option<u64>,
}

/// A hit with mnemon's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    #[serde(flatten)]
    pub hit: Hit,
    pub score: f64,
}

#[cfg(test)]
impl Ranked {
    /// A message whose text is its id (`m12`, row 12), scored `score`: the
    /// record the tests of passes over a ranking reorder.
    pub(crate) fn message(id: &str, score: f64) -> Ranked {
        Ranked {
            hit: Hit {
                source: HitSource::Message,
                id: id.into(),
                text: id.into(),
                bm25: 0.0,
                at: crate::memory::Timestamp(0),
                importance: 0.5,
                row: id.get(1..).and_then(|n| n.parse().ok()).unwrap_or(0),
                role: None,
            },
            score,
        }
    }
}

/// Every index, in the order results are listed.
pub const ALL_SOURCES: [HitSource; 6] = [
    HitSource::Operation,
    HitSource::Message,
    HitSource::Decision,
    HitSource::Hot,
    HitSource::Entity,
    HitSource::Document,
];

/// The indexes that grow with every turn; retrieval scores them from
/// postings.
pub const LOG_SOURCES: [HitSource; 2] = [HitSource::Operation, HitSource::Message];

/// The indexes that stay small (decisions, hot context, entities, the
/// current documents), where SQLite's `bm25()` over every match is cheap.
pub const SMALL_SOURCES: [HitSource; 4] = [
    HitSource::Decision,
    HitSource::Hot,
    HitSource::Entity,
    HitSource::Document,
];

/// Full-text search over every tier. Any word may match (the ranking
/// rewards matching more of them). Stored vectors come with it: retrieval
/// by meaning reads the same records.
pub trait SearchStore: VectorStore {
    /// The best `limit` matches of each index in `sources` by SQLite's
    /// BM25, which scores every match: exact, and slow on a large index.
    fn search(&self, query: &str, limit: usize, sources: &[HitSource]) -> StoreResult<Vec<Hit>>;
    /// The keys of `source`'s records that contain `term` (a trailing `*`
    /// makes it a prefix), newest first, at most `cap`.
    fn postings(&self, source: HitSource, term: &str, cap: usize) -> StoreResult<Vec<i64>>;
    /// The records of `source` behind `rows`, in any order, with `bm25`
    /// 0. Rows of another project, or that the engine wrote about itself,
    /// are left out, as [`SearchStore::search`] leaves them out.
    fn records(&self, source: HitSource, rows: &[i64]) -> StoreResult<Vec<Hit>>;
    /// The largest key `source` has given out (0 when empty): keys are
    /// assigned in order, so it stands for the index's size without
    /// counting its rows.
    fn last_row(&self, source: HitSource) -> StoreResult<u64>;
    /// [`SearchStore::postings`] of each of `asks`, in their order. A
    /// retrieval reads many words at once; a store across a network answers
    /// them in one round trip.
    fn postings_many(&self, asks: &[(HitSource, &str)], cap: usize) -> StoreResult<Vec<Vec<i64>>> {
        asks.iter()
            .map(|(source, term)| self.postings(*source, term, cap))
            .collect()
    }
    /// [`SearchStore::last_row`] of each of [`LOG_SOURCES`], which every
    /// retrieval reads first.
    fn last_rows(&self) -> StoreResult<[u64; 2]> {
        Ok([
            self.last_row(LOG_SOURCES[0])?,
            self.last_row(LOG_SOURCES[1])?,
        ])
    }
}

/// A vector as stored: int8 values and the scale that maps them back
/// (`value × scale`). A quarter of the f32 size, and cosine similarities
/// within about 0.01 of the exact ones for unit vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub values: Vec<i8>,
}

impl Quantized {
    /// `v` normalised to unit length, then scaled so its largest component
    /// is ±127.
    pub fn of(v: &[f32]) -> Quantized {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let unit: Vec<f32> = if norm > 0.0 {
            v.iter().map(|x| x / norm).collect()
        } else {
            v.to_vec()
        };
        let max = unit.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if max == 0.0 {
            return Quantized {
                scale: 0.0,
                values: vec![0; v.len()],
            };
        }
        let scale = max / 127.0;
        Quantized {
            scale,
            values: unit
                .iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
        }
    }

    /// The values as stored in a blob.
    pub fn bytes(&self) -> Vec<u8> {
        self.values.iter().map(|v| *v as u8).collect()
    }

    pub fn from_bytes(scale: f32, bytes: &[u8]) -> Quantized {
        Quantized {
            scale,
            values: bytes.iter().map(|b| *b as i8).collect(),
        }
    }
}

/// One stored vector: a chunk of one record.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    pub source: HitSource,
    pub row: i64,
    /// Which chunk of the record's text (a long record has several).
    pub chunk: u32,
    pub vector: Quantized,
}

/// Where vectors are kept. A store without vectors holds none: retrieval
/// by words then works alone.
pub trait VectorStore {
    /// Stores `vectors` of `model`, replacing any of the same record and
    /// chunk, in one transaction.
    fn put_vectors(&self, model: &str, vectors: &[StoredVector]) -> StoreResult<()>;
    /// Vectors of `model` in `page` by the store's insertion order, in that
    /// order, with their positions: a reader that has seen up to
    /// `page.after` reads only what is new.
    fn vectors_since(&self, model: &str, page: Page) -> StoreResult<Vec<(i64, StoredVector)>>;
    /// Keys in `page` of `source`'s records that retrieval can return and
    /// that have no vector of `model` yet, oldest first.
    fn unembedded(&self, model: &str, source: HitSource, page: Page) -> StoreResult<Vec<i64>>;
    /// How many such records there are.
    fn unembedded_count(&self, model: &str, source: HitSource) -> StoreResult<u64>;
}
