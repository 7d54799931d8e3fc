//! Sentence splitting and the word features salience is scored on.
//!
//! Deliberately simple and deterministic: a sentence ends at `.`, `!` or `?`
//! followed by whitespace, or at a line break. Decimal numbers (`3.5`),
//! versions (`v1.2`), paths (`src/main.rs`) and identifiers (`#12`) stay in
//! one piece because their dots are not followed by whitespace.

/// The sentences of `text`, trimmed, without empty ones.
pub fn split(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let end_here = match b {
            b'\n' => Some(i),
            b'.' | b'!' | b'?' => {
                let next = bytes.get(i + 1);
                match next {
                    None => Some(i + 1),
                    Some(n) if n.is_ascii_whitespace() => Some(i + 1),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(end) = end_here {
            push_trimmed(&mut out, &text[start..end]);
            start = end;
        }
        i += 1;
    }
    push_trimmed(&mut out, &text[start..]);
    out
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let t = s.trim();
    if !t.is_empty() {
        out.push(t);
    }
}

/// Words too common to say what a sentence is about.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
    "we", "i", "you", "our", "not", "but", "so", "then", "than", "into", "all", "been",
];

/// Lower-cased content words (letters, digits, `#`, `_`), without stopwords.
pub fn terms(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '#' || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// The share of words that carry specifics: numbers, `#12`-style
/// identifiers and capitalised names. Specific sentences are worth keeping.
pub fn density(sentence: &str) -> f64 {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    if words.is_empty() {
        return 0.0;
    }
    let specific = words
        .iter()
        .filter(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '#');
            w.starts_with('#')
                || w.chars().any(|c| c.is_ascii_digit())
                || w.chars().next().is_some_and(char::is_uppercase)
        })
        .count();
    specific as f64 / words.len() as f64
}

/// Whether `text` names an identifier such as `#12`: such items are pinned.
pub fn has_identifier(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(2).any(|w| w[0] == b'#' && w[1].is_ascii_digit())
}

/// A sentence's terms as a set: sorted, each once, for [`jaccard`].
pub fn term_set(terms: &[String]) -> Vec<&str> {
    let mut set: Vec<&str> = terms.iter().map(String::as_str).collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// Jaccard similarity of two term sets made by [`term_set`]. Compression
/// compares every sentence with every one kept, so this walks the two
/// sorted lists once instead of building sets.
pub fn jaccard(a: &[&str], b: &[&str]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    inter as f64 / (a.len() + b.len() - inter) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The merge walk counts what sets would.
        #[test]
        fn jaccard_is_the_share_of_shared_terms(
            a in proptest::collection::vec("[a-d]{1,2}", 0..12),
            b in proptest::collection::vec("[a-d]{1,2}", 0..12),
        ) {
            use std::collections::BTreeSet;
            let (sa, sb): (BTreeSet<&String>, BTreeSet<&String>) = (a.iter().collect(), b.iter().collect());
            let want = if sa.is_empty() && sb.is_empty() {
                1.0
            } else {
                sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64
            };
            proptest::prop_assert_eq!(jaccard(&term_set(&a), &term_set(&b)), want);
        }
    }

    #[test]
    fn splits_on_sentence_ends_but_not_inside_numbers_or_paths() {
        let s = split("Ran v1.2 tests in src/main.rs. Took 3.5 s! Any errors?\nNone");
        assert_eq!(
            s,
            vec![
                "Ran v1.2 tests in src/main.rs.",
                "Took 3.5 s!",
                "Any errors?",
                "None"
            ]
        );
    }

    #[test]
    fn terms_drop_stopwords_and_keep_identifiers() {
        assert_eq!(
            terms("Created the Epic #5 for auth"),
            vec!["created", "epic", "#5", "auth"]
        );
    }

    #[test]
    fn identifiers_and_density() {
        assert!(has_identifier("see #12"));
        assert!(!has_identifier("# heading"));
        assert!(density("Epic #5 has 3 stories") > density("it has some stories"));
    }
}
