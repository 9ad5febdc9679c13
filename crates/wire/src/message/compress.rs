//! Name compression in linear time (ARCHITECTURE.md §4, after Tony Finch's scheme).
//!
//! The [`CompressionTable`] is a fixed-size open-addressing hash set of message offsets,
//! each the start of a label written in full. A name is compressed from the right: the
//! hash of each suffix extends the hash of the shorter one by one label, so every suffix
//! is hashed once. A candidate offset for a suffix is verified by comparing the label at
//! that offset (case-insensitively, RFC 4343) and then checking that what follows it is
//! the *offset already found* for the rest of the name — a pointer to it or the rest
//! itself — so verification never walks a whole name. The first suffix without a match
//! ends the search: a longer suffix cannot match when its rest has no offset.
//!
//! The root label is never replaced by a pointer (it is 1 byte, a pointer 2), and offsets
//! from 0x4000 on cannot be pointer targets (RFC 1035 §4.1.4: 14 bits).
//!
//! Clearing is O(1): every entry carries a generation number and a new message bumps the
//! generation; the table is wiped only when the generation counter wraps. Entries at or
//! past the writer's current length are ignored, which is how [`MessageWriter::rollback`]
//! drops them in O(1). Because a candidate is always verified against the bytes actually
//! in the buffer — including that every pointer a decoder would follow points strictly
//! below where it jumped from, so a reader enforcing ARCHITECTURE.md §5 accepts it — a
//! stale or colliding entry can cost a comparison but never produce a wrong pointer.
//!
//! [`MessageWriter::rollback`]: super::MessageWriter::rollback

/// Number of slots (a power of two). 3/4 of it is enough for any message whose
/// pointer-addressable first 16 KiB holds names of 16+ bytes per label on average; past
/// that, names are still written correctly, only less compressed.
const SLOTS: usize = 1024;
/// Slots probed per lookup or insert: bounds the work per label.
const MAX_PROBE: usize = 8;
/// Highest offset a compression pointer can hold.
pub const MAX_POINTER: usize = 0x3FFF;

const OFFSET_MASK: u32 = 0x3FFF;
const TAG_SHIFT: u32 = 14;
const TAG_MASK: u32 = 0x3F;
const GEN_SHIFT: u32 = 20;
const GEN_MAX: u32 = 0xFFF;

/// The reusable hash set of label offsets behind [`MessageWriter`](super::MessageWriter).
///
/// It lives outside the writer so that a worker creates it once and reuses it for every
/// message: starting a message costs one increment, not a 4 KiB wipe.
#[derive(Clone)]
pub struct CompressionTable {
    /// `generation << 20 | tag << 14 | offset`; a slot of another generation is empty.
    slots: [u32; SLOTS],
    generation: u32,
}

impl Default for CompressionTable {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for CompressionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.slots.iter().filter(|&&s| s >> GEN_SHIFT == self.generation).count();
        write!(f, "CompressionTable {{ generation: {}, live: {live} }}", self.generation)
    }
}

/// Where a suffix already written in the message decodes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Suffix {
    /// The root: nothing to point to.
    Root,
    /// The suffix decodes from `offset`; the first pointer met on the way (if any) points
    /// to `first_pointer`, which is below `offset`.
    At { offset: u16, first_pointer: Option<u16> },
}

impl CompressionTable {
    /// An empty table.
    pub fn new() -> Self {
        CompressionTable { slots: [0; SLOTS], generation: 1 }
    }

    /// Forgets every entry (O(1) except once every 4095 messages).
    pub fn clear(&mut self) {
        self.generation += 1;
        if self.generation > GEN_MAX {
            self.slots = [0; SLOTS];
            self.generation = 1;
        }
    }

    /// Finds where `label` followed by `rest` already sits in `msg` (the bytes written so
    /// far), given the suffix's `hash`.
    #[inline]
    pub(crate) fn find(&self, hash: u32, msg: &[u8], label: &[u8], rest: Suffix) -> Option<Suffix> {
        let tag = tag_of(hash);
        for i in 0..MAX_PROBE {
            let slot = *self.slots.get(slot_index(hash, i))?;
            if slot >> GEN_SHIFT != self.generation {
                return None;
            }
            if (slot >> TAG_SHIFT) & TAG_MASK != tag {
                continue;
            }
            let candidate = (slot & OFFSET_MASK) as usize;
            if let Some(found) = verify(msg, candidate, label, rest) {
                return Some(found);
            }
        }
        None
    }

