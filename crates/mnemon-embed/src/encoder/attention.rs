//! Self-attention of one text, every head, compiled per instruction set.
//!
//! Written as plain loops whose innermost one runs along a contiguous row
//! (the keys of a head are transposed first, so a query's scores against
//! all keys build up one dimension at a time), which the compiler turns
//! into vector code at the instruction set [`pulp::Arch::dispatch`]
//! picks. Each dot product was a sum over 32 values in order, one add
//! waiting on the last: on a 160-token document, attention took over
//! two fifths of the encoder's time, more than all its matrix products.
//! The scores are the same sums in the same order, so the same values.

use super::exp_negative;

/// `context = softmax(q kᵀ · scale) v`, head by head, for `n` tokens of
/// `hidden` values (`heads` heads of `hidden / heads` dimensions each,
/// side by side in a row). `context` starts at zero.
pub(super) struct Attention<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
    pub context: &'a mut [f32],
    pub n: usize,
    pub hidden: usize,
    pub heads: usize,
}

impl pulp::WithSimd for Attention<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Self::Output {
        let (n, h) = (self.n, self.hidden);
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        // One head's keys, dimension by dimension: `keys[c * n + j]` is
        // dimension `c` of token `j`.
        let mut keys = vec![0f32; d * n];
        let mut weights = vec![0f32; n];
        for head in 0..self.heads {
            let cols = head * d..(head + 1) * d;
            for (j, row) in self.k.chunks_exact(h).enumerate() {
                for (c, value) in row[cols.clone()].iter().enumerate() {
                    keys[c * n + j] = *value;
                }
            }
            for (i, q) in self.q.chunks_exact(h).enumerate() {
                weights.fill(0.0);
                for (qc, keys) in q[cols.clone()].iter().zip(keys.chunks_exact(n)) {
                    for (w, k) in weights.iter_mut().zip(keys) {
                        *w += qc * k;
                    }
                }
                // Loops of their own for what runs along the row and for
                // the two sums, which must go in order: in one loop, the
                // sums kept the exponentials from running in vectors.
                for w in &mut weights {
                    *w *= scale;
                }
                let max = weights.iter().fold(f32::NEG_INFINITY, |m, w| m.max(*w));
                for w in &mut weights {
                    *w = exp_negative(*w - max);
                }
                let sum: f32 = weights.iter().sum();
                let out = &mut self.context[i * h..][cols.clone()];
                for (w, v) in weights.iter().zip(self.v.chunks_exact(h)) {
                    let w = w / sum;
                    for (o, a) in out.iter_mut().zip(&v[cols.clone()]) {
                        *o += w * a;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain formula, one dot product at a time, with `f32::exp`.
    fn reference(q: &[f32], k: &[f32], v: &[f32], n: usize, h: usize, heads: usize) -> Vec<f32> {
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut context = vec![0f32; n * h];
        for head in 0..heads {
            let cols = head * d..(head + 1) * d;
            for i in 0..n {
                let qi = &q[i * h..][cols.clone()];
                let w: Vec<f32> = (0..n)
                    .map(|j| {
                        let kj = &k[j * h..][cols.clone()];
                        qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale
                    })
                    .collect();
                let max = w.iter().fold(f32::NEG_INFINITY, |m, w| m.max(*w));
                let e: Vec<f32> = w.iter().map(|w| (w - max).exp()).collect();
                let sum: f32 = e.iter().sum();
                for (j, e) in e.iter().enumerate() {
                    for c in cols.clone() {
                        context[i * h + c] += e / sum * v[j * h + c];
                    }
                }
            }
        }
        context
    }

    proptest::proptest! {
        /// Any number of tokens and heads: the same as the formula
        /// computed one dot product at a time, to float precision.
        #[test]
        fn attention_is_the_softmax_of_scaled_scores_times_the_values(
            n in 1usize..40,
            heads in 1usize..5,
            d in 1usize..20,
            seed in proptest::prelude::any::<u64>(),
        ) {
            let h = heads * d;
            let mut noise = super::super::tests::noise(seed);
            let mut next = move || noise() * 3.0;
            let q: Vec<f32> = (0..n * h).map(|_| next()).collect();
            let k: Vec<f32> = (0..n * h).map(|_| next()).collect();
            let v: Vec<f32> = (0..n * h).map(|_| next()).collect();
            let mut context = vec![0f32; n * h];
            pulp::Arch::new().dispatch(Attention {
                q: &q,
                k: &k,
                v: &v,
                context: &mut context,
                n,
                hidden: h,
                heads,
            });
            let want = reference(&q, &k, &v, n, h, heads);
            for (i, (got, want)) in context.iter().zip(&want).enumerate() {
                proptest::prop_assert!(
                    (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "value {i}: {got} against {want}"
                );
            }
        }
    }
}
