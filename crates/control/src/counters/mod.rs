//! Counters behind the metrics (the server's `http::metrics` shows them).
//!
//! * [`control`]: the control plane's (zone loads, transfers, updates, journals), one
//!   set per process, counted with atomics where each event happens.
//! * What every set of counters shares: by-rcode slots ([`rcode_index`]), single-writer
//!   additions ([`bump`]) and histograms of durations ([`Durations`]). The data plane's
//!   per-worker query counters (in the server) use them too.

pub mod control;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tern_wire::Rcode;

/// Slots of a by-rcode count: the 16 basic rcodes, BADCOOKIE, then every other.
pub const RCODE_SLOTS: usize = 18;

/// The label of each by-rcode slot.
pub const RCODE_LABELS: [&str; RCODE_SLOTS] = [
    "NOERROR",
    "FORMERR",
    "SERVFAIL",
    "NXDOMAIN",
    "NOTIMP",
    "REFUSED",
    "YXDOMAIN",
    "YXRRSET",
    "NXRRSET",
    "NOTAUTH",
    "NOTZONE",
    "DSOTYPENI",
    "RCODE12",
    "RCODE13",
    "RCODE14",
    "RCODE15",
    "BADCOOKIE",
    "other",
];

/// The slot of `rcode` in a by-rcode count.
#[inline]
pub fn rcode_index(rcode: Rcode) -> usize {
    match rcode.0 {
        code @ 0..=15 => usize::from(code),
        23 => 16,
        _ => 17,
    }
}

/// Adds `by` to a counter only one thread writes: a load and a store, not a locked
/// read-modify-write. A second writer would only lose counts.
#[inline]
pub fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(by), Relaxed);
}

/// Upper bounds in seconds of the buckets durations are counted in (and a last one,
/// `+Inf`, for the rest).
pub const DURATION_BOUNDS: [f64; 11] =
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0, 300.0];

/// A histogram of durations, written from any thread (atomic additions: off the hot
/// path).
#[derive(Debug)]
pub struct Durations {
    buckets: [AtomicU64; DURATION_BOUNDS.len() + 1],
    micros: AtomicU64,
}

impl Durations {
    /// An empty histogram.
    pub const fn new() -> Durations {
        Durations {
            buckets: [const { AtomicU64::new(0) }; DURATION_BOUNDS.len() + 1],
            micros: AtomicU64::new(0),
        }
    }

    /// Counts one duration.
    pub fn observe(&self, elapsed: std::time::Duration) {
        let seconds = elapsed.as_secs_f64();
        let index = DURATION_BOUNDS.iter().position(|&b| seconds <= b);
        let index = index.unwrap_or(DURATION_BOUNDS.len());
        if let Some(bucket) = self.buckets.get(index) {
            bucket.fetch_add(1, Relaxed);
        }
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.micros.fetch_add(micros, Relaxed);
    }

    /// The sum in seconds, the count, and the buckets as `(upper bound, count)` (not
    /// cumulative; the last bound is infinite).
    pub fn read(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let bounds = DURATION_BOUNDS.iter().copied().chain([f64::INFINITY]);
        let buckets: Vec<(f64, u64)> =
            bounds.zip(&self.buckets).map(|(b, c)| (b, c.load(Relaxed))).collect();
        let count = buckets.iter().map(|(_, c)| c).sum();
        (self.micros.load(Relaxed) as f64 / 1e6, count, buckets)
    }
}

impl Default for Durations {
    fn default() -> Self {
        Durations::new()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rcodes_have_their_slots() {
        assert_eq!(rcode_index(Rcode::NOERROR), 0);
        assert_eq!(RCODE_LABELS[rcode_index(Rcode::NXDOMAIN)], "NXDOMAIN");
        assert_eq!(RCODE_LABELS[rcode_index(Rcode(15))], "RCODE15");
        assert_eq!(RCODE_LABELS[rcode_index(Rcode::BADCOOKIE)], "BADCOOKIE");
        assert_eq!(RCODE_LABELS[rcode_index(Rcode::BADVERS)], "other");
    }

    #[test]
    fn durations_fall_in_their_buckets() {
        let d = Durations::new();
        d.observe(Duration::from_micros(500));
        d.observe(Duration::from_millis(2));
        d.observe(Duration::from_secs(1000));
        let (sum, count, buckets) = d.read();
        assert_eq!(count, 3);
        assert!((sum - 1000.0025).abs() < 1e-6, "{sum}");
        assert_eq!(buckets[0], (0.001, 1));
        assert_eq!(buckets[1], (0.005, 1));
        assert_eq!(buckets.last(), Some(&(f64::INFINITY, 1)));
    }
}
