//! The optimizer's tables: substitutions (what an optimized operation now
//! shows in the live context) and artifacts (what left it, in full).

use mnemon_core::memory::{StoreError, Timestamp};
use mnemon_core::optimize::{Artifact, Replacement, Substitution, Technique};
use rusqlite::{Connection, params};

use crate::SqliteStore;

fn technique(s: &str) -> Result<Technique, StoreError> {
    Technique::parse(s).ok_or_else(|| {
        StoreError::Invalid(format!(
            "unknown optimizer technique `{s}` in the database; it was written by a newer mnemon"
        ))
    })
}

fn content(path: &str, s: &str) -> Result<serde_json::Value, StoreError> {
    serde_json::from_str(s)
        .map_err(|e| StoreError::Invalid(format!("artifact {path} is not valid JSON: {e}")))
}

type SubRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    i64,
    String,
    i64,
);

impl SqliteStore {
    /// One range read over the positions' span, filtered here: working
    /// memory asks on every write, and most spans hold no substitution.
    pub(crate) fn read_substitutions(&self, seqs: &[i64]) -> Result<Vec<Substitution>, StoreError> {
        let (Some(lo), Some(hi)) = (seqs.iter().min(), seqs.iter().max()) else {
            return Ok(Vec::new());
        };
        let wanted: std::collections::BTreeSet<i64> = seqs.iter().copied().collect();
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT op_seq, technique, kind, text, tokens, reason, original_tokens
                 FROM substitutions WHERE project_id = ?1 AND op_seq BETWEEN ?2 AND ?3",
            )
            .map_err(|e| self.err(e))?;
        let rows: Vec<SubRow> = stmt
            .query_map(params![self.project_id, lo, hi], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .filter(|row| wanted.contains(&row.0))
            .map(|(op_seq, t, kind, text, tokens, reason, original)| {
                Ok(Substitution {
                    op_seq,
                    technique: technique(&t)?,
                    replacement: match (kind, text) {
                        (Some(kind), Some(text)) => Some(Replacement {
                            kind,
                            text,
                            tokens: tokens as u64,
                        }),
                        _ => None,
                    },
                    reason,
                    original_tokens: original as u64,
                })
            })
            .collect()
    }

    pub(crate) fn read_artifacts(&self, path: Option<&str>) -> Result<Vec<Artifact>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT path, technique, content FROM artifacts
                 WHERE project_id = ?1 AND (?2 IS NULL OR path = ?2) ORDER BY path",
            )
            .map_err(|e| self.err(e))?;
        let rows: Vec<(String, String, String)> = stmt
            .query_map(params![self.project_id, path], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|(path, t, c)| {
                Ok(Artifact {
                    content: content(&path, &c)?,
                    technique: technique(&t)?,
                    path,
                })
            })
            .collect()
    }

    pub(crate) fn write_optimized(
        &self,
        tx: &Connection,
        subs: &[Substitution],
        artifacts: &[Artifact],
        at: Timestamp,
    ) -> Result<(), StoreError> {
        for s in subs {
            let (kind, text) = match &s.replacement {
                Some(r) => (Some(r.kind.as_str()), Some(r.text.as_str())),
                None => (None, None),
            };
            tx.execute(
                "INSERT OR REPLACE INTO substitutions
                 (project_id, op_seq, technique, kind, text, tokens, reason, original_tokens, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    self.project_id,
                    s.op_seq,
                    s.technique.name(),
                    kind,
                    text,
                    s.tokens_after() as i64,
                    s.reason,
                    s.original_tokens as i64,
                    at.0
                ],
            )
            .map_err(|e| self.err(e))?;
        }
        for a in artifacts {
            tx.execute(
                "INSERT OR REPLACE INTO artifacts (project_id, path, technique, content, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![self.project_id, a.path, a.technique.name(), a.content.to_string(), at.0],
            )
            .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}
