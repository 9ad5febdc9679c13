//! The memory housekeeping after whole-zone transfers ([`tern_zone::memory::after_load`]:
//! freed heap given back, dense regions collapsed into huge pages), paced by the records
//! transferred rather than run after each transfer.
//!
//! The housekeeping reads the whole `/proc/self/smaps` and walks the heap: its cost
//! follows what the server holds, not what one transfer brought. After each transfer of a
//! small zone it made a catalog of many members, or many secondaries starting at once,
//! quadratic: beside 2,000 six-record members a transfer spent most of its time there,
//! and the members came in at 20 a second. So it runs once [`TIDY_AFTER_RECORDS`]
//! records have been transferred since it last ran: after one large zone at once, after
//! many small ones together.

use std::sync::atomic::{AtomicU64, Ordering};

/// Records transferred whole, all zones together, after which the housekeeping runs.
pub const TIDY_AFTER_RECORDS: u64 = 1_000_000;

/// Records transferred whole since the housekeeping last ran.
static TRANSFERRED: AtomicU64 = AtomicU64::new(0);

/// Counts a whole-zone transfer of `records`, and runs the housekeeping when the
/// transfers since it last ran reach [`TIDY_AFTER_RECORDS`] (on the calling thread: the
/// caller is off the data plane's, and off the runtime's).
pub fn after_transfer(records: u64) {
    if due(&TRANSFERRED, records, TIDY_AFTER_RECORDS) {
        tern_zone::memory::after_load();
    }
}

/// Adds `records` to `count`; true (and `count` back to zero) when that reaches `limit`.
fn due(count: &AtomicU64, records: u64, limit: u64) -> bool {
    let step = |seen: u64| {
        let total = seen.saturating_add(records);
        Some(if total >= limit { 0 } else { total })
    };
    let seen = count.fetch_update(Ordering::Relaxed, Ordering::Relaxed, step);
    seen.is_ok_and(|seen| seen.saturating_add(records) >= limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_transfers_add_up_and_a_large_one_is_due_at_once() {
        let count = AtomicU64::new(0);
        assert!(!due(&count, 6, 100), "one small zone");
        for _ in 0..15 {
            assert!(!due(&count, 6, 100));
        }
        assert!(due(&count, 6, 100), "the 17th reaches the limit");
        assert_eq!(count.load(Ordering::Relaxed), 0, "counted from zero again");
        assert!(due(&count, 1_000, 100), "a large zone");
        assert!(!due(&count, 6, 100));
    }

    #[test]
    fn each_limit_reached_is_due_once_across_threads() {
        let count = std::sync::Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let count = std::sync::Arc::clone(&count);
                std::thread::spawn(move || (0..1_000).filter(|_| due(&count, 1, 100)).count())
            })
            .collect();
        let runs: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(runs, 40, "4,000 records, one run per 100");
    }
}
