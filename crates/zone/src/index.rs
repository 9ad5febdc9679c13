//! The name index: an open-addressing hash table from a name's hash to a node id.
//!
//! A slot's key is a `u64`: the low 32 bits are the name's [`NameTag`] (which also gives
//! the slot position, so the table can be resized without the names), the high 32 bits
//! the node id plus one (zero = empty). Linear probing with backward-shift deletion, no
//! tombstones; the table doubles past 3/4 full and shrinks below 1/8 full. Slots live in
//! a [`ChunkVec`], so a changed snapshot copies only the chunks it touches. The caller
//! decides equality (it compares the node's owner name), keeping the index free of name
//! storage.
//!
//! A small index (at most [`LINEAR_MAX`] entries: most zones of a hosting server) has no
//! empty slots: its entries lie in a row and a lookup compares each one's tag, which
//! costs the same few cache lines as probing a hashed table of [`MIN_SLOTS`] and takes
//! about half the room.
//!
//! Beside its key a slot may carry a *hint*: the address of the entry's data, which
//! [`NameIndex::find`] starts loading as soon as the tag matches, while the caller's
//! equality check is still waiting for the node that points to that data. Two dependent
//! cache misses (node, then its data) become two overlapping ones. A hint is only ever
//! prefetched, never read through, so a stale one costs a wasted prefetch and nothing
//! else.

use crate::cow::ChunkVec;
use crate::hash::NameTag;

/// One slot: the key (tag and id) and the data address to prefetch on a tag match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    key: u64,
    hint: usize,
}

impl Slot {
    #[inline]
    fn is_empty(self) -> bool {
        self.key == 0
    }

    #[inline]
    fn tag(self) -> NameTag {
        self.key as u32
    }

    #[inline]
    fn id(self) -> u32 {
        ((self.key >> 32) as u32).wrapping_sub(1)
    }
}

/// Slots per copy-on-write chunk, as a power of two: 4,096 (64 KiB). A slot is a plain
/// value, so a write copies a chunk with one `memcpy`, while a version's clone copies a
/// pointer and changes a count per chunk: four times fewer than with the default
/// chunk, and that clone is most of a one-record change's time on a large zone.
const SLOT_BITS: u32 = 12;

/// Hash-table index over node ids.
#[derive(Clone, Debug)]
pub struct NameIndex {
    slots: ChunkVec<Slot, SLOT_BITS>,
    /// Slots − 1 of a hashed table, or [`LINEAR`]: then the `used` entries lie in a row.
    mask: usize,
    used: u32,
    /// In a row, a bit per entry ([`bloom_bit`] of its tag): a name whose bit is clear
    /// is not there, and its lookup reads no slot.
    bloom: u32,
}

/// [`NameIndex::mask`] of an index whose entries lie in a row, without empty slots.
const LINEAR: usize = usize::MAX;

/// Most entries an index keeps in a row: what a hashed table of [`MIN_SLOTS`] holds.
const LINEAR_MAX: usize = MIN_SLOTS * 3 / 4;

impl Default for NameIndex {
    fn default() -> Self {
        NameIndex::with_capacity(0)
    }
}

/// Smallest table size (small zones are common: a hosting server has many of them).
const MIN_SLOTS: usize = 16;

#[inline]
fn encode(tag: u32, id: u32) -> u64 {
    (u64::from(id) + 1) << 32 | u64::from(tag)
}

impl NameIndex {
    /// An index sized for about `expected` names (at most 3/4 full).
    pub fn with_capacity(expected: usize) -> Self {
        match Self::slots_for(expected) {
            LINEAR => NameIndex::row(Vec::new()),
            size => NameIndex {
                slots: ChunkVec::filled(Slot::default(), size),
                mask: size - 1,
                used: 0,
                bloom: 0,
            },
        }
    }

