//! The zone database: which zones are served, and their current contents.
//!
//! A [`ZoneSet`] is an immutable snapshot of the set of zones; each zone sits in a
//! [`ZoneSlot`] whose contents are swapped atomically (`arc_swap`) when the zone is
//! reloaded or changed, so replacing one zone costs one pointer swap and never touches the
//! others. Adding or removing a zone publishes a new set. Readers (the data plane) load the
//! set once per batch and a zone's contents once per query: wait-free, never blocked by a
//! writer, never seeing half a zone.
//!
//! The set's table of zones is copy-on-write ([`NameMap`]): adding or removing a zone
//! copies a few chunks of it, not the whole, so the cost of a change follows the zones
//! changed, not the zones served.
//!
//! Finding the zone for a query name probes one hash per label count that some zone has
//! (O(labels)), longest match first, reusing the name's [`SuffixHashes`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use tern_wire::{Dname, Name};

use crate::contents::ZoneContents;
use crate::hash::SuffixHashes;
use crate::name_map::{Keyed, NameMap};
use crate::stats::StatsTicket;

/// A reader's hold on a zone's current contents ([`ZoneSlot::contents`]).
pub type ContentsGuard = arc_swap::Guard<Option<Arc<ZoneContents>>>;

/// One served zone: its name, its current contents (`None` until a first successful
/// load) and the row its queries are counted in ([`StatsTicket`]).
#[derive(Debug)]
pub struct ZoneSlot {
    origin: Name,
    contents: ArcSwapOption<ZoneContents>,
    /// A [`StatsTicket`], packed.
    stats: AtomicU64,
}

impl ZoneSlot {
    /// An empty slot for `origin`, its queries not counted.
    pub fn new(origin: &Dname) -> ZoneSlot {
        ZoneSlot::named(origin.to_name())
    }

    /// [`new`](Self::new), the slot holding `origin` itself (a clone of the zone's
    /// configured name shares its allocation).
    pub fn named(origin: Name) -> ZoneSlot {
        ZoneSlot {
            origin,
            contents: ArcSwapOption::empty(),
            stats: AtomicU64::new(StatsTicket::NONE.to_raw()),
        }
    }

    /// The row the zone's queries are counted in (one relaxed load).
    #[inline]
    pub fn stats_ticket(&self) -> StatsTicket {
        StatsTicket::from_raw(self.stats.load(Relaxed))
    }

    /// Counts the zone's queries under `ticket` from now on (the control plane's).
    pub fn set_stats_ticket(&self, ticket: StatsTicket) {
        self.stats.store(ticket.to_raw(), Relaxed);
    }

    /// The zone's name.
    pub fn origin(&self) -> &Name {
        &self.origin
    }

    /// The current contents (a cheap, wait-free load).
    #[inline]
    pub fn contents(&self) -> ContentsGuard {
        self.contents.load()
    }

    /// The current contents as an owned reference (for the control plane).
    pub fn contents_full(&self) -> Option<Arc<ZoneContents>> {
        self.contents.load_full()
    }

    /// Publishes new contents; readers see either the old or the new, never a mix.
    pub fn publish(&self, contents: Arc<ZoneContents>) {
        self.contents.store(Some(contents));
    }

    /// Publishes `new` (or empties the slot, for a zone that expired) only if the slot
    /// still holds `expected` (the same allocation): a writer replaces the version it
    /// started from, never one published meanwhile. False when it did not.
    pub fn replace(
        &self,
        expected: Option<&Arc<ZoneContents>>,
        new: Option<Arc<ZoneContents>>,
    ) -> bool {
        let expected = expected.map_or(std::ptr::null(), Arc::as_ptr);
        let previous = self.contents.compare_and_swap(expected, new);
        previous.as_ref().map_or(std::ptr::null(), Arc::as_ptr) == expected
    }
}

/// An immutable set of zones with longest-match lookup.
///
/// A copy shares its zones' table with the original ([`NameMap`]): a set that takes one
/// zone more or less copies a few chunks of it, so the change costs the same beside ten
/// zones or a million.
#[derive(Debug, Clone)]
pub struct ZoneSet {
    slots: NameMap<Arc<ZoneSlot>>,
    /// Bit `n` set when some zone's origin has `n` labels.
    label_counts: u128,
    /// How many origins have `n` labels (a bit of `label_counts` goes with its last).
    per_label_count: [u32; 128],
}

impl Default for ZoneSet {
    fn default() -> Self {
        ZoneSet { slots: NameMap::new(), label_counts: 0, per_label_count: [0; 128] }
    }
}

impl Keyed for ZoneSlot {
    fn key(&self) -> &Dname {
        self.origin()
    }
}

impl ZoneSet {
    /// A set of the given slots (the last of duplicate origins wins).
    pub fn new(slots: Vec<Arc<ZoneSlot>>) -> ZoneSet {
        let mut set = ZoneSet { slots: NameMap::with_capacity(slots.len()), ..ZoneSet::default() };
        for slot in slots {
            set.insert(slot);
        }
        set
    }

