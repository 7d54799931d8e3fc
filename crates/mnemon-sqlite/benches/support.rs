//! Timing helpers shared by the bench binaries.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::time::Duration;

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Prints p50/p95/p99/max and returns p95.
pub fn report(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let (p50, p95, p99) = (
        percentile(&times, 0.50),
        percentile(&times, 0.95),
        percentile(&times, 0.99),
    );
    println!(
        "{name:<34} p50 {p50:>9.3?}  p95 {p95:>9.3?}  p99 {p99:>9.3?}  max {:>9.3?}",
        times[times.len() - 1]
    );
    p95
}
