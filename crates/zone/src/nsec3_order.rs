//! The order of an NSEC3 chain: its (hashed owner, node id) pairs sorted by hash, which
//! answers "which record matches or covers this hash" (RFC 5155 §1.3, §7.2).
//!
//! SHA-1 output is uniform, so the pairs are kept in *groups* by the leading bits of the
//! hash (about [`GROUP`] pairs each), and each group has a table from the hash's next bits
//! to where such hashes start in it: a search reads one group's table slot and one or
//! two entries, instead of bisecting the whole list (a dozen and more cache misses on a
//! large signed zone). Groups are shared copy-on-write between snapshots: adding or
//! removing a record copies the group it falls in, not the chain. The number of groups
//! is chosen again only when the chain has grown or shrunk fourfold.

use std::sync::Arc;

use crate::nsec3::Nsec3Hash;

/// A hash and the id of the node it is the hashed owner of.
pub type Entry = (Nsec3Hash, u32);

/// Entries per group the grouping aims at: when grouped, a chain's groups hold from one
/// to two times as many on average. 2,048, so that a version's clone, which copies a
/// pointer and changes a count per group (twice: entries and table), goes through 256
/// groups on a chain of a million, not 1,024, while a change copies the group it falls
/// in (about 94 KiB there, in runs) and counts its table again.
const GROUP: usize = 2048;

/// Bits of a bucket number, at most (a group's table has at most 2^24 + 1 slots).
const MAX_BUCKET_BITS: u32 = 24;

/// The chain's entries in hash order (see the module docs).
#[derive(Clone, Debug)]
pub struct HashOrder {
    /// Per group (the hashes whose leading `group_bits` bits are its number), its entries
    /// in hash order.
    entries: Vec<Arc<[Entry]>>,
    /// Per group, its bucket table: `starts[b]` is the first entry whose bucket (the
    /// hash's bits after the group's) is at least `b`; the last slot is the entry count.
    /// A table of 2^k + 1 slots gives k-bit buckets.
    starts: Vec<Arc<[u32]>>,
    group_bits: u32,
    len: usize,
}

/// A place in the order: a group and an offset in it, at an entry or at the end of the
/// order (one past the last group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    group: usize,
    at: usize,
}

/// Leading bits of the group number for a chain of `len` entries.
fn group_bits_for(len: usize) -> u32 {
    (len / GROUP).max(1).ilog2()
}

impl HashOrder {
    /// The order of `entries`, given in any order.
    pub fn new(mut entries: Vec<Entry>) -> HashOrder {
        sort_by_hash(&mut entries);
        let group_bits = group_bits_for(entries.len());
        let groups = 1usize << group_bits;
        let mut order = HashOrder {
            entries: Vec::with_capacity(groups),
            starts: Vec::with_capacity(groups),
            group_bits,
            len: entries.len(),
        };
        let mut rest = entries.as_slice();
        for group in 0..groups {
            let count = rest.partition_point(|e| leading_bits(&e.0, group_bits) <= group);
            let (mine, others) = rest.split_at(count);
            order.starts.push(bucket_table(mine, group_bits));
            order.entries.push(Arc::from(mine));
            rest = others;
        }
        order
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every entry in hash order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.entries.iter().flat_map(|group| group.iter())
    }

    /// Groups shared with `other` (at the same place), and the number of groups.
    #[cfg(test)]
    pub fn shared_groups(&self, other: &HashOrder) -> (usize, usize) {
        let shared = self.entries.iter().zip(&other.entries).filter(|(a, b)| Arc::ptr_eq(a, b));
        (shared.count(), self.entries.len())
    }

    /// The place of the first entry whose hash is not below `hash`.
    #[inline]
    pub fn lower_bound(&self, hash: &Nsec3Hash) -> Place {
        let group = leading_bits(hash, self.group_bits);
        let starts: &[u32] = self.starts.get(group).map_or(&[], |s| s);
        let entries: &[Entry] = self.entries.get(group).map_or(&[], |e| e);
        let bits = (starts.len().max(2) - 1).trailing_zeros();
        let bucket = leading_bits(hash, self.group_bits + bits) & ((1usize << bits) - 1);
        let start = starts.get(bucket).map_or(0, |&s| s as usize);
        let end = starts.get(bucket + 1).map_or(entries.len(), |&e| e as usize);
        let within = entries.get(start..end).unwrap_or(&[]);
        let at = start + within.partition_point(|e| e.0 < *hash);
        if at < entries.len() {
            return Place { group, at };
        }
        // Past the group's last hash: the first entry of the next group holding any.
        let next = self.entries.iter().skip(group + 1).position(|g| !g.is_empty());
        Place { group: next.map_or(self.entries.len(), |n| group + 1 + n), at: 0 }
    }

