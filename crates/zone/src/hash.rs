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

/// The tag of the root name.
const ROOT_TAG: NameTag = finish(ROOT_HASH);

/// Masks an index into the per-label tables (`MAX_LABELS + 1` entries, a power of two).
const MASK: usize = MAX_LABELS;
const _: () = assert!((MAX_LABELS + 1).is_power_of_two());

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

/// [`label_hash`] of the label of `len` bytes at `at` in `wire`, for labels of up to 16
/// bytes (nearly all) with whole-word loads: the last one to eight bytes come from the
/// eight bytes that end where the label ends (or, for a short label near the start of
/// a short name, from the name's first eight bytes), the eight before them, if any,
/// from one more load.
#[inline(always)]
fn label_hash_at(wire: &[u8], at: usize, len: usize) -> u64 {
    let word = |from: usize| {
        wire.get(from..).and_then(|w| w.first_chunk::<8>()).map(|w| u64::from_le_bytes(*w))
    };
    let end = at + len;
    let hashed = match len {
        1..=8 => match end.checked_sub(8) {
            Some(from) => word(from).map(|w| mix(len as u64, fold8(w >> (64 - 8 * len)))),
            // `end` < 8, so `len` <= 6 and `at` < 8.
            None => {
                word(0).map(|w| mix(len as u64, fold8((w >> (8 * at)) & ((1u64 << (8 * len)) - 1))))
            }
        },
        9..=16 => word(at).zip(word(end - 8)).map(|(first, last)| {
            let h = mix(len as u64, fold8(first));
            mix(h, fold8(last >> (128 - 8 * len)))
        }),
        _ => None,
    };
    hashed.unwrap_or_else(|| label_hash(wire.get(at..end).unwrap_or(&[])))
}

/// Hash state of the name made of `label` under a parent whose state is `parent`.
#[inline]
pub fn child_hash(parent: u64, label: &[u8]) -> u64 {
    mix(parent, label_hash(label))
}

/// The tag of a hash state (murmur3's fmix64, low 32 bits).
#[inline]
pub const fn finish(mut h: u64) -> NameTag {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    (h ^ (h >> 33)) as u32
}

/// Tag of a whole name: the tags of its suffixes are not kept (as [`SuffixHashes`] keeps
/// them), nor is a table of them cleared.
pub fn name_hash(name: &Dname) -> NameTag {
    let wire = name.as_wire();
    let mut starts = [0u8; MAX_LABELS + 1];
    let count = label_starts(wire, &mut starts);
    finish(hash_down(wire, &starts, count, |_, _| {}))
}

/// Records where each label of `wire` starts, left to right, and where the root byte is
/// (entry `count`); returns the label count. Indexes are masked to the table's size (a
/// name has at most [`MAX_LABELS`] labels), so the loop carries no bounds checks.
#[inline(always)]
fn label_starts(wire: &[u8], starts: &mut [u8; MAX_LABELS + 1]) -> usize {
    let mut count = 0usize;
    let mut pos = 0usize;
    while let Some(&len) = wire.get(pos).filter(|&&len| len != 0) {
        set(starts, count, pos as u8);
        count += 1;
        pos += usize::from(len) + 1;
    }
    let count = count.min(MAX_LABELS);
    set(starts, count, pos as u8); // the root byte
    count
}

/// Chains the label hashes of `wire` from the root down, with the label starts found by
/// [`label_starts`]; `each(depth, state)` sees the state of the suffix of `depth` labels.
/// Returns the whole name's state.
#[inline(always)]
fn hash_down(
    wire: &[u8],
    starts: &[u8; MAX_LABELS + 1],
    count: usize,
    mut each: impl FnMut(usize, u64),
) -> u64 {
    let mut h = ROOT_HASH;
    for depth in 1..=count {
        let start = usize::from(at(starts, count - depth));
        let len = usize::from(wire.get(start).copied().unwrap_or(0));
        h = mix(h, label_hash_at(wire, start + 1, len));
        each(depth, h);
    }
    h
}

/// Entry `i` of a per-label table; the index is masked, so there is no bounds check.
#[inline(always)]
fn at<T: Copy + Default>(table: &[T; MAX_LABELS + 1], i: usize) -> T {
    table.get(i & MASK).copied().unwrap_or_default()
}

/// Sets entry `i` of a per-label table (masked, as [`at`]).
#[inline(always)]
fn set<T>(table: &mut [T; MAX_LABELS + 1], i: usize, value: T) {
    if let Some(entry) = table.get_mut(i & MASK) {
        *entry = value;
    }
}

/// The tags of every suffix of a name, indexed by the suffix's label count (0 = the
/// root), computed in one pass, with where each suffix starts.
#[derive(Clone)]
pub struct SuffixHashes {
    labels: u8,
    tags: [NameTag; MAX_LABELS + 1],
    /// Byte offset of label `i`, left to right; entry `labels` is the root byte's. The
    /// suffix with `k` labels starts at entry `labels - k`.
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

    /// Fills in the suffixes of `name`: label starts left to right, then tags from the
    /// root down.
    #[inline]
    fn fill(&mut self, name: &Dname) {
        let wire = name.as_wire();
        let count = label_starts(wire, &mut self.starts);
        set(&mut self.tags, 0, ROOT_TAG);
        let tags = &mut self.tags;
        hash_down(wire, &self.starts, count, |depth, h| set(tags, depth, finish(h)));
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
        let first = self.labels().saturating_sub(labels);
        let start = usize::from(at(&self.starts, first));
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

    /// The tags as the definition gives them: label hashes chained from the root down.
    fn reference_tags(name: &Name) -> Vec<NameTag> {
        let labels: Vec<&[u8]> = name.labels().collect();
        let mut h = ROOT_HASH;
        let mut tags = vec![finish(h)];
        for label in labels.iter().rev() {
            h = child_hash(h, label);
            tags.push(finish(h));
        }
        tags
    }

    #[test]
    fn word_loads_hash_as_the_definition_does() {
        // Every label length 1..=63 (one load, two loads, the byte-wise fallback), first
        // in the name or after labels of every length (a label ending before byte 8 of
        // the name takes the name's first word), in mixed case.
        let letters = b"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_";
        let label = |len: usize, seed: usize| -> String {
            (0..len).map(|i| char::from(letters[(i * 7 + seed) % letters.len()])).collect()
        };
        for len in 1..=63 {
            for before in 0..=10 {
                let mut text = String::new();
                if before > 0 {
                    text.push_str(&label(before, len));
                    text.push('.');
                }
                text.push_str(&label(len, before));
                text.push_str(".tld.");
                for name in [n(&text), n(&text[..text.len() - 4])] {
                    let h = SuffixHashes::of(&name);
                    let tags: Vec<NameTag> = (0..=h.labels()).map(|k| h.suffix(k)).collect();
                    assert_eq!(tags, reference_tags(&name), "{name}");
                    assert_eq!(name_hash(&name), h.full(), "{name}");
                }
            }
        }
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
