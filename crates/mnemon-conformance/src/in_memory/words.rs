//! Keyword matching as the SQL backends' full-text indexes do it: every word
//! of the query must occur in the row, case aside, and nothing in the query
//! is syntax. A word joined by underscores (`entity_type`) is a phrase of its
//! parts, as SQLite's quoted FTS5 terms are.

/// The query's words, each as the run of lower-case tokens it must match;
/// `None` when the query holds nothing searchable (the SQL backends then
/// return no rows).
pub(super) fn query(keywords: &str) -> Option<Vec<Vec<String>>> {
    let phrases: Vec<Vec<String>> = keywords
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .map(tokens)
        .filter(|p| !p.is_empty())
        .collect();
    (!phrases.is_empty()).then_some(phrases)
}

/// `text`'s tokens: runs of letters and digits, lower-cased.
pub(super) fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether every phrase of `query` occurs in `text`.
pub(super) fn matches(query: &[Vec<String>], text: &str) -> bool {
    let have = tokens(text);
    query.iter().all(|phrase| {
        have.windows(phrase.len())
            .any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_must_occur_and_nothing_is_syntax() {
        let q = query("bcrypt PASSWORD").unwrap();
        assert!(matches(&q, "Implement password hashing with bcrypt"));
        assert!(!matches(&q, "Implement password hashing"));
        assert!(query("\"(*)").is_none(), "no word, no search");
        let or = query("\"(*) OR").unwrap();
        assert!(!matches(&or, "login, signup, and MFA"), "OR is a word");
    }

    #[test]
    fn an_underscored_word_is_a_phrase_of_its_parts() {
        let q = query("entity_type").unwrap();
        assert!(matches(&q, r#"{"entity_type":"epic"}"#));
        assert!(!matches(&q, "type of entity"));
    }
}
