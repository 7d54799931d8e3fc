//! The encoder that embeds documents and queries: BERT, with every
//! weight matrix in 8-bit integers (one scale per output row) and
//! activations in `f32`, one text at a time.
//!
//! Why its own encoder and not a tensor library's: a query is a few word
//! pieces, so each matrix product reads a whole weight matrix for a
//! handful of tokens. Through candle that was 42 MB of `f32` weights and
//! the set-up of some hundred small operations per query; here the weights
//! are a quarter of the bytes, widened to `f32` as they are read (once per
//! panel for a long text, see `linear.rs`), and the whole pass allocates a
//! few buffers per layer (a query went from 6.0 to 3.3 ms). Documents go
//! through it too: one text at a time wastes nothing on padding, and with
//! attention in vector code (`attention.rs`) it embeds about 1.45 times
//! as many texts a second as candle's padded `f32` batches did; a process
//! keeps one 23 MB copy of the model instead of 90 MB of `f32` beside it
//! (BENCHMARKS.md).
//!
//! Weight-only quantization keeps a vector within a cosine of 0.995 of the
//! `f32` model's (0.9995 on average; `tests/local.rs` compares with vectors
//! recorded from candle's `f32` BERT), and recall was the same to the
//! third decimal, so vectors stored before still meet new ones in one
//! space.

use crate::safetensors::Safetensors;
use serde::Deserialize;

/// What the encoder needs from `config.json`.
#[derive(Debug, Deserialize)]
pub(crate) struct Shape {
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default = "default_act")]
    hidden_act: String,
    #[serde(default = "default_position")]
    position_embedding_type: String,
    #[serde(default)]
    model_type: Option<String>,
}

fn default_eps() -> f64 {
    1e-12
}
fn default_act() -> String {
    "gelu".into()
}
fn default_position() -> String {
    "absolute".into()
}

/// Rows of `width` values in 8 bits, each row at its own scale: the
/// word-piece table, of which a query reads a few rows.
struct Table {
    values: Vec<i8>,
    scales: Vec<f32>,
    width: usize,
}