    /// Remembers that a label written in full starts at `offset` (`msg_len` is the
    /// writer's current length: entries at or past it are stale and may be replaced).
    pub(crate) fn insert(&mut self, hash: u32, offset: usize, msg_len: usize) {
        if offset > MAX_POINTER {
            return;
        }
        let entry = self.generation << GEN_SHIFT | tag_of(hash) << TAG_SHIFT | offset as u32;
        for i in 0..MAX_PROBE {
            let Some(slot) = self.slots.get_mut(slot_index(hash, i)) else {
                return;
            };
            let empty = *slot >> GEN_SHIFT != self.generation;
            if empty || (*slot & OFFSET_MASK) as usize >= msg_len {
                *slot = entry;
                return;
            }
        }
    }
}

fn slot_index(hash: u32, probe: usize) -> usize {
    (hash as usize).wrapping_add(probe) & (SLOTS - 1)
}

fn tag_of(hash: u32) -> u32 {
    (hash >> 26) & TAG_MASK
}

/// Checks that `msg` holds `label` (wire form, length byte first) at `candidate`,
/// followed by `rest`, in a form that decodes under the strict pointer rule.
fn verify(msg: &[u8], candidate: usize, label: &[u8], rest: Suffix) -> Option<Suffix> {
    let after = candidate + label.len();
    let here = msg.get(candidate..after)?;
    if !crate::ascii::eq_ignore_case(here, label) {
        return None;
    }
    let offset = u16::try_from(candidate).ok()?;
    match rest {
        Suffix::Root => {
            (msg.get(after) == Some(&0)).then_some(Suffix::At { offset, first_pointer: None })
        }
        Suffix::At { offset: rest_at, first_pointer } => {
            let rest_at_usize = usize::from(rest_at);
            if after == rest_at_usize {
                // The rest follows inline; its first pointer must still point below us.
                let ok = first_pointer.is_none_or(|p| usize::from(p) < candidate);
                return ok.then_some(Suffix::At { offset, first_pointer });
            }
            let pointer = pointer_bytes(rest_at);
            let ok = rest_at_usize < candidate && msg.get(after..after + 2) == Some(&pointer[..]);
            ok.then_some(Suffix::At { offset, first_pointer: Some(rest_at) })
        }
    }
}

/// The two bytes of a compression pointer to `offset` (at most 0x3FFF).
pub(crate) fn pointer_bytes(offset: u16) -> [u8; 2] {
    (0xC000 | offset).to_be_bytes()
}

/// Seed of the hash of the root (the empty suffix).
pub(crate) const ROOT_HASH: u32 = 0x9E37_79B9;

/// Hash of the suffix made of a label followed by the suffix whose hash is `rest`. The
/// label is `wire[at]` (its length byte) and the bytes after it; reading eight bytes at a
/// time from `wire` (masking what lies past the label) avoids byte loops. ASCII case is
/// folded.
#[inline]
pub(crate) fn hash_label(wire: &[u8], at: usize, rest: u32) -> u32 {
    let len = usize::from(wire.get(at).copied().unwrap_or(0));
    let mut h = u64::from(rest) ^ (len as u64) << 32;
    let mut pos = at + 1;
    let end = pos + len;
    while pos < end {
        let take = (end - pos).min(8);
        let word = match wire.get(pos..pos + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
            Some(bytes) => u64::from_le_bytes(bytes) & (u64::MAX >> (64 - 8 * take)),
            None => load_word(wire.get(pos..pos + take).unwrap_or(&[])),
        };
        h = (h.rotate_left(23) ^ ascii_lowercase_word(word)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        pos += take;
    }
    (h ^ h >> 32) as u32
}

/// Up to eight bytes as a little-endian word, zero-padded (no call to `memcpy`).
fn load_word(bytes: &[u8]) -> u64 {
    if let Ok(word) = <[u8; 8]>::try_from(bytes) {
        return u64::from_le_bytes(word);
    }
    bytes.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b))
}

