//! The estimate for models whose tokenizer is not public.

use super::TokenCounter;

/// `ceil(chars / 4 × calibration)`.
///
/// Four characters per token is the usual rule for English; the calibration
/// factor lets mnemon correct it from the prompt-token counts a provider
/// reports (a factor of 1.1 means the provider counted 10 % more than the
/// rule). It is never exact, and says so.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heuristic {
    chars_per_token: f64,
    calibration: f64,
}

impl Default for Heuristic {
    fn default() -> Self {
        Heuristic {
            chars_per_token: 4.0,
            calibration: 1.0,
        }
    }
}

impl Heuristic {
    /// `calibration` must be finite and positive; anything else falls back to 1.
    pub fn with_calibration(calibration: f64) -> Self {
        let calibration = if calibration.is_finite() && calibration > 0.0 {
            calibration
        } else {
            1.0
        };
        Heuristic {
            calibration,
            ..Heuristic::default()
        }
    }

    pub fn calibration(&self) -> f64 {
        self.calibration
    }

    fn tokens_for_chars(&self, chars: usize) -> usize {
        if chars == 0 {
            return 0;
        }
        (chars as f64 / self.chars_per_token * self.calibration).ceil() as usize
    }
}

impl TokenCounter for Heuristic {
    fn name(&self) -> &str {
        "heuristic"
    }

    fn is_exact(&self) -> bool {
        false
    }

    fn count(&self, text: &str) -> usize {
        self.tokens_for_chars(text.chars().count())
    }

    fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        // The count grows with every character, so stop reading as soon as
        // the characters seen so far already need more than `limit`.
        let mut chars = 0usize;
        for _ in text.chars() {
            chars += 1;
            if self.tokens_for_chars(chars) > limit {
                return None;
            }
        }
        Some(self.tokens_for_chars(chars))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn four_chars_a_token_rounded_up() {
        let h = Heuristic::default();
        assert_eq!(h.count(""), 0);
        assert_eq!(h.count("abc"), 1);
        assert_eq!(h.count("abcd"), 1);
        assert_eq!(h.count("abcde"), 2);
        // Characters, not bytes: four CJK characters are one token here.
        assert_eq!(h.count("日本語だ"), 1);
    }

    #[test]
    fn calibration_scales_and_rejects_nonsense() {
        assert_eq!(Heuristic::with_calibration(2.0).count("abcdefgh"), 4);
        assert_eq!(Heuristic::with_calibration(f64::NAN).calibration(), 1.0);
        assert_eq!(Heuristic::with_calibration(-3.0).calibration(), 1.0);
    }

    proptest! {
        #[test]
        fn count_up_to_agrees_with_count(text in ".{0,200}", limit in 0usize..80, cal in 0.5f64..2.0) {
            let h = Heuristic::with_calibration(cal);
            let n = h.count(&text);
            prop_assert_eq!(h.count_up_to(&text, limit), (n <= limit).then_some(n));
        }
    }
}
