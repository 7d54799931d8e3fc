//! The strongest simple baseline: BM25 over turns and the same embedding
//! model's nearest turns, fused by plain reciprocal-rank fusion.
//!
//! This is what a user could build in thirty lines with any search engine
//! and the model mnemon is given, so every figure of mnemon with
//! embeddings is reported beside it: beating BM25 alone proves little.

use std::collections::HashMap;

use mnemon_core::assemble::retrieve::{Hit, HitSource, SearchStore};
use mnemon_core::assemble::semantic::{Embedder, VectorIndex};

use crate::error::Result;

/// The constant of the method's authors (Cormack et al., 2009), equal
/// weights for both lists: the plain form, with nothing tuned.
const RRF_K: f64 = 60.0;

/// How deep each list is read: every turn a conversation of the size
/// evaluated has, so that the baseline can fill any budget with its next
/// best turn rather than stop where an arbitrary cut-off left it.
pub const DEPTH: usize = 100_000;

/// The turns nearest `question` by meaning, best first (all of them, up
/// to [`DEPTH`]):
/// a turn scores its best chunk, as the stored vectors are per chunk.
pub fn nearest<S: SearchStore + ?Sized>(
    store: &S,
    index: &VectorIndex,
    embedder: &dyn Embedder,
    question: &str,
) -> Result<Vec<Hit>> {
    let q = embedder
        .embed_query(question)
        .map_err(mnemon_core::engine::EngineError::from)?;
    let near = index
        .nearest(store, embedder.model(), &q, DEPTH, &mnemon_threads::Threads)
        .map_err(mnemon_core::engine::EngineError::from)?;
    let rows: Vec<i64> = near
        .iter()
        .filter(|n| n.0 == HitSource::Message)
        .map(|n| n.1)
        .collect();
    let mut by_row: HashMap<i64, Hit> = store
        .records(HitSource::Message, &rows)
        .map_err(mnemon_core::engine::EngineError::from)?
        .into_iter()
        .map(|h| (h.row, h))
        .collect();
    Ok(rows.iter().filter_map(|r| by_row.remove(r)).collect())
}

/// The turns of both lists by the sum of `1 / (k + rank)` over the lists
/// that hold them, best first; ties keep the words' order.
pub fn fuse<'a>(bm25: &'a [Hit], dense: &'a [Hit]) -> Vec<&'a str> {
    let mut score: HashMap<&str, (f64, usize, &'a str)> = HashMap::new();
    for (list, offset) in [(bm25, 0), (dense, bm25.len())] {
        for (rank, h) in list.iter().enumerate() {
            let e = score
                .entry(h.id.as_str())
                .or_insert((0.0, offset + rank, h.text.as_str()));
            e.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut all: Vec<(f64, usize, &str)> = score.into_values().collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    all.into_iter().map(|(_, _, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use mnemon_core::memory::Timestamp;

    use super::*;

    fn hit(id: &str) -> Hit {
        Hit {
            source: HitSource::Message,
            id: id.into(),
            text: format!("text of {id}"),
            bm25: 0.0,
            at: Timestamp(0),
            importance: 0.5,
            row: 0,
            role: None,
        }
    }

    #[test]
    fn a_turn_in_both_lists_leads_and_ties_keep_the_words_order() {
        let bm25 = [hit("m1"), hit("m2"), hit("m3")];
        let dense = [hit("m4"), hit("m3")];
        assert_eq!(
            fuse(&bm25, &dense),
            vec!["text of m3", "text of m1", "text of m4", "text of m2"]
        );
    }
}