    /// Adds `slot`, or replaces the zone of the same name (control plane: on a set not
    /// yet published).
    pub fn insert(&mut self, slot: Arc<ZoneSlot>) {
        let labels = slot.origin().label_count().min(127);
        if self.slots.insert(slot).is_none() {
            self.count_labels(labels, true);
        }
    }

    /// Removes the zone `origin`; returns its slot if it was in the set.
    pub fn remove(&mut self, origin: &Dname) -> Option<Arc<ZoneSlot>> {
        let slot = self.slots.remove(origin)?;
        self.count_labels(slot.origin().label_count().min(127), false);
        Some(slot)
    }

    /// Counts an origin of `labels` labels in or out.
    fn count_labels(&mut self, labels: usize, added: bool) {
        let Some(count) = self.per_label_count.get_mut(labels) else { return };
        *count = if added { count.saturating_add(1) } else { count.saturating_sub(1) };
        match *count {
            0 => self.label_counts &= !(1u128 << labels),
            _ => self.label_counts |= 1u128 << labels,
        }
    }

    /// Number of zones.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no zone is served.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// All zones (in the order they were added, until a removal moves the last one).
    pub fn slots(&self) -> impl Iterator<Item = &Arc<ZoneSlot>> + '_ {
        self.slots.iter()
    }

    /// The zone named exactly `origin`.
    pub fn get(&self, origin: &Dname) -> Option<&Arc<ZoneSlot>> {
        self.slots.get(origin)
    }

    /// The zone with the longest origin that `qname` is at or below (RFC 1034 §4.3.2
    /// step 2). `hashes` are `qname`'s suffix hashes.
    #[inline]
    pub fn find(&self, qname: &Dname, hashes: &SuffixHashes) -> Option<&Arc<ZoneSlot>> {
        // Only the label counts some origin has, longest first.
        let labels = hashes.labels().min(127);
        let mut counts = self.label_counts & (u128::MAX >> (127 - labels));
        while counts != 0 {
            let labels = 127 - counts.leading_zeros() as usize;
            let suffix = hashes.suffix_name(qname, labels);
            if let Some(slot) = self.slots.get_hashed(suffix, hashes.suffix(labels)) {
                return Some(slot);
            }
            counts &= !(1u128 << labels);
        }
        None
    }

    /// A copy of this set with `slot` added (or replacing the zone of the same name).
    pub fn with(&self, slot: Arc<ZoneSlot>) -> ZoneSet {
        let mut set = self.clone();
        set.insert(slot);
        set
    }

    /// A copy of this set without the zone `origin`.
    pub fn without(&self, origin: &Dname) -> ZoneSet {
        let mut set = self.clone();
        set.remove(origin);
        set
    }
}

/// The published zone set, shared by the data plane and the control plane.
#[derive(Debug, Default)]
pub struct ZoneDb {
    set: ArcSwap<ZoneSet>,
}

impl ZoneDb {
    /// An empty database.
    pub fn new() -> ZoneDb {
        ZoneDb::default()
    }

    /// The current set (wait-free; hold it for a batch of queries).
    #[inline]
    pub fn load(&self) -> arc_swap::Guard<Arc<ZoneSet>> {
        self.set.load()
    }

    /// The current set as an owned reference.
    pub fn snapshot(&self) -> Arc<ZoneSet> {
        self.set.load_full()
    }

    /// Replaces the whole set (control plane only; one writer at a time).
    pub fn publish_set(&self, set: ZoneSet) {
        self.set.store(Arc::new(set));
    }

    /// The slot of `origin`, created and published if the zone is new.
    pub fn slot(&self, origin: &Dname) -> Arc<ZoneSlot> {
        let set = self.set.load_full();
        if let Some(slot) = set.get(origin) {
            return Arc::clone(slot);
        }
        let slot = Arc::new(ZoneSlot::new(origin));
        self.publish_set(set.with(Arc::clone(&slot)));
        slot
    }

    /// Publishes new contents for a zone (adding the zone if needed).
    pub fn publish(&self, contents: Arc<ZoneContents>) {
        self.slot(contents.origin()).publish(contents);
    }

