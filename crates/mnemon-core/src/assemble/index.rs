//! The vectors of one model, flat in memory, and the search for the
//! nearest.
//!
//! Up to [`EXACT_UP_TO`] vectors the search is exact: every int8 vector is
//! scored. Past it, scoring them all is the cost of retrieval by meaning
//! (100,000 × 384 bytes, bound by memory bandwidth), so each vector also
//! keeps its signs as bits: a pass over those (48 bytes a vector, popcount
//! of an XOR) picks the entries whose signs agree most with the query's,
//! and only they are scored exactly. The pass keeps at least
//! `RESCORE_MIN` entries and four times as many as asked for (which is
//! itself four entries per record wanted), so what it can miss is far
//! down a list whose top is what fusion weighs.

use std::collections::HashMap;
use std::sync::Mutex;

use super::seam::{HitSource, Quantized, StoredVector, VectorStore};
use crate::memory::{Page, StoreResult};
use crate::runtime::{Job, Runtime};

/// Up to this many vectors every one is scored exactly; past it, the
/// signs choose which are (see the module's comment). The conversations
/// retrieval is measured on (BEAM's, a few thousand chunks each) stay
/// below it.
pub const EXACT_UP_TO: usize = 10_000;

/// The fewest entries the signs' pass keeps.
const RESCORE_MIN: usize = 5_000;

/// How many entries the signs' pass keeps per entry asked for.
const RESCORE_FACTOR: usize = 4;

