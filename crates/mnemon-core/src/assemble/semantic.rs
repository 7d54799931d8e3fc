//! Retrieval by meaning, beside retrieval by words.
//!
//! Words miss a fact said in other words ("my dog" against "the beagle");
//! a sentence-embedding model finds it. The two lists are fused by rank
//! ([`fuse`]): BM25's scores and cosine similarities live on scales that
//! cannot be compared, and ranks need no tuning per dataset.
//!
//! The model comes in through [`Embedder`] (a model run in-process, or a
//! server's embeddings endpoint); vectors are stored with the records
//! ([`VectorStore`]) and scanned whole: a flat scan of int8 vectors is
//! exact, and at a million records still a few milliseconds of integer dot
//! products, which compilers vectorise.

use std::collections::HashMap;
use std::sync::Mutex;

use super::retrieve::{HitSource, LOG_SOURCES, Ranked, SearchStore};
use crate::memory::StoreError;

/// A sentence-embedding model.
pub trait Embedder: Send + Sync {
    /// The model's name. Vectors of different models cannot be compared,
    /// so stored vectors are kept per model name.
    fn model(&self) -> &str;
    /// One vector per text, of the model's dimension, for stored records.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// The vector of a question. Models trained with an instruction for
    /// queries (bge) add it here.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(&[query])?
            .pop()
            .ok_or_else(|| EmbedError::Failed {
                model: self.model().to_string(),
                reason: "the model returned no vector for the query".into(),
            })
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model `{model}`: {reason}")]
    Failed { model: String, reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
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
    fn put_vectors(&self, model: &str, vectors: &[StoredVector]) -> Result<(), StoreError>;
    /// Vectors of `model` stored after position `after` (the store's
    /// insertion order), in that order, at most `limit`, with their
    /// positions: a reader that has seen up to `after` reads only what is new.
    fn vectors_since(
        &self,
        model: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, StoredVector)>, StoreError>;
    /// Keys above `after` of `source`'s records that retrieval can return
    /// and that have no vector of `model` yet, oldest first, at most `limit`.
    fn unembedded(
        &self,
        model: &str,
        source: HitSource,
        after: i64,
        limit: usize,
    ) -> Result<Vec<i64>, StoreError>;
    /// How many such records there are.
    fn unembedded_count(&self, model: &str, source: HitSource) -> Result<u64, StoreError>;
}

/// The longest chunk of a record embedded as one vector, in bytes. Small
/// sentence models read about 256 word pieces (roughly 1,000 characters of
/// English); a chunk of a few sentences keeps one topic per vector.
pub const CHUNK_BYTES: usize = 700;

/// `text` cut into chunks of whole sentences of at most about
/// [`CHUNK_BYTES`] each (a longer sentence is a chunk of its own, which
/// the model truncates). Never empty for a non-empty text.
pub fn chunks(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.len() <= CHUNK_BYTES {
        return if text.is_empty() {
            Vec::new()
        } else {
            vec![text.to_string()]
        };
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for s in crate::compress::sentences::split(text) {
        let s = s.trim();
        if s.is_empty() {
            continue;
        }
        if !current.is_empty() && current.len() + 1 + s.len() > CHUNK_BYTES {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(s);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Records embedded per call to the model.
const BATCH: usize = 32;

/// Which records [`backfill`] embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backlog {
    /// Every record without a vector (`mnemon reindex`).
    All,
    /// Only among the newest `n` records of each log: cheap enough for
    /// every query, whatever the size of the log.
    Newest(u64),
}

/// Embeds the records of the logs that have no vector of the embedder's
/// model yet, oldest first, and stores their vectors. `progress` hears how
/// many records are done. Returns how many were embedded.
pub fn backfill<S: SearchStore + VectorStore + ?Sized>(
    store: &S,
    embedder: &dyn Embedder,
    backlog: Backlog,
    progress: &mut dyn FnMut(u64),
) -> Result<u64, EmbedError> {
    let model = embedder.model().to_string();
    let mut done = 0u64;
    for source in LOG_SOURCES {
        let after = match backlog {
            Backlog::All => 0,
            Backlog::Newest(n) => store.last_row(source)?.saturating_sub(n) as i64,
        };
        loop {
            let rows = store.unembedded(&model, source, after, BATCH)?;
            if rows.is_empty() {
                break;
            }
            let mut hits = store.records(source, &rows)?;
            hits.sort_by_key(|h| h.row);
            let mut texts: Vec<String> = Vec::new();
            let mut owners: Vec<(i64, u32)> = Vec::new();
            for h in &hits {
                let parts = chunks(&h.text);
                // A record with no text still gets a vector (of nothing),
                // so it is not offered for embedding again.
                let parts = if parts.is_empty() {
                    vec![String::new()]
                } else {
                    parts
                };
                for (i, p) in parts.into_iter().enumerate() {
                    owners.push((h.row, i as u32));
                    texts.push(p);
                }
            }
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut vectors = Vec::with_capacity(refs.len());
            for part in refs.chunks(BATCH) {
                vectors.extend(embedder.embed(part)?);
            }
            if vectors.len() != owners.len() {
                return Err(EmbedError::Failed {
                    model,
                    reason: format!("asked for {} vectors, got {}", owners.len(), vectors.len()),
                });
            }
            let stored: Vec<StoredVector> = owners
                .iter()
                .zip(vectors)
                .map(|(&(row, chunk), v)| StoredVector {
                    source,
                    row,
                    chunk,
                    vector: Quantized::of(&v),
                })
                .collect();
            // Rows `records` left out (another project's, the engine's own)
            // are never returned by `unembedded`, so every row asked for
            // here is one retrieval can show.
            store.put_vectors(&model, &stored)?;
            done += hits.len() as u64;
            progress(done);
            if hits.len() < rows.len() {
                break;
            }
        }
    }
    Ok(done)
}

/// Every stored vector of one model, flat in memory, kept across calls and
/// topped up with what was stored since.
#[derive(Debug, Default)]
pub struct VectorIndex {
    inner: Mutex<Flat>,
}

#[derive(Debug, Default)]
struct Flat {
    model: String,
    /// The store position read up to.
    seen: i64,
    dims: usize,
    keys: Vec<(HitSource, i64)>,
    scales: Vec<f32>,
    /// `keys.len() × dims` values, one vector after another.
    values: Vec<i8>,
    /// Where each stored (source, row, chunk) sits, so a vector stored
    /// again replaces its old copy.
    slot: HashMap<(HitSource, i64, u32), usize>,
    /// Records forgotten since their vectors were loaded: never returned.
    gone: std::collections::HashSet<(HitSource, i64)>,
}

/// Vectors read from the store per query to it.
const PAGE: usize = 20_000;

impl VectorIndex {
    /// Records that were forgotten: their vectors (already deleted from
    /// the store) stop taking places among the nearest.
    pub fn forget(&self, records: impl IntoIterator<Item = (HitSource, i64)>) {
        let mut flat = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        flat.gone.extend(records);
    }

    /// The `k` records whose chunks are nearest `query` (cosine), best
    /// first, with their similarity: a record scores its best chunk.
    pub fn nearest<S: VectorStore + ?Sized>(
        &self,
        store: &S,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(HitSource, i64, f32)>, StoreError> {
        let mut flat = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if flat.model != model {
            *flat = Flat {
                model: model.to_string(),
                ..Flat::default()
            };
        }
        loop {
            let page = store.vectors_since(model, flat.seen, PAGE)?;
            let Some(last) = page.last().map(|p| p.0) else {
                break;
            };
            for (_, v) in page {
                flat.add(v);
            }
            flat.seen = last;
        }
        Ok(flat.nearest(query, k))
    }
}

impl Flat {
    fn add(&mut self, v: StoredVector) {
        if self.dims == 0 {
            self.dims = v.vector.values.len();
        }
        if v.vector.values.len() != self.dims {
            // A vector of another length cannot come from this model;
            // comparing it would be meaningless.
            return;
        }
        let key = (v.source, v.row, v.chunk);
        match self.slot.get(&key) {
            Some(&i) => {
                self.scales[i] = v.vector.scale;
                self.values[i * self.dims..(i + 1) * self.dims].copy_from_slice(&v.vector.values);
            }
            None => {
                self.slot.insert(key, self.keys.len());
                self.keys.push((v.source, v.row));
                self.scales.push(v.vector.scale);
                self.values.extend_from_slice(&v.vector.values);
            }
        }
    }

    /// The `want` entries most similar to `q`, unordered: the scan split
    /// over the machine's cores for a large index (each part keeps its own
    /// best `want`, which hold the overall best), inline for a small one.
    fn scan(&self, q: &Quantized, want: usize) -> Vec<(f32, usize)> {
        let arch = pulp::Arch::new();
        let part = |from: usize, to: usize| -> Vec<(f32, usize)> {
            let mut sims = arch.dispatch(Similarities {
                q,
                values: &self.values[from * self.dims..to * self.dims],
                scales: &self.scales[from..to],
                first: from,
            });
            if want < sims.len() {
                sims.select_nth_unstable_by(want, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                sims.truncate(want);
            }
            sims
        };
        let n = self.keys.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .min(n / SCAN_PART_MIN)
            .max(1);
        if threads == 1 {
            return part(0, n);
        }
        let step = n.div_ceil(threads);
        let mut all: Vec<(f32, usize)> = std::thread::scope(|s| {
            let parts: Vec<_> = (0..threads)
                .map(|t| {
                    let (from, to) = (t * step, ((t + 1) * step).min(n));
                    s.spawn(move || part(from, to))
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        if want < all.len() {
            all.select_nth_unstable_by(want, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            all.truncate(want);
        }
        all
    }

    fn nearest(&self, query: &[f32], k: usize) -> Vec<(HitSource, i64, f32)> {
        if self.keys.is_empty() || query.len() != self.dims || k == 0 {
            return Vec::new();
        }
        let q = Quantized::of(query);
        // Chunks of one record are several entries: take enough to find
        // `k` distinct records in all but pathological cases.
        let want = (k * 4).min(self.keys.len());
        let mut sims = self.scan(&q, want);
        sims.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out: Vec<(HitSource, i64, f32)> = Vec::with_capacity(k);
        for (sim, i) in sims {
            let (source, row) = self.keys[i];
            if !self.gone.contains(&(source, row))
                && !out.iter().any(|o| o.0 == source && o.1 == row)
            {
                out.push((source, row, sim));
                if out.len() == k {
                    break;
                }
            }
        }
        out
    }
}

/// Vectors below which a scan is not worth another thread: at 384
/// dimensions a thread's start costs about what 5,000 dot products do.
/// On the 2-vCPU machine of BENCHMARKS.md the vectorised scan is bound by
/// memory bandwidth (about 8 GB/s: 100,000 vectors in 4.7 ms on one core,
/// 4.3 ms for each half on two), so the split gains little there; it is
/// kept for machines whose cores do not share one narrow memory path.
const SCAN_PART_MIN: usize = 20_000;

/// The similarity of `q` to each vector of a slice of the index, with
/// its entry number. Run through [`pulp::Arch::dispatch`], which compiles
/// this loop once per instruction set (SSE2 to AVX-512) and picks the
/// best the processor has when it runs: the build's baseline (SSE2 on
/// x86-64) has no fast 8-bit multiply-add, and the scan is most of what
/// retrieval by meaning costs at 100,000 records. Measured 3.3 times
/// faster than the same loop at the baseline, with no unsafe code here.
struct Similarities<'a> {
    q: &'a Quantized,
    values: &'a [i8],
    scales: &'a [f32],
    first: usize,
}

impl pulp::WithSimd for Similarities<'_> {
    type Output = Vec<(f32, usize)>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Self::Output {
        let dims = self.q.values.len();
        let mut sims = Vec::with_capacity(self.scales.len());
        for (i, (v, s)) in self.values.chunks_exact(dims).zip(self.scales).enumerate() {
            sims.push((
                dot(&self.q.values, v) as f32 * self.q.scale * s,
                self.first + i,
            ));
        }
        sims
    }
}

/// Integer dot product: written plainly over fixed-size lanes so the
/// compiler turns it into SIMD multiply-adds (inlined into
/// [`Similarities`], at the instruction set chosen there).
#[inline(always)]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 32;
    let mut acc = [0i32; LANES];
    let (ac, ar) = a.split_at(a.len() - a.len() % LANES);
    let (bc, br) = b.split_at(ac.len());
    for (x, y) in ac.chunks_exact(LANES).zip(bc.chunks_exact(LANES)) {
        for l in 0..LANES {
            acc[l] += i32::from(x[l]) * i32::from(y[l]);
        }
    }
    let tail: i32 = ar
        .iter()
        .zip(br)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    acc.iter().sum::<i32>() + tail
}

/// The RRF constant: how much the first few ranks dominate. 60 is the
/// value of the method's authors, used by most search engines since; it
/// was not tuned here.
const RRF_K: f64 = 60.0;

/// The weight of the ranking by meaning against the ranking by words (1).
/// At 1 the synthetic set's two-step questions lost their bridge records at
/// 1K (recall 0.93 against 0.98 by words alone); at 0.5 they are all found,
/// for 0.01 to 0.02 less on BEAM (BENCHMARKS.md, 2026-11-24).
const SEMANTIC_WEIGHT: f64 = 0.5;

/// Reciprocal-rank fusion of the ranking by words (`lexical`, every tier)
/// and by meaning (`semantic`, records of the logs, best first). A record
/// scores `1/(k + rank)` in the words' list and half that in the meaning's
/// ([`SEMANTIC_WEIGHT`]), summed: one high in both lists beats one high in
/// either. Scores are scaled so the best equals
/// the best lexical score, which keeps them on the scale the rest of
/// assembly is used to.
pub fn fuse(lexical: Vec<Ranked>, semantic: Vec<Ranked>) -> Vec<Ranked> {
    let scale = lexical.first().map(|r| r.score).unwrap_or(1.0).max(1e-9);
    let mut fused: Vec<(f64, Ranked)> = Vec::with_capacity(lexical.len() + semantic.len());
    let mut at: HashMap<String, usize> = HashMap::new();
    for (i, r) in lexical.into_iter().enumerate() {
        at.insert(r.hit.id.clone(), fused.len());
        fused.push((1.0 / (RRF_K + i as f64 + 1.0), r));
    }
    for (i, r) in semantic.into_iter().enumerate() {
        let s = SEMANTIC_WEIGHT / (RRF_K + i as f64 + 1.0);
        match at.get(&r.hit.id) {
            Some(&j) => fused[j].0 += s,
            None => {
                at.insert(r.hit.id.clone(), fused.len());
                fused.push((s, r));
            }
        }
    }
    let best = fused.iter().map(|f| f.0).fold(0.0, f64::max).max(1e-12);
    let mut out: Vec<Ranked> = fused
        .into_iter()
        .map(|(s, mut r)| {
            r.score = s / best * scale;
            r
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::retrieve::Hit;
    use crate::memory::Timestamp;

    fn ranked(id: &str, score: f64) -> Ranked {
        Ranked {
            hit: Hit {
                source: HitSource::Message,
                id: id.into(),
                text: id.into(),
                bm25: 0.0,
                at: Timestamp(0),
                importance: 0.5,
                row: id[1..].parse().unwrap_or(0),
            },
            score,
        }
    }

    #[test]
    fn quantized_vectors_keep_their_cosine() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 3.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 2.0)
            .collect();
        let exact = {
            let d: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
            let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
            d / na / nb
        };
        let (qa, qb) = (Quantized::of(&a), Quantized::of(&b));
        let approx = dot(&qa.values, &qb.values) as f32 * qa.scale * qb.scale;
        assert!((exact - approx).abs() < 0.01, "{exact} against {approx}");
        let self_sim = dot(&qa.values, &qa.values) as f32 * qa.scale * qa.scale;
        assert!((self_sim - 1.0).abs() < 0.01, "{self_sim}");
        assert_eq!(Quantized::from_bytes(qa.scale, &qa.bytes()), qa);
    }

    #[test]
    fn the_dot_product_counts_every_lane_and_the_tail() {
        for n in [0, 1, 31, 32, 33, 100, 384] {
            let a: Vec<i8> = (0..n).map(|i| (i % 17) as i8 - 8).collect();
            let b: Vec<i8> = (0..n).map(|i| (i % 5) as i8 - 2).collect();
            let plain: i32 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| i32::from(*x) * i32::from(*y))
                .sum();
            assert_eq!(dot(&a, &b), plain, "length {n}");
        }
    }

    #[test]
    fn long_texts_are_cut_between_sentences() {
        assert!(chunks("   ").is_empty());
        assert_eq!(chunks("One short turn."), vec!["One short turn."]);
        let sentence = "The migration moved every table to the new schema in one step. ";
        let long = sentence.repeat(40);
        let parts = chunks(&long);
        assert!(parts.len() > 1);
        for p in &parts {
            assert!(p.len() <= CHUNK_BYTES, "{}", p.len());
            assert!(p.ends_with('.'), "{p}");
        }
        let words = |s: &str| s.split_whitespace().count();
        assert_eq!(parts.iter().map(|p| words(p)).sum::<usize>(), words(&long));
    }

    #[test]
    fn a_record_in_both_lists_beats_one_in_either() {
        let lexical = vec![ranked("m1", 9.0), ranked("m2", 5.0), ranked("m3", 1.0)];
        let semantic = vec![ranked("m4", 0.9), ranked("m2", 0.8)];
        let fused = fuse(lexical, semantic);
        let ids: Vec<&str> = fused.iter().map(|r| r.hit.id.as_str()).collect();
        // m4, found by meaning alone, ranks as the words' ~60th would.
        assert_eq!(ids, ["m2", "m1", "m3", "m4"]);
        assert!(
            (fused[0].score - 9.0).abs() < 1e-9,
            "best on the lexical scale"
        );
        // With no vectors, the words' order stands.
        let alone = fuse(vec![ranked("m1", 3.0), ranked("m2", 2.0)], Vec::new());
        let ids: Vec<&str> = alone.iter().map(|r| r.hit.id.as_str()).collect();
        assert_eq!(ids, ["m1", "m2"]);
    }

    #[test]
    fn a_scan_split_over_threads_finds_what_one_pass_finds() {
        // Enough vectors for several parts; a pseudo-random set with ties.
        let mut flat = Flat::default();
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % 200) as f32 / 100.0 - 1.0
        };
        for row in 0..(SCAN_PART_MIN as i64 * 3 + 17) {
            let v: Vec<f32> = (0..16).map(|_| next()).collect();
            flat.add(StoredVector {
                source: HitSource::Operation,
                row,
                chunk: 0,
                vector: Quantized::of(&v),
            });
        }
        let query: Vec<f32> = (0..16).map(|_| next()).collect();
        let q = Quantized::of(&query);
        // One pass, by hand: every entry scored, best first, ties by position.
        let mut all: Vec<(f32, usize)> = flat
            .values
            .chunks_exact(flat.dims)
            .zip(&flat.scales)
            .enumerate()
            .map(|(i, (v, s))| (dot(&q.values, v) as f32 * q.scale * s, i))
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for want in [1, 10, 400, 5_000] {
            let mut split = flat.scan(&q, want);
            split.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            assert_eq!(split, all[..want].to_vec(), "want {want}");
        }
    }

    #[test]
    fn the_nearest_records_score_their_best_chunk() {
        let mut flat = Flat::default();
        let v = |x: f32, y: f32| Quantized::of(&[x, y, 0.0]);
        let add = |flat: &mut Flat, row, chunk, q: Quantized| {
            flat.add(StoredVector {
                source: HitSource::Message,
                row,
                chunk,
                vector: q,
            })
        };
        add(&mut flat, 1, 0, v(1.0, 0.0));
        add(&mut flat, 2, 0, v(0.0, 1.0));
        add(&mut flat, 2, 1, v(0.9, 0.1));
        add(&mut flat, 3, 0, v(0.5, 0.5));
        let near = flat.nearest(&[1.0, 0.0, 0.0], 3);
        let rows: Vec<i64> = near.iter().map(|n| n.1).collect();
        assert_eq!(rows, [1, 2, 3]);
        assert!(near[1].2 > 0.98, "row 2 by its second chunk: {near:?}");
        // Stored again, a chunk replaces its old vector.
        add(&mut flat, 1, 0, v(-1.0, 0.0));
        let rows = |flat: &Flat| -> Vec<i64> {
            flat.nearest(&[1.0, 0.0, 0.0], 2)
                .iter()
                .map(|n| n.1)
                .collect()
        };
        assert_eq!(rows(&flat), [2, 3]);
        assert!(flat.nearest(&[1.0, 0.0], 2).is_empty(), "wrong length");
        // A forgotten record takes no place among the nearest.
        flat.gone.insert((HitSource::Message, 2));
        assert_eq!(rows(&flat), [3, 1]);
    }
}
