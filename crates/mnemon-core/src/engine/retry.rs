//! Actions that lost a compare-and-set race to another writer are
//! evaluated again, after a pause the caller's runtime waits.

use super::EngineError;

/// How often an action is re-evaluated after losing a compare-and-set race.
/// Every lost race means another writer committed, so the contest always
/// moves on; the limit only turns a store that never stops conflicting
/// into an error.
pub(super) const CONFLICT_RETRIES: u32 = 40;

/// The pause before re-evaluating after the `attempt`th lost race. It
/// grows (0.1 ms to 6.4 ms) so that a long action, such as a refresh racing
/// writers that only append, finds a quiet moment, and it is random (the
/// standard library's randomly keyed hasher) so that two losers do not
/// retry in lockstep. The caller's runtime waits it.
#[must_use = "the pause is the runtime's to wait"]
pub(super) fn back_off(attempt: u32) -> std::time::Duration {
    use std::hash::BuildHasher;
    let base = 100u64 << attempt.min(6);
    let jitter = std::collections::hash_map::RandomState::new().hash_one(attempt) % base;
    std::time::Duration::from_micros(base / 2 + jitter)
}

/// Runs `f` until it does not lose a compare-and-set race, pausing between
/// tries; other errors and the last conflict are returned as they are.
pub(super) fn retry_conflicts<T>(
    runtime: &dyn crate::runtime::Runtime,
    mut f: impl FnMut() -> Result<T, EngineError>,
) -> Result<T, EngineError> {
    let mut attempt = 0;
    loop {
        match f() {
            Err(EngineError::Conflict(_)) if attempt < CONFLICT_RETRIES => {
                attempt += 1;
                runtime.pause(back_off(attempt));
            }
            other => return other,
        }
    }
}
