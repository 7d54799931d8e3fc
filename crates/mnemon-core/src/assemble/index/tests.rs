use super::*;
use crate::runtime::InOrder;

/// Work cut in `n` parts, run one after another in reverse order: what
/// threads finishing in any order would give, without threads.
#[derive(Debug)]
struct Parts(usize);

impl Runtime for Parts {
    fn pause(&self, _d: std::time::Duration) {}
    fn all(&self, jobs: Vec<Job<'_>>) {
        for job in jobs.into_iter().rev() {
            job();
        }
    }
    fn parallelism(&self) -> usize {
        self.0
    }
}

/// A pseudo-random value in [-1, 1).
fn noise(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 33) % 2_000) as f32 / 1_000.0 - 1.0
}

fn add(flat: &mut Flat, row: i64, v: &[f32]) {
    flat.add(StoredVector {
        source: HitSource::Message,
        row,
        chunk: 0,
        vector: Quantized::of(v),
    });
}

#[test]
fn past_the_exact_size_the_close_records_are_all_found_in_order() {
    // Noise, and among it records close to the query (cosine 0.45 to
    // 0.95), as a question's answers stand out among unrelated turns.
    let dims = 384;
    let mut seed = 11u64;
    let query: Vec<f32> = (0..dims).map(|_| noise(&mut seed)).collect();
    let mut flat = Flat::default();
    let n = EXACT_UP_TO * 3;
    let mut planted = Vec::new();
    for row in 0..n as i64 {
        let mut v: Vec<f32> = (0..dims).map(|_| noise(&mut seed)).collect();
        if row % 601 == 0 {
            // query·w + noise·(1 - w): closer the larger w.
            let w = 0.5 + (row % 7) as f32 * 0.07;
            for (x, q) in v.iter_mut().zip(&query) {
                *x = q * w + *x * (1.0 - w);
            }
            planted.push(row);
        }
        add(&mut flat, row, &v);
    }
    assert!(flat.keys.len() > EXACT_UP_TO);
    let k = planted.len();
    let exact: Vec<(HitSource, i64, f32)> = {
        let q = Quantized::of(&query);
        let mut all = flat.scan(&q, k, &InOrder);
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        all.iter()
            .map(|(s, i)| (flat.keys[*i].0, flat.keys[*i].1, *s))
            .collect()
    };
    let found = flat.nearest(&query, k, &InOrder);
    assert_eq!(found, exact, "the same records, scores and order");
    assert_eq!(
        flat.nearest(&query, k, &Parts(3)),
        exact,
        "the same, the work cut in parts run in another order"
    );
    let mut rows: Vec<i64> = found.iter().map(|f| f.1).collect();
    rows.sort_unstable();
    assert_eq!(rows, planted);
}

#[test]
fn up_to_the_exact_size_every_vector_is_scored() {
    let mut seed = 5u64;
    let mut flat = Flat::default();
    for row in 0..2_000 {
        let v: Vec<f32> = (0..48).map(|_| noise(&mut seed)).collect();
        add(&mut flat, row, &v);
    }
    let q = Quantized::of(&(0..48).map(|_| noise(&mut seed)).collect::<Vec<f32>>());
    for want in [1, 50, 1_999] {
        let mut a = flat.search(&q, want, &InOrder);
        let mut b = flat.scan(&q, want, &InOrder);
        a.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        b.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        assert_eq!(a, b, "want {want}");
    }
}

#[test]
fn signs_are_bits_of_the_positive_values() {
    let mut values = vec![0i8; 70];
    values[0] = 1;
    values[63] = 5;
    values[64] = -3;
    values[69] = 127;
    assert_eq!(signs_of(&values), vec![1 | 1 << 63, 1 << 5]);
    let flat_q = signs_of(&[1, -1, 1]);
    let d = pulp::Arch::new().dispatch(Hamming {
        q: &flat_q,
        signs: &[
            signs_of(&[1, 1, 1])[0],
            signs_of(&[-1, 1, -1])[0],
            flat_q[0],
        ],
    });
    assert_eq!(d, vec![1, 3, 0]);
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
fn a_scan_cut_in_parts_finds_what_one_pass_finds() {
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
        let mut split = flat.scan(&q, want, &Parts(3));
        split.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        assert_eq!(split, all[..want].to_vec(), "want {want}");
    }
}

#[test]
fn work_in_parts_comes_back_whole_and_in_order() {
    for parts in 1..6 {
        let all = in_parts(&Parts(parts), 17, 3, |from, to| (from..to).collect());
        assert_eq!(all, (0..17).collect::<Vec<_>>(), "{parts} parts");
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
    let near = flat.nearest(&[1.0, 0.0, 0.0], 3, &InOrder);
    let rows: Vec<i64> = near.iter().map(|n| n.1).collect();
    assert_eq!(rows, [1, 2, 3]);
    assert!(near[1].2 > 0.98, "row 2 by its second chunk: {near:?}");
    // Stored again, a chunk replaces its old vector.
    add(&mut flat, 1, 0, v(-1.0, 0.0));
    let rows = |flat: &Flat| -> Vec<i64> {
        flat.nearest(&[1.0, 0.0, 0.0], 2, &InOrder)
            .iter()
            .map(|n| n.1)
            .collect()
    };
    assert_eq!(rows(&flat), [2, 3]);
    assert!(
        flat.nearest(&[1.0, 0.0], 2, &InOrder).is_empty(),
        "wrong length"
    );
    // A forgotten record takes no place among the nearest.
    flat.gone.insert((HitSource::Message, 2));
    assert_eq!(rows(&flat), [3, 1]);
}
