//! The control plane's counters: zone loads, transfers in and out, dynamic updates and
//! journal sizes.
//!
//! They are one set per process ([`control`]), reached from where each event happens:
//! a zone's writer, the data plane's transfer streams, the update tasks. Such events
//! are rare next to queries, so plain atomic additions do. Labels stay bounded with
//! many zones: only the journal sizes are per zone (one gauge per zone that has a
//! journal); the zones' serials are read from the zone set when scraped.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tern_wire::Rcode;

use super::{rcode_index, Durations, RCODE_SLOTS};

/// A direction of zone transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Transfers in: this server is the secondary.
    In,
    /// Transfers out: this server answers AXFR or IXFR.
    Out,
}

/// The transfers of one direction.
#[derive(Debug)]
pub struct Transfers {
    /// Transfers completed.
    pub done: AtomicU64,
    /// Transfers (or, in, refreshes) that failed.
    pub failed: AtomicU64,
    /// Bytes of the transfers completed.
    pub bytes: AtomicU64,
    /// How long the transfers completed took.
    pub durations: Durations,
}

impl Transfers {
    const fn new() -> Transfers {
        Transfers {
            done: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            durations: Durations::new(),
        }
    }
}

/// How a zone load ended, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadResult {
    /// Loaded and served.
    Loaded,
    /// Read again and found unchanged.
    Unchanged,
    /// Failed.
    Failed,
}

/// The control plane's counters (see the module comment).
#[derive(Debug)]
pub struct ControlCounters {
    /// Loads by result (the order of [`LoadResult`]).
    pub loads: [AtomicU64; 3],
    /// How long the loads that ended in [`LoadResult::Loaded`] took.
    pub load_durations: Durations,
    /// Transfers in.
    pub transfers_in: Transfers,
    /// Transfers out.
    pub transfers_out: Transfers,
    /// Updates answered, by rcode (see [`super::RCODE_LABELS`]).
    pub updates: [AtomicU64; RCODE_SLOTS],
    /// Each zone's journal size in bytes, by zone name.
    journals: Mutex<BTreeMap<String, u64>>,
    signed: Mutex<BTreeMap<String, u64>>,
}

static CONTROL: ControlCounters = ControlCounters {
    loads: [const { AtomicU64::new(0) }; 3],
    load_durations: Durations::new(),
    transfers_in: Transfers::new(),
    transfers_out: Transfers::new(),
    updates: [const { AtomicU64::new(0) }; RCODE_SLOTS],
    journals: Mutex::new(BTreeMap::new()),
    signed: Mutex::new(BTreeMap::new()),
};

/// The process's control-plane counters.
pub fn control() -> &'static ControlCounters {
    &CONTROL
}

impl ControlCounters {
    /// Counts a zone load that ended in `result` after `elapsed`.
    pub fn load(&self, result: LoadResult, elapsed: Duration) {
        let index = match result {
            LoadResult::Loaded => 0,
            LoadResult::Unchanged => 1,
            LoadResult::Failed => 2,
        };
        if let Some(counter) = self.loads.get(index) {
            counter.fetch_add(1, Relaxed);
        }
        if result == LoadResult::Loaded {
            self.load_durations.observe(elapsed);
        }
    }

    /// The transfers of `direction`.
    pub fn transfers(&self, direction: Direction) -> &Transfers {
        match direction {
            Direction::In => &self.transfers_in,
            Direction::Out => &self.transfers_out,
        }
    }

    /// Counts a transfer completed: `bytes` in `elapsed`.
    pub fn transfer_done(&self, direction: Direction, bytes: u64, elapsed: Duration) {
        let transfers = self.transfers(direction);
        transfers.done.fetch_add(1, Relaxed);
        transfers.bytes.fetch_add(bytes, Relaxed);
        transfers.durations.observe(elapsed);
    }

    /// Counts a transfer that failed.
    pub fn transfer_failed(&self, direction: Direction) {
        self.transfers(direction).failed.fetch_add(1, Relaxed);
    }

