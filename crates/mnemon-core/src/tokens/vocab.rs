//! A BPE vocabulary as one flat, read-only table that is used where it
//! lies: compiled into the binary by `build.rs`, never decoded at run time.
//!
//! Counting asks one question of a vocabulary, millions of times: which
//! rank, if any, do these bytes have? The table answers it with a minimal
//! perfect hash (PTHash's construction: keys grouped in buckets, each
//! bucket given the small "pilot" that sends all its keys to free slots),
//! so a lookup reads a pilot from a 100 KB array that stays in cache and
//! then exactly one 16-byte entry, found or not. There are no empty slots
//! to probe past, and a token of up to 11 bytes (nearly all of them) is
//! compared inside its entry. Nothing is built on the first count: a
//! process pays only for the pages its counts touch, under 4 MB for o200k
//! where a decoded vocabulary with search automata cost 75 MB.
//!
//! Layout, little endian throughout:
//! - `MAGIC` (8 bytes); `u32`s: tokens, entries, buckets, length of the
//!   long tails, length of the longest token, zero;
//! - 65,536 `u32`: the rank of each two-byte token by its bytes (`u32::MAX`
//!   where there is none), then 256 for one-byte tokens. Merging starts
//!   from every pair of bytes in a piece, so these are most lookups;
//! - one `u16` pilot per bucket;
//! - the entries, 16 bytes each: `rank + 1` as a `u32` (`0`: empty), the
//!   token's length, its first 7 bytes, then 4 bytes: its next bytes
//!   (zero after its end) when it has at most 11, else where the rest of
//!   it starts among the long tails;
//! - the long tails: bytes 7.. of every token longer than 11 bytes.
//!
//! This file is also compiled into `build.rs` (by path), which writes the
//! tables with [`write`]: the hashes it places keys by are the ones
//! [`Vocab::rank`] looks up with.

/// The first bytes of every table: a table from another layout is refused
/// rather than misread.
pub const MAGIC: &[u8; 8] = b"mnembpe9";

const HEADER: usize = 32;

/// Two-byte keys, then one-byte keys, looked up directly.
const DIRECT: usize = (1 << 16) + 256;

const ENTRY: usize = 16;

/// Bytes of a token compared inside its entry.
const INLINE: usize = 11;

/// Keys per bucket, on average. Four keeps pilots small and their search
/// at build time short.
const PER_BUCKET: usize = 4;

/// Up to 8 bytes as a little-endian word (zero above them), read without
/// a loop or a call: the two reads overlap where the bytes are shorter than
/// them, and overlapping bytes are the same bytes in the same places.
fn word(b: &[u8]) -> u64 {
    let n = b.len();
    match n {
        8.. => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        4..=7 => {
            let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]);
            u64::from(lo) | (u64::from(hi) << (8 * (n - 4)))
        }
        1..=3 => {
            u64::from(b[0])
                | (u64::from(b[n / 2]) << (8 * (n / 2)))
                | (u64::from(b[n - 1]) << (8 * (n - 1)))
        }
        0 => 0,
    }
}

/// splitmix64's finaliser.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A key's hash. Any change is a change of layout: `build.rs` rebuilds the
/// tables with it.
pub fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    for c in bytes.chunks(8) {
        h = (h.rotate_left(23) ^ word(c)).wrapping_mul(K);
    }
    mix(h)
}

/// `h` scaled onto `0..n` by its high bits (no division).
fn range(h: u64, n: usize) -> usize {
    ((u128::from(h) * n as u128) >> 64) as usize
}