    /// Stops serving a zone; returns whether it was served.
    pub fn remove(&self, origin: &Dname) -> bool {
        let set = self.set.load_full();
        if set.get(origin).is_none() {
            return false;
        }
        self.publish_set(set.without(origin));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn find(set: &ZoneSet, q: &str) -> Option<String> {
        let q = name(q);
        set.find(&q, &SuffixHashes::of(&q)).map(|s| s.origin().to_string())
    }

    #[test]
    fn longest_match() {
        let slots = ["example.", "sub.example.", "other.", "."]
            .iter()
            .map(|o| Arc::new(ZoneSlot::new(&name(o))))
            .collect();
        let set = ZoneSet::new(slots);
        assert_eq!(find(&set, "www.sub.EXAMPLE.").as_deref(), Some("sub.example."));
        assert_eq!(find(&set, "sub.example.").as_deref(), Some("sub.example."));
        assert_eq!(find(&set, "xsub.example.").as_deref(), Some("example."));
        assert_eq!(find(&set, "a.b.c.other.").as_deref(), Some("other."));
        assert_eq!(find(&set, "com.").as_deref(), Some("."));
        let set = set.without(&name("."));
        assert_eq!(find(&set, "com."), None);
        assert_eq!(set.len(), 3);
    }

    #[test]
    fn a_label_count_goes_when_its_last_origin_goes() {
        let slots = ["a.example.", "b.example.", "example."]
            .iter()
            .map(|o| Arc::new(ZoneSlot::new(&name(o))))
            .collect();
        let set = ZoneSet::new(slots).without(&name("a.example."));
        assert_eq!(find(&set, "www.b.example.").as_deref(), Some("b.example."));
        assert_eq!(find(&set, "www.a.example.").as_deref(), Some("example."));
        let set = set.without(&name("b.example.")).without(&name("b.example."));
        assert_eq!(set.label_counts, 1 << 1, "two labels: none left");
        assert_eq!(find(&set, "www.b.example.").as_deref(), Some("example."));
        let set = set.with(Arc::new(ZoneSlot::new(&name("b.example."))));
        assert_eq!(find(&set, "www.b.example.").as_deref(), Some("b.example."));
    }

    /// Zones added and removed one at a time, each set published, while a reader keeps
    /// finding the zones that stay (and the contents they hold) in whatever set it loads.
    #[test]
    fn zones_come_and_go_while_the_others_keep_answering() {
        let db = Arc::new(ZoneDb::new());
        let (zone, _) = testutil::zone("example.", testutil::APEX);
        let zone = Arc::new(zone);
        let kept: Vec<Name> = (0..300).map(|i| name(&format!("k{i}.example."))).collect();
        let mut set = ZoneSet::default();
        for origin in &kept {
            let slot = Arc::new(ZoneSlot::new(origin));
            slot.publish(Arc::clone(&zone));
            set.insert(slot);
        }
        db.publish_set(set);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (db, kept, stop) = (Arc::clone(&db), kept.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut rounds = 0u32;
                while !stop.load(Relaxed) || rounds == 0 {
                    let set = db.load();
                    for origin in &kept {
                        let qname = name(&format!("www.{origin}"));
                        let slot = set.find(&qname, &SuffixHashes::of(&qname));
                        assert!(slot.is_some_and(|s| s.origin() == origin), "{qname}");
                        assert!(slot.is_some_and(|s| s.contents().is_some()), "{qname}");
                    }
                    rounds += 1;
                }
                rounds
            })
        };
        for i in 0..2000 {
            let origin = name(&format!("c{i}.example."));
            db.publish_set(db.snapshot().with(Arc::new(ZoneSlot::new(&origin))));
            if i >= 10 {
                db.remove(&name(&format!("c{}.example.", i - 10)));
            }
        }
        stop.store(true, Relaxed);
        assert!(reader.join().unwrap() > 0);
        let set = db.snapshot();
        assert_eq!(set.len(), 310, "the 300 kept and the last 10 added");
        assert_eq!(find(&set, "www.c1999.example.").as_deref(), Some("c1999.example."));
        assert_eq!(find(&set, "www.c1989.example."), None);
    }

    #[test]
    fn replace_checks_the_version_it_replaces() {
        let slot = ZoneSlot::new(&name("example."));
        let v1 = Arc::new(testutil::zone("example.", testutil::APEX).0);
        let v2 = Arc::new(testutil::zone("example.", testutil::APEX).0);
        assert!(slot.replace(None, Some(Arc::clone(&v1))), "empty to v1");
        assert!(!slot.replace(None, Some(Arc::clone(&v2))), "not empty any more");
        assert!(!slot.replace(Some(&v2), None), "v2 is not what it holds");
        assert!(Arc::ptr_eq(&slot.contents_full().unwrap(), &v1));
        assert!(slot.replace(Some(&v1), Some(Arc::clone(&v2))));
        assert!(slot.replace(Some(&v2), None), "emptied (expired)");
        assert!(slot.contents_full().is_none());
    }

    #[test]
    fn publish_replaces_one_zone_for_readers() {
        let db = ZoneDb::new();
        let (v1, _) = testutil::zone("example.", testutil::APEX);
        db.publish(Arc::new(v1));
        let reader_view = db.load();
        let slot = Arc::clone(reader_view.get(&name("example.")).unwrap());
        let before = slot.contents_full().unwrap();
        assert_eq!(before.serial(), 1);
        let (v2, _) = testutil::zone("example.", &testutil::APEX.replace(" 1 7200", " 2 7200"));
        db.publish(Arc::new(v2));
        // The same slot now holds the new contents; the old snapshot is still intact.
        assert_eq!(slot.contents_full().unwrap().serial(), 2);
        assert_eq!(before.serial(), 1);
        assert_eq!(db.load().len(), 1);
        assert!(db.remove(&name("example.")));
        assert!(!db.remove(&name("example.")));
        assert!(db.load().is_empty());
    }
}
