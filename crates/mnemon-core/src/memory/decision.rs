//! Decision records in the ADR format of design v2 §1.4.
//!
//! A record holds the structured rationale (context, decision,
//! consequences, alternatives, assumptions) and never raw reasoning: input
//! that carries reasoning or scratchpad fields, or `<think>` blocks, is
//! refused rather than quietly trimmed, so the caller knows what was not kept.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::privacy::{REASONING_KEYS, strip_reasoning};
use super::types::Timestamp;
use super::{StoreError, StoreResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DecisionStatus {
    Proposed,
    Accepted,
    Deprecated,
    Superseded,
}

impl DecisionStatus {
    pub fn name(self) -> &'static str {
        match self {
            DecisionStatus::Proposed => "Proposed",
            DecisionStatus::Accepted => "Accepted",
            DecisionStatus::Deprecated => "Deprecated",
            DecisionStatus::Superseded => "Superseded",
        }
    }

    /// Proposed → Accepted, Deprecated or Superseded; Accepted → Deprecated
    /// or Superseded; Deprecated → Superseded; Superseded is final.
    pub fn can_become(self, next: DecisionStatus) -> bool {
        use DecisionStatus::*;
        matches!(
            (self, next),
            (Proposed, Accepted | Deprecated | Superseded)
                | (Accepted, Deprecated | Superseded)
                | (Deprecated, Superseded)
        )
    }
}

impl fmt::Display for DecisionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DecisionStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "proposed" => Ok(DecisionStatus::Proposed),
            "accepted" => Ok(DecisionStatus::Accepted),
            "deprecated" => Ok(DecisionStatus::Deprecated),
            "superseded" => Ok(DecisionStatus::Superseded),
            _ => Err(format!(
                "unknown decision status `{s}`: expected Proposed, Accepted, Deprecated or Superseded"
            )),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consequences {
    #[serde(default)]
    pub positive: Vec<String>,
    #[serde(default)]
    pub negative: Vec<String>,
    #[serde(default)]
    pub mitigations: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alternative {
    pub option: String,
    pub rejected_because: String,
}

/// A decision as the caller states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewDecision {
    pub title: String,
    pub context: String,
    pub decision: String,
    #[serde(default)]
    pub consequences: Consequences,
    #[serde(default)]
    pub alternatives: Vec<Alternative>,
    #[serde(default)]
    pub assumptions: Vec<String>,
    #[serde(default = "proposed")]
    pub status: DecisionStatus,
}

fn proposed() -> DecisionStatus {
    DecisionStatus::Proposed
}

/// Why a decision was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    #[error("a decision record needs a {0}")]
    Missing(&'static str),
    #[error(
        "decision records never store raw reasoning, and this one carries {0}. Give the conclusion in `decision` and the rationale in `context`, `consequences` and `alternatives`"
    )]
    Reasoning(String),
    #[error("{0}")]
    Json(String),
    #[error("a {from} decision cannot become {to}")]
    Transition {
        from: DecisionStatus,
        to: DecisionStatus,
    },
}

impl NewDecision {
    /// Parses the JSON form, refusing reasoning fields by name.
    pub fn from_json(value: &serde_json::Value) -> Result<NewDecision, DecisionError> {
        if let Some(obj) = value.as_object()
            && let Some(k) = obj
                .keys()
                .find(|k| REASONING_KEYS.contains(&k.to_ascii_lowercase().as_str()))
        {
            return Err(DecisionError::Reasoning(format!("the field `{k}`")));
        }
        // The field's path makes a mistake findable in a long record.
        serde_path_to_error::deserialize(value.clone()).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." {
                DecisionError::Json(format!("not a decision record: {inner}"))
            } else {
                DecisionError::Json(format!("not a decision record: `{path}`: {inner}"))
            }
        })
    }

    /// Every field is present and free of `<think>` blocks.
    pub fn validate(&self) -> Result<(), DecisionError> {
        for (name, v) in [
            ("title", &self.title),
            ("context", &self.context),
            ("decision", &self.decision),
        ] {
            if v.trim().is_empty() {
                return Err(DecisionError::Missing(name));
            }
        }
        let mut texts: Vec<&String> = vec![&self.title, &self.context, &self.decision];
        texts.extend(
            self.consequences
                .positive
                .iter()
                .chain(&self.consequences.negative)
                .chain(&self.consequences.mitigations),
        );
        texts.extend(
            self.alternatives
                .iter()
                .flat_map(|a| [&a.option, &a.rejected_because]),
        );
        texts.extend(&self.assumptions);
        if texts.iter().any(|t| strip_reasoning(t) != **t) {
            return Err(DecisionError::Reasoning("a <think> block".into()));
        }
        if self.status == DecisionStatus::Superseded {
            return Err(DecisionError::Transition {
                from: DecisionStatus::Proposed,
                to: DecisionStatus::Superseded,
            });
        }
        Ok(())
    }
}

