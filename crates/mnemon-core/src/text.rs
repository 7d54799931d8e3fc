//! Small text helpers shared by the rendered views and the CLI.

/// 1234567 → "1,234,567", as token counts appear in reports and logs.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and the noun that agrees with it: "1 refresh", "2 refreshes",
/// "1,024 goals".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_047_576), "1,047,576");
    }
}

/// A few hundred bytes of `text` around byte `at`, on char boundaries, with
/// `…` where it was cut: what an error shows of a long input instead of
/// echoing all of it.
pub fn excerpt(text: &str, at: usize, radius: usize) -> String {
    let at = at.min(text.len());
    let mut start = at.saturating_sub(radius);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + radius).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&text[start..end]);
    if end < text.len() {
        out.push('…');
    }
    out
}

/// The byte offset of 1-based `line` and `column` (as serde_json and toml
/// report them) in `text`.
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// A JSON parse error with an excerpt of the input around it.
pub fn json_error(text: &str, e: &serde_json::Error) -> String {
    if text.len() <= 400 {
        return format!("{e}: {text}");
    }
    let at = offset_of(text, e.line(), e.column());
    format!(
        "{e} (input of {} bytes; around the error: {})",
        thousands(text.len() as u64),
        excerpt(text, at, 120)
    )
}

#[cfg(test)]
mod excerpt_tests {
    use super::*;

    #[test]
    fn long_inputs_are_excerpted_around_the_error() {
        let text = format!("{{\"a\": \"{}", "é".repeat(100_000));
        let e = serde_json::from_str::<serde_json::Value>(&text).unwrap_err();
        let msg = json_error(&text, &e);
        assert!(msg.len() < 800, "{}", msg.len());
        assert!(msg.contains("EOF"), "{msg}");
        assert_eq!(excerpt("abcdef", 3, 1), "…cd…");
        assert_eq!(offset_of("ab\ncd", 2, 2), 4);
    }

    #[test]
    fn a_count_agrees_with_its_noun() {
        assert_eq!(counted(1, "refresh", "refreshes"), "1 refresh");
        assert_eq!(counted(0, "goal", "goals"), "0 goals");
        assert_eq!(counted(1_024, "goal", "goals"), "1,024 goals");
    }
}
