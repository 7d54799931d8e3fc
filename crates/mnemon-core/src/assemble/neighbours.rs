//! A hit's neighbours: the turns on either side of a message that matched,
//! where the answer to a question often sits.

use std::collections::{HashMap, HashSet};

use super::retrieve::{merge, offered_tokens};
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

/// How far out [`filled_with_exchanges`] reads, in rings around each hit.
pub(crate) const FILL_REACH: i64 = 5;

/// A filler's score, as a share of the lowest score of what retrieval
/// found: far enough below it that no filler goes ahead of a found record,
/// however the allocator weighs their lengths.
const FILL_WEIGHT: f64 = 1e-3;

/// `ranked` with, when its records offer fewer tokens than `room` (the
/// space the other sections leave the fragments), the turns around its
/// messages: ring after ring out to [`FILL_REACH`], each ring around every
/// message in `ranked`'s order, until they would fill it (with a quarter
/// to spare, as estimates go). They score below every record `ranked`
/// holds, so they take only space that would otherwise go unsent.
///
/// A question whose words match few turns ("Can Nerbaas be considered a
/// loyal partner?") left most of a words-only context empty: at 16K, 133
/// of REALTALK's 344 development questions filled less than nine tenths of
/// it. The turns beside those that matched are the same exchanges, where
/// the answer often sits. With meaning on, the nearest records fill the
/// budget and this adds nothing. As [`with_neighbours`], only messages,
/// and only within [`NEIGHBOUR_SPAN_MS`] of the message that brings them.
pub fn filled_with_exchanges<S: SearchStore + ?Sized>(
    store: &S,
    mut ranked: Vec<Ranked>,
    room: u64,
) -> StoreResult<Vec<Ranked>> {
    let want = room + room / 4;
    let mut offered = offered_tokens(&ranked);
    // With meaning on, nearly every context returns here.
    if offered >= want {
        return Ok(ranked);
    }
    let source = HitSource::Message;
    let hubs: Vec<(i64, Timestamp)> = ranked
        .iter()
        .filter(|r| r.hit.source == source)
        .map(|r| (r.hit.row, r.hit.at))
        .collect();
    if hubs.is_empty() {
        return Ok(ranked);
    }
    let floor = ranked
        .iter()
        .map(|r| r.score)
        .fold(f64::INFINITY, f64::min)
        .max(f64::MIN_POSITIVE);
    let mut held: HashSet<i64> = hubs.iter().map(|h| h.0).collect();
    let mut score = floor * FILL_WEIGHT;
    for ring in 1..=FILL_REACH {
        // A turn beside two messages is tried with each (it may be an
        // hour from one and a day from the other), and taken once.
        let wanted: Vec<(i64, Timestamp)> = hubs
            .iter()
            .flat_map(|&(row, at)| [(row - ring, at), (row + ring, at)])
            .filter(|(r, _)| *r > 0 && !held.contains(r))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let mut rows: Vec<i64> = wanted.iter().map(|w| w.0).collect();
        rows.sort_unstable();
        rows.dedup();
        let mut found: HashMap<i64, _> = store
            .records(source, &rows)?
            .into_iter()
            .map(|h| (h.row, h))
            .collect();
        for (row, at) in wanted {
            let near = found
                .get(&row)
                .is_some_and(|hit| (hit.at.0 - at.0).abs() <= NEIGHBOUR_SPAN_MS);
            if !near {
                continue;
            }
            let Some(hit) = found.remove(&row) else {
                continue;
            };
            held.insert(row);
            offered += super::rough_tokens(&hit.text, 3);
            ranked.push(Ranked { hit, score });
            if offered >= want {
                return Ok(ranked);
            }
        }
        score *= NEIGHBOUR_DECAY;
    }
    Ok(ranked)
}
