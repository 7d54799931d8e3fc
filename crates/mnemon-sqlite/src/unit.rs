//! Units of work over the store's one connection.
//!
//! A unit keeps a transaction open across several store calls, so the calls
//! from other threads must wait until it ends: on a shared connection they
//! would otherwise read its uncommitted rows, or commit them with their own.
//! The gate admits one thread at a time and lets that thread back in, since
//! a unit is made of ordinary store calls.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

/// Which thread holds the connection, and how many of its calls are inside.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    held: Mutex<Option<(ThreadId, usize)>>,
    freed: Condvar,
}

#[must_use]
pub(crate) struct Pass<'a>(&'a Gate);

impl Gate {
    fn held(&self) -> MutexGuard<'_, Option<(ThreadId, usize)>> {
        // The state is a plain pair updated in one assignment; a panic
        // elsewhere cannot leave it half-written.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until no other thread holds the connection.
    pub(crate) fn enter(&self) -> Pass<'_> {
        let me = thread::current().id();
        let mut held = self.held();
        loop {
            match *held {
                None => {
                    *held = Some((me, 1));
                    break;
                }
                Some((owner, depth)) if owner == me => {
                    *held = Some((me, depth + 1));
                    break;
                }
                Some(_) => {
                    held = self.freed.wait(held).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
        Pass(self)
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        let mut held = self.0.held();
        match *held {
            Some((owner, depth)) if depth > 1 => *held = Some((owner, depth - 1)),
            _ => {
                *held = None;
                self.0.freed.notify_one();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Gate;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn one_thread_at_a_time_and_the_holder_may_enter_again() {
        let gate = Arc::new(Gate::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let _outer = gate.enter();
                        let _inner = gate.enter();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }
}