    /// Table size for `expected` names: a power of two, at most 3/4 full; [`LINEAR`] for
    /// a row.
    fn slots_for(expected: usize) -> usize {
        if expected <= LINEAR_MAX {
            return LINEAR;
        }
        Self::hashed_slots(expected)
    }

    /// Hashed table size for `expected` names: a power of two, at most 3/4 full.
    fn hashed_slots(expected: usize) -> usize {
        (expected.saturating_mul(4) / 3 + 1).next_power_of_two().max(MIN_SLOTS)
    }

    /// An index whose entries are `row`, in a row (at most [`LINEAR_MAX`] of them).
    fn row(row: Vec<Slot>) -> NameIndex {
        NameIndex::in_row(ChunkVec::from_vec(row))
    }

    /// The index of the entries `slots`, in a row.
    fn in_row(slots: ChunkVec<Slot, SLOT_BITS>) -> NameIndex {
        let bloom = bloom_of(slots.head());
        NameIndex { used: slots.len() as u32, slots, mask: LINEAR, bloom }
    }

    /// True when the entries lie in a row.
    #[inline]
    fn is_linear(&self) -> bool {
        self.mask == LINEAR
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.used as usize
    }

    /// Number of slots (for tests and diagnostics).
    #[cfg(test)]
    pub fn slot_count(&self) -> usize {
        if self.is_linear() {
            return self.len();
        }
        self.mask + 1
    }

    #[inline]
    fn slot(&self, i: usize) -> Slot {
        self.slots.get(i).copied().unwrap_or_default()
    }

    /// Finds the node for a name tag; `is_match` confirms a candidate id. The candidate's
    /// hint, if any, is prefetched first.
    #[inline]
    pub fn find(&self, tag: NameTag, mut is_match: impl FnMut(u32) -> bool) -> Option<u32> {
        if !self.is_linear() {
            return probe(tag, self.mask, |i| self.slot(i), is_match);
        }
        if self.bloom & bloom_bit(tag) == 0 {
            return None;
        }
        let slot = self.slots.head().iter().find(|slot| {
            slot.tag() == tag && {
                prefetch_address(slot.hint);
                is_match(slot.id())
            }
        })?;
        Some(slot.id())
    }

    /// Starts loading the slot where a [`find`](Self::find) for `tag` will look, so that
    /// the find, done a little later, does not wait for memory.
    #[inline]
    pub fn prefetch(&self, tag: NameTag) {
        if self.is_linear() {
            // The row's first and last slots: the lines between come with them, or
            // with the adjacent-line prefetcher (a row spans at most four).
            let row = self.slots.head();
            if let (Some(first), Some(last)) = (row.first(), row.last()) {
                prefetch(first);
                prefetch(last);
            }
        } else if let Some(slot) = self.slots.get(tag as usize & self.mask) {
            prefetch(slot);
        }
    }

    /// Adds an entry (the caller has checked the name is not present yet), with the
    /// address to prefetch when it is found (0: none).
    pub fn insert(&mut self, tag: NameTag, id: u32, hint: usize) {
        let slot = Slot { key: encode(tag, id), hint };
        if self.is_linear() && self.len() < LINEAR_MAX {
            // Made again at its exact length: a row is short, and a change's copy of it
            // takes no more room than it needs.
            *self = NameIndex::row(self.slots.head().iter().copied().chain([slot]).collect());
            return;
        }
        self.used += 1;
        if self.is_linear() || self.len() * 4 > (self.mask + 1) * 3 {
            self.resize(Self::slots_for(self.len()));
        }
        let i = free_place(slot.tag(), self.mask, |i| !self.slot(i).is_empty());
        self.slots.set(i, slot);
    }

    /// Places every entry in a new table of `size` slots (a power of two), or in a row
    /// ([`LINEAR`]).
    fn resize(&mut self, size: usize) {
        let entries = self.slots.iter().copied().filter(|s| !s.is_empty());
        if size == LINEAR {
            *self = NameIndex::row(entries.collect());
        } else {
            let table = placed(entries, vec![Slot::default(); size], |s| s.key);
            self.slots = ChunkVec::from_vec(table);
            self.mask = size - 1;
        }
    }

