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

/// The words of a search, any of which may match, each a phrase of tokens
/// whose last is a prefix when the word ends in `*` (`live*` finds
/// "lives"), as the SQL backends' search reads a query.
pub(super) struct Terms(Vec<(Vec<String>, bool)>);

impl Terms {
    /// `None` when the query holds no word.
    pub(super) fn any_word(query: &str) -> Option<Terms> {
        let terms: Vec<(Vec<String>, bool)> = query
            .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '*')
            .map(|w| (tokens(w), w.ends_with('*')))
            .filter(|(t, _)| !t.is_empty())
            .collect();
        (!terms.is_empty()).then_some(Terms(terms))
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// How often each term occurs in a row's columns.
    pub(super) fn counts(&self, columns: &[Vec<String>]) -> Vec<usize> {
        self.0
            .iter()
            .map(|(phrase, prefix)| {
                columns
                    .iter()
                    .map(|have| {
                        have.windows(phrase.len())
                            .filter(|w| {
                                let last = phrase.len() - 1;
                                w.iter().zip(phrase).enumerate().all(|(i, (a, b))| {
                                    if i == last && *prefix {
                                        a.starts_with(b.as_str())
                                    } else {
                                        a == b
                                    }
                                })
                            })
                            .count()
                    })
                    .sum()
            })
            .collect()
    }
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

    #[test]
    fn a_search_counts_any_word_and_a_star_is_a_prefix() {
        let terms = Terms::any_word("kestr* port --").unwrap();
        assert_eq!(terms.len(), 2, "a word with no letter or digit is not one");
        let row = [tokens("kestrel runs on port 7000"), tokens("Kestrels")];
        assert_eq!(terms.counts(&row), [2, 1]);
        assert!(Terms::any_word("-- * _").is_none());
    }
}