/// The entry a key of hash `h` goes to under `pilot`. The bucket took the
/// hash's high bits; the entry starts from its low ones, moved by a
/// constant per pilot and multiplied so every bit reaches the high ones
/// [`range`] reads: keys of a bucket that agree in some bits still part
/// under some pilot.
fn slot(h: u64, pilot: u16, entries: usize) -> usize {
    let shift = (u64::from(pilot) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    range(
        (h.rotate_left(32) ^ shift).wrapping_mul(0xd6e8_feb8_6659_fd93),
        entries,
    )
}

/// The entry's 8 bytes after its rank for `key`: length, first 7 bytes.
fn head(key: &[u8]) -> u64 {
    key.len() as u64 | (word(&key[..key.len().min(7)]) << 8)
}

/// A table in the layout above, borrowed from wherever it lies.
#[derive(Clone, Copy)]
pub struct Vocab {
    blob: &'static [u8],
    entries: usize,
    buckets: usize,
    longest: usize,
    pilots: usize,
    table: usize,
    tails: usize,
}

impl Vocab {
    /// Reads the header of `blob`. `None` when it is not a table of this
    /// layout or its parts do not fit in it.
    pub fn new(blob: &'static [u8]) -> Option<Vocab> {
        if blob.len() < HEADER || &blob[..8] != MAGIC {
            return None;
        }
        let word = |at: usize| {
            u32::from_le_bytes([blob[at], blob[at + 1], blob[at + 2], blob[at + 3]]) as usize
        };
        let (entries, buckets, tails_len, longest) = (word(12), word(16), word(20), word(24));
        if entries == 0 || buckets == 0 {
            return None;
        }
        let pilots = HEADER + 4 * DIRECT;
        let table = pilots + 2 * buckets;
        let tails = table + ENTRY * entries;
        if blob.len() != tails + tails_len {
            return None;
        }
        Some(Vocab {
            blob,
            entries,
            buckets,
            longest,
            pilots,
            table,
            tails,
        })
    }

    fn u32_at(&self, at: usize) -> u32 {
        let b = self.blob;
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// The rank of the token whose bytes are `key`, if there is one.
    pub fn rank(&self, key: &[u8]) -> Option<u32> {
        let direct = match key {
            [a] => Some(256 * 256 + usize::from(*a)),
            [a, b] => Some(usize::from(*a) << 8 | usize::from(*b)),
            _ => None,
        };
        if let Some(i) = direct {
            let r = self.u32_at(HEADER + 4 * i);
            return (r != u32::MAX).then_some(r);
        }
        if key.len() > self.longest {
            return None;
        }
        let h = hash(key);
        let b = range(h, self.buckets);
        let at = self.pilots + 2 * b;
        let pilot = u16::from_le_bytes([self.blob[at], self.blob[at + 1]]);
        let at = self.table + ENTRY * slot(h, pilot, self.entries);
        let e = &self.blob[at..at + ENTRY];
        let rank = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        let stored = u64::from_le_bytes([e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11]]);
        if rank == 0 || stored != head(key) {
            return None;
        }
        let rest = u32::from_le_bytes([e[12], e[13], e[14], e[15]]);
        let same = if key.len() <= INLINE {
            rest == word(&key[7.min(key.len())..]) as u32
        } else {
            let start = self.tails + rest as usize;
            self.blob.get(start..start + key.len() - 7) == Some(&key[7..])
        };
        same.then(|| rank - 1)
    }
}

/// The table for `tokens` (token `r` is `tokens[r]`, all distinct).
/// `None` if no pilot places some bucket, which OpenAI's vocabularies do
/// not come near (their pilots average 137, the largest is 7,391). Used by
/// `build.rs`; tests build small ones.
#[allow(dead_code)]
pub fn write(tokens: &[Vec<u8>]) -> Option<Vec<u8>> {
    let keyed: Vec<(usize, u64)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| t.len() > 2)
        .map(|(r, t)| (r, hash(t)))
        .collect();
    // 1 % more entries than keys: the last buckets then find free slots
    // quickly, and the table stays all but full. A tiny vocabulary (in
    // tests) may need a few more.
    let buckets = keyed.len().div_ceil(PER_BUCKET).max(1);
    let (entries, pilots) = (0..8).find_map(|extra| {
        let entries = keyed.len() + keyed.len() / 100 + (1 << extra) - 1;
        Some((entries.max(1), pilots(&keyed, buckets, entries.max(1))?))
    })?;

    let mut table = vec![[0u8; ENTRY]; entries];
    let mut tails: Vec<u8> = Vec::new();
    for &(r, h) in &keyed {
        let t = &tokens[r];
        let e = &mut table[slot(h, pilots[range(h, buckets)], entries)];
        e[..4].copy_from_slice(&(r as u32 + 1).to_le_bytes());
        e[4..12].copy_from_slice(&head(t).to_le_bytes());
        let rest = if t.len() <= INLINE {
            word(&t[7.min(t.len())..]) as u32
        } else {
            let start = tails.len() as u32;
            tails.extend_from_slice(&t[7..]);
            start
        };
        e[12..].copy_from_slice(&rest.to_le_bytes());
    }
    let longest = tokens.iter().map(Vec::len).max().unwrap_or(0);
    if longest > 255 {
        return None;
    }

    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    for w in [tokens.len(), entries, buckets, tails.len(), longest, 0] {
        out.extend_from_slice(&(w as u32).to_le_bytes());
    }
    let mut direct = vec![u32::MAX; DIRECT];
    for (rank, t) in tokens.iter().enumerate() {
        match t[..] {
            [a, b] => direct[usize::from(a) << 8 | usize::from(b)] = rank as u32,
            [a] => direct[256 * 256 + usize::from(a)] = rank as u32,
            _ => {}
        }
    }
    for d in direct {
        out.extend_from_slice(&d.to_le_bytes());
    }
    for p in pilots {
        out.extend_from_slice(&p.to_le_bytes());
    }
    for e in table {
        out.extend_from_slice(&e);
    }
    out.extend_from_slice(&tails);
    Some(out)
}