    /// The entry at `place`.
    #[inline]
    pub fn get(&self, place: Place) -> Option<&Entry> {
        self.entries.get(place.group)?.get(place.at)
    }

    /// The entry before `place`, wrapping to the last; `None` when the order is empty.
    #[inline]
    pub fn before(&self, place: Place) -> Option<&Entry> {
        if let Some(at) = place.at.checked_sub(1) {
            return self.entries.get(place.group)?.get(at);
        }
        // Earlier groups, then from the last group back: nearly always the group just
        // before, the groups being about 2,048 entries full.
        let groups = self.entries.len();
        (1..=groups)
            .filter_map(|back| self.entries.get((place.group + groups - back) % groups))
            .find_map(|group| group.last())
    }

    /// Removes the entries with the hashes `removed` and adds `added` (whose hashes are
    /// not in the order): copies only the groups they fall in, unless the chain's size
    /// has changed fourfold since it was grouped, when it is grouped again.
    pub fn update(&mut self, removed: &[Nsec3Hash], added: &[Entry]) {
        let mut removed = removed.to_vec();
        removed.sort_unstable();
        let mut added = added.to_vec();
        sort_by_hash(&mut added);
        let len = (self.len + added.len()).saturating_sub(removed.len());
        if group_bits_for(len).abs_diff(self.group_bits) >= 2 {
            let kept = self.iter().filter(|e| removed.binary_search(&e.0).is_err());
            let all: Vec<Entry> = kept.chain(&added).copied().collect();
            *self = HashOrder::new(all);
            return;
        }
        let bits = self.group_bits;
        let (mut r, mut a) = (removed.as_slice(), added.as_slice());
        while let Some(group) = next_group(r, a, bits) {
            let (r_here, r_rest) =
                r.split_at(r.partition_point(|h| leading_bits(h, bits) <= group));
            let (a_here, a_rest) =
                a.split_at(a.partition_point(|e| leading_bits(&e.0, bits) <= group));
            self.update_group(group, r_here, a_here);
            (r, a) = (r_rest, a_rest);
        }
    }

    /// Makes one group again without the hashes `removed` and with `added` (both sorted).
    fn update_group(&mut self, group: usize, removed: &[Nsec3Hash], added: &[Entry]) {
        let Some(old) = self.entries.get(group) else { return };
        let entries = merged(old, removed, added);
        self.len = self.len + entries.len() - old.len();
        if let Some(starts) = self.starts.get_mut(group) {
            *starts = bucket_table(&entries, self.group_bits);
        }
        if let Some(slot) = self.entries.get_mut(group) {
            *slot = Arc::from(entries);
        }
    }
}

/// `old` without the hashes `removed` and with `added` (all three sorted by hash; a hash
/// of `removed` that `old` lacks is passed over), copied a run of `old` at a time.
fn merged(old: &[Entry], removed: &[Nsec3Hash], added: &[Entry]) -> Vec<Entry> {
    let mut out = Vec::with_capacity(old.len() + added.len());
    let (mut removed, mut added) = (removed.iter().peekable(), added.iter().peekable());
    let mut rest = old;
    loop {
        let next = match (removed.peek(), added.peek()) {
            (Some(&&gone), Some(new)) => gone.min(new.0),
            (Some(&&gone), None) => gone,
            (None, Some(new)) => new.0,
            (None, None) => break,
        };
        let (before, after) = rest.split_at(rest.partition_point(|e| e.0 < next));
        out.extend_from_slice(before);
        rest = after;
        if removed.next_if(|gone| **gone == next).is_some() {
            if let Some((_, after)) = rest.split_first().filter(|(e, _)| e.0 == next) {
                rest = after;
            }
        } else if let Some(new) = added.next() {
            out.push(*new);
        }
    }
    out.extend_from_slice(rest);
    out
}

/// The group of the first hash among `removed` and `added` (both sorted).
fn next_group(removed: &[Nsec3Hash], added: &[Entry], group_bits: u32) -> Option<usize> {
    let first = match (removed.first(), added.first()) {
        (Some(r), Some(a)) => r.min(&a.0),
        (Some(r), None) => r,
        (None, Some(a)) => &a.0,
        (None, None) => return None,
    };
    Some(leading_bits(first, group_bits))
}

