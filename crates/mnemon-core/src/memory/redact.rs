//! Secrets never reach the store. People paste API keys, tokens and
//! passwords into what agents remember; every text is cleaned before it is
//! written, so a secret is in neither the database nor anything rendered
//! from it (views, checkpoints, exports, contexts). What is left is a typed
//! placeholder, `[redacted: openai key]`, so the text still reads.

use regex::Regex;

/// A secret's kind and how to find it. `keep` is the number of the capture
/// group kept before the placeholder (a URL's `scheme://user:`, a header's
/// name), 0 for none.
struct Rule {
    name: String,
    re: Regex,
    keep: usize,
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
/// like an OpenAI one).
const BUILTIN: &[(&str, &str, usize)] = &[
    (
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\z)",
        0,
    ),
    ("anthropic key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0),
    (
        "openai key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        0,
    ),
    (
        "aws access key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        0,
    ),
    (
        "aws secret key",
        r"(?i)(aws_secret_access_key\s*[=:]\s*[\x22']?)[A-Za-z0-9/+=]{40}",
        1,
    ),
    (
        "github token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        0,
    ),
    ("slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0),
    (
        "slack webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
        0,
    ),
    ("google api key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
    (
        "password",
        r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(@)",
        1,
    ),
    (
        "authorization",
        r"(?i)(authorization\x22?\s*[:=]\s*\x22?(?:bearer|basic|token)?\s*)[A-Za-z0-9._~+/=\-]{8,}",
        1,
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
        let mut rules = Vec::new();
        for (name, re, keep) in BUILTIN {
            // The built-in expressions are constants checked by a test.
            if let Ok(re) = Regex::new(re) {
                rules.push(Rule {
                    name: (*name).to_string(),
                    re,
                    keep: *keep,
                });
            }
        }
        for (name, re) in extra {
            let re = Regex::new(re).map_err(|e| PatternError {
                name: name.clone(),
                reason: e.to_string(),
            })?;
            rules.push(Rule {
                name: name.clone(),
                re,
                keep: 0,
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
            if !rule.re.is_match(&out) {
                continue;
            }
            let placeholder = format!("[redacted: {}]", rule.name);
            let replaced = rule
                .re
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
        for (name, re, _) in BUILTIN {
            assert!(Regex::new(re).is_ok(), "{name}");
        }
        assert_eq!(Redactor::default().rules.len(), BUILTIN.len());
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

    proptest! {
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