/// Chosen vectors below which scoring them is not worth another thread:
/// each is a cache miss, about 0.3 µs at 100,000 vectors.
const RESCORE_PART_MIN: usize = 2_000;

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
    /// `keys.len() × words` 64-bit words: bit `d` set where value `d` is
    /// above 0.
    signs: Vec<u64>,
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
        runtime: &dyn Runtime,
    ) -> StoreResult<Vec<(HitSource, i64, f32)>> {
        let mut flat = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if flat.model != model {
            *flat = Flat {
                model: model.to_string(),
                ..Flat::default()
            };
        }
        loop {
            let page = store.vectors_since(
                model,
                Page {
                    after: flat.seen,
                    limit: PAGE,
                },
            )?;
            let Some(last) = page.last().map(|p| p.0) else {
                break;
            };
            for (_, v) in page {
                flat.add(v);
            }
            flat.seen = last;
        }
        Ok(flat.nearest(query, k, runtime))
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
        let words = self.words();
        let signs = signs_of(&v.vector.values);
        let key = (v.source, v.row, v.chunk);
        match self.slot.get(&key) {
            Some(&i) => {
                self.scales[i] = v.vector.scale;
                self.values[i * self.dims..(i + 1) * self.dims].copy_from_slice(&v.vector.values);
                self.signs[i * words..(i + 1) * words].copy_from_slice(&signs);
            }
            None => {
                self.slot.insert(key, self.keys.len());
                self.keys.push((v.source, v.row));
                self.scales.push(v.vector.scale);
                self.values.extend_from_slice(&v.vector.values);
                self.signs.extend_from_slice(&signs);
            }
        }
    }

    /// 64-bit words of signs per vector.
    fn words(&self) -> usize {
        self.dims.div_ceil(64)
    }

    /// The `want` entries most similar to `q`, unordered: exact up to
    /// [`EXACT_UP_TO`] entries (or when asked for nearly all), else the
    /// best of those whose signs agree most with `q`'s. The same entries
    /// however many threads share the work.
    fn search(&self, q: &Quantized, want: usize, rt: &dyn Runtime) -> Vec<(f32, usize)> {
        let n = self.keys.len();
        let keep = want.saturating_mul(RESCORE_FACTOR).max(RESCORE_MIN);
        if n <= EXACT_UP_TO || keep >= n {
            return self.scan(q, want, rt);
        }
        let arch = pulp::Arch::new();
        let qs = signs_of(&q.values);
        let words = self.words();
        let distances = in_parts(rt, n, SCAN_PART_MIN, |from, to| {
            arch.dispatch(Hamming {
                q: &qs,
                signs: &self.signs[from * words..to * words],
            })
        });
        // The smallest distance at which `keep` entries are in: every entry
        // at or below it is scored, so ties at the edge are all kept.
        let mut count = vec![0usize; self.dims + 2];
        for d in &distances {
            count[usize::from(*d).min(self.dims + 1)] += 1;
        }
        let mut edge = 0;
        let mut taken = 0;
        for (d, c) in count.iter().enumerate() {
            taken += c;
            edge = d;
            if taken >= keep {
                break;
            }
        }
        let chosen: Vec<usize> = distances
            .iter()
            .enumerate()
            .filter(|(_, d)| usize::from(**d) <= edge)
            .map(|(i, _)| i)
            .collect();
        // Each chosen vector is a miss of the processor's caches: threads
        // wait on several at once.
        let sims = in_parts(rt, chosen.len(), RESCORE_PART_MIN, |from, to| {
            arch.dispatch(Chosen {
                q,
                values: &self.values,
                scales: &self.scales,
                chosen: &chosen[from..to],
            })
        });
        best_of(sims, want)
    }

    /// Every entry scored (see [`Similarities`]); each part keeps its own
    /// best `want`, which hold the overall best.
    fn scan(&self, q: &Quantized, want: usize, rt: &dyn Runtime) -> Vec<(f32, usize)> {
        let arch = pulp::Arch::new();
        let all = in_parts(rt, self.keys.len(), SCAN_PART_MIN, |from, to| {
            let sims = arch.dispatch(Similarities {
                q,
                values: &self.values[from * self.dims..to * self.dims],
                scales: &self.scales[from..to],
                first: from,
            });
            best_of(sims, want)
        });
        best_of(all, want)
    }

    fn nearest(&self, query: &[f32], k: usize, rt: &dyn Runtime) -> Vec<(HitSource, i64, f32)> {
        if self.keys.is_empty() || query.len() != self.dims || k == 0 {
            return Vec::new();
        }
        let q = Quantized::of(query);
        // Chunks of one record are several entries: take enough to find
        // `k` distinct records in all but pathological cases.
        let want = (k * 4).min(self.keys.len());
        let mut sims = self.search(&q, want, rt);
        sims.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out: Vec<(HitSource, i64, f32)> = Vec::with_capacity(k);
        let mut taken = std::collections::HashSet::with_capacity(k);
        for (sim, i) in sims {
            let (source, row) = self.keys[i];
            if !self.gone.contains(&(source, row)) && taken.insert((source, row)) {
                out.push((source, row, sim));
                if out.len() == k {
                    break;
                }
            }
        }
        out
    }
}

/// The best `want` of `sims`, unordered; ties go to the earlier entry.
fn best_of(mut sims: Vec<(f32, usize)>, want: usize) -> Vec<(f32, usize)> {
    if want < sims.len() {
        sims.select_nth_unstable_by(want, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        sims.truncate(want);
    }
    sims
}

/// `part(from, to)` over `0..n` cut into one range per job the runtime
/// runs at once, none smaller than `min` (below which a thread's start
/// costs more than it saves); the results in order.
fn in_parts<T: Send>(
    rt: &dyn Runtime,
    n: usize,
    min: usize,
    part: impl Fn(usize, usize) -> Vec<T> + Sync,
) -> Vec<T> {
    let jobs = rt.parallelism().min(n / min.max(1)).max(1);
    if jobs == 1 {
        return part(0, n);
    }
    let step = n.div_ceil(jobs);
    let part = &part;
    let mut outs: Vec<Vec<T>> = (0..jobs).map(|_| Vec::new()).collect();
    rt.all(
        outs.iter_mut()
            .enumerate()
            .map(|(t, out)| {
                let (from, to) = (t * step, ((t + 1) * step).min(n));
                Box::new(move || *out = part(from, to)) as Job<'_>
            })
            .collect(),
    );
    outs.into_iter().flatten().collect()
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
            sims.push((cosine(self.q, v, *s), self.first + i));
        }
        sims
    }
}