/// The bucket table of one group's sorted entries (see [`HashOrder::starts`]): about one
/// bucket per entry. Counted, then summed: no branch on the entries.
fn bucket_table(entries: &[Entry], group_bits: u32) -> Arc<[u32]> {
    let bits = entries.len().max(1).next_power_of_two().trailing_zeros();
    let bits = bits.min(MAX_BUCKET_BITS).min(32 - group_bits);
    let buckets = 1usize << bits;
    let mut starts = vec![0u32; buckets + 1];
    for e in entries {
        let bucket = leading_bits(&e.0, group_bits + bits) & (buckets - 1);
        if let Some(after) = starts.get_mut(bucket + 1) {
            *after += 1;
        }
    }
    let mut before = 0;
    for start in &mut starts {
        before += *start;
        *start = before;
    }
    starts.into()
}

/// Sorts (hash, value) pairs by hash. Hashes are uniform, so their leading 32 bits nearly
/// always decide: a radix sort orders by those (three counting passes of 11 bits instead
/// of some 17 comparisons per pair on a large chain), then each run of pairs with equal
/// leading bits, rare and short, is sorted by the whole hash.
pub fn sort_by_hash(pairs: &mut [Entry]) {
    const DIGIT: u32 = 11;
    if pairs.len() < 256 {
        pairs.sort_unstable_by_key(|p| p.0);
        return;
    }
    let mut from = pairs.to_vec();
    let mut to = from.clone();
    for pass in 0..3 {
        let digit = |p: &Entry| leading_bits(&p.0, 32) >> (pass * DIGIT) & 0x7FF;
        let mut starts = [0usize; 1 << DIGIT];
        for p in &from {
            if let Some(count) = starts.get_mut(digit(p)) {
                *count += 1;
            }
        }
        let mut next = 0;
        for start in &mut starts {
            (*start, next) = (next, next + *start);
        }
        for p in &from {
            if let Some(start) = starts.get_mut(digit(p)) {
                if let Some(place) = to.get_mut(*start) {
                    *place = *p;
                }
                *start += 1;
            }
        }
        std::mem::swap(&mut from, &mut to);
    }
    pairs.copy_from_slice(&from);
    for run in pairs.chunk_by_mut(|a, b| leading_bits(&a.0, 32) == leading_bits(&b.0, 32)) {
        if run.len() > 1 {
            run.sort_unstable_by_key(|p| p.0);
        }
    }
}

