//! How far ahead of a baseline mnemon is, and how sure that is.
//!
//! A development part of a few hundred questions moves by a hundredth when
//! one question's evidence turn falls out of the budget, and a choice that
//! wins by that much on one set and loses by it on another is no win. A
//! lead is therefore reported with an interval: the questions are drawn
//! again with replacement ([`RESAMPLES`] times, paired, so both methods
//! answer the same draw), and the middle 95 % of the mean differences is
//! where the lead lies. The draw is seeded, so a report is the same on
//! every run.
//!
//! Questions of one conversation are not independent (the same turns
//! answer several), so the interval, if anything, is too narrow; drawing
//! whole conversations would be right, but the public sets have five to
//! twenty of them per part, too few to draw from.

use serde::Serialize;

/// Draws of the questions per interval: the 2.5th and 97.5th percentiles
/// of 2,000 means move by well under a thousandth between seeds on sets of
/// a few hundred questions.
pub const RESAMPLES: usize = 2_000;

/// mnemon's lead over a baseline on one measure at one budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Lead {
    /// Mean of mnemon's score minus the baseline's, question by question.
    pub mean: f64,
    /// Lower end of the 95 % interval of the mean.
    pub low: f64,
    /// Upper end of the 95 % interval of the mean.
    pub high: f64,
}

/// The lead of `ours` over `theirs`, paired by position (question `i` of
/// both). Lists of unequal length are paired as far as the shorter goes.
pub fn lead(ours: &[f64], theirs: &[f64]) -> Lead {
    let diffs: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| a - b).collect();
    let n = diffs.len();
    if n == 0 {
        return Lead {
            mean: 0.0,
            low: 0.0,
            high: 0.0,
        };
    }
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let mut rng = SplitMix(0x6d6e_656d_6f6e);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| diffs[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((RESAMPLES - 1) as f64 * q).round() as usize];
    Lead {
        mean,
        low: at(0.025),
        high: at(0.975),
    }
}

/// SplitMix64: a few lines, fast, and good enough to draw questions; the
/// crate needs no random-number dependency for it.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0), by the high half of a 128-bit product
    /// rather than a remainder, which would favour small values.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_scores_lead_by_nothing_and_a_constant_gap_is_certain() {
        let ours = [1.0, 0.5, 0.0, 1.0];
        assert_eq!(
            lead(&ours, &ours),
            Lead {
                mean: 0.0,
                low: 0.0,
                high: 0.0
            }
        );
        let theirs = ours.map(|x| x - 0.25);
        let l = lead(&ours, &theirs);
        for v in [l.mean, l.low, l.high] {
            assert!((v - 0.25).abs() < 1e-12, "{l:?}");
        }
        assert_eq!(lead(&[], &[]).mean, 0.0);
    }

    #[test]
    fn a_lead_of_one_question_in_a_hundred_is_not_told_apart_from_none() {
        // mnemon finds one evidence turn the baseline misses, and the
        // baseline another: level, with an interval on both sides of 0.
        let mut ours = vec![0.5; 100];
        let mut theirs = ours.clone();
        ours[3] = 1.0;
        ours[7] = 1.0;
        theirs[50] = 1.0;
        let l = lead(&ours, &theirs);
        assert!((l.mean - 0.005).abs() < 1e-12, "{l:?}");
        assert!(l.low < 0.0 && l.high > 0.0, "{l:?}");
        // Ahead on forty questions of a hundred: clearly ahead.
        let ours: Vec<f64> = (0..100).map(|i| if i < 40 { 1.0 } else { 0.5 }).collect();
        let theirs = vec![0.5; 100];
        let l = lead(&ours, &theirs);
        assert!(l.low > 0.1 && l.high < 0.3, "{l:?}");
    }

    #[test]
    fn the_draw_is_uniform() {
        let mut rng = SplitMix(7);
        let mut count = [0usize; 5];
        for _ in 0..50_000 {
            count[rng.below(5)] += 1;
        }
        for c in count {
            assert!((9_500..10_500).contains(&c), "{count:?}");
        }
    }

    proptest::proptest! {
        // Each case draws 4,000 means of up to 200 questions.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn the_interval_is_seeded_ordered_and_within_the_differences(
            pairs in proptest::collection::vec((0.0f64..=1.0, 0.0f64..=1.0), 1..200),
        ) {
            let (ours, theirs): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            let l = lead(&ours, &theirs);
            let again = lead(&ours, &theirs);
            proptest::prop_assert_eq!(l, again, "seeded: the same every run");
            let diffs: Vec<f64> = pairs.iter().map(|(a, b)| a - b).collect();
            let least = diffs.iter().copied().fold(f64::INFINITY, f64::min);
            let most = diffs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let eps = 1e-9;
            proptest::prop_assert!(least - eps <= l.low && l.low <= l.high && l.high <= most + eps, "{:?}", l);
            let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
            proptest::prop_assert!((l.mean - mean).abs() < eps);
        }
    }
}