    /// Counts an update answered with `rcode`.
    pub fn update(&self, rcode: Rcode) {
        if let Some(counter) = self.updates.get(rcode_index(rcode)) {
            counter.fetch_add(1, Relaxed);
        }
    }

    /// [`journal_size`](Self::journal_size) of the zone `zone` names, its name written
    /// out only when a row may change: an empty journal of a zone without a row (every
    /// zone at a start without journals) costs no string.
    pub fn journal_size_of(&self, zone: &impl std::fmt::Display, bytes: u64) {
        if bytes == 0 && self.journals.lock().unwrap_or_else(PoisonError::into_inner).is_empty() {
            return;
        }
        self.journal_size(&zone.to_string(), bytes);
    }

    /// Sets the size of `zone`'s journal.
    pub fn journal_size(&self, zone: &str, bytes: u64) {
        let mut journals = self.journals.lock().unwrap_or_else(PoisonError::into_inner);
        if bytes == 0 {
            // No series for an empty journal: a million idle zones hold no row here.
            journals.remove(zone);
            return;
        }
        match journals.get_mut(zone) {
            Some(size) => *size = bytes,
            None => drop(journals.insert(zone.to_owned(), bytes)),
        }
    }

    /// Forgets `zone`'s journal (the zone is no longer served).
    pub fn forget_journal(&self, zone: &str) {
        self.journals.lock().unwrap_or_else(PoisonError::into_inner).remove(zone);
    }

    /// Sets when the first of `zone`'s signatures expires, at the earliest (seconds since
    /// the epoch): a zone signed here, after a refresh pass over all of it.
    pub fn signatures_valid_until(&self, zone: &str, at: u64) {
        self.signed.lock().unwrap_or_else(PoisonError::into_inner).insert(zone.to_owned(), at);
    }

    /// Forgets `zone`'s signatures (no longer served, or no longer signed here).
    pub fn forget_signatures(&self, zone: &str) {
        self.signed.lock().unwrap_or_else(PoisonError::into_inner).remove(zone);
    }

    /// Every zone signed here, with when its first signature expires at the earliest.
    pub fn signatures(&self) -> Vec<(String, u64)> {
        let signed = self.signed.lock().unwrap_or_else(PoisonError::into_inner);
        signed.iter().map(|(zone, at)| (zone.clone(), *at)).collect()
    }

    /// Every journal's size, by zone name.
    pub fn journals(&self) -> Vec<(String, u64)> {
        let journals = self.journals.lock().unwrap_or_else(PoisonError::into_inner);
        journals.iter().map(|(zone, size)| (zone.clone(), *size)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_where_they_belong() {
        let c = control();
        let before = c.loads[0].load(Relaxed);
        c.load(LoadResult::Loaded, Duration::from_millis(3));
        assert!(c.loads[0].load(Relaxed) > before);
        c.transfer_done(Direction::Out, 1000, Duration::from_millis(1));
        assert!(c.transfers_out.bytes.load(Relaxed) >= 1000);
        c.update(Rcode::REFUSED);
        assert!(c.updates[5].load(Relaxed) >= 1);
        c.journal_size("counted.test.", 10);
        c.journal_size("counted.test.", 20);
        assert!(c.journals().contains(&("counted.test.".to_owned(), 20)));
        c.journal_size("counted.test.", 0);
        assert!(!c.journals().iter().any(|(z, _)| z == "counted.test."), "no row when empty");
        c.journal_size("counted.test.", 5);
        c.forget_journal("counted.test.");
        assert!(!c.journals().iter().any(|(z, _)| z == "counted.test."));
        // By a name written out: the same rows.
        let name: tern_wire::Name = "shown.test.".parse().unwrap();
        c.journal_size_of(&name, 0);
        assert!(!c.journals().iter().any(|(z, _)| z == "shown.test."));
        c.journal_size_of(&name, 7);
        assert!(c.journals().contains(&("shown.test.".to_owned(), 7)));
        c.journal_size_of(&name, 0);
        assert!(!c.journals().iter().any(|(z, _)| z == "shown.test."), "its row goes");
    }
}