    /// Where the entry for `id` under `tag` is.
    fn position(&self, tag: NameTag, id: u32) -> Option<usize> {
        if self.is_linear() {
            return self.slots.head().iter().position(|s| s.key == encode(tag, id));
        }
        let mut i = tag as usize & self.mask;
        loop {
            let slot = self.slot(i);
            if slot.is_empty() {
                return None;
            }
            if slot.key == encode(tag, id) {
                return Some(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Removes the entry for `id` under `tag`; returns whether it was present. A table
    /// left less than 1/8 full (and larger than the smallest) is made again at the size
    /// its entries need, so that it follows the names a zone keeps, not the most it had.
    pub fn remove(&mut self, tag: NameTag, id: u32) -> bool {
        let Some(i) = self.position(tag, id) else { return false };
        self.used -= 1;
        if self.is_linear() {
            let last = self.slots.pop().unwrap_or_default();
            if i < self.len() {
                self.slots.set(i, last);
            }
            self.bloom = bloom_of(self.slots.head());
            return true;
        }
        self.shift_back(i);
        if self.len() * 8 < self.mask + 1 && self.mask + 1 > MIN_SLOTS {
            self.resize(Self::slots_for(self.len()));
        }
        true
    }

    /// Replaces the hint of the entry for `id` under `tag` (after its data moved).
    pub fn set_hint(&mut self, tag: NameTag, id: u32, hint: usize) {
        if let Some(i) = self.position(tag, id) {
            self.slots.set(i, Slot { key: encode(tag, id), hint });
        }
    }

    /// Backward-shift deletion: closes the hole at `hole` so every entry stays reachable.
    fn shift_back(&mut self, mut hole: usize) {
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let slot = self.slot(j);
            if slot.is_empty() {
                break;
            }
            let home = slot.tag() as usize & self.mask;
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots.set(hole, slot);
                hole = j;
            }
        }
        self.slots.set(hole, Slot::default());
    }

    /// The hint of the entry for `id` under `tag`.
    #[cfg(test)]
    pub(crate) fn hint(&self, tag: NameTag, id: u32) -> Option<usize> {
        self.position(tag, id).map(|i| self.slot(i).hint)
    }

    /// All node ids in the index (in table order).
    #[cfg(test)]
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().filter(|s| !s.is_empty()).map(|s| s.id())
    }
}

/// A [`NameIndex`] being built: the same table of keys (no hints yet) in one plain
/// vector. A build places every entry once; [`NameIndex::insert`] makes the entry's chunk
/// unique first (snapshots share chunks), which costs more than the placing itself.
/// [`finish`](Self::finish) makes the index, sized for its entries, with their hints.
#[derive(Debug, Clone)]
pub struct IndexBuilder {
    keys: Vec<u64>,
    mask: usize,
    used: usize,
}

impl IndexBuilder {
    /// A table sized for about `expected` names.
    pub fn with_capacity(expected: usize) -> IndexBuilder {
        let size = NameIndex::hashed_slots(expected);
        IndexBuilder { keys: zeroed_keys(size), mask: size - 1, used: 0 }
    }

    #[inline]
    fn slot(&self, i: usize) -> Slot {
        Slot { key: self.keys.get(i).copied().unwrap_or(0), hint: 0 }
    }

    /// As [`NameIndex::find`].
    #[inline]
    pub fn find(&self, tag: NameTag, is_match: impl FnMut(u32) -> bool) -> Option<u32> {
        probe(tag, self.mask, |i| self.slot(i), is_match)
    }

    /// As [`NameIndex::prefetch`].
    #[inline]
    pub fn prefetch(&self, tag: NameTag) {
        if let Some(key) = self.keys.get(tag as usize & self.mask) {
            prefetch(key);
        }
    }

