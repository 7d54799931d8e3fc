//! The wall clock: the one place mnemon reads the time.

use mnemon_core::memory::{Clock, Timestamp};

use crate::error::{Error, Result};
use crate::settings::Environment;

/// The system clock, unless `MNEMON_NOW` (RFC 3339) pins it, so scripted
/// sessions and tests can replay a day.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock {
    fixed: Option<Timestamp>,
}

impl SystemClock {
    /// The clock `MNEMON_NOW` asks for, or the system's.
    pub fn from_env(env: &Environment) -> Result<SystemClock> {
        let fixed = match env.get("MNEMON_NOW") {
            Some(s) => Some(Timestamp::parse(s).ok_or_else(|| {
                Error::Input(format!(
                    "MNEMON_NOW={s} is not an RFC 3339 time such as 2025-01-15T14:30:00Z"
                ))
            })?),
            None => None,
        };
        Ok(SystemClock { fixed })
    }

    /// Always `at`.
    pub fn fixed(at: Timestamp) -> SystemClock {
        SystemClock { fixed: Some(at) }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        self.fixed.unwrap_or_else(|| {
            let ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            Timestamp(ms)
        })
    }
}

/// A clock the caller sets, for replaying a history at the times it
/// happened (`mnemon import`, `mnemon eval recall`).
#[derive(Debug, Default)]
pub struct ReplayClock(std::sync::atomic::AtomicI64);

impl ReplayClock {
    /// From now on, the time is `at`.
    pub fn set(&self, at: Timestamp) {
        self.0.store(at.0, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ReplayClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(std::sync::atomic::Ordering::SeqCst))
    }
}
