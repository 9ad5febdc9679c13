//! Label-wise, case-insensitive hashing of names.
//!
//! The hash of a name is built from its parent's hash and its first label, so one pass
//! over a query name from the root down yields the hash of *every* suffix: each possible
//! zone apex (zone-database lookup) and each possible ancestor node (closest-encloser
//! search) without rehashing. Letters are lower-cased eight at a time (SWAR).

use tern_wire::name::{Dname, MAX_LABELS};

/// The hash of the root name.
pub const ROOT_HASH: u64 = 0x243F_6A88_85A3_08D3;

const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(23) ^ v).wrapping_mul(K)
}

/// Sets bit 0x20 in every byte of `x` that is an ASCII upper-case letter.
#[inline]
fn lower8(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let low = x & LOW7;
    let ge_a = low + 0x3F3F_3F3F_3F3F_3F3F; // high bit set where byte >= 'A'
    let gt_z = low + 0x2525_2525_2525_2525; // high bit set where byte > 'Z'
    let upper = !x & ge_a & !gt_z & HIGH;
    x | (upper >> 2)
}

/// Hash of one label, ignoring ASCII case.
#[inline]
pub fn label_hash(label: &[u8]) -> u64 {
    let mut h = label.len() as u64;
    let mut chunks = label.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        h = mix(h, lower8(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        for (dst, src) in buf.iter_mut().zip(rest) {
            *dst = *src;
        }
        h = mix(h, lower8(u64::from_le_bytes(buf)));
    }
    h
}

/// Hash of the name made of `label` under a parent whose hash is `parent`.
#[inline]
pub fn child_hash(parent: u64, label: &[u8]) -> u64 {
    mix(parent, label_hash(label))
}

/// Final avalanche before a hash picks a table slot (murmur3's fmix64).
#[inline]
pub fn finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// Hash of a whole name.
pub fn name_hash(name: &Dname) -> u64 {
    SuffixHashes::of(name).full()
}

/// The hashes of every suffix of a name, indexed by the suffix's label count
/// (0 = the root), computed in one pass, with where each suffix starts.
#[derive(Clone)]
pub struct SuffixHashes {
    labels: usize,
    hashes: [u64; MAX_LABELS + 1],
    /// Byte offset where the suffix with `k` labels starts (`k` = 0: the root byte).
    starts: [u8; MAX_LABELS + 1],
}

impl SuffixHashes {
    /// Hashes every suffix of `name`.
    pub fn of(name: &Dname) -> SuffixHashes {
        let mut out =
            SuffixHashes { labels: 0, hashes: [0; MAX_LABELS + 1], starts: [0; MAX_LABELS + 1] };
        let offsets = name.label_offsets();
        let wire = name.as_wire();
        let mut h = ROOT_HASH;
        if let (Some(slot), Some(start)) = (out.hashes.first_mut(), out.starts.first_mut()) {
            *slot = h;
            *start = (wire.len() - 1) as u8;
        }
        for (depth, &offset) in offsets.as_slice().iter().rev().enumerate() {
            let start = usize::from(offset);
            let len = usize::from(wire.get(start).copied().unwrap_or(0));
            h = child_hash(h, wire.get(start + 1..start + 1 + len).unwrap_or(&[]));
            if let (Some(slot), Some(s)) =
                (out.hashes.get_mut(depth + 1), out.starts.get_mut(depth + 1))
            {
                *slot = h;
                *s = offset;
            }
        }
        out.labels = offsets.len();
        out
    }

    /// Number of labels of the whole name.
    pub fn labels(&self) -> usize {
        self.labels
    }

    /// Hash of the whole name.
    pub fn full(&self) -> u64 {
        self.suffix(self.labels)
    }

    /// Hash of the suffix with `labels` labels (0 = root); the root's hash if out of range.
    #[inline]
    pub fn suffix(&self, labels: usize) -> u64 {
        self.hashes.get(labels).copied().unwrap_or(ROOT_HASH)
    }

    /// The suffix of `name` (the name these hashes were computed from) with `labels`
    /// labels.
    #[inline]
    pub fn suffix_name<'n>(&self, name: &'n Dname, labels: usize) -> &'n Dname {
        let start = usize::from(self.starts.get(labels).copied().unwrap_or(0));
        name.as_wire().get(start..).and_then(|w| Dname::from_wire(w).ok()).unwrap_or(Dname::ROOT)
    }
}

impl std::fmt::Debug for SuffixHashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.hashes.iter().take(self.labels + 1)).finish()
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
        assert_eq!(a.suffix(0), ROOT_HASH);
        assert_eq!(a.labels(), 3);
        let name = n("WWW.Example.COM.");
        assert_eq!(a.suffix_name(&name, 2).to_string(), "Example.COM.");
        assert_eq!(a.suffix_name(&name, 3).to_string(), "WWW.Example.COM.");
        assert_eq!(a.suffix_name(&name, 0).to_string(), ".");
        assert_ne!(name_hash(&n("a.b.")), name_hash(&n("b.a.")));
        assert_ne!(name_hash(&n("ab.")), name_hash(&n("a.b.")));
    }

    #[test]
    fn swar_lowercase_matches_scalar() {
        for b in 0u8..=255 {
            let word = u64::from_le_bytes([b, b'A', b'z', b'Z', b'@', b'[', 0xC1, b]);
            let expect: Vec<u8> = word.to_le_bytes().iter().map(u8::to_ascii_lowercase).collect();
            assert_eq!(lower8(word).to_le_bytes().to_vec(), expect, "byte {b}");
        }
    }

    #[test]
    fn long_labels_hash_all_bytes() {
        let a = label_hash(b"abcdefghijklmnopq");
        let b = label_hash(b"abcdefghijklmnopr");
        assert_ne!(a, b);
        assert_eq!(label_hash(b"ABCDEFGHIJKLMNOPQ"), a);
    }
}
