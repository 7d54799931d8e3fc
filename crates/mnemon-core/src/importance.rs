//! How much a message or operation matters, and which ones are pinned.
//!
//! Scores follow the short-term-context design: a base by role (user 0.7,
//! assistant 0.4, system and tool 0.3, the low ends of the seed's ranges),
//! plus boosts for what the text does: states a decision (+0.2), references
//! code (+0.1), asks to be remembered (+0.3), reports an error or warning
//! (+0.15); clamped to [0, 1]. Pinned operations follow design v1's
//! `_is_critical`: decisions, errors and failures, and milestone or epic
//! completions. Pinned items survive every compaction verbatim.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
    Tool,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::User, Role::Assistant, Role::System, Role::Tool];

    pub const fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }

    fn base(self) -> f64 {
        match self {
            Role::User => 0.7,
            Role::Assistant => 0.4,
            Role::System | Role::Tool => 0.3,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown role `{s}`: expected user, assistant, system or tool"))
    }
}

/// What a text does, as far as importance is concerned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Signals {
    pub decision: bool,
    pub code: bool,
    pub remember: bool,
    pub error: bool,
}

const DECISION_PHRASES: &[&[&str]] = &[
    &["decided"],
    &["decide"],
    &["decision"],
    &["we", "will", "use"],
    &["we", "ll", "use"],
    &["let", "s", "use"],
    &["go", "with"],
    &["chose"],
    &["chosen"],
    &["agreed"],
    &["settled", "on"],
    &["instead", "of"],
];
const REMEMBER_PHRASES: &[&[&str]] = &[
    &["remember", "this"],
    &["remember", "that"],
    &["don", "t", "forget"],
    &["do", "not", "forget"],
    &["keep", "in", "mind"],
    &["make", "a", "note"],
    &["note", "that"],
];
const ERROR_WORDS: &[&str] = &[
    "error",
    "errors",
    "warning",
    "warnings",
    "failed",
    "failure",
    "fails",
    "exception",
    "panic",
    "panicked",
    "traceback",
    "crash",
    "crashed",
    "fatal",
];
const CODE_EXTENSIONS: &[&str] = &[
    "rs", "py", "ts", "tsx", "js", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "cs",
    "rb", "php", "swift", "sql", "sh", "toml", "yaml", "yml", "json", "md", "html", "css",
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect()
}

fn has_phrase(words: &[String], phrases: &[&[&str]]) -> bool {
    phrases.iter().any(|p| {
        words
            .windows(p.len())
            .any(|w| w.iter().zip(p.iter()).all(|(a, b)| a == b))
    })
}

fn references_code(text: &str) -> bool {
    if text.contains('`') || text.contains("::") || text.contains("()") || text.contains("=>") {
        return true;
    }
    text.split_whitespace().any(|token| {
        // Sentence punctuation around a path is not part of it.
        let token = token
            .trim_matches([',', ';', ':', '(', ')', '"', '\''])
            .trim_end_matches('.');
        match token.rsplit_once('.') {
            Some((stem, ext)) => {
                !stem.is_empty()
                    && stem
                        .chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
                    && CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
            }
            None => false,
        }
    })
}

impl Signals {
    pub fn of(text: &str) -> Signals {
        let w = words(text);
        Signals {
            decision: has_phrase(&w, DECISION_PHRASES),
            code: references_code(text),
            remember: has_phrase(&w, REMEMBER_PHRASES),
            error: w.iter().any(|x| ERROR_WORDS.contains(&x.as_str())),
        }
    }

    fn boost(self) -> f64 {
        let mut b = 0.0;
        if self.decision {
            b += 0.2;
        }
        if self.code {
            b += 0.1;
        }
        if self.remember {
            b += 0.3;
        }
        if self.error {
            b += 0.15;
        }
        b
    }
}

/// The importance of a message, in [0, 1].
pub fn score_message(role: Role, content: &str) -> f64 {
    (role.base() + Signals::of(content).boost()).clamp(0.0, 1.0)
}