/// A stored decision record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// `DR-` and eight hex digits.
    pub id: String,
    pub timestamp: Timestamp,
    pub title: String,
    pub context: String,
    pub decision: String,
    pub consequences: Consequences,
    pub alternatives: Vec<Alternative>,
    pub assumptions: Vec<String>,
    pub status: DecisionStatus,
    pub superseded_by: Option<String>,
    pub agent: String,
}

fn list(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("- {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The full id a user's `id` names: the `DR-` of a decision's id may be
/// left out (`a3f8b2c1`, or a prefix of it).
pub fn decision_id(id: &str) -> String {
    if id.starts_with("DR-") {
        id.to_string()
    } else {
        format!("DR-{id}")
    }
}

/// A fresh decision id from a fresh UUID (its text, hyphens or not): `DR-`
/// and its last eight hex digits, the random part of a UUIDv7. Eight digits
/// can collide, so a backend draws again when its id is taken.
pub fn drawn_decision_id(uuid: &str) -> String {
    let hex: String = uuid.chars().filter(char::is_ascii_hexdigit).collect();
    format!("DR-{}", &hex[hex.len().saturating_sub(8)..])
}

impl DecisionRecord {
    /// A record as the SQL backends keep it: its JSON, with its status and
    /// supersession in columns of their own, which win (they change after
    /// the JSON is written).
    pub fn from_stored(
        record: &str,
        status: &str,
        superseded_by: Option<String>,
    ) -> StoreResult<DecisionRecord> {
        let mut r: DecisionRecord = serde_json::from_str(record).map_err(|e| {
            StoreError::Backend(format!("a stored decision record does not parse: {e}"))
        })?;
        r.status = status.parse().map_err(StoreError::Backend)?;
        r.superseded_by = superseded_by;
        Ok(r)
    }

    /// Refuses a change of status the ADR lifecycle does not allow
    /// ([`DecisionStatus::can_become`]), naming the record.
    pub fn check_change(&self, next: DecisionStatus) -> StoreResult<()> {
        if self.status.can_become(next) {
            return Ok(());
        }
        Err(StoreError::Invalid(format!(
            "{} is {}; a {} decision cannot become {next}",
            self.id, self.status, self.status
        )))
    }
}

impl DecisionRecord {
    /// The ADR markdown of design v2 §1.4, with `Superseded by` when set.
    pub fn to_markdown(&self) -> String {
        let alternatives = self
            .alternatives
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}. **{}**: {}", i + 1, a.option, a.rejected_because))
            .collect::<Vec<_>>()
            .join("\n");
        let superseded = self
            .superseded_by
            .as_ref()
            .map(|s| format!("**Superseded by**: {s}\n"))
            .unwrap_or_default();
        format!(
            "# Decision Record: {title}\n\n**Date**: {date}\n**Status**: {status}\n**ID**: {id}\n{superseded}\n## Context\n\n{context}\n\n## Decision\n\n{decision}\n\n## Consequences\n\n**Positive**:\n{pos}\n\n**Negative**:\n{neg}\n\n**Mitigations**:\n{mit}\n\n## Alternatives Considered\n\n{alternatives}\n\n## Assumptions\n\n{assumptions}\n",
            title = self.title,
            date = self.timestamp.datetime().to_rfc3339(),
            status = self.status,
            id = self.id,
            context = self.context,
            decision = self.decision,
            pos = list(&self.consequences.positive),
            neg = list(&self.consequences.negative),
            mit = list(&self.consequences.mitigations),
            assumptions = list(&self.assumptions),
        )
    }

    /// The seed's compact JSON, for the decision log and prompts.
    pub fn to_compact_json(&self) -> serde_json::Value {
        let c = &self.consequences;
        json!({
            "id": self.id,
            "timestamp": self.timestamp.datetime().to_rfc3339(),
            "title": self.title,
            "decision": self.decision,
            "status": self.status.name(),
            "consequences_summary": format!("+{} benefits, {} drawbacks, {} mitigations", c.positive.len(), c.negative.len(), c.mitigations.len()),
            "alternatives_count": self.alternatives.len(),
        })
    }

    /// `DR-a3f8b2c1_use-rs256-for-jwt-signing.md`.
    pub fn file_name(&self) -> String {
        format!("{}_{}.md", self.id, slug(&self.title))
    }
}

/// Lower-case ASCII words joined by hyphens, at most 60 characters.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if out.len() + word.len() + 1 > 60 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    if out.is_empty() {
        "decision".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> DecisionRecord {
        DecisionRecord {
            id: "DR-a3f8b2c1".into(),
            timestamp: Timestamp(1_736_951_400_000),
            title: "Use RS256 for JWT signing".into(),
            context: "Tokens are verified by several services.".into(),
            decision: "Sign tokens with RS256; publish the public key.".into(),
            consequences: Consequences {
                positive: vec!["Services verify without the secret".into()],
                negative: vec!["Key rotation is more work".into()],
                mitigations: vec!["Rotate keys weekly with a JWKS endpoint".into()],
            },
            alternatives: vec![Alternative {
                option: "HS256".into(),
                rejected_because: "every verifier would hold the signing secret".into(),
            }],
            assumptions: vec!["All services can fetch the JWKS".into()],
            status: DecisionStatus::Accepted,
            superseded_by: None,
            agent: "orchestrator".into(),
        }
    }

    #[test]
    fn markdown_follows_the_adr_layout() {
        insta::assert_snapshot!(sample().to_markdown());
    }

    #[test]
    fn compact_json_is_the_seeds() {
        let j = sample().to_compact_json();
        assert_eq!(
            j["consequences_summary"],
            "+1 benefits, 1 drawbacks, 1 mitigations"
        );
        assert_eq!(j["alternatives_count"], 1);
        assert_eq!(j["id"], "DR-a3f8b2c1");
        assert_eq!(
            sample().file_name(),
            "DR-a3f8b2c1_use-rs256-for-jwt-signing.md"
        );
    }

    #[test]
    fn reasoning_is_refused() {
        let v = json!({"title": "t", "context": "c", "decision": "d", "reasoning": "step 1..."});
        assert!(matches!(
            NewDecision::from_json(&v),
            Err(DecisionError::Reasoning(_))
        ));
        let v = json!({"title": "t", "context": "c", "decision": "<think>hmm</think>d"});
        let d = NewDecision::from_json(&v).unwrap();
        assert!(matches!(d.validate(), Err(DecisionError::Reasoning(_))));
        let v = json!({"title": "t", "context": "", "decision": "d"});
        assert_eq!(
            NewDecision::from_json(&v).unwrap().validate(),
            Err(DecisionError::Missing("context"))
        );
        let v = json!({"title": "t", "context": "c", "decision": "d", "mood": "happy"});
        assert!(matches!(
            NewDecision::from_json(&v),
            Err(DecisionError::Json(_))
        ));
    }

    #[test]
    fn transitions() {
        use DecisionStatus::*;
        assert!(Proposed.can_become(Accepted));
        assert!(Accepted.can_become(Superseded));
        assert!(!Superseded.can_become(Accepted));
        assert!(!Accepted.can_become(Proposed));
        assert!(!Deprecated.can_become(Accepted));
    }

    #[test]
    fn a_drawn_id_is_the_uuids_last_eight_hex_digits() {
        assert_eq!(
            drawn_decision_id("0192f3a4-5b6c-7d8e-9f01-23456789abcd"),
            "DR-6789abcd"
        );
        assert_eq!(
            drawn_decision_id("0192f3a45b6c7d8e9f0123456789abcd"),
            "DR-6789abcd"
        );
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Use RS256 (not HS256)!"), "use-rs256-not-hs256");
        assert_eq!(slug("日本語"), "decision");
    }
}
