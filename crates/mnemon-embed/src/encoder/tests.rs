use super::linear::Linear;
use super::*;

#[test]
fn gelu_is_the_erf_form_to_float_precision() {
    let mut worst = 0f32;
    for i in -200_000..=200_000 {
        let x = i as f32 / 10_000.0;
        let exact = 0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2));
        worst = worst.max((gelu(x) - exact).abs() / exact.abs().max(1.0));
    }
    assert!(worst < 1e-6, "worst error {worst}");
}

/// The tanh form against the same formula in `f64`, and within its
/// known distance (about 5e-4) of the erf form it approximates.
#[test]
fn gelu_tanh_is_the_tanh_approximation() {
    let mut worst = 0f64;
    for i in -80_000..=80_000 {
        let x = i as f32 / 10_000.0;
        let xd = f64::from(x);
        let exact = 0.5
            * xd
            * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (xd + 0.044_715 * xd.powi(3))).tanh());
        worst = worst.max((f64::from(gelu_tanh(x)) - exact).abs() / exact.abs().max(1.0));
        assert!((gelu_tanh(x) - gelu(x)).abs() < 1e-3, "{x}");
    }
    assert!(worst < 1e-6, "worst error {worst}");
}

#[test]
fn exp_of_negative_values_is_close_to_std() {
    for i in 0..=87_000 {
        let v = -(i as f32) / 1_000.0;
        let (got, want) = (exp_negative(v), v.exp());
        assert!(
            (got - want).abs() <= want * 1e-6 + 1e-37,
            "{v}: {got} against {want}"
        );
    }
}

/// Values in [-1, 1) from `seed`, the same on every run (xorshift).
pub(super) fn noise(seed: u64) -> impl FnMut() -> f32 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

/// A layer's weights and bias and `n` tokens of input, from `seed`.
fn random_layer(
    inputs: usize,
    outputs: usize,
    n: usize,
    seed: u64,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut next = noise(seed);
    let weights = (0..inputs * outputs).map(|_| next()).collect();
    let bias = (0..outputs).map(|_| next()).collect();
    let x = (0..n * inputs).map(|_| next() * 4.0).collect();
    (weights, bias, x)
}

proptest::proptest! {
    /// Any shape: tokens not a whole group, outputs not whole panels,
    /// inputs not whole vectors, and as few tokens as a query (weights
    /// widened as they are read) or as many as a document (widened
    /// once). The reference multiplies the same 8-bit weights back to
    /// `f32` one product at a time, so only the order of the sums differs.
    #[test]
    fn a_layer_is_its_weights_times_the_input_plus_bias(
        inputs in 1usize..70,
        outputs in 1usize..70,
        n in 1usize..40,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let (weights, bias, x) = random_layer(inputs, outputs, n, seed);
        let layer = Linear::of(&weights, bias.clone(), inputs);
        let y = layer.apply(&x, n);
        proptest::prop_assert_eq!(y.len(), n * outputs);
        let mut w = vec![0f32; inputs];
        for r in 0..outputs {
            let (q, scale) = quantize(&weights[r * inputs..(r + 1) * inputs]);
            for (w, v) in w.iter_mut().zip(q) {
                *w = f32::from(v) * scale;
            }
            for t in 0..n {
                let xs = &x[t * inputs..(t + 1) * inputs];
                let want: f32 = w.iter().zip(xs).map(|(w, x)| w * x).sum::<f32>() + bias[r];
                let size: f32 = w.iter().zip(xs).map(|(w, x)| (w * x).abs()).sum::<f32>() + bias[r].abs();
                let got = y[t * outputs + r];
                proptest::prop_assert!(
                    (got - want).abs() <= 1e-5 * size + 1e-6,
                    "token {t}, output {r}: {got} against {want}"
                );
            }
        }
    }
}

proptest::proptest! {
    /// A token's products are the same bits whatever group it is computed
    /// in (alone, or among up to sixteen): each output is summed input by
    /// input in one order, so documents and queries embedded before the
    /// groups changed meet new vectors exactly.
    #[test]
    fn a_token_has_the_same_products_alone_and_in_a_group(
        inputs in 1usize..70,
        outputs in 1usize..40,
        n in 1usize..40,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let (weights, bias, x) = random_layer(inputs, outputs, n, seed);
        let layer = Linear::of(&weights, bias, inputs);
        let together = layer.apply(&x, n);
        for t in 0..n {
            let alone = layer.apply(&x[t * inputs..(t + 1) * inputs], 1);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(
                bits(&together[t * outputs..(t + 1) * outputs]),
                bits(&alone),
                "token {} of {}", t, n
            );
        }
    }
}

#[test]
fn eight_bits_hold_each_weight_to_half_a_step_of_its_row() {
    let row = [0.5, -0.25, 0.0, 0.125, -0.5, 0.3];
    let (q, scale) = quantize(&row);
    assert_eq!(scale, 0.5 / 127.0);
    for (v, w) in q.zip(row) {
        assert!((f32::from(v) * scale - w).abs() <= scale / 2.0 + 1e-7);
    }
    let (mut q, scale) = quantize(&[0.0; 4]);
    assert_eq!(scale, 1.0);
    assert!(q.all(|v| v == 0));
}
