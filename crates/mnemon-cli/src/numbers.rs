//! Counts and sizes given on the command line, each checked against a
//! range that names what works. A negative number is taken as the flag's
//! value (not as an unknown flag `-5`) and refused with the range, and
//! nothing is allocated in proportion to a number before it is checked.

use std::ops::RangeInclusive;

/// Parses a whole number in `range`, with `_` or `,` as digit separators.
fn within(s: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    let shown = mnemon_core::text::thousands;
    let want = || {
        format!(
            "a whole number from {} to {}",
            shown(*range.start()),
            shown(*range.end())
        )
    };
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("`{t}` is negative: give {}", want()));
    }
    let digits: String = t.chars().filter(|c| *c != '_' && *c != ',').collect();
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{t}` is not {}", want()))?;
    if !range.contains(&n) {
        return Err(format!("{} is out of range: give {}", shown(n), want()));
    }
    Ok(n)
}

/// The most items one listing shows: the library's rule, checked at
/// parsing too so a bad flag is a usage error (exit 2).
pub use mnemon::MAX_LIST;
/// The largest token budget or window anyone has: the library's rule,
/// checked at parsing too so a bad flag is a usage error (exit 2).
pub use mnemon::MAX_TOKENS;
/// The most synthetic turns, sessions or conversations `eval synth` makes.
pub const MAX_SYNTH: u64 = 100_000;

/// A token budget, window or usage figure: 1 to [`MAX_TOKENS`].
pub fn tokens(s: &str) -> Result<u64, String> {
    within(s, 1..=MAX_TOKENS)
}

/// Tokens that may be zero (an operation's size, usage).
pub fn tokens_or_zero(s: &str) -> Result<u64, String> {
    within(s, 0..=MAX_TOKENS)
}

/// How many items to list: 1 to [`MAX_LIST`] (0 would answer "nothing"
/// about a project that has things).
pub fn list(s: &str) -> Result<usize, String> {
    within(s, 1..=MAX_LIST).map(|n| n as usize)
}

/// A token limit for `tokens count --limit`: 1 to [`MAX_TOKENS`].
pub fn list_tokens(s: &str) -> Result<usize, String> {
    within(s, 1..=MAX_TOKENS).map(|n| n as usize)
}

/// A size for the synthetic generator: 1 to [`MAX_SYNTH`].
pub fn synth(s: &str) -> Result<usize, String> {
    within(s, 1..=MAX_SYNTH).map(|n| n as usize)
}

/// A version number as read: 1 or more.
pub fn version(s: &str) -> Result<u64, String> {
    within(s, 1..=u64::from(u32::MAX))
}

/// `--at`: an RFC 3339 time.
pub fn timestamp(s: &str) -> Result<mnemon_core::memory::Timestamp, String> {
    mnemon_core::memory::Timestamp::parse(s.trim())
        .ok_or_else(|| format!("`{s}` is not an RFC 3339 time such as 2025-01-15T14:30:00Z"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_checked_and_refusals_name_the_range() {
        assert_eq!(tokens("8000"), Ok(8_000));
        assert_eq!(tokens("8_000"), Ok(8_000));
        assert_eq!(tokens("8,000"), Ok(8_000));
        assert!(tokens("-500").unwrap_err().contains("negative"));
        assert!(tokens("0").unwrap_err().contains("1 to 100,000,000"));
        assert!(
            tokens("1000000000000")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(tokens("lots").unwrap_err().contains("not a whole number"));
        assert!(list("0").is_err());
        assert_eq!(tokens_or_zero("0"), Ok(0));
        assert!(synth("1000000000").is_err());
    }
}
