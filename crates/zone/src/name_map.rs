//! A map keyed by domain name whose copies share what they do not change: the shape of
//! every table of zones that a snapshot holds (the zone set, the engine's access rules,
//! the control plane's writers).
//!
//! Entries live in a [`ChunkVec`] and are found through a [`NameIndex`] (itself in
//! chunks), so cloning a map copies only lists of chunk pointers, and inserting or
//! removing an entry then copies the few chunks it touches: adding one zone beside a
//! million costs microseconds, not a copy of the million (ARCHITECTURE.md: copy-on-write,
//! structural sharing of the rest). Removal moves the last entry into the hole, so the
//! entries stay dense and iteration order is insertion order until the first removal.
//! Names compare without regard to case (RFC 4343 §3).

use std::sync::Arc;

use tern_wire::{Dname, Name};

use crate::cow::ChunkVec;
use crate::hash::{name_hash, NameTag};
use crate::index::NameIndex;

/// An entry of a [`NameMap`]: something that carries the name it is found by.
pub trait Keyed {
    /// The name the entry is found by.
    fn key(&self) -> &Dname;
}

impl<V> Keyed for (Name, V) {
    fn key(&self) -> &Dname {
        &self.0
    }
}

impl<T: Keyed + ?Sized> Keyed for Arc<T> {
    fn key(&self) -> &Dname {
        T::key(self)
    }
}

/// A copy-on-write map from names to entries (see the module comment).
#[derive(Clone, Debug)]
pub struct NameMap<T> {
    /// Dense: `Some` at every position below the length.
    entries: ChunkVec<Option<T>>,
    index: NameIndex,
}

impl<T: Keyed + Clone> Default for NameMap<T> {
    fn default() -> Self {
        NameMap::new()
    }
}

impl<T: Keyed + Clone> NameMap<T> {
    /// An empty map.
    pub fn new() -> Self {
        NameMap::with_capacity(0)
    }

    /// An empty map with room for about `expected` entries before its index grows.
    pub fn with_capacity(expected: usize) -> Self {
        NameMap { entries: ChunkVec::new(), index: NameIndex::with_capacity(expected) }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the map holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.len() == 0
    }

    /// The entry for `name`.
    #[inline]
    pub fn get(&self, name: &Dname) -> Option<&T> {
        self.get_hashed(name, name_hash(name))
    }

    /// The entry for `name`, whose [`name_hash`] is `hash` (a query's suffix hashes give
    /// it without hashing again).
    #[inline]
    pub fn get_hashed(&self, name: &Dname, hash: NameTag) -> Option<&T> {
        // The entry that matched is kept, not looked up again by its position.
        let mut found = None;
        self.index.find(hash, |at| {
            found = self.entry(at).filter(|e| e.key().eq_ignore_case(name));
            found.is_some()
        })?;
        found
    }

    /// The entry for `name`, to change in place (its chunk copied first if shared). The
    /// entry's name must stay as it is.
    pub fn get_mut(&mut self, name: &Dname) -> Option<&mut T> {
        let at = self.position(name, name_hash(name))?;
        self.entries.get_mut(at as usize)?.as_mut()
    }

    /// True when `name` has an entry.
    pub fn contains(&self, name: &Dname) -> bool {
        self.get(name).is_some()
    }

