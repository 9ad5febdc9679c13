//! Label-wise, case-insensitive hashing of names.
//!
//! The hash of a name is built from its parent's hash and its first label, so one pass
//! over a query name from the root down yields the hash of *every* suffix: each possible
//! zone apex (zone-database lookup) and each possible ancestor node (closest-encloser
//! search) without rehashing. Letters are lower-cased eight at a time (SWAR). What the
//! tables key on is the 32-bit [`NameTag`], the finished hash.

use tern_wire::ascii::{fold8, load8};
use tern_wire::name::{Dname, MAX_LABELS};

/// The 32-bit finished hash of a name, as the name tables use it.
pub type NameTag = u32;

/// The hash state of the root name.
pub const ROOT_HASH: u64 = 0x243F_6A88_85A3_08D3;

const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(23) ^ v).wrapping_mul(K)
}

/// Hash of one label, ignoring ASCII case.
#[inline]
pub fn label_hash(label: &[u8]) -> u64 {
    let mut h = label.len() as u64;
    let mut chunks = label.chunks_exact(8);
    for chunk in &mut chunks {
        h = mix(h, fold8(load8(chunk)));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = mix(h, fold8(load8(rest)));
    }
    h
}

/// Hash state of the name made of `label` under a parent whose state is `parent`.
#[inline]
pub fn child_hash(parent: u64, label: &[u8]) -> u64 {
    mix(parent, label_hash(label))
}

/// The tag of a hash state (murmur3's fmix64, low 32 bits).
#[inline]
pub fn finish(mut h: u64) -> NameTag {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    (h ^ (h >> 33)) as u32
}

/// Tag of a whole name.
pub fn name_hash(name: &Dname) -> NameTag {
    SuffixHashes::of(name).full()
}

/// The tags of every suffix of a name, indexed by the suffix's label count (0 = the
/// root), computed in one pass, with where each suffix starts.
#[derive(Clone)]
pub struct SuffixHashes {
    labels: u8,
    tags: [NameTag; MAX_LABELS + 1],
    /// Byte offset where the suffix with `k` labels starts (`k` = 0: the root byte).
    starts: [u8; MAX_LABELS + 1],
}

impl SuffixHashes {
    /// Hashes every suffix of `name`.
    #[inline(always)]
    pub fn of(name: &Dname) -> SuffixHashes {
        let mut out = SuffixHashes::root();
        out.fill(name);
        out
    }

    /// The hashes of the root name, to be [`refill`](Self::refill)ed in place (no copy of
    /// the tables, unlike [`of`](Self::of)).
    #[inline(always)]
    pub fn root() -> SuffixHashes {
        SuffixHashes { labels: 0, tags: [0; MAX_LABELS + 1], starts: [0; MAX_LABELS + 1] }
    }

    /// Hashes every suffix of `name`, replacing what was here.
    #[inline]
    pub fn refill(&mut self, name: &Dname) {
        self.fill(name);
    }

    /// Fills in the suffixes of `name`: label starts left to right, turned around so
    /// that they count from the root, then tags from the root down.
    #[inline]
    fn fill(&mut self, name: &Dname) {
        let wire = name.as_wire();
        let mut count = 0usize;
        let mut pos = 0usize;
        while let Some(&len) = wire.get(pos).filter(|&&len| len != 0) {
            // Entry 0 is the root's; label i's start goes to i + 1 for now.
            if let Some(slot) = self.starts.get_mut(count + 1) {
                *slot = pos as u8;
            }
            count += 1;
            pos += usize::from(len) + 1;
        }
        let count = count.min(MAX_LABELS);
        if let Some(starts) = self.starts.get_mut(1..=count) {
            starts.reverse(); // now entry k is where the suffix of k labels starts
        }
        let mut h = ROOT_HASH;
        if let (Some(tag), Some(start)) = (self.tags.first_mut(), self.starts.first_mut()) {
            *tag = finish(h);
            *start = pos as u8;
        }
        for depth in 1..=count {
            let start = usize::from(self.starts.get(depth).copied().unwrap_or(0));
            let len = usize::from(wire.get(start).copied().unwrap_or(0));
            h = child_hash(h, wire.get(start + 1..start + 1 + len).unwrap_or(&[]));
            if let Some(tag) = self.tags.get_mut(depth) {
                *tag = finish(h);
            }
        }
        self.labels = count as u8;
    }

    /// Number of labels of the whole name.
    #[inline]
    pub fn labels(&self) -> usize {
        usize::from(self.labels)
    }

    /// Tag of the whole name.
    #[inline]
    pub fn full(&self) -> NameTag {
        self.suffix(self.labels())
    }

    /// Tag of the suffix with `labels` labels (0 = root); the root's if out of range.
    #[inline]
    pub fn suffix(&self, labels: usize) -> NameTag {
        self.tags.get(labels).or(self.tags.first()).copied().unwrap_or(0)
    }

    /// The suffix of `name` (the name these tags were computed from) with `labels`
    /// labels.
    #[inline]
    pub fn suffix_name<'n>(&self, name: &'n Dname, labels: usize) -> &'n Dname {
        let start = usize::from(self.starts.get(labels).copied().unwrap_or(0));
        name.suffix_at(start).unwrap_or(Dname::ROOT)
    }
}

impl std::fmt::Debug for SuffixHashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tags.iter().take(self.labels() + 1)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn case_insensitive_and_suffix_consistent() {
        let a = SuffixHashes::of(&n("WWW.Example.COM."));
        let b = SuffixHashes::of(&n("www.example.com."));
        assert_eq!(a.full(), b.full());
        assert_eq!(a.suffix(2), name_hash(&n("example.com.")));
        assert_eq!(a.suffix(1), name_hash(&n("com.")));
        assert_eq!(a.suffix(0), finish(ROOT_HASH));
        assert_eq!(a.labels(), 3);
        let name = n("WWW.Example.COM.");
        assert_eq!(a.suffix_name(&name, 2).to_string(), "Example.COM.");
        assert_eq!(a.suffix_name(&name, 3).to_string(), "WWW.Example.COM.");
        assert_eq!(a.suffix_name(&name, 0).to_string(), ".");
        assert_ne!(name_hash(&n("a.b.")), name_hash(&n("b.a.")));
        assert_ne!(name_hash(&n("ab.")), name_hash(&n("a.b.")));
    }

    #[test]
    fn deepest_names_hash_every_suffix() {
        let deep: String = "a.".repeat(127);
        let name = n(&deep);
        let h = SuffixHashes::of(&name);
        assert_eq!(h.labels(), 127);
        assert_eq!(h.suffix(127), name_hash(&name));
        assert_eq!(h.suffix_name(&name, 1).to_string(), "a.");
        assert_eq!(h.suffix(1), name_hash(&n("a.")));
    }

    #[test]
    fn long_labels_hash_all_bytes() {
        let a = label_hash(b"abcdefghijklmnopq");
        let b = label_hash(b"abcdefghijklmnopr");
        assert_ne!(a, b);
        assert_eq!(label_hash(b"ABCDEFGHIJKLMNOPQ"), a);
    }
}
