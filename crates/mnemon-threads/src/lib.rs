//! The runtime of a program with threads: mnemon's engine waits with
//! `std::thread::sleep` and runs parallel work on scoped threads, one per
//! core. `mnemon-core` does neither itself (`mnemon_core::runtime`); the
//! front door, the evaluation and the conformance suite pass this one.

use std::time::Duration;

use mnemon_core::runtime::{Job, Runtime};

/// Threads of the standard library, as many at once as the machine has
/// cores.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads;

impl Runtime for Threads {
    fn pause(&self, d: Duration) {
        std::thread::sleep(d);
    }

    /// The last job runs on the calling thread, the others on threads of
    /// their own; a job's panic is the caller's.
    fn all(&self, mut jobs: Vec<Job<'_>>) {
        let Some(here) = jobs.pop() else {
            return;
        };
        std::thread::scope(|s| {
            let others: Vec<_> = jobs.into_iter().map(|j| s.spawn(j)).collect();
            here();
            for h in others {
                if let Err(e) = h.join() {
                    std::panic::resume_unwind(e);
                }
            }
        });
    }

    fn parallelism(&self) -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn every_job_runs_once_and_all_have_finished_on_return() {
        let ran = AtomicUsize::new(0);
        let mut slots = vec![0usize; 5];
        let jobs: Vec<Job<'_>> = slots
            .iter_mut()
            .enumerate()
            .map(|(i, slot)| {
                let ran = &ran;
                Box::new(move || {
                    *slot = i + 1;
                    ran.fetch_add(1, Ordering::SeqCst);
                }) as Job<'_>
            })
            .collect();
        Threads.all(jobs);
        assert_eq!(ran.load(Ordering::SeqCst), 5);
        assert_eq!(slots, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    #[should_panic(expected = "a job failed")]
    fn a_job_that_panics_panics_the_caller() {
        Threads.all(vec![Box::new(|| panic!("a job failed")), Box::new(|| {})]);
    }
}
