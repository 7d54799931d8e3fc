//! The optimizer's tables: substitutions (what an optimized operation now
//! shows in the live context) and artifacts (what left it, in full).

use mnemon_core::memory::StoreResult;
use mnemon_core::optimize::{Artifact, Substitution};
use mnemon_core::store::sql::{
    ARTIFACT_COLUMNS, SUBSTITUTION_COLUMNS, StoredArtifact, StoredSubstitution,
};
use rusqlite::params;

use crate::SqliteStore;
use crate::row::Cols;

impl SqliteStore {
    /// One range read over the positions' span, filtered here: working
    /// memory asks on every write, and most spans hold no substitution.
    pub(crate) fn read_substitutions(&self, seqs: &[i64]) -> StoreResult<Vec<Substitution>> {
        let (Some(lo), Some(hi)) = (seqs.iter().min(), seqs.iter().max()) else {
            return Ok(Vec::new());
        };
        let wanted: std::collections::BTreeSet<i64> = seqs.iter().copied().collect();
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {SUBSTITUTION_COLUMNS}
                 FROM substitutions WHERE project_id = ?1 AND op_seq BETWEEN ?2 AND ?3"
            ))
            .map_err(|e| self.err(e))?;
        let rows: Vec<StoredSubstitution> = stmt
            .query_map(params![self.project_id, lo, hi], |r| {
                StoredSubstitution::read(&Cols(r))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .filter(|row| wanted.contains(&row.op_seq))
            .map(StoredSubstitution::substitution)
            .collect()
    }

    pub(crate) fn stored_artifacts(&self, path: Option<&str>) -> StoreResult<Vec<Artifact>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {ARTIFACT_COLUMNS} FROM artifacts
                 WHERE project_id = ?1 AND (?2 IS NULL OR path = ?2) ORDER BY path"
            ))
            .map_err(|e| self.err(e))?;
        let rows: Vec<StoredArtifact> = stmt
            .query_map(params![self.project_id, path], |r| {
                StoredArtifact::read(&Cols(r))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(StoredArtifact::artifact).collect()
    }
}
