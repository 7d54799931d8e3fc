//! A dense layer in 8-bit weights, and its products with a text's tokens.

use rayon::prelude::*;

use super::quantize;

/// Output rows of a [`Linear`] kept together, input by input: for each
/// input, the weights of [`PANEL`] outputs side by side, so the products
/// of a few tokens with those outputs stay in registers while the inputs
/// go by.
pub(super) const PANEL: usize = 16;

/// Tokens taken together against one panel on AVX2 (and without SIMD):
/// four tokens by sixteen outputs is eight of its sixteen registers of
/// sums, and each weight read from memory serves four tokens.
const TOKENS: usize = 4;

/// Tokens taken together on AVX-512, where a panel row is one vector:
/// sixteen sums are half of its thirty-two registers, and each weight
/// widened serves sixteen multiply-adds.
const WIDE_TOKENS: usize = 16;

/// Panels per unit of parallel work: 384 outputs are four units, so two
/// threads share them evenly, and a unit is far more work than the
/// hand-off.
const PART: usize = 6;

/// A dense layer, `outputs × inputs` weights in 8 bits (one scale per
/// output) laid out in panels, and its bias.
pub(super) struct Linear {
    panels: Vec<i8>,
    /// One per output, padded with ones to whole panels.
    scales: Vec<f32>,
    /// One per output, padded with zeros to whole panels.
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Linear {
    pub(super) fn of(weights: &[f32], mut bias: Vec<f32>, inputs: usize) -> Linear {
        let outputs = bias.len();
        let padded = outputs.div_ceil(PANEL) * PANEL;
        let mut panels = vec![0i8; padded * inputs];
        let mut scales = vec![1f32; padded];
        for (r, row) in weights.chunks_exact(inputs).enumerate() {
            let (q, scale) = quantize(row);
            scales[r] = scale;
            let (p, c) = (r / PANEL, r % PANEL);
            for (i, v) in q.enumerate() {
                panels[p * PANEL * inputs + i * PANEL + c] = v;
            }
        }
        bias.resize(padded, 0.0);
        Linear {
            panels,
            scales,
            bias,
            inputs,
            outputs,
        }
    }

    /// `x` (`n` rows of `inputs`) times this layer's weights, plus the
    /// bias: `n` rows of `outputs`. Panels are split over the pool's
    /// threads, so each thread reads only its share of the weights.
    ///
    /// Tokens are read from `x` as they are, four rows at a time, and
    /// each unit writes its outputs token by token, so nothing is
    /// transposed on the way in or out: on a 160-token document the two
    /// transpositions this replaced were a tenth of the encoder's time.
    pub(super) fn apply(&self, x: &[f32], n: usize) -> Vec<f32> {
        let width = PART * PANEL;
        let units = self.scales.len().div_ceil(width);
        let mut by_unit = vec![0f32; units * n * width];
        by_unit
            .par_chunks_mut(n * width)
            .enumerate()
            .for_each(|(u, out)| {
                pulp::Arch::new().dispatch(Products {
                    layer: self,
                    x,
                    n,
                    first: u * PART,
                    out,
                });
            });
        let mut y = vec![0f32; n * self.outputs];
        for (u, unit) in by_unit.chunks_exact(n * width).enumerate() {
            let cols = u * width..self.outputs.min((u + 1) * width);
            for (row, from) in y
                .chunks_exact_mut(self.outputs)
                .zip(unit.chunks_exact(width))
            {
                row[cols.clone()].copy_from_slice(&from[..cols.len()]);
            }
        }
        y
    }
}

/// One unit of [`Linear::apply`]: up to [`PART`] panels from `first` on,
/// against every token, written token by token (`PART × PANEL` values
/// each) into `out`, scaled and with the bias added. Compiled once per
/// instruction set by [`pulp::Arch::dispatch`]: the build's SSE2 baseline
/// has no fused multiply-add and half the lanes.
struct Products<'a> {
    layer: &'a Linear,
    x: &'a [f32],
    n: usize,
    first: usize,
    out: &'a mut [f32],
}

impl pulp::WithSimd for Products<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(mut self, simd: S) -> Self::Output {
        let inputs = self.layer.inputs;
        let panels = PART.min(self.layer.scales.len() / PANEL - self.first);
        // A long text's panels are widened to `f32` once, for every group
        // of tokens to read: a 160-token document had 40 groups of four,
        // and widening the weights again for each took a seventh of its
        // time. A query's tokens widen them as they go: storing and
        // reading back a widened panel cost it more than it saved
        // (BENCHMARKS.md, 2026-12-01). Filled, not zeroed first.
        let once = self.n > WIDEN_UP_TO;
        let mut wide: Vec<f32> = Vec::with_capacity(if once { PANEL * inputs } else { 0 });
        for k in 0..panels {
            let p = self.first + k;
            let q = &self.layer.panels[p * PANEL * inputs..(p + 1) * PANEL * inputs];
            let (q, _) = q.as_chunks::<PANEL>();
            if once {
                wide.clear();
                wide.extend(q.iter().flatten().map(|v| f32::from(*v)));
            }
            let weights = if once {
                Weights::Widened(wide.as_chunks::<PANEL>().0)
            } else {
                Weights::AsTheyGo(q)
            };
            let mut t0 = 0;
            while t0 < self.n {
                let size = group_size(S::F32_LANES, self.n - t0);
                t0 += self.group_of(simd, size, t0, k, weights);
            }
        }
    }
}