/// Lower-cases the ASCII letters of eight bytes at once.
fn ascii_lowercase_word(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let seven = x & !HIGH;
    let ge_a = seven + ONES * u64::from(0x80 - b'A');
    let gt_z = seven + ONES * u64::from(0x7F - b'Z');
    let upper = ge_a & !gt_z & !x & HIGH;
    x | upper >> 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_word_matches_std() {
        for b in 0..=255u8 {
            let word = u64::from_le_bytes([b, b'A', b'Z', b'a', b'@', b'[', 0xC1, b'z']);
            let mut expected = word.to_le_bytes();
            expected.make_ascii_lowercase();
            assert_eq!(ascii_lowercase_word(word).to_le_bytes(), expected, "byte {b}");
            let single = u64::from(b);
            assert_eq!(ascii_lowercase_word(single) as u8, b.to_ascii_lowercase(), "byte {b}");
        }
    }

    #[test]
    fn load_word_pads_with_zeros() {
        assert_eq!(load_word(b"abc"), u64::from_le_bytes(*b"abc\0\0\0\0\0"));
        assert_eq!(load_word(b"abcdefgh"), u64::from_le_bytes(*b"abcdefgh"));
        assert_eq!(load_word(b""), 0);
    }

    #[test]
    fn hash_folds_case_and_depends_on_rest() {
        let h = |wire: &[u8], rest| hash_label(wire, 0, rest);
        assert_eq!(h(b"\x07ExAmPlE\x00", 7), h(b"\x07example\x00", 7));
        assert_ne!(h(b"\x07example\x00", 7), h(b"\x07example\x00", 8));
        assert_ne!(h(b"\x01a\x00", ROOT_HASH), h(b"\x01b\x00", ROOT_HASH));
        assert_ne!(h(b"\x02ab\x00", ROOT_HASH), h(b"\x03ab\x00\x00", ROOT_HASH));
        // What follows the label does not matter, short or long labels alike.
        assert_eq!(h(b"\x02ab\x00", 1), h(b"\x02ab\x03xyz\x00", 1));
        let long = b"\x0babcdefghijk\x00";
        let mut other = long.to_vec();
        other.extend_from_slice(b"\x05zzzzz\x00");
        assert_eq!(h(long, 1), h(&other, 1));
        // The same label inside a longer name hashes the same.
        assert_eq!(hash_label(b"\x01x\x07example\x00", 2, 5), h(b"\x07example\x00", 5));
    }

    #[test]
    fn verify_checks_label_and_rest() {
        // "com" at 12, "example" + pointer to 12 at 17.
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(b"\x03com\x00\x07example\xc0\x0c");
        let com = verify(&msg, 12, b"\x03COM", Suffix::Root).unwrap();
        assert_eq!(com, Suffix::At { offset: 12, first_pointer: None });
        let example = verify(&msg, 17, b"\x07example", com).unwrap();
        assert_eq!(example, Suffix::At { offset: 17, first_pointer: Some(12) });
        assert_eq!(verify(&msg, 17, b"\x07exampl3", com), None);
        assert_eq!(verify(&msg, 12, b"\x03net", Suffix::Root), None);
        // The rest must be at the offset found, not merely an equal name elsewhere.
        let elsewhere = Suffix::At { offset: 30, first_pointer: None };
        assert_eq!(verify(&msg, 17, b"\x07example", elsewhere), None);
        // Past the end of what was written: no match, no panic.
        assert_eq!(verify(&msg, 25, b"\x07example", com), None);
    }

    #[test]
    fn inline_rest_must_not_point_above_the_candidate() {
        // 12: "a" then inline "b" at 14 whose pointer goes to 13 (> 12): decoding from 12
        // would follow a pointer not below 12, so 12 is refused as a target.
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(b"\x01a\x01b\xc0\x0d");
        let rest = Suffix::At { offset: 14, first_pointer: Some(13) };
        assert_eq!(verify(&msg, 12, b"\x01a", rest), None);
        let rest = Suffix::At { offset: 14, first_pointer: Some(11) };
        assert!(verify(&msg, 12, b"\x01a", rest).is_some());
    }

    #[test]
    fn table_insert_find_and_clear() {
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(b"\x03com\x00");
        let mut table = CompressionTable::new();
        let h = hash_label(b"\x03com\x00", 0, ROOT_HASH);
        assert_eq!(table.find(h, &msg, b"\x03com", Suffix::Root), None);
        table.insert(h, 12, msg.len());
        let found = table.find(h, &msg, b"\x03com", Suffix::Root);
        assert_eq!(found, Some(Suffix::At { offset: 12, first_pointer: None }));
        table.clear();
        assert_eq!(table.find(h, &msg, b"\x03com", Suffix::Root), None);
        // Offsets beyond pointer range are never stored.
        table.insert(h, 0x4000, 0x5000);
        assert_eq!(table.slots.iter().filter(|&&s| s >> GEN_SHIFT == table.generation).count(), 0);
        // Generation wrap wipes the table.
        table.insert(h, 12, msg.len());
        for _ in 0..GEN_MAX {
            table.clear();
        }
        assert_eq!(table.find(h, &msg, b"\x03com", Suffix::Root), None);
    }
}
