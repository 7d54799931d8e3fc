//! How the engine waits and works in parallel. Core does neither itself:
//! the caller's runtime decides (the standard library's threads in
//! `mnemon-threads`, which the front door passes; a host's own pool; or one
//! job after another, [`InOrder`]).

use std::time::Duration;

/// One piece of parallel work: it borrows what its caller holds and
/// writes its result into a slot the caller gave it.
pub type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

pub trait Runtime: Send + Sync + std::fmt::Debug {
    /// Waits `d` before the calling thread goes on: the pause after losing
    /// a compare-and-set race, so that a long action finds a quiet moment.
    fn pause(&self, d: Duration);

    /// Runs every job and returns once all have finished; they may run at
    /// once. A job that panics panics the caller.
    fn all(&self, jobs: Vec<Job<'_>>);

    /// How many jobs are worth running at once (1: one after another).
    fn parallelism(&self) -> usize;
}

/// One job after another on the calling thread, and no pause: a lost race
/// is retried at once. For a caller with no threads to give, and for tests
/// of the domain alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct InOrder;

impl Runtime for InOrder {
    fn pause(&self, _d: Duration) {}

    fn all(&self, jobs: Vec<Job<'_>>) {
        for job in jobs {
            job();
        }
    }

    fn parallelism(&self) -> usize {
        1
    }
}
