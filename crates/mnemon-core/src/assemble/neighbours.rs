//! A hit's neighbours: the turns on either side of a message that matched,
//! where the answer to a question often sits.

use super::retrieve::merge;
use super::seam::{HitSource, Ranked, SearchStore};
use crate::memory::{StoreResult, Timestamp};

/// How many of the best log hits bring their neighbours.
pub(crate) const NEIGHBOUR_HITS: usize = 20;

/// A neighbour's score, as a share of the hit that brought it.
pub(crate) const NEIGHBOUR_WEIGHT: f64 = 0.5;

/// How many records on each side of a hit are its neighbours. The turn
/// that answers is often not the one that matched but the reply to its
/// reply ("what did you paint?" / "a sunset" / "it's for my daughter"):
/// a second ring raised recall by words alone by about 0.01 at every
/// budget on LoCoMo's development conversations and at 8K and 16K on
/// BEAM's, and lost nowhere with meaning on; a third lost 0.01-0.02 on
/// BEAM (BENCHMARKS.md, 2026-11-27).
pub(crate) const NEIGHBOUR_REACH: i64 = 2;

/// Each ring further out scores this share of the ring inside it.
pub(crate) const NEIGHBOUR_DECAY: f64 = 0.4;

/// Records further apart than this in time are not one exchange.
pub(crate) const NEIGHBOUR_SPAN_MS: i64 = 6 * 3_600_000;

/// `ranked` with the records on either side of its best log hits: a
/// question and its answer sit in adjacent turns, and the one that matches
/// the words is often not the one that holds the fact. The adjacent records
/// score half of the hit that brought them, the next ring out a fifth (or
/// what they scored themselves, if more), so
/// the allocator prices it like any other fragment and takes it when it
/// fits. Records of another conversation that merely follow in the log
/// (hours apart) are not neighbours. Only messages have neighbours: the
/// operation next to a matching one is usually another agent's unrelated
/// step, and sending it would spend the budget on noise.
pub fn with_neighbours<S: SearchStore + ?Sized>(
    store: &S,
    mut ranked: Vec<Ranked>,
) -> StoreResult<Vec<Ranked>> {
    let source = HitSource::Message;
    let mut wanted: Vec<(i64, f64, Timestamp)> = Vec::new();
    for r in ranked
        .iter()
        .filter(|r| r.hit.source == source)
        .take(NEIGHBOUR_HITS)
    {
        let mut weight = NEIGHBOUR_WEIGHT;
        for d in 1..=NEIGHBOUR_REACH {
            for row in [r.hit.row - d, r.hit.row + d] {
                if row > 0 {
                    wanted.push((row, r.score * weight, r.hit.at));
                }
            }
            weight *= NEIGHBOUR_DECAY;
        }
    }
    if wanted.is_empty() {
        return Ok(ranked);
    }
    let rows: Vec<i64> = wanted.iter().map(|w| w.0).collect();
    let mut more = Vec::new();
    for hit in store.records(source, &rows)? {
        let best = wanted
            .iter()
            .filter(|w| w.0 == hit.row)
            .filter(|w| (w.2.0 - hit.at.0).abs() <= NEIGHBOUR_SPAN_MS)
            .map(|w| w.1)
            .fold(0.0, f64::max);
        if best > 0.0 {
            more.push(Ranked { hit, score: best });
        }
    }
    merge(&mut ranked, more, 1.0, false);
    Ok(ranked)
}
