//! The control plane's clock: seconds since the epoch, passed in, so that refresh and
//! expiry timers, serials by the time of day and (later) key rollovers run in tests on
//! a clock the test drives.
//!
//! [`SystemClock`] is the machine's. [`TokioClock`] counts from a start in tokio's time,
//! which a test pauses and advances (`tokio::time::pause`, `advance`): the writers'
//! sleeps and their idea of "now" then move together, and a day of timers passes in
//! milliseconds.

use std::fmt::Debug;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the epoch, as the control plane reads them.
pub trait Clock: Send + Sync + Debug {
    /// Now, in seconds since the epoch.
    fn now(&self) -> u64;
}

/// The machine's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        unix_now()
    }
}

/// Seconds since the epoch by the machine's clock (the engine's clock for TSIG and
/// cookies too).
pub fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A clock that starts at `start` seconds since the epoch and moves with tokio's time
/// (see the module comment).
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start: u64,
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// A clock showing `start` now.
    pub fn starting_at(start: u64) -> TokioClock {
        TokioClock { start, origin: tokio::time::Instant::now() }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> u64 {
        let elapsed: Duration = tokio::time::Instant::now() - self.origin;
        self.start + elapsed.as_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_tokio_clock_moves_with_paused_time() {
        let clock = TokioClock::starting_at(1_000_000);
        assert_eq!(clock.now(), 1_000_000);
        tokio::time::advance(Duration::from_secs(86_400)).await;
        assert_eq!(clock.now(), 1_086_400);
        assert!(SystemClock.now() > 1_700_000_000);
    }
}