/// The first `bits` bits (at most 32) of a hash, as a number.
#[inline]
fn leading_bits(hash: &Nsec3Hash, bits: u32) -> usize {
    let word = hash.first_chunk::<4>().map_or(0, |w| u32::from_be_bytes(*w));
    word.checked_shr(32 - bits).unwrap_or(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nsec3::HASH_LEN;

    /// Xorshift hashes, every `tie`th sharing its leading 32 bits with others.
    struct Hashes(u64);
    impl Hashes {
        fn next(&mut self, tie: bool) -> Nsec3Hash {
            let mut hash = [0u8; HASH_LEN];
            for chunk in hash.chunks_mut(8) {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                chunk.copy_from_slice(&self.0.to_be_bytes()[..chunk.len()]);
            }
            if tie {
                let low = hash[4] % 7;
                hash[..4].copy_from_slice(&[0x55, 0, 0, low]);
            }
            hash
        }
    }

    /// The position in a plain sorted list of a place in the order.
    fn index_of(order: &HashOrder, place: Place) -> usize {
        let before: usize = order.entries[..place.group].iter().map(|g| g.len()).sum();
        before + place.at
    }

    /// Checks `order` against the sorted list `model` at every entry's hash and at
    /// probes between them: lower bound, entry and wrapped predecessor.
    fn assert_agrees(order: &HashOrder, model: &[Entry], probes: &[Nsec3Hash]) {
        assert_eq!(order.len(), model.len());
        assert!(order.iter().eq(model.iter()), "iteration in hash order");
        for probe in model.iter().map(|e| e.0).chain(probes.iter().copied()) {
            let place = order.lower_bound(&probe);
            let expect = model.partition_point(|e| e.0 < probe);
            assert_eq!(index_of(order, place), expect);
            assert_eq!(order.get(place), model.get(expect));
            let before = if expect == 0 { model.last() } else { model.get(expect - 1) };
            assert_eq!(order.before(place), before);
        }
        assert_eq!(index_of(order, order.lower_bound(&[0xFF; HASH_LEN])), model.len());
        assert_eq!(index_of(order, order.lower_bound(&[0; HASH_LEN])), 0);
    }

    /// The radix sort orders as a plain sort by whole hash, whatever the size, and with
    /// many hashes sharing their leading 32 bits (ties the last step sorts).
    #[test]
    fn hashes_sort_as_by_whole_hash() {
        let mut hashes = Hashes(0x9E37_79B9_7F4A_7C15);
        for len in [0usize, 1, 2, 255, 256, 257, 5000] {
            let pairs: Vec<Entry> =
                (0..len as u32).map(|id| (hashes.next(id % 3 == 0), id)).collect();
            let mut radix = pairs.clone();
            sort_by_hash(&mut radix);
            let mut plain = pairs;
            plain.sort_unstable_by_key(|p| p.0);
            assert_eq!(radix, plain, "{len} pairs");
        }
    }

    #[test]
    fn grouped_search_agrees_with_bisection() {
        let mut hashes = Hashes(0x1234_5678_9ABC_DEF1);
        for count in [0usize, 1, 2, 3, 7, 64, 1000, 5000] {
            let entries: Vec<Entry> =
                (0..count as u32).map(|id| (hashes.next(id % 5 == 1), id)).collect();
            let order = HashOrder::new(entries.clone());
            let mut model = entries;
            model.sort_unstable_by_key(|e| e.0);
            let probes: Vec<Nsec3Hash> = (0..300).map(|i| hashes.next(i % 11 == 0)).collect();
            assert_agrees(&order, &model, &probes);
        }
    }

    /// A group made again: runs of the old group kept, a hash it lacks passed over, a
    /// hash removed and added back in one change taking its new id, at either end too.
    #[test]
    fn a_group_merged_with_a_change() {
        let h = |b: u8| [b; HASH_LEN];
        let old: Vec<Entry> = [2u8, 4, 6, 8].iter().map(|&b| (h(b), u32::from(b))).collect();
        let removed = [h(1), h(4), h(8)];
        let added = [(h(0), 100), (h(4), 104), (h(5), 105), (h(9), 109)];
        let ids: Vec<u32> = merged(&old, &removed, &added).iter().map(|e| e.1).collect();
        assert_eq!(ids, [100, 2, 104, 105, 6, 109]);
        assert_eq!(merged(&old, &[], &[]), old);
        assert!(merged(&old, &old.iter().map(|e| e.0).collect::<Vec<_>>(), &[]).is_empty());
    }

    /// Each bucket's start is the first entry whose bucket is at least its number (the
    /// entries of one group: their leading byte 0, group 0 of up to 8 group bits).
    #[test]
    fn bucket_starts_are_where_their_buckets_begin() {
        let mut hashes = Hashes(0xB0C4_E75E_ED00_0001);
        let mut in_group_0 = |i| {
            let mut hash = hashes.next(false);
            hash[0] = 0;
            (hash, i)
        };
        for (count, group_bits) in [(0usize, 0u32), (1, 0), (5, 1), (700, 2), (3000, 8)] {
            let mut entries: Vec<Entry> = (0..count as u32).map(&mut in_group_0).collect();
            sort_by_hash(&mut entries);
            let starts = bucket_table(&entries, group_bits);
            let bits = (starts.len() - 1).trailing_zeros();
            let bucket = |e: &Entry| leading_bits(&e.0, group_bits + bits) & ((1 << bits) - 1);
            for (b, &start) in starts.iter().enumerate() {
                let first = entries.iter().position(|e| bucket(e) >= b).unwrap_or(count);
                assert_eq!(start as usize, first, "{count} entries, bucket {b}");
            }
        }
    }

    /// Random removals and additions, one by one and in batches, growing the chain from
    /// nothing past several regroupings and shrinking it back: the order always agrees
    /// with a sorted list, and an earlier snapshot is left as it was.
    #[test]
    fn updates_agree_with_a_sorted_list() {
        let mut hashes = Hashes(0x0DDB_1A5E_5BAD_5EED);
        let mut order = HashOrder::new(Vec::new());
        let mut model: Vec<Entry> = Vec::new();
        let probes: Vec<Nsec3Hash> = (0..200).map(|i| hashes.next(i % 13 == 0)).collect();
        let mut next_id = 0u32;
        for round in 0..60usize {
            let growing = round < 40;
            let (adds, removes) = if growing { (round * 20, round % 4) } else { (round % 3, 60) };
            let added: Vec<Entry> = (0..adds)
                .map(|i| {
                    next_id += 1;
                    (hashes.next(i % 9 == 0), next_id)
                })
                .collect();
            let step = model.len() / removes.max(1) + 1;
            let removed: Vec<Nsec3Hash> =
                model.iter().step_by(step).take(removes).map(|e| e.0).collect();
            let snapshot = (order.clone(), model.clone());
            order.update(&removed, &added);
            model.retain(|e| !removed.contains(&e.0));
            model.extend_from_slice(&added);
            model.sort_unstable_by_key(|e| e.0);
            assert_agrees(&order, &model, &probes);
            assert_agrees(&snapshot.0, &snapshot.1, &probes);
        }
        assert!(model.len() > 5000 && model.len() < 15_000, "{}", model.len());
    }
}
