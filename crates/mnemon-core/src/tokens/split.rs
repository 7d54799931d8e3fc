//! Pre-tokenization: the pieces tiktoken's pattern cuts a text into before
//! any merge, so no token ever spans two pieces.
//!
//! The patterns are matched by hand rather than by a regex engine: each
//! alternative is a run of characters of a few Unicode classes, so one
//! table lookup per character and a few comparisons decide every piece,
//! where an automaton spent about half of a count. The functions below
//! follow the patterns' alternatives in order and resolve them as
//! tiktoken's backtracking engine does (the first alternative that
//! matches wins; quantifiers are greedy and give back only what the rest
//! needs). The tests check the pieces against the patterns themselves run
//! by an automaton, and the parity tests the ids against tiktoken.
//!
//! cl100k_base:
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//! | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//! o200k_base:
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```

include!(concat!(env!("OUT_DIR"), "/folds.rs"));

/// Per code point, its classes (bits below); built by `build.rs`.
static CLASSES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/classes.bin"));

/// Blocks of 128 code points up to U+10FFFF: the index's length.
const BLOCKS: usize = 0x11_0000 / 128;

/// `\p{L}`: a letter (marks are not).
const L: u8 = 1;
/// `\p{N}`.
const N: u8 = 2;
/// `\s`: Unicode White_Space.
const WS: u8 = 4;
/// o200k's upper class: `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const U: u8 = 8;
/// o200k's lower class: `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const W: u8 = 16;

fn class(c: char) -> u8 {
    let cp = c as usize;
    let at = 2 * (cp >> 7);
    let block = usize::from(u16::from_le_bytes([CLASSES[at], CLASSES[at + 1]]));
    CLASSES[2 * BLOCKS + block * 128 + (cp & 127)]
}

/// Which of tiktoken's two patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Cl100k,
    O200k,
}

/// The pieces of `text` under `pattern`, in order; together they are
/// `text`.
pub fn pieces(pattern: Pattern, text: &str) -> Pieces<'_> {
    Pieces {
        pattern,
        text,
        at: 0,
    }
}

pub struct Pieces<'t> {
    pattern: Pattern,
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        if self.at >= self.text.len() {
            return None;
        }
        let s = Scan { text: self.text };
        let end = match self.pattern {
            Pattern::Cl100k => s.cl100k(self.at),
            Pattern::O200k => s.o200k(self.at),
        };
        let piece = &self.text[self.at..end];
        self.at = end;
        Some(piece)
    }
}

struct Scan<'t> {
    text: &'t str,
}