/// The 8-bit values of `row` and the scale that brings them back.
fn quantize(row: &[f32]) -> (impl Iterator<Item = i8> + '_, f32) {
    let max = row.iter().fold(0f32, |m, w| m.max(w.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let inverse = 1.0 / scale;
    // Half away from zero, then truncated: `f32::round` is a library call
    // on the x86-64 baseline, and a model has millions of weights to load.
    let q = row.iter().map(move |w| {
        let v = w * inverse;
        ((v + 0.5f32.copysign(v)) as i32).clamp(-127, 127) as i8
    });
    (q, scale)
}

impl Table {
    fn with_capacity(rows: usize, width: usize) -> Table {
        Table {
            values: Vec::with_capacity(rows * width),
            scales: Vec::with_capacity(rows),
            width,
        }
    }

    /// Appends whole rows.
    fn extend(&mut self, weights: &[f32]) {
        for row in weights.chunks_exact(self.width) {
            let (q, scale) = quantize(row);
            self.values.extend(q);
            self.scales.push(scale);
        }
    }

    fn rows(&self) -> usize {
        self.scales.len()
    }

    fn row(&self, r: usize, into: &mut [f32]) {
        let s = self.scales[r];
        let from = &self.values[r * self.width..(r + 1) * self.width];
        for (o, v) in into.iter_mut().zip(from) {
            *o = f32::from(*v) * s;
        }
    }
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Norm {
    /// Layer norm of each row of `x` in place.
    fn apply(&self, x: &mut [f32], eps: f32) {
        let d = self.weight.len();
        for row in x.chunks_exact_mut(d) {
            let mean = row.iter().sum::<f32>() / d as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / d as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// A BERT encoder for one text at a time, in 8-bit weights.
pub(crate) struct Encoder {
    words: Table,
    activation: Activation,
    positions: Vec<f32>,
    types: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    eps: f32,
}

/// Why the encoder could not be built from a model's files.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unsupported {
    #[error("{0}")]
    Shape(String),
    #[error("weight {name}: {reason}")]
    Weight { name: String, reason: String },
}

struct Weights<'a> {
    file: &'a Safetensors,
    prefix: String,
}

impl Weights<'_> {
    fn fail(&self, name: &str) -> impl Fn(String) -> Unsupported + '_ {
        let full = format!("{}{name}", self.prefix);
        move |reason| Unsupported::Weight {
            name: full.clone(),
            reason,
        }
    }

    fn get(&self, name: &str, len: usize) -> Result<Vec<f32>, Unsupported> {
        self.file
            .read(&format!("{}{name}", self.prefix), len)
            .map_err(self.fail(name))
    }

    fn rows(&self, name: &str, outputs: usize, inputs: usize) -> Result<Linear, Unsupported> {
        let b = self.get(&format!("{name}.bias"), outputs)?;
        let w = self.get(&format!("{name}.weight"), outputs * inputs)?;
        Ok(Linear::of(&w, b, inputs))
    }

    /// A table of `rows × width`, quantized a slice at a time so its
    /// `f32` values are never all in memory (the word-piece table is half
    /// the model).
    fn table(&self, name: &str, rows: usize, width: usize) -> Result<Table, Unsupported> {
        let mut table = Table::with_capacity(rows, width);
        self.file
            .read_rows(
                &format!("{}{name}", self.prefix),
                rows * width,
                width,
                |slice| table.extend(slice),
            )
            .map_err(self.fail(name))?;
        Ok(table)
    }

    fn norm(&self, name: &str, d: usize) -> Result<Norm, Unsupported> {
        Ok(Norm {
            weight: self.get(&format!("{name}.weight"), d)?,
            bias: self.get(&format!("{name}.bias"), d)?,
        })
    }
}

impl Encoder {
    pub(crate) fn build(shape: &Shape, file: &Safetensors) -> Result<Encoder, Unsupported> {
        let activation = match shape.hidden_act.as_str() {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_approximate" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => {
                return Err(Unsupported::Shape(format!(
                    "activation {other} (gelu, gelu_new and relu are read)"
                )));
            }
        };
        if shape.position_embedding_type != "absolute" {
            return Err(Unsupported::Shape(format!(
                "position embeddings {}",
                shape.position_embedding_type
            )));
        }
        let (h, heads) = (shape.hidden_size, shape.num_attention_heads);
        if heads == 0 || h % heads != 0 {
            return Err(Unsupported::Shape(format!(
                "{h} dimensions over {heads} heads"
            )));
        }
        // Checkpoints name their weights with or without the model type
        // in front ("bert.embeddings…").
        let prefix = [String::new()]
            .into_iter()
            .chain(shape.model_type.iter().map(|m| format!("{m}.")))
            .find(|p| file.contains(&format!("{p}embeddings.word_embeddings.weight")))
            .ok_or_else(|| Unsupported::Weight {
                name: "embeddings.word_embeddings.weight".into(),
                reason: "missing".into(),
            })?;
        let w = Weights { file, prefix };
        let count = |name: &str| file.rows(&format!("{}{name}", w.prefix));
        let vocab = count("embeddings.word_embeddings.weight");
        let max_positions = count("embeddings.position_embeddings.weight");
        let words = w.table("embeddings.word_embeddings.weight", vocab, h)?;
        let positions = w.get("embeddings.position_embeddings.weight", max_positions * h)?;
        let types = w.get(
            "embeddings.token_type_embeddings.weight",
            count("embeddings.token_type_embeddings.weight") * h,
        )?;
        let embedding_norm = w.norm("embeddings.LayerNorm", h)?;
        let inner = shape.intermediate_size;
        let layers = (0..shape.num_hidden_layers)
            .map(|i| {
                let l = format!("encoder.layer.{i}");
                Ok(Layer {
                    query: w.rows(&format!("{l}.attention.self.query"), h, h)?,
                    key: w.rows(&format!("{l}.attention.self.key"), h, h)?,
                    value: w.rows(&format!("{l}.attention.self.value"), h, h)?,
                    attention_out: w.rows(&format!("{l}.attention.output.dense"), h, h)?,
                    attention_norm: w.norm(&format!("{l}.attention.output.LayerNorm"), h)?,
                    intermediate: w.rows(&format!("{l}.intermediate.dense"), inner, h)?,
                    output: w.rows(&format!("{l}.output.dense"), h, inner)?,
                    output_norm: w.norm(&format!("{l}.output.LayerNorm"), h)?,
                })
            })
            .collect::<Result<Vec<_>, Unsupported>>()?;
        Ok(Encoder {
            words,
            activation,
            positions,
            types,
            embedding_norm,
            layers,
            hidden: h,
            heads,
            eps: shape.layer_norm_eps as f32,
        })
    }

    /// The mean of the last layer over the tokens of one text (no padding,
    /// so every token counts), not yet of unit length. Runs its matrix
    /// products on the current rayon pool.
    pub(crate) fn encode(&self, ids: &[u32], type_ids: &[u32]) -> Result<Vec<f32>, String> {
        let (h, n) = (self.hidden, ids.len());
        if n == 0 {
            return Ok(vec![0.0; h]);
        }
        if n * h > self.positions.len() {
            return Err(format!(
                "{n} word pieces; the model reads at most {}",
                self.positions.len() / h
            ));
        }
        let mut x = vec![0f32; n * h];
        for (t, (row, (&id, &ty))) in x
            .chunks_exact_mut(h)
            .zip(ids.iter().zip(type_ids))
            .enumerate()
        {
            let id = id as usize;
            if id >= self.words.rows() || (ty as usize + 1) * h > self.types.len() {
                return Err(format!("word piece {id} of type {ty} is not in the model"));
            }
            self.words.row(id, row);
            let pos = &self.positions[t * h..(t + 1) * h];
            let ty = &self.types[ty as usize * h..(ty as usize + 1) * h];
            for ((v, p), y) in row.iter_mut().zip(pos).zip(ty) {
                *v += p + y;
            }
        }
        self.embedding_norm.apply(&mut x, self.eps);
        for layer in &self.layers {
            x = self.layer(layer, x, n);
        }
        let mut mean = vec![0f32; h];
        for row in x.chunks_exact(h) {
            for (m, v) in mean.iter_mut().zip(row) {
                *m += v;
            }
        }
        for m in &mut mean {
            *m /= n as f32;
        }
        Ok(mean)
    }

    fn layer(&self, l: &Layer, x: Vec<f32>, n: usize) -> Vec<f32> {
        let h = self.hidden;
        let q = l.query.apply(&x, n);
        let k = l.key.apply(&x, n);
        let v = l.value.apply(&x, n);
        let mut context = vec![0f32; n * h];
        pulp::Arch::new().dispatch(attention::Attention {
            q: &q,
            k: &k,
            v: &v,
            context: &mut context,
            n,
            hidden: h,
            heads: self.heads,
        });
        let mut a = l.attention_out.apply(&context, n);
        for (a, x) in a.iter_mut().zip(&x) {
            *a += x;
        }
        l.attention_norm.apply(&mut a, self.eps);
        let mut inner = l.intermediate.apply(&a, n);
        match self.activation {
            Activation::Gelu => pulp::Arch::new().dispatch(Gelu(&mut inner)),
            Activation::GeluTanh => inner.iter_mut().for_each(|v| *v = gelu_tanh(*v)),
            Activation::Relu => inner.iter_mut().for_each(|v| *v = v.max(0.0)),
        }
        let mut out = l.output.apply(&inner, n);
        for (o, a) in out.iter_mut().zip(&a) {
            *o += a;
        }
        l.output_norm.apply(&mut out, self.eps);
        out
    }
}

/// GELU over a layer's values, in place: `x/2 · (1 + erf(x/√2))`, as
/// these models were trained with (not the tanh approximation). Written
/// without calls so it vectorises at the instruction set
/// [`pulp::Arch::dispatch`] picks; with `libm`'s `erff` it was an eighth
/// of a query's time.
struct Gelu<'a>(&'a mut [f32]);