/// The most tokens a group takes where a panel row is `lanes` wide.
fn most_tokens(lanes: usize) -> usize {
    if lanes >= PANEL { WIDE_TOKENS } else { TOKENS }
}

/// How many tokens the next group takes when `left` remain: all of them
/// when they fit one group. Groups were four tokens, the last padded
/// with zeros: a 13-piece query computed 16 tokens, a padded one costing
/// what a real one does, and on AVX-512 each weight widened served four
/// multiply-adds where it can serve sixteen. A query embeds in about a
/// fifth less time (0.78 of it, BENCHMARKS.md, 2026-12-02).
fn group_size(lanes: usize, left: usize) -> usize {
    left.min(most_tokens(lanes))
}

/// A panel's weights input by input, as a group reads them.
#[derive(Clone, Copy)]
enum Weights<'w> {
    /// Widened to `f32` once for every group.
    Widened(&'w [[f32; PANEL]]),
    /// In 8 bits, widened as each group reads them.
    AsTheyGo(&'w [[i8; PANEL]]),
}

impl Products<'_> {
    /// [`Products::products`] for a group of `size` tokens (1 to
    /// [`WIDE_TOKENS`]).
    #[inline(always)]
    fn group_of<S: pulp::Simd>(
        &mut self,
        simd: S,
        size: usize,
        t0: usize,
        k: usize,
        weights: Weights<'_>,
    ) -> usize {
        macro_rules! sizes {
            ($($t:literal)*) => {
                match size {
                    $($t => self.products::<S, $t>(simd, t0, k, weights),)*
                    _ => self.products::<S, 16>(simd, t0, k, weights),
                }
            };
        }
        const { assert!(WIDE_TOKENS == 16, "one arm of `sizes!` for each group size") };
        sizes!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    }

    /// The products of panel `first + k` with the `T` tokens from `t0`
    /// on, written into `out`; returns `T`.
    #[inline(always)]
    fn products<S: pulp::Simd, const T: usize>(
        &mut self,
        simd: S,
        t0: usize,
        k: usize,
        weights: Weights<'_>,
    ) -> usize {
        let inputs = self.layer.inputs;
        let width = PART * PANEL;
        let p = self.first + k;
        let scales = &self.layer.scales[p * PANEL..(p + 1) * PANEL];
        let bias = &self.layer.bias[p * PANEL..(p + 1) * PANEL];
        let x = &self.x[t0 * inputs..(t0 + T) * inputs];
        let acc = match weights {
            Weights::Widened(w) => {
                let w = &w[..inputs];
                group::<S, T>(simd, x, inputs, |i| w[i])
            }
            Weights::AsTheyGo(q) => {
                let q = &q[..inputs];
                group::<S, T>(simd, x, inputs, |i| q[i].map(f32::from))
            }
        };
        for (t, acc) in acc.iter().enumerate() {
            let mut sums = [0f32; PANEL];
            let (sv, _) = S::as_mut_simd_f32s(&mut sums);
            sv.copy_from_slice(&acc[..sv.len()]);
            let out = &mut self.out[(t0 + t) * width + k * PANEL..][..PANEL];
            for (((o, s), scale), b) in out.iter_mut().zip(sums).zip(scales).zip(bias) {
                *o = s * scale + b;
            }
        }
        T
    }
}

/// Tokens up to which a panel's weights are widened as they are read
/// rather than once beforehand.
const WIDEN_UP_TO: usize = 16;

/// The sums of `T` tokens (the `T` rows of `x`, each `inputs` long)
/// against one panel, its weights given input by input by `weight`:
/// [`PANEL`] outputs a token, as vectors (all but the first
/// `PANEL / lanes` are unused). Each output is summed input by input in
/// order, whatever `T`, so the size of a group changes no bit of a
/// product.
#[inline(always)]
fn group<S: pulp::Simd, const T: usize>(
    simd: S,
    x: &[f32],
    inputs: usize,
    weight: impl Fn(usize) -> [f32; PANEL],
) -> [[S::f32s; PANEL]; T] {
    // Vectors per panel row: two on AVX2, one on AVX-512 (pulp's widest,
    // as wide as a panel), sixteen without SIMD.
    let vectors = PANEL / S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; PANEL]; T];
    let rows: [&[f32]; T] = std::array::from_fn(|t| &x[t * inputs..(t + 1) * inputs]);
    for i in 0..inputs {
        let w = weight(i);
        let (wv, _) = S::as_simd_f32s(&w);
        for (acc, row) in acc.iter_mut().zip(rows) {
            let xv = simd.splat_f32s(row[i]);
            for c in 0..vectors {
                acc[c] = simd.mul_add_e_f32s(xv, wv[c], acc[c]);
            }
        }
    }
    acc
}
