//! Holding zone contents for a batch of queries instead of per query.
//!
//! Loading a zone's current contents from its [`ZoneSlot`] is wait-free, but an
//! `arc_swap` guard costs two atomic read-modify-writes (one to take it, one to give it
//! back). Each is a full barrier on x86: it also holds back the loads after it, and so
//! the cache misses that answering overlaps. [`Pins`] takes each zone's guard once, the
//! first time a batch needs that zone, and the batch's queries then refer to it by a
//! [`Pin`]. A TLD server answers a whole batch from one zone with one guard.
//!
//! A batch lives for a few microseconds, so holding the guards that long keeps replaced
//! contents alive no longer than a query would. A pin only ever reads from the [`Pins`]
//! that issued it: every `Pins` has its own epoch, and a pin of another epoch reads
//! nothing.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::contents::ZoneContents;
use crate::db::{ContentsGuard, ZoneSlot};

/// Zones one [`Pins`] holds; a batch that needs more loads the rest query by query.
/// `arc_swap` has eight cheap guards per thread, and a batch also holds its zone set.
pub const PINS: usize = 4;

/// The first epoch of the next block to hand to a thread (0 is never one: a default
/// [`Pin`] matches no `Pins`).
static EPOCHS: AtomicU64 = AtomicU64::new(1);

/// Epochs a thread takes from [`EPOCHS`] at a time: a new [`Pins`] then costs no atomic
/// operation, and workers on other cores do not pass one counter's cache line to and
/// fro once per batch. 2^64 epochs last 2^44 blocks.
const EPOCH_BLOCK: u64 = 1 << 20;

thread_local! {
    /// The next epoch of this thread's block, and the end of the block.
    static NEXT_EPOCH: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// An epoch no other `Pins` of any thread has had.
fn next_epoch() -> u64 {
    NEXT_EPOCH.with(|next| {
        let (mut epoch, mut end) = next.get();
        if epoch == end {
            epoch = EPOCHS.fetch_add(EPOCH_BLOCK, Ordering::Relaxed);
            end = epoch + EPOCH_BLOCK;
        }
        next.set((epoch + 1, end));
        epoch
    })
}

/// The zones a batch has loaded: their slots (kept alive, so a slot's address names it
/// for the batch's whole life) and the guards on their contents.
pub struct Pins {
    epoch: u64,
    held: [Option<(Arc<ZoneSlot>, ContentsGuard)>; PINS],
}

/// A zone held by a [`Pins`]: valid only with the `Pins` that issued it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pin {
    epoch: u64,
    index: u8,
}

impl Pins {
    /// Holds nothing yet, with an epoch of its own.
    pub fn new() -> Pins {
        Pins { epoch: next_epoch(), held: Default::default() }
    }

    /// This holder's epoch, which every pin it issues carries.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The pin of `slot`'s contents, loading them on the zone's first use, and the
    /// contents (`None` when the zone has none loaded); `None` when [`PINS`] other zones
    /// are held already.
    #[inline]
    pub fn hold(&mut self, slot: &Arc<ZoneSlot>) -> Option<(Pin, Option<&ZoneContents>)> {
        let epoch = self.epoch;
        for (index, entry) in (0u8..).zip(self.held.iter_mut()) {
            let (held, guard) = match entry {
                Some((held, _)) if !Arc::ptr_eq(held, slot) => continue,
                Some(pinned) => pinned,
                None => entry.insert((Arc::clone(slot), slot.contents())),
            };
            debug_assert!(Arc::ptr_eq(held, slot));
            return Some((Pin { epoch, index }, guard.as_deref()));
        }
        None
    }

    /// The contents `pin` holds: `None` when the zone has none loaded, or when `pin` was
    /// issued by another `Pins`.
    #[inline]
    pub fn get(&self, pin: Pin) -> Option<&ZoneContents> {
        if pin.epoch != self.epoch {
            return None;
        }
        let (_, guard) = self.held.get(usize::from(pin.index))?.as_ref()?;
        guard.as_deref()
    }

    /// Number of zones held.
    pub fn len(&self) -> usize {
        self.held.iter().filter(|e| e.is_some()).count()
    }

    /// True when no zone is held.
    pub fn is_empty(&self) -> bool {
        self.held.iter().all(Option::is_none)
    }
}

impl Default for Pins {
    fn default() -> Self {
        Pins::new()
    }
}

impl std::fmt::Debug for Pins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pins(epoch {}, {} zones)", self.epoch, self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use tern_wire::Name;

    fn slot(origin: &str, apex: &str) -> Arc<ZoneSlot> {
        let origin: Name = origin.parse().unwrap();
        let slot = Arc::new(ZoneSlot::new(&origin));
        let (contents, _) = testutil::zone(&origin.to_string(), apex);
        slot.publish(Arc::new(contents));
        slot
    }

    #[test]
    fn one_pin_per_zone_and_contents_of_the_batch_start() {
        let a = slot("example.", testutil::APEX);
        let mut pins = Pins::new();
        let (first, contents) = pins.hold(&a).unwrap();
        assert_eq!(contents.unwrap().serial(), 1);
        assert_eq!(pins.hold(&a).unwrap().0, first);
        assert_eq!(pins.len(), 1);
        // A zone replaced during the batch: the batch goes on with what it held.
        let (v2, _) = testutil::zone("example.", &testutil::APEX.replace(" 1 7200", " 2 7200"));
        a.publish(Arc::new(v2));
        assert_eq!(pins.get(first).unwrap().serial(), 1);
        // The next batch sees the new contents.
        let mut next = Pins::new();
        let (pin, _) = next.hold(&a).unwrap();
        assert_eq!(next.get(pin).unwrap().serial(), 2);
    }

    #[test]
    fn full_pins_refuse_and_foreign_pins_read_nothing() {
        let mut pins = Pins::new();
        let slots: Vec<_> = ["a.", "b.", "c.", "d.", "e."]
            .iter()
            .map(|o| Arc::new(ZoneSlot::new(&o.parse::<Name>().unwrap())))
            .collect();
        for (i, s) in slots.iter().enumerate() {
            assert_eq!(pins.hold(s).is_some(), i < PINS, "zone {i}");
        }
        let (pin, contents) = pins.hold(&slots[0]).unwrap();
        // Not loaded: no contents.
        assert!(contents.is_none());
        assert!(pins.get(pin).is_none());
        let loaded = slot("example.", testutil::APEX);
        let mut other = Pins::new();
        let (theirs, _) = other.hold(&loaded).unwrap();
        assert!(other.get(theirs).is_some());
        assert!(pins.get(theirs).is_none());
        assert!(pins.get(Pin::default()).is_none());
        assert_ne!(pins.epoch(), other.epoch());
    }

    /// Every `Pins` of every thread has an epoch of its own, and none is 0.
    #[test]
    fn epochs_are_unique_across_threads() {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| (0..1000).map(|_| Pins::new().epoch()).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        all.extend((0..1000).map(|_| Pins::new().epoch()));
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count);
        assert_ne!(all[0], 0);
    }
}