/// Whether an operation is pinned: kept verbatim through every compaction.
///
/// A `note` operation is not: it is how a long fact is kept searchable
/// without being sent every turn (the README's advice for what is too large
/// for the hot context). A note the user asked to keep in view is a hot
/// item (`note_added`), and that is pinned.
///
/// `kind` is the operation type, `status` its status, `data` its payload.
pub fn is_pinned_operation(kind: &str, status: Option<&str>, data: &serde_json::Value) -> bool {
    let kind = kind.to_ascii_lowercase();
    if matches!(
        kind.as_str(),
        "decision" | "error" | "constraint" | "goal" | "remember"
    ) {
        return true;
    }
    // Hot-context changes (`goal_added`, `constraint_updated`, ...) are the
    // facts the user set; they are pinned like the items themselves.
    if ["goal_", "constraint_", "decision_", "note_"]
        .iter()
        .any(|p| kind.starts_with(p))
    {
        return true;
    }
    let field = |name: &str| {
        data.get(name)
            .and_then(|v| v.as_str())
            .map(str::to_ascii_lowercase)
    };
    let status = status
        .map(str::to_ascii_lowercase)
        .or_else(|| field("status"));
    if matches!(status.as_deref(), Some("failed" | "failure" | "error")) {
        return true;
    }
    if status.as_deref() == Some("completed") {
        let entity = field("entity_type")
            .or_else(|| field("entity"))
            .or_else(|| field("type"));
        let about = |s: &str| s.contains("milestone") || s.contains("epic");
        return about(&kind) || entity.as_deref().is_some_and(about);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn role_bases_are_the_low_ends_of_the_seed_ranges() {
        assert!(close(score_message(Role::User, "hello there"), 0.7));
        assert!(close(
            score_message(Role::Assistant, "sure, here it is"),
            0.4
        ));
        assert!(close(score_message(Role::System, "session started"), 0.3));
        assert!(close(score_message(Role::Tool, "ok"), 0.3));
    }

    #[test]
    fn each_boost_applies() {
        assert!(close(
            score_message(Role::Assistant, "We decided to use RS256 for the tokens"),
            0.6
        ));
        assert!(close(
            score_message(Role::Assistant, "See src/auth/jwt.rs for the details"),
            0.5
        ));
        assert!(close(
            score_message(Role::Assistant, "Call `verify()` first"),
            0.5
        ));
        assert!(close(
            score_message(Role::User, "Remember this: the API key rotates weekly"),
            1.0
        ));
        assert!(close(
            score_message(Role::System, "Warning: disk almost full"),
            0.45
        ));
        assert!(close(
            score_message(Role::Assistant, "The build failed with an error"),
            0.55
        ));
    }

    #[test]
    fn boosts_combine_and_clamp() {
        let s = score_message(
            Role::User,
            "Remember this decision: we decided on RS256 after the error in jwt.rs",
        );
        assert!(close(s, 1.0));
        let s = score_message(
            Role::Assistant,
            "We decided to go with `bcrypt`, remember that. It failed before.",
        );
        assert!(close(s, 1.0), "{s}");
    }

    #[test]
    fn words_match_whole() {
        // "terror" is not an error, "indecision" is not a decision.
        assert_eq!(Signals::of("a terror of indecision"), Signals::default());
        assert!(!Signals::of("version 1.2 is out. Fine.").code);
        assert!(Signals::of("edit Cargo.toml, then run it").code);
    }

    #[test]
    fn roles_parse() {
        assert_eq!("Assistant".parse(), Ok(Role::Assistant));
        assert!(
            "bot"
                .parse::<Role>()
                .unwrap_err()
                .contains("user, assistant, system or tool")
        );
    }

    #[test]
    fn critical_operations_are_pinned() {
        let none = json!({});
        assert!(is_pinned_operation("decision", None, &none));
        assert!(is_pinned_operation("error", None, &none));
        assert!(is_pinned_operation("task_execution", Some("failed"), &none));
        assert!(is_pinned_operation(
            "task_execution",
            None,
            &json!({"status": "failed"})
        ));
        assert!(is_pinned_operation(
            "nl_command",
            Some("completed"),
            &json!({"entity_type": "epic", "id": 5})
        ));
        assert!(is_pinned_operation(
            "milestone_completed",
            Some("completed"),
            &none
        ));
        assert!(is_pinned_operation("goal_added", Some("pending"), &none));
        assert!(is_pinned_operation("note_added", None, &none));
        assert!(!is_pinned_operation("note", None, &none));
        assert!(!is_pinned_operation("file_added", Some("active"), &none));
        assert!(!is_pinned_operation(
            "nl_command",
            Some("completed"),
            &json!({"entity_type": "story"})
        ));
        assert!(!is_pinned_operation(
            "task_execution",
            Some("completed"),
            &json!({"id": 15})
        ));
        assert!(!is_pinned_operation(
            "validation",
            Some("in_progress"),
            &json!({"entity_type": "epic"})
        ));
    }

    proptest! {
        #[test]
        fn scores_stay_in_the_unit_interval_and_never_fall_below_the_role_base(text in "\\PC{0,200}", r in 0usize..4) {
            let role = Role::ALL[r];
            let s = score_message(role, &text);
            prop_assert!((0.0..=1.0).contains(&s));
            prop_assert!(s >= role.base() - 1e-9);
        }
    }
}