    /// Every entry (in insertion order, until a removal moves the last into a hole).
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.entries.iter().flatten()
    }

    /// Adds `item`, or replaces the entry of the same name; returns the one replaced.
    pub fn insert(&mut self, item: T) -> Option<T> {
        let hash = name_hash(item.key());
        if let Some(at) = self.position(item.key(), hash) {
            let slot = self.entries.get_mut(at as usize)?;
            return slot.replace(item);
        }
        let at = u32::try_from(self.entries.len()).ok()?;
        self.index.insert(hash, at, 0);
        self.entries.push(Some(item));
        None
    }

    /// Removes the entry for `name` and returns it: the last entry moves into its place,
    /// so the change touches two entries and their index slots, whatever the size.
    pub fn remove(&mut self, name: &Dname) -> Option<T> {
        let hash = name_hash(name);
        let at = self.position(name, hash)?;
        let removed = self.entry(at).cloned()?;
        self.index.remove(hash, at);
        let last = u32::try_from(self.entries.len() - 1).ok()?;
        if at != last {
            let moved = self.entry(last).cloned()?;
            let moved_hash = name_hash(moved.key());
            self.index.remove(moved_hash, last);
            self.index.insert(moved_hash, at, 0);
            self.entries.set(at as usize, Some(moved));
        }
        // Emptied before it is cut off: what stays past the length is kept alive.
        self.entries.set(last as usize, None);
        self.entries.pop();
        Some(removed)
    }

    /// Keeps only the entries `keep` approves (each one looked at: a whole-set change).
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let gone: Vec<Name> =
            self.iter().filter(|item| !keep(item)).map(|item| item.key().to_name()).collect();
        for name in gone {
            self.remove(&name);
        }
    }

    fn position(&self, name: &Dname, hash: NameTag) -> Option<u32> {
        self.index.find(hash, |at| self.entry(at).is_some_and(|e| e.key().eq_ignore_case(name)))
    }

    #[inline]
    fn entry(&self, at: u32) -> Option<&T> {
        self.entries.get(at as usize)?.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn map_of(count: usize) -> NameMap<(Name, usize)> {
        let mut map = NameMap::new();
        for i in 0..count {
            assert!(map.insert((name(&format!("z{i}.example.")), i)).is_none());
        }
        map
    }

    #[test]
    fn inserted_entries_are_found_in_any_case_and_replaced_by_name() {
        let mut map = map_of(3000);
        assert_eq!(map.len(), 3000);
        assert_eq!(map.get(&name("Z1234.EXAMPLE.")).map(|e| e.1), Some(1234));
        assert!(map.get(&name("z3000.example.")).is_none());
        assert_eq!(map.insert((name("z7.example."), 70)).map(|e| e.1), Some(7));
        assert_eq!(map.len(), 3000, "replaced, not added");
        assert_eq!(map.get(&name("z7.example.")).map(|e| e.1), Some(70));
    }

    #[test]
    fn removal_moves_the_last_entry_and_keeps_every_other_reachable() {
        let mut map = map_of(2500);
        assert_eq!(map.remove(&name("z10.example.")).map(|e| e.1), Some(10));
        assert!(map.remove(&name("z10.example.")).is_none(), "gone already");
        assert_eq!(map.remove(&name("z2499.example.")).map(|e| e.1), Some(2499), "the last");
        assert_eq!(map.len(), 2498);
        for i in (0..2499).filter(|&i| i != 10) {
            let found = map.get(&name(&format!("z{i}.example."))).map(|e| e.1);
            assert_eq!(found, Some(i), "z{i}");
        }
        let mut seen: Vec<usize> = map.iter().map(|e| e.1).collect();
        seen.sort_unstable();
        assert_eq!(seen.len(), 2498);
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "no entry twice");
        let mut empty = map_of(1);
        assert!(empty.remove(&name("z0.example.")).is_some() && empty.is_empty());
    }

    #[test]
    fn a_changed_copy_leaves_the_original_as_it_was() {
        let original = map_of(4000);
        let mut copy = original.clone();
        copy.remove(&name("z5.example."));
        copy.insert((name("new.example."), 9));
        copy.retain(|e| e.1 % 2 == 1 || e.1 == 9);
        assert_eq!(original.len(), 4000);
        assert!(original.contains(&name("z5.example.")) && original.contains(&name("z6.example.")));
        assert!(!original.contains(&name("new.example.")));
        assert_eq!(copy.len(), 2000, "1,999 odd ones and the new one");
        assert!(!copy.contains(&name("z6.example.")) && copy.contains(&name("new.example.")));
    }

    /// The copy of a large map that took one change shares every chunk it did not touch.
    #[test]
    fn one_change_copies_a_few_chunks() {
        let original = map_of(10_000);
        let mut copy = original.clone();
        copy.insert((name("one.example."), 1));
        copy.remove(&name("z3.example."));
        let shared = copy.entries.shared_chunks(&original.entries);
        assert!(shared >= 8, "{shared} of 10 entry chunks shared");
    }
}
