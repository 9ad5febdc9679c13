//! Progress lines for a zone load: one at the start, one every few seconds while
//! loading, and a last one with records, elapsed time and rate (or the error).

use std::fmt::Display;
use std::time::{Duration, Instant};

use tracing::{debug, error, info};

/// Progress lines for loading one zone: a line at the start, one every
/// [`LoadProgress::EVERY`] while loading (checked every [`LoadProgress::CHECK_RECORDS`]
/// records, so calling [`update`](LoadProgress::update) per record is cheap), and a final
/// line with records, elapsed time and rate.
#[derive(Debug)]
pub struct LoadProgress {
    zone: String,
    started: Instant,
    next_line: Instant,
    next_check: u64,
}

impl LoadProgress {
    /// Time between progress lines.
    pub const EVERY: Duration = Duration::from_secs(5);
    /// Records between looks at the clock.
    pub const CHECK_RECORDS: u64 = 65536;

    /// Starts timing the load of `zone` and logs that it began.
    pub fn start(zone: &dyn Display) -> LoadProgress {
        let zone = zone.to_string();
        debug!(zone = %zone, "loading zone");
        let started = Instant::now();
        LoadProgress {
            zone,
            started,
            next_line: started + Self::EVERY,
            next_check: Self::CHECK_RECORDS,
        }
    }

    /// Reports that `records` records are read so far.
    pub fn update(&mut self, records: u64) {
        if records < self.next_check {
            return;
        }
        self.next_check = records + Self::CHECK_RECORDS;
        let now = Instant::now();
        if now >= self.next_line {
            self.next_line = now + Self::EVERY;
            let elapsed = now - self.started;
            info!(zone = %self.zone, records, elapsed_ms = millis(elapsed), rate = rate(records, elapsed), "loading zone");
        }
    }

    /// Logs the end of a successful load, with the zone's serial; returns the time it
    /// took.
    pub fn finish(self, records: u64, serial: u32) -> Duration {
        let elapsed = self.started.elapsed();
        info!(zone = %self.zone, serial, records, elapsed_ms = millis(elapsed), rate = rate(records, elapsed), "zone loaded");
        elapsed
    }

    /// Logs a failed load.
    pub fn fail(self, why: &dyn Display) {
        let elapsed = self.started.elapsed();
        error!(zone = %self.zone, elapsed_ms = millis(elapsed), error = %why, "zone not loaded");
    }
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// Records per second (0 for no elapsed time).
fn rate(records: u64, elapsed: Duration) -> u64 {
    let micros = elapsed.as_micros();
    if micros == 0 {
        return 0;
    }
    u64::try_from(u128::from(records) * 1_000_000 / micros).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate(1000, Duration::from_millis(500)), 2000);
        assert_eq!(rate(5, Duration::ZERO), 0);
        assert_eq!(rate(u64::MAX, Duration::from_micros(1)), u64::MAX);
    }

    #[test]
    fn progress_checks_the_clock_rarely() {
        let mut progress = LoadProgress::start(&"example.com.");
        progress.update(10);
        assert_eq!(progress.next_check, LoadProgress::CHECK_RECORDS);
        progress.update(LoadProgress::CHECK_RECORDS);
        assert_eq!(progress.next_check, 2 * LoadProgress::CHECK_RECORDS);
        assert!(progress.finish(70_000, 1) < Duration::from_secs(5));
    }
}
