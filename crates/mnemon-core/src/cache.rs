//! A small shared map keyed by text that starts over when full: enough for
//! values that are cheap to recompute and pure functions of their key.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug)]
pub(crate) struct Bounded<V> {
    map: Mutex<HashMap<Box<str>, V>>,
    max: usize,
}

impl<V: Clone> Bounded<V> {
    pub fn new(max: usize) -> Bounded<V> {
        Bounded {
            map: Mutex::new(HashMap::new()),
            max,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Box<str>, V>> {
        // A panic cannot leave the map half-updated in a way that matters:
        // every entry is a whole value.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, key: &str) -> Option<V> {
        self.lock().get(key).cloned()
    }

    pub fn insert(&self, key: &str, value: V) {
        let mut map = self.lock();
        if map.len() >= self.max {
            map.clear();
        }
        map.insert(key.into(), value);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }
}
