//! Secrets never reach the store. People paste API keys, tokens and
//! passwords into what agents remember; every text is cleaned before it is
//! written, so a secret is in neither the database nor anything rendered
//! from it (views, checkpoints, exports, contexts). What is left is a typed
//! placeholder, `[redacted: openai key]`, so the text still reads.

use regex::Regex;

/// A secret's kind and how to find it. `keep` is the number of the capture
/// group kept before the placeholder (a URL's `scheme://user:`, a header's
/// name), 0 for none.
///
/// A built-in rule's expression is compiled the first time a text holds one
/// of its cues (literals every match contains), and only then run: most
/// texts hold none, and compiling the eleven expressions cost a CLI call
/// more than everything else it did (`status` included, which redacts
/// nothing).
struct Rule {
    name: String,
    pattern: String,
    re: std::sync::OnceLock<Result<Regex, String>>,
    keep: usize,
    cues: Cues,
}

/// Literals one of which every match of a rule contains.
#[derive(Clone, Copy)]
enum Cues {
    /// No cue: the expression runs on every text (patterns from config).
    None,
    /// One of these, as written.
    Exact(&'static [&'static str]),
    /// This, in any ASCII case. Only for cues whose letters fold to no
    /// character beyond ASCII (no `k` or `s`: `(?i)` matches `K` and `ſ`).
    AnyCase(&'static str),
}

impl Cues {
    fn found_in(self, text: &str) -> bool {
        match self {
            Cues::None => true,
            Cues::Exact(cues) => cues.iter().any(|c| text.contains(c)),
            Cues::AnyCase(cue) => text
                .as_bytes()
                .windows(cue.len())
                .any(|w| w.eq_ignore_ascii_case(cue.as_bytes())),
        }
    }
}

impl Rule {
    fn regex(&self) -> Result<&Regex, &str> {
        self.re
            .get_or_init(|| Regex::new(&self.pattern).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// The redactor: the built-in rules and any from config.
#[derive(Debug, Clone)]
pub struct Redactor {
    rules: std::sync::Arc<Vec<Rule>>,
    enabled: bool,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("name", &self.name).finish()
    }
}

/// The built-in rules, most specific first (an Anthropic key also looks
/// like an OpenAI one), each with its cues.
const BUILTIN: &[(&str, &str, usize, Cues)] = &[
    (
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\z)",
        0,
        Cues::Exact(&["PRIVATE KEY-----"]),
    ),
    (
        "anthropic key",
        r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        0,
        Cues::Exact(&["sk-ant-"]),
    ),
    (
        "openai key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        0,
        Cues::Exact(&["sk-"]),
    ),
    (
        "aws access key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        0,
        Cues::Exact(&["AKIA", "ASIA", "ABIA", "ACCA"]),
    ),
    (
        "aws secret key",
        r"(?i)(aws_secret_access_key\s*[=:]\s*[\x22']?)[A-Za-z0-9/+=]{40}",
        1,
        Cues::AnyCase("_acce"),
    ),
    (
        "github token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        0,
        Cues::Exact(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]),
    ),
    (
        "slack token",
        r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
        0,
        Cues::Exact(&["xox"]),
    ),
    (
        "slack webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        0,
        Cues::Exact(&["https://hooks.slack.com/services/"]),
    ),
    (
        "google api key",
        r"\bAIza[0-9A-Za-z_\-]{35}",
        0,
        Cues::Exact(&["AIza"]),
    ),
    (
        "password",
        r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(@)",
        1,
        Cues::Exact(&["://"]),
    ),
    (
        "authorization",
        r"(?i)(authorization\x22?\s*[:=]\s*\x22?(?:bearer|basic|token)?\s*)[A-Za-z0-9._~+/=\-]{8,}",
        1,
        Cues::AnyCase("authorization"),
    ),
];

/// A pattern from config that is not a regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("redaction pattern `{name}` is not a valid regular expression: {reason}")]
pub struct PatternError {
    pub name: String,
    pub reason: String,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::with_patterns(&[]).unwrap_or_else(|_| Redactor::off())
    }
}