/// A pilot per bucket that sends every key of `keyed` (rank, hash) to an
/// entry of its own among `entries`, the largest buckets placed first.
fn pilots(keyed: &[(usize, u64)], buckets: usize, entries: usize) -> Option<Vec<u16>> {
    let mut members: Vec<Vec<(usize, u64)>> = vec![Vec::new(); buckets];
    for &(r, h) in keyed {
        members[range(h, buckets)].push((r, h));
    }
    let mut order: Vec<usize> = (0..buckets).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(members[b].len()));
    let mut taken = vec![false; entries];
    let mut pilots = vec![0u16; buckets];
    let mut at: Vec<usize> = Vec::new();
    for b in order {
        if members[b].is_empty() {
            continue;
        }
        let placed = (0..=u16::MAX).find(|&p| {
            at.clear();
            for &(_, h) in &members[b] {
                let s = slot(h, p, entries);
                if taken[s] || at.contains(&s) {
                    return false;
                }
                at.push(s);
            }
            true
        })?;
        pilots[b] = placed;
        for &s in &at {
            taken[s] = true;
        }
    }
    Some(pilots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every token is found at its rank, and bytes that are no token
        /// are not found, whatever the lengths (inline, long, direct).
        #[test]
        fn every_token_and_nothing_else(
            set in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 1..40), 1..300),
            probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..50),
        ) {
            let tokens: Vec<Vec<u8>> = set.into_iter().collect();
            let blob: &'static [u8] = Box::leak(write(&tokens).unwrap().into_boxed_slice());
            let v = Vocab::new(blob).unwrap();
            for (r, t) in tokens.iter().enumerate() {
                prop_assert_eq!(v.rank(t), Some(r as u32));
            }
            for p in probes {
                let expected = tokens.iter().position(|t| *t == p).map(|r| r as u32);
                prop_assert_eq!(v.rank(&p), expected);
            }
        }
    }

    #[test]
    fn another_layout_is_refused() {
        let mut blob = write(&[b"abc".to_vec()]).unwrap();
        assert!(Vocab::new(Box::leak(blob.clone().into_boxed_slice())).is_some());
        blob[7] = b'0';
        assert!(Vocab::new(Box::leak(blob.clone().into_boxed_slice())).is_none());
        blob[7] = MAGIC[7];
        blob.pop();
        assert!(Vocab::new(Box::leak(blob.into_boxed_slice())).is_none());
    }
}
