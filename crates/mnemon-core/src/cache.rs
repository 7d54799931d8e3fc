//! A small shared map keyed by text that starts over when full: enough for
//! values that are cheap to recompute and pure functions of their key.
//!
//! Keys are kept as 128-bit fingerprints, not as the text. The token-count
//! cache holds up to 50,000 texts of up to 4 KB each: kept whole, that is up
//! to 200 MB in a long-running engine (5 MB after 450 context calls in the
//! assembly bench); as fingerprints the full map takes 1.6 MB.
//! The fingerprint is two SipHash-1-3 hashes under independent random keys:
//! two distinct texts among 50,000 share one with a probability near
//! 10^-29, far below the rate of memory errors, and nobody outside the
//! process can choose texts that collide, since the keys are secret.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};
use std::sync::{Mutex, MutexGuard};

#[derive(Debug)]
pub(crate) struct Bounded<V> {
    map: Mutex<HashMap<(u64, u64), V, BuildHasherDefault<Spread>>>,
    max: usize,
    keys: [RandomState; 2],
}

impl<V: Clone> Bounded<V> {
    pub fn new(max: usize) -> Bounded<V> {
        Bounded {
            map: Mutex::new(HashMap::default()),
            max,
            keys: [RandomState::new(), RandomState::new()],
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(u64, u64), V, BuildHasherDefault<Spread>>> {
        // A panic cannot leave the map half-updated in a way that matters:
        // every entry is a whole value.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Two halves rather than a `u128`, whose 16-byte alignment would pad
    /// every entry of the count cache from 24 bytes to 32.
    fn fingerprint(&self, key: &str) -> (u64, u64) {
        let [a, b] = &self.keys;
        (a.hash_one(key), b.hash_one(key))
    }

    pub fn get(&self, key: &str) -> Option<V> {
        let f = self.fingerprint(key);
        self.lock().get(&f).cloned()
    }

    pub fn insert(&self, key: &str, value: V) {
        let f = self.fingerprint(key);
        let mut map = self.lock();
        if map.len() >= self.max {
            map.clear();
            // Give the memory back, not just the entries: a map that once
            // filled would otherwise keep its largest size for good.
            map.shrink_to_fit();
        }
        map.insert(f, value);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The fingerprint is already uniformly random, so the map uses its low
/// bits as they are instead of hashing it a second time.
#[derive(Debug, Default)]
struct Spread(u64);

impl Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only fingerprints reach this map; this fold covers any other use.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(32) ^ n;
    }
}

#[cfg(test)]
mod tests {
    use super::Bounded;

    #[test]
    fn texts_are_told_apart_and_the_map_starts_over_when_full() {
        let b = Bounded::new(3);
        b.insert("alpha", 1);
        b.insert("beta", 2);
        b.insert("alphA", 3);
        assert_eq!(b.get("alpha"), Some(1));
        assert_eq!(b.get("beta"), Some(2));
        assert_eq!(b.get("alphA"), Some(3));
        assert_eq!(b.get("gamma"), None);
        b.insert("gamma", 4);
        assert_eq!(b.len(), 1);
        assert_eq!(b.get("gamma"), Some(4));
        assert_eq!(b.get("alpha"), None);
    }

    #[test]
    fn many_similar_texts_never_share_a_fingerprint() {
        let b = Bounded::new(usize::MAX);
        let n = 200_000;
        for i in 0..n {
            b.insert(&format!("step {i}: item"), i);
        }
        assert_eq!(b.len(), n);
        for i in (0..n).step_by(997) {
            assert_eq!(b.get(&format!("step {i}: item")), Some(i));
        }
    }
}
