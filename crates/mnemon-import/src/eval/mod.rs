//! Recall evaluation: the dataset format (BRIEF §8), scoring, and a
//! generator of synthetic datasets with planted facts.
//!
//! Quality is evidence recall under a token budget: the share of evidence
//! turns whose full text appears in the rendered context. Abstractive text
//! never counts, so a summary that paraphrases a turn earns nothing for it.

pub mod lead;
pub mod synth;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    pub conversations: Vec<Conversation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: String,
    pub sessions: Vec<EvalSession>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSession {
    pub id: String,
    /// RFC 3339.
    pub date: String,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub id: String,
    pub speaker: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub question: String,
    /// Free-form (strings or numbers in public datasets); not scored.
    #[serde(default)]
    pub answer: serde_json::Value,
    pub evidence: Vec<String>,
    #[serde(default = "uncategorized")]
    pub category: String,
}

fn uncategorized() -> String {
    "uncategorized".into()
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatasetError {
    #[error("{source_name} is not a dataset in the expected shape: {reason}")]
    Malformed { source_name: String, reason: String },
    #[error(
        "{source_name}: question {question} of conversation {conversation} names evidence turn `{turn}`, which no session contains"
    )]
    UnknownEvidence {
        source_name: String,
        conversation: String,
        question: String,
        turn: String,
    },
}

impl Dataset {
    /// Parses and checks that every evidence id names a turn.
    pub fn from_json(text: &str, source_name: &str) -> Result<Dataset, DatasetError> {
        let d: Dataset = serde_json::from_str(text).map_err(|e| DatasetError::Malformed {
            source_name: source_name.to_string(),
            reason: e.to_string(),
        })?;
        for c in &d.conversations {
            for q in &c.questions {
                for ev in &q.evidence {
                    if !c
                        .sessions
                        .iter()
                        .any(|s| s.turns.iter().any(|t| t.id == *ev))
                    {
                        return Err(DatasetError::UnknownEvidence {
                            source_name: source_name.to_string(),
                            conversation: c.id.clone(),
                            question: q.id.clone(),
                            turn: ev.clone(),
                        });
                    }
                }
            }
        }
        Ok(d)
    }
}

/// How one method did on one question at one budget.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Score {
    /// Evidence turns found ÷ evidence turns.
    pub recall: f64,
    /// 1 when every evidence turn was found.
    pub all_hit: f64,
    /// 1 / rank of the first evidence turn in the method's order, 0 if none.
    pub reciprocal_rank: f64,
}

/// Scores a rendered context: `evidence_texts` are the evidence turns' full
/// texts; `ranked_texts` is the method's order of included turns (for MRR).
pub fn score(rendered: &str, evidence_texts: &[&str], ranked_texts: &[&str]) -> Score {
    if evidence_texts.is_empty() {
        return Score::default();
    }
    let found = evidence_texts
        .iter()
        .filter(|t| rendered.contains(**t))
        .count();
    let rr = ranked_texts
        .iter()
        .position(|r| evidence_texts.iter().any(|e| r.contains(e)) && rendered.contains(*r))
        .map_or(0.0, |p| 1.0 / (p + 1) as f64);
    Score {
        recall: found as f64 / evidence_texts.len() as f64,
        all_hit: if found == evidence_texts.len() {
            1.0
        } else {
            0.0
        },
        reciprocal_rank: rr,
    }
}

/// Means of scores.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Summary {
    pub questions: usize,
    pub recall: f64,
    pub all_hit: f64,
    pub mrr: f64,
}

impl Summary {
    pub fn of(scores: &[Score]) -> Summary {
        let n = scores.len().max(1) as f64;
        Summary {
            questions: scores.len(),
            recall: scores.iter().map(|s| s.recall).sum::<f64>() / n,
            all_hit: scores.iter().map(|s| s.all_hit).sum::<f64>() / n,
            mrr: scores.iter().map(|s| s.reciprocal_rank).sum::<f64>() / n,
        }
    }
}