impl Scan<'_> {
    /// The character at byte `i` (a boundary), its classes and the byte
    /// after it; `None` at the end.
    fn at(&self, i: usize) -> Option<(char, u8, usize)> {
        let b = *self.text.as_bytes().get(i)?;
        if b < 0x80 {
            let c = char::from(b);
            return Some((c, class(c), i + 1));
        }
        let c = self.text[i..].chars().next()?;
        Some((c, class(c), i + c.len_utf8()))
    }

    /// The end of the run of characters from `i` having any bit of `mask`.
    fn run(&self, mut i: usize, mask: u8) -> usize {
        while let Some((_, k, next)) = self.at(i) {
            if k & mask == 0 {
                break;
            }
            i = next;
        }
        i
    }

    /// Like [`Self::run`] for characters passing `keep`.
    fn run_of(&self, mut i: usize, keep: impl Fn(char, u8) -> bool) -> usize {
        while let Some((c, k, next)) = self.at(i) {
            if !keep(c, k) {
                break;
            }
            i = next;
        }
        i
    }

    /// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i`, if it matches.
    fn contraction(&self, i: usize) -> Option<usize> {
        let (q, _, i) = self.at(i)?;
        if q != '\'' {
            return None;
        }
        let (a, _, i) = self.at(i)?;
        if [FOLD_S, FOLD_T, FOLD_M, FOLD_D]
            .iter()
            .any(|f| f.contains(&a))
        {
            return Some(i);
        }
        let second = if FOLD_R.contains(&a) || FOLD_V.contains(&a) {
            FOLD_E
        } else if FOLD_L.contains(&a) {
            FOLD_L
        } else {
            return None;
        };
        let (b, _, i) = self.at(i)?;
        second.contains(&b).then_some(i)
    }

    /// `[^\r\n\p{L}\p{N}]`: what may stand before a word.
    fn lead(c: char, k: u8) -> bool {
        c != '\r' && c != '\n' && k & (L | N) == 0
    }

    /// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls.
    fn other(k: u8) -> bool {
        k & (WS | L | N) == 0
    }

    /// `\p{N}{1,3}` at `i`, whose character is a number.
    fn digits(&self, mut i: usize) -> usize {
        for _ in 0..3 {
            match self.at(i) {
                Some((_, k, next)) if k & N != 0 => i = next,
                _ => break,
            }
        }
        i
    }

    /// ` ?[^\s\p{L}\p{N}]+` then a run of `tail`, at `i`, if it matches.
    fn punctuation(&self, i: usize, c: char, next: usize, tail: &[char]) -> Option<usize> {
        let start = match self.at(next) {
            Some((_, k, _)) if c == ' ' && Self::other(k) => next,
            _ => i,
        };
        let (_, k, after) = self.at(start)?;
        if !Self::other(k) {
            return None;
        }
        let end = self.run_of(after, |_, k| Self::other(k));
        Some(self.run_of(end, |c, _| tail.contains(&c)))
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at `i`, whose character is whitespace:
    /// up to the run's last line break if it has one; else the run, less
    /// its last character when a word follows and it has more than one.
    fn whitespace(&self, i: usize) -> usize {
        let mut at = i;
        let mut last_break = None;
        let mut last_start = i;
        while let Some((c, k, next)) = self.at(at) {
            if k & WS == 0 {
                break;
            }
            if c == '\r' || c == '\n' {
                last_break = Some(next);
            }
            last_start = at;
            at = next;
        }
        if let Some(end) = last_break {
            return end;
        }
        if at == self.text.len() || last_start == i {
            at
        } else {
            last_start
        }
    }

    fn cl100k(&self, i: usize) -> usize {
        let Some((c, k, next)) = self.at(i) else {
            return i;
        };
        if let Some(end) = self.contraction(i) {
            return end;
        }
        if Self::lead(c, k)
            && let Some((_, k2, after)) = self.at(next)
            && k2 & L != 0
        {
            return self.run(after, L);
        }
        if k & L != 0 {
            return self.run(next, L);
        }
        if k & N != 0 {
            return self.digits(i);
        }
        if let Some(end) = self.punctuation(i, c, next, &['\r', '\n']) {
            return end;
        }
        self.whitespace(i)
    }

    /// `[U]*[W]+` from `p`, as a backtracking engine resolves it: the
    /// upper run, then the lower run after it; with no lower character
    /// after the upper run, it gives back characters until its last one
    /// that is also lower (`Lm`, `Lo`, marks) ends the match.
    fn upper_then_lower(&self, p: usize) -> Option<usize> {
        let mut q = p;
        let mut last_lower = None;
        while let Some((_, k, next)) = self.at(q) {
            if k & U == 0 {
                break;
            }
            if k & W != 0 {
                last_lower = Some(next);
            }
            q = next;
        }
        let r = self.run(q, W);
        if r > q { Some(r) } else { last_lower }
    }

    /// `[U]+[W]*` from `p`.
    fn upper_run(&self, p: usize) -> Option<usize> {
        let q = self.run(p, U);
        (q > p).then(|| self.run(q, W))
    }

    fn o200k(&self, i: usize) -> usize {
        let Some((c, k, next)) = self.at(i) else {
            return i;
        };
        // `[^\r\n\p{L}\p{N}]?` is greedy: with the lead character first,
        // then without it; each alternative exhausts both before the next.
        let starts = if Self::lead(c, k) {
            [Some(next), Some(i)]
        } else {
            [Some(i), None]
        };
        let word = starts
            .iter()
            .flatten()
            .find_map(|&p| self.upper_then_lower(p))
            .or_else(|| starts.iter().flatten().find_map(|&p| self.upper_run(p)));
        if let Some(end) = word {
            return self.contraction(end).unwrap_or(end);
        }
        if k & N != 0 {
            return self.digits(i);
        }
        if let Some(end) = self.punctuation(i, c, next, &['\r', '\n', '/']) {
            return end;
        }
        self.whitespace(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex_automata::meta::Regex;
    use regex_automata::{Anchored, Input};

    /// The patterns run by an automaton, the look-ahead `\s+(?!\S)` written
    /// as `\s+\s` with its last character given back and `\s+$`.
    fn oracle(pattern: Pattern) -> Regex {
        let body = match pattern {
            Pattern::Cl100k => {
                r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+$"
            }
            Pattern::O200k => concat!(
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+$"
            ),
        };
        Regex::new_many(&[body, r"\s+\s", r"\s+"]).unwrap()
    }

    fn oracle_pieces(re: &Regex, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let m = re
                .search(&Input::new(text).range(at..).anchored(Anchored::Yes))
                .unwrap();
            let end = if m.pattern().as_usize() == 1 {
                text[..m.end()].char_indices().next_back().unwrap().0
            } else {
                m.end()
            };
            out.push(text[at..end].to_string());
            at = end;
        }
        out
    }

    fn check(text: &str) {
        for p in [Pattern::Cl100k, Pattern::O200k] {
            let ours: Vec<String> = pieces(p, text).map(str::to_string).collect();
            assert_eq!(ours, oracle_pieces(&oracle(p), text), "{p:?}: {text:?}");
        }
    }

    #[test]
    fn whitespace_before_a_word_leaves_it_one_space() {
        let ours: Vec<&str> = pieces(Pattern::Cl100k, "a   b  \n c   ").collect();
        assert_eq!(ours, vec!["a", "  ", " b", "  \n", " c", "   "]);
    }

    #[test]
    fn the_patterns_own_corners() {
        for text in [
            "'s 'S 'ſ 're 'RE 've 'll 'LL 'd 'x 'sup I'm HELLO'S",
            "HEllo WORLD hello World ǅungla ʰello ᾈ",
            "e\u{301} \u{301}a \u{301} a\u{301}\u{301}B",
            "   word\t\tword\u{a0}word\u{3000}\u{3000}x",
            "\r\n\r\n  \n  x\n\n/path/to\n/x .,;!? ...\n",
            "12345 1,000 ٣٤٥٦ ½ Ⅻ",
            "🧑🏿‍💻 中文字 ℵ₀ Ωmega\u{200b}x",
            "end with spaces   ",
            "   ",
            " \n",
        ] {
            check(text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn pieces_are_the_patterns(text in "\\PC{0,80}|[ \\t\\r\\n'sSaA.\u{301}\u{2b0}1/]{0,40}") {
            check(&text);
        }
    }
}