    /// As [`NameIndex::insert`], without a hint.
    pub fn insert(&mut self, tag: NameTag, id: u32) {
        if (self.used + 1) * 4 > (self.mask + 1) * 3 {
            let size = (self.mask + 1) * 2;
            self.keys = placed(self.keys.iter().copied(), zeroed_keys(size), |key| key);
            self.mask = size - 1;
        }
        let i = free_place(tag, self.mask, |i| self.keys.get(i).is_some_and(|&k| k != 0));
        if let Some(key) = self.keys.get_mut(i) {
            *key = encode(tag, id);
        }
        self.used += 1;
    }

    /// The index: every entry placed in a table sized for them (where it already is,
    /// when this table has that size), its hint set to `hint_of(id)`. `prefetch_id` is
    /// called a few entries ahead with the id whose hint will be asked for, so that
    /// looking it up does not wait for memory each time. Each slot is written once,
    /// straight into its chunk.
    pub fn finish(
        self,
        mut hint_of: impl FnMut(u32) -> usize,
        mut prefetch_id: impl FnMut(u32),
    ) -> NameIndex {
        const AHEAD: usize = 16;
        let size = NameIndex::slots_for(self.used);
        if size == LINEAR {
            let keys = self.keys.iter().copied().filter(|&key| key != 0);
            let mut row = keys.map(|key| Slot { key, hint: hint_of(Slot { key, hint: 0 }.id()) });
            // Straight into the index's chunk: no list made and freed beside it.
            let slots = ChunkVec::from_fn(self.used, |_| row.next().unwrap_or_default());
            return NameIndex::in_row(slots);
        }
        let keys = if size == self.keys.len() {
            self.keys
        } else {
            placed(self.keys.iter().copied(), zeroed_keys(size), |key| key)
        };
        let key_at = |i: usize| keys.get(i).copied().unwrap_or(0);
        let slots = ChunkVec::from_fn(size, |i| {
            let ahead = Slot { key: key_at(i + AHEAD), hint: 0 };
            if !ahead.is_empty() {
                prefetch_id(ahead.id());
            }
            let slot = Slot { key: key_at(i), hint: 0 };
            let hint = if slot.is_empty() { 0 } else { hint_of(slot.id()) };
            Slot { hint, ..slot }
        });
        let used = u32::try_from(self.used).unwrap_or(u32::MAX);
        NameIndex { slots, mask: size - 1, used, bloom: 0 }
    }
}

/// The bit of a row's bloom filter for names tagged `tag`: from the tag's top bits, as
/// a hashed table's slot is from its low bits.
#[inline(always)]
fn bloom_bit(tag: NameTag) -> u32 {
    1 << (tag >> 27)
}

/// The bloom filter of a row's entries.
fn bloom_of(row: &[Slot]) -> u32 {
    row.iter().fold(0, |bloom, slot| bloom | bloom_bit(slot.tag()))
}

/// A builder's empty table of `size` keys; a large one on huge pages (see
/// [`advise_huge`](crate::memory::advise_huge): its probes are random).
fn zeroed_keys(size: usize) -> Vec<u64> {
    // Zeroed by the allocator: a large table comes as fresh pages, not cleared.
    let keys = vec![0; size];
    crate::memory::advise_huge(&keys);
    keys
}

/// The lookup of both tables: the entry under `tag` that `is_match` confirms, probing
/// from its home slot to the first empty one; a candidate's hint is prefetched first.
#[inline(always)]
fn probe(
    tag: NameTag,
    mask: usize,
    slot: impl Fn(usize) -> Slot,
    mut is_match: impl FnMut(u32) -> bool,
) -> Option<u32> {
    let mut i = tag as usize & mask;
    loop {
        let slot = slot(i);
        if slot.is_empty() {
            return None;
        }
        if slot.tag() == tag {
            prefetch_address(slot.hint);
            if is_match(slot.id()) {
                return Some(slot.id());
            }
        }
        i = (i + 1) & mask;
    }
}

/// The entries of `items` whose key is not 0 (empty) placed in `table`, empty and a
/// power of two long, by the same linear probing as [`NameIndex::insert`]: slots, or
/// the keys alone of an [`IndexBuilder`].
fn placed<T: Copy>(
    items: impl Iterator<Item = T>,
    mut table: Vec<T>,
    key: impl Fn(T) -> u64,
) -> Vec<T> {
    let mask = table.len() - 1;
    for item in items.filter(|&t| key(t) != 0) {
        let taken = |i: usize| table.get(i).is_some_and(|&t| key(t) != 0);
        let i = free_place(key(item) as NameTag, mask, taken);
        if let Some(place) = table.get_mut(i) {
            *place = item;
        }
    }
    table
}

/// Where an entry tagged `tag` goes in a table of `mask + 1` slots: its home slot, or the
/// first free one after it (linear probing); `taken(i)` says whether slot `i` is in use.
#[inline]
fn free_place(tag: NameTag, mask: usize, taken: impl Fn(usize) -> bool) -> usize {
    let mut i = tag as usize & mask;
    while taken(i) {
        i = (i + 1) & mask;
    }
    i
}

/// Hints the CPU to bring `value`'s cache line in (a no-op where there is no hint).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_address(std::ptr::from_ref(value) as usize);
}