impl Redactor {
    /// The built-in rules plus `extra` (name, regular expression).
    pub fn with_patterns(extra: &[(String, String)]) -> Result<Redactor, PatternError> {
        let mut rules: Vec<Rule> = BUILTIN
            .iter()
            .map(|(name, re, keep, cues)| Rule {
                name: (*name).to_string(),
                pattern: (*re).to_string(),
                re: std::sync::OnceLock::new(),
                keep: *keep,
                cues: *cues,
            })
            .collect();
        for (name, re) in extra {
            // A pattern from config runs on every text: compiled now, so a
            // bad one is refused when the project opens.
            let compiled = Regex::new(re).map_err(|e| PatternError {
                name: name.clone(),
                reason: e.to_string(),
            })?;
            rules.push(Rule {
                name: name.clone(),
                pattern: re.clone(),
                re: std::sync::OnceLock::from(Ok(compiled)),
                keep: 0,
                cues: Cues::None,
            });
        }
        Ok(Redactor {
            rules: std::sync::Arc::new(rules),
            enabled: true,
        })
    }

    /// Redacts nothing (`[redaction] enabled = false`).
    pub fn off() -> Redactor {
        Redactor {
            rules: std::sync::Arc::new(Vec::new()),
            enabled: false,
        }
    }

    /// `text` with every secret replaced by its placeholder, and the kinds
    /// found (one entry per secret).
    pub fn redact(&self, text: &str) -> (String, Vec<String>) {
        if !self.enabled {
            return (text.to_string(), Vec::new());
        }
        let mut out = text.to_string();
        let mut found = Vec::new();
        for rule in self.rules.iter() {
            if !rule.cues.found_in(&out) {
                continue;
            }
            // Built-in expressions are constants a test compiles; one that
            // did not would redact nothing rather than lose the write.
            let Ok(re) = rule.regex() else {
                continue;
            };
            if !re.is_match(&out) {
                continue;
            }
            let placeholder = format!("[redacted: {}]", rule.name);
            let replaced = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    found.push(rule.name.clone());
                    let mut s = String::new();
                    if rule.keep > 0 {
                        s.push_str(c.get(rule.keep).map_or("", |m| m.as_str()));
                    }
                    s.push_str(&placeholder);
                    // A URL's `@` (the group after the keep group) stays.
                    if let Some(m) = c.get(rule.keep + 1) {
                        s.push_str(m.as_str());
                    }
                    s
                })
                .into_owned();
            out = replaced;
        }
        (out, found)
    }

    /// Every string in `value` redacted (keys too), and the kinds found.
    pub fn redact_json(&self, value: &serde_json::Value) -> (serde_json::Value, Vec<String>) {
        use serde_json::Value;
        let mut found = Vec::new();
        let v = match value {
            Value::String(s) => {
                let (s, f) = self.redact(s);
                found.extend(f);
                Value::String(s)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| {
                        let (v, f) = self.redact_json(v);
                        found.extend(f);
                        v
                    })
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let (k, fk) = self.redact(k);
                        let (v, fv) = self.redact_json(v);
                        found.extend(fk);
                        found.extend(fv);
                        (k, v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        };
        (v, found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_builtin_rule_compiles() {
        for (name, re, _, _) in BUILTIN {
            assert!(Regex::new(re).is_ok(), "{name}");
        }
        assert_eq!(Redactor::default().rules.len(), BUILTIN.len());
    }

    /// A cue in any ASCII case is sound only if none of its letters matches
    /// a character beyond ASCII under `(?i)` (as `k` matches the Kelvin
    /// sign): the expression would match text the cue check skips.
    #[test]
    fn any_case_cues_fold_within_ascii() {
        for (name, _, _, cues) in BUILTIN {
            if let Cues::AnyCase(cue) = cues {
                for c in cue.chars() {
                    let re =
                        Regex::new(&format!("(?i)^{}$", regex::escape(&c.to_string()))).unwrap();
                    for other in (0x80u32..0x3_0000).filter_map(char::from_u32) {
                        assert!(
                            !re.is_match(&other.to_string()),
                            "{name}: {c:?} matches {other:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_common_secrets_become_typed_placeholders() {
        let r = Redactor::default();
        let cases = [
            (
                "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
                "my key is [redacted: openai key]",
            ),
            (
                "use sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 for claude",
                "use [redacted: anthropic key] for claude",
            ),
            (
                "id AKIAIOSFODNN7EXAMPLE ok",
                "id [redacted: aws access key] ok",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [redacted: aws secret key]",
            ),
            (
                "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
                "token [redacted: github token]",
            ),
            ("xoxb-1234567890-abcdefghij", "[redacted: slack token]"),
            (
                "key AIzaSyA1234567890abcdefghijklmnopqrstuv",
                "key [redacted: google api key]",
            ),
            (
                "db at postgres://admin:hunter2@db.internal:5432/app",
                "db at postgres://admin:[redacted: password]@db.internal:5432/app",
            ),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
                "Authorization: Bearer [redacted: authorization]",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
                "[redacted: private key]",
            ),
        ];
        for (input, want) in cases {
            let (out, found) = r.redact(input);
            assert_eq!(out, want, "{input}");
            assert_eq!(found.len(), 1, "{input}");
        }
        // Ordinary text is left alone.
        let plain = "the sk- prefix and a skateboard, ghp_ alone, https://example.com/a:b";
        assert_eq!(r.redact(plain).0, plain);
    }

    #[test]
    fn config_patterns_add_to_the_builtin_ones() {
        let r =
            Redactor::with_patterns(&[("employee id".into(), r"\bEMP-\d{6}\b".into())]).unwrap();
        assert_eq!(r.redact("ask EMP-123456").0, "ask [redacted: employee id]");
        let e = Redactor::with_patterns(&[("bad".into(), "(".into())]).unwrap_err();
        assert!(e.to_string().contains("`bad`"));
        assert_eq!(
            Redactor::off()
                .redact("sk-proj-abcdefghijklmnopqrstuvwxyz")
                .1
                .len(),
            0
        );
    }

    fn secret() -> impl Strategy<Value = String> {
        prop_oneof![
            "sk-proj-[A-Za-z0-9]{24,48}",
            "sk-ant-api03-[A-Za-z0-9_-]{24,48}",
            "AKIA[0-9A-Z]{16}",
            "ghp_[A-Za-z0-9]{36,40}",
            "xoxb-[0-9]{10}-[A-Za-z0-9]{10,20}",
            "AIza[0-9A-Za-z_-]{35}",
        ]
    }

    /// The default redactor with every expression run on every text.
    fn without_cues() -> Redactor {
        let r = Redactor::default();
        let rules = r
            .rules
            .iter()
            .map(|rule| Rule {
                name: rule.name.clone(),
                pattern: rule.pattern.clone(),
                re: std::sync::OnceLock::new(),
                keep: rule.keep,
                cues: Cues::None,
            })
            .collect();
        Redactor {
            rules: std::sync::Arc::new(rules),
            enabled: true,
        }
    }

    fn near_secret() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "sk-",
            "sk-ant-",
            "AKIA",
            "ASIA",
            "aws_secret_access_key=",
            "AWS_SECRET_ACCESS_KEY: ",
            "ghp_",
            "github_pat_",
            "xoxb-",
            "AIza",
            "https://hooks.slack.com/services/",
            "://u:",
            "@",
            "Authorization: Bearer ",
            "AUTHORIZATION=",
            "-----BEGIN PRIVATE KEY-----",
            "\u{212a}",
            "\u{17f}",
            " ",
        ]);
        prop::collection::vec(
            prop_oneof![pieces.prop_map(str::to_string), "[A-Za-z0-9_/+=.-]{1,45}"],
            0..8,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        /// Skipping the expressions whose cues a text lacks changes
        /// nothing: every cue is in every match.
        #[test]
        fn cues_only_skip_what_cannot_match(text in near_secret()) {
            prop_assert_eq!(Redactor::default().redact(&text), without_cues().redact(&text));
        }

        /// A secret embedded anywhere in any text never survives, and
        /// neither does any long piece of it.
        #[test]
        fn secrets_in_random_text_never_survive(
            before in "[ -~\\n]{0,80}",
            after in "[ -~\\n]{0,80}",
            s in secret(),
        ) {
            let text = format!("{before} {s} {after}");
            let (out, found) = Redactor::default().redact(&text);
            prop_assert!(!out.contains(&s), "{out}");
            prop_assert!(!found.is_empty());
            // No 16-character piece of the secret's random part is left.
            let tail = &s[s.len() - 16..];
            prop_assert!(!out.contains(tail), "{out}");
        }
    }
}
