//! Byte-pair merging of one pre-tokenized piece, as tiktoken merges: while
//! two neighbouring parts form a token, the pair whose token has the lowest
//! rank is merged, the leftmost among equals. The parts left are the
//! piece's tokens.
//!
//! A piece is usually one token already (a word with its space), found by
//! one lookup. Short pieces merge by rescanning an array of parts, as
//! tiktoken does; long ones (runs of punctuation, digits-free identifiers,
//! whitespace) with a heap, so a 100 KB piece costs `n log n`, not `n²`.
//! Both make the same merges in the same order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::vocab::Vocab;

/// Pieces up to this many bytes merge by rescanning parts on the stack.
const SHORT: usize = 128;

const NONE: u32 = u32::MAX;

/// Calls `emit` with each token of `piece`, in order, until it returns
/// false. Returns false when it was stopped.
pub fn tokens(vocab: &Vocab, piece: &[u8], emit: &mut dyn FnMut(u32) -> bool) -> bool {
    if let Some(r) = vocab.rank(piece) {
        return emit(r);
    }
    merged(vocab, piece, emit)
}

/// The tokens of a piece that is not one token itself.
fn merged(vocab: &Vocab, piece: &[u8], emit: &mut dyn FnMut(u32) -> bool) -> bool {
    if piece.len() <= 24 {
        short::<25>(vocab, piece, emit)
    } else if piece.len() <= SHORT {
        short::<{ SHORT + 1 }>(vocab, piece, emit)
    } else {
        long(vocab, piece, emit)
    }
}

/// How many tokens `piece` encodes to.
pub fn count(vocab: &Vocab, piece: &[u8]) -> usize {
    if piece.len() <= 1 || vocab.rank(piece).is_some() {
        return usize::from(!piece.is_empty());
    }
    let mut n = 0;
    merged(vocab, piece, &mut |_| {
        n += 1;
        true
    });
    n
}

fn rank_of(vocab: &Vocab, bytes: &[u8]) -> u32 {
    vocab.rank(bytes).unwrap_or(NONE)
}

/// `N` is the piece's length plus one at most: a short piece fills a short
/// array, which is all it costs to set up.
fn short<const N: usize>(vocab: &Vocab, piece: &[u8], emit: &mut dyn FnMut(u32) -> bool) -> bool {
    // parts[i] = (start of part i, rank of part i merged with part i + 1);
    // the last entry marks the end.
    let mut parts = [(0u32, NONE); N];
    let mut len = piece.len() + 1;
    for (i, p) in parts.iter_mut().enumerate().take(len) {
        p.0 = i as u32;
    }
    for i in 0..piece.len().saturating_sub(1) {
        parts[i].1 = rank_of(vocab, &piece[i..i + 2]);
    }
    loop {
        let mut best = (NONE, 0);
        for (i, p) in parts[..len - 1].iter().enumerate() {
            if p.1 < best.0 {
                best = (p.1, i);
            }
        }
        if best.0 == NONE {
            break;
        }
        let i = best.1;
        // Part i absorbs part i + 1; the pairs it now forms are re-ranked.
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
        let start = parts[i].0 as usize;
        parts[i].1 = if i + 2 < len {
            rank_of(vocab, &piece[start..parts[i + 2].0 as usize])
        } else {
            NONE
        };
        if i > 0 {
            let prev = parts[i - 1].0 as usize;
            parts[i - 1].1 = rank_of(vocab, &piece[prev..parts[i + 1].0 as usize]);
        }
    }
    for w in parts[..len].windows(2) {
        if !emit(rank_of(vocab, &piece[w[0].0 as usize..w[1].0 as usize])) {
            return false;
        }
    }
    true
}

fn long(vocab: &Vocab, piece: &[u8], emit: &mut dyn FnMut(u32) -> bool) -> bool {
    let n = piece.len();
    // Parts as a linked list over their start bytes: next[s] is the start
    // of the part after the one starting at s (n at the end), prev[s] the
    // one before; pair[s] the rank of the part at s merged with its next.
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    let mut pair: Vec<u32> = vec![NONE; n];
    // Keys are rank above start, so the least is the lowest rank and, among
    // equal ranks, the leftmost pair: tiktoken's order. A key is stale once
    // its pair has changed (merged away or re-ranked): its rank is no
    // longer the pair's. A stale key equal to a live one is harmless, as
    // the live pair it then merges has a key of its own with the same
    // priority.
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(n);
    let key = |rank: u32, start: usize| (u64::from(rank) << 32) | start as u64;
    for i in 0..n - 1 {
        pair[i] = rank_of(vocab, &piece[i..i + 2]);
        if pair[i] != NONE {
            heap.push(Reverse(key(pair[i], i)));
        }
    }
    let rank_pair =
        |pair: &mut Vec<u32>, heap: &mut BinaryHeap<Reverse<u64>>, at: usize, end: usize| {
            pair[at] = if end <= n {
                rank_of(vocab, &piece[at..end])
            } else {
                NONE
            };
            if pair[at] != NONE {
                heap.push(Reverse(key(pair[at], at)));
            }
        };
    while let Some(Reverse(k)) = heap.pop() {
        let (rank, left) = ((k >> 32) as u32, (k & 0xffff_ffff) as usize);
        if pair[left] != rank {
            continue;
        }
        let right = next[left] as usize;
        let end = next[right] as usize;
        // The right part is gone: a key of its own is now stale.
        pair[right] = NONE;
        next[left] = end as u32;
        if end < n {
            prev[end] = left as u32;
            let after = next[end] as usize;
            rank_pair(&mut pair, &mut heap, left, after);
        } else {
            pair[left] = NONE;
        }
        let before = prev[left];
        if before != u32::MAX {
            rank_pair(&mut pair, &mut heap, before as usize, end);
        }
    }
    let mut at = 0;
    while at < n {
        let end = next[at] as usize;
        if !emit(rank_of(vocab, &piece[at..end])) {
            return false;
        }
        at = end;
    }
    true
}