/// Hints the CPU to bring the cache line at `address` in; 0 is skipped.
#[inline(always)]
pub fn prefetch_address(address: usize) {
    #[cfg(target_arch = "x86_64")]
    if address != 0 {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint: it reads nothing the program sees and cannot
        // fault, whatever the address (a stale hint points at memory that may be freed).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Hashes that collide in the low bits a lot, to exercise probing and deletion.
    fn weak_hash(i: u32) -> NameTag {
        i % 97
    }

    #[test]
    fn insert_find_remove_against_a_model() {
        let mut index = NameIndex::with_capacity(10);
        let mut model: HashMap<u32, NameTag> = HashMap::new();
        for id in 0..5000u32 {
            index.insert(weak_hash(id), id, 0);
            model.insert(id, weak_hash(id));
        }
        for id in (0..5000u32).step_by(3) {
            assert!(index.remove(weak_hash(id), id));
            model.remove(&id);
        }
        assert!(!index.remove(weak_hash(0), 0));
        assert_eq!(index.len(), model.len());
        for id in 0..5000u32 {
            let found = index.find(weak_hash(id), |c| c == id);
            assert_eq!(found.is_some(), model.contains_key(&id), "id {id}");
        }
        let mut ids: Vec<u32> = index.ids().collect();
        ids.sort_unstable();
        let mut expect: Vec<u32> = model.keys().copied().collect();
        expect.sort_unstable();
        assert_eq!(ids, expect);
    }

    #[test]
    fn the_table_shrinks_as_entries_go_and_keeps_them_all() {
        let hash = |id: u32| id.wrapping_mul(0x9E37_79B9) % 4099;
        let mut index = NameIndex::with_capacity(0);
        for id in 0..10_000u32 {
            index.insert(hash(id), id, id as usize);
        }
        let full = index.slot_count();
        for id in 100..10_000u32 {
            assert!(index.remove(hash(id), id));
        }
        assert!(index.slot_count() <= 256, "{} slots of {full} left", index.slot_count());
        for id in 0..10_000u32 {
            let found = index.find(hash(id), |c| c == id);
            assert_eq!(found, (id < 100).then_some(id), "id {id}");
        }
        assert_eq!(index.hint(hash(42), 42), Some(42), "hints move with their entry");
        for id in 0..100u32 {
            assert!(index.remove(hash(id), id));
        }
        assert_eq!((index.len(), index.slot_count()), (0, 0));
        assert!(index.is_linear(), "an emptied index is an empty row");
    }

    #[test]
    fn snapshots_are_independent() {
        let mut a = NameIndex::with_capacity(100);
        a.insert(1, 10, 0);
        let mut b = a.clone();
        b.insert(2, 20, 0);
        assert!(b.remove(1, 10));
        assert_eq!(a.find(1, |id| id == 10), Some(10));
        assert_eq!(a.find(2, |id| id == 20), None);
        assert_eq!(b.find(1, |id| id == 10), None);
        assert_eq!(b.find(2, |id| id == 20), Some(20));
    }

    #[test]
    fn a_small_index_lies_in_a_row_and_turns_hashed_and_back_as_it_grows_and_shrinks() {
        let hash = |id: u32| id % 5;
        let mut index = NameIndex::with_capacity(3);
        for id in 0..LINEAR_MAX as u32 {
            index.insert(hash(id), id, id as usize + 1);
        }
        assert!(index.is_linear() && index.slot_count() == LINEAR_MAX);
        let row = index.clone();
        index.insert(hash(99), 99, 0);
        assert_eq!(index.slot_count(), 32, "one past the row: a hashed table");
        for id in (0..LINEAR_MAX as u32).filter(|id| id % 4 != 1).chain([99]) {
            assert!(index.remove(hash(id), id));
        }
        assert!(index.is_linear(), "{} entries left in {} slots", index.len(), index.slot_count());
        for id in 0..100 {
            let kept = id % 4 == 1 && id < LINEAR_MAX as u32;
            assert_eq!(index.find(hash(id), |c| c == id), kept.then_some(id), "id {id}");
            assert_eq!(row.find(hash(id), |c| c == id), (id < LINEAR_MAX as u32).then_some(id));
        }
        assert_eq!(row.hint(hash(7), 7), Some(8), "the snapshot kept its hints");
        assert!(index.remove(hash(1), 1) && !index.remove(hash(1), 1));
        index.set_hint(hash(5), 5, 77);
        assert_eq!((index.hint(hash(5), 5), index.len()), (Some(77), 2));
        assert_eq!(index.find(hash(9), |c| c == 9), Some(9), "the last entry moved to the hole");
    }

    #[test]
    fn a_built_index_keeps_every_entry_with_its_hint_whether_it_grew_or_shrank() {
        for count in [0u32, 5, 12, 13, 700, 3000] {
            let mut grown = IndexBuilder::with_capacity(0);
            let mut large = IndexBuilder::with_capacity(100_000);
            let mut exact = IndexBuilder::with_capacity(count as usize);
            for id in 0..count {
                grown.insert(weak_hash(id), id);
                large.insert(id.wrapping_mul(0x9E37_79B9), id);
                exact.insert(weak_hash(id), id);
                assert_eq!(grown.find(weak_hash(id), |c| c == id), Some(id), "while building");
            }
            let hint = |id: u32| 0x1000 + id as usize;
            let mut asked = Vec::new();
            let g = grown.finish(hint, |id| asked.push(id));
            let l = large.finish(hint, |_| {});
            let e = exact.finish(hint, |_| {});
            let mask = match NameIndex::slots_for(count as usize) {
                LINEAR => LINEAR,
                size => size - 1,
            };
            assert_eq!(e.mask, mask, "kept its size");
            assert_eq!(l.mask, mask, "shrunk");
            assert_eq!((g.len(), l.len()), (count as usize, count as usize));
            assert!(asked.iter().all(|&id| id < count), "only entries are prefetched");
            for id in 0..count {
                assert_eq!(g.find(weak_hash(id), |c| c == id), Some(id), "{count}: {id}");
                assert_eq!(l.find(id.wrapping_mul(0x9E37_79B9), |c| c == id), Some(id));
                assert_eq!(g.hint(weak_hash(id), id), Some(hint(id)));
                assert_eq!(e.find(weak_hash(id), |c| c == id), Some(id));
                assert_eq!(e.hint(weak_hash(id), id), Some(hint(id)));
            }
        }
    }
}