/// The cosine of the query and one stored vector (`values` at `scale`);
/// both are unit vectors.
#[inline(always)]
fn cosine(q: &Quantized, values: &[i8], scale: f32) -> f32 {
    dot(&q.values, values) as f32 * q.scale * scale
}

/// Integer dot product: written plainly over fixed-size lanes so the
/// compiler turns it into SIMD multiply-adds (inlined into
/// [`Similarities`], at the instruction set chosen there).
#[inline(always)]
pub(crate) fn dot(a: &[i8], b: &[i8]) -> i32 {
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

/// Bit `d` set where `values[d]` is above 0.
fn signs_of(values: &[i8]) -> Vec<u64> {
    let mut out = vec![0u64; values.len().div_ceil(64)];
    for (d, v) in values.iter().enumerate() {
        if *v > 0 {
            out[d / 64] |= 1 << (d % 64);
        }
    }
    out
}

/// How many signs of each vector differ from the query's. Dispatched
/// like [`Similarities`], so `count_ones` is the processor's popcount
/// where it has one (not in x86-64's baseline).
struct Hamming<'a> {
    q: &'a [u64],
    signs: &'a [u64],
}

impl pulp::WithSimd for Hamming<'_> {
    type Output = Vec<u16>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Self::Output {
        // Plain loops: a closure here would not be compiled with the
        // dispatched instruction set.
        let words = self.q.len().max(1);
        let mut out = Vec::with_capacity(self.signs.len() / words);
        for v in self.signs.chunks_exact(words) {
            let mut d = 0u32;
            for (a, b) in v.iter().zip(self.q) {
                d += (a ^ b).count_ones();
            }
            out.push(d as u16);
        }
        out
    }
}

/// How far ahead of the entry being scored its successor's vector is
/// asked for: chosen vectors are far apart in memory, so no prefetcher of
/// the processor guesses them, and each was a wait on memory. Rescoring
/// 8,528 of 100,000 vectors went from 1.5 to 1.0 ms (p50; 16 ahead did no
/// better; BENCHMARKS.md, 2026-12-02).
const PREFETCH_AHEAD: usize = 8;

/// Asks the processor to bring a vector's bytes into its caches before
/// they are read (x86-64's `prefetcht0`, which never faults); elsewhere,
/// nothing.
#[derive(Clone, Copy)]
struct Prefetch {
    #[cfg(target_arch = "x86_64")]
    sse: Option<pulp::x86::V1>,
}

impl Prefetch {
    fn new() -> Prefetch {
        Prefetch {
            #[cfg(target_arch = "x86_64")]
            sse: pulp::x86::V1::try_new(),
        }
    }

    #[inline(always)]
    fn rows(self, bytes: &[i8]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(v1) = self.sse {
            for line in bytes.chunks(64) {
                v1.sse
                    ._mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = bytes;
    }
}

/// The similarity of `q` to each chosen entry, with its entry number.
struct Chosen<'a> {
    q: &'a Quantized,
    values: &'a [i8],
    scales: &'a [f32],
    chosen: &'a [usize],
}

impl pulp::WithSimd for Chosen<'_> {
    type Output = Vec<(f32, usize)>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Self::Output {
        let dims = self.q.values.len();
        let mut out = Vec::with_capacity(self.chosen.len());
        let fetch = Prefetch::new();
        for (j, &i) in self.chosen.iter().enumerate() {
            if let Some(&ahead) = self.chosen.get(j + PREFETCH_AHEAD) {
                fetch.rows(&self.values[ahead * dims..(ahead + 1) * dims]);
            }
            let v = &self.values[i * dims..(i + 1) * dims];
            out.push((cosine(self.q, v, self.scales[i]), i));
        }
        out
    }
}

#[cfg(test)]
mod tests;