/// The layers' activation, as `config.json`'s `hidden_act` names it.
#[derive(Debug, Clone, Copy)]
enum Activation {
    /// The erf form, all-MiniLM-L6-v2's and bge's.
    Gelu,
    /// The tanh approximation some BERTs were trained with.
    GeluTanh,
    Relu,
}

fn gelu_tanh(x: f32) -> f32 {
    const C: f32 = 0.797_884_6; // √(2/π)
    0.5 * x * (1.0 + (C * (x + 0.044_715 * x * x * x)).tanh())
}

impl pulp::WithSimd for Gelu<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Self::Output {
        for v in self.0.iter_mut() {
            *v = gelu(*v);
        }
    }
}

#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Abramowitz and Stegun 7.1.26: absolute error below 1.5e-7.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152_1) * t + 1.421_413_8) * t - 0.284_496_74) * t
        + 0.254_829_6)
        * t;
    let y = 1.0 - poly * exp_negative(-a * a);
    if x < 0.0 { -y } else { y }
}

/// `e^v` for `v ≤ 0`, to about 2e-7 relative: `2^k · e^r` with
/// `|r| ≤ ln 2 / 2` and a degree-6 Taylor polynomial for `e^r`. Below
/// -87 the result is 0 (it would be subnormal).
#[inline(always)]
fn exp_negative(v: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let v = v.max(-87.0);
    let k = (v * std::f32::consts::LOG2_E).round();
    let r = (v - k * LN2_HI) - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let scale = f32::from_bits(((k as i32 + 127) as u32) << 23);
    p * scale
}

mod attention;
mod linear;

use linear::Linear;

#[cfg(test)]
mod tests;
