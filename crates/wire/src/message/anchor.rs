//! Anchor compression: names compressed only against one name already in the message,
//! usually the question's (Knot DNS compresses answers this way).
//!
//! The table compressor of [`compress`](super::compress) finds the best pointer among
//! every name written, at the cost of hashing and probing each label. An authoritative
//! answer's names mostly share their tail with the query name — the zone's apex and
//! below — so comparing a name's labels with the anchor's, right to left, finds almost
//! all of the savings in a handful of instructions and touches no table.

use crate::ascii::{fold8, load8};
use crate::name::Dname;

/// The name compressed against: where it is in the message and where its labels start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchor {
    /// Offset of the name in the message.
    at: u16,
    /// Length of its wire form.
    len: u16,
    /// Bit `i` is set when a label other than the root starts `i` bytes into the name:
    /// the places a pointer may go.
    starts: [u64; 4],
}

impl Anchor {
    /// An anchor for `name`, written at `at`; `None` if it cannot serve as one.
    pub(crate) fn new(name: &Dname, at: usize) -> Option<Anchor> {
        let at = u16::try_from(at).ok().filter(|&a| a < 0x4000)?;
        let wire = name.as_wire();
        let mut anchor = Anchor { at, len: u16::try_from(wire.len()).ok()?, starts: [0; 4] };
        let mut pos = 0usize;
        while let Some(&len) = wire.get(pos).filter(|&&len| len != 0) {
            *anchor.starts.get_mut(pos / 64)? |= 1 << (pos % 64);
            pos += usize::from(len) + 1;
        }
        Some(anchor)
    }

    /// True when a label of the anchor (not the root) starts at `offset` into it.
    #[inline]
    fn starts_at(&self, offset: usize) -> bool {
        self.starts.get(offset / 64).is_some_and(|word| word >> (offset % 64) & 1 == 1)
    }

    /// For `name`, the number of leading bytes to write in full and where the pointer for
    /// the rest goes (`None`: no label in common, write the whole name). `msg` is the
    /// message written so far (the anchor is in it).
    ///
    /// The bytes the two names end with in common (ignoring case) are counted eight at a
    /// time; the longest run of the name's labels inside them that also starts a label
    /// of the anchor is the suffix pointed to.
    #[inline]
    pub(crate) fn split(&self, msg: &[u8], name: &Dname) -> Option<(usize, u16)> {
        let at = usize::from(self.at);
        let anchor = msg.get(at..at + usize::from(self.len))?;
        let wire = name.as_wire();
        // The bytes before the root differ (a name in another TLD, the usual NS target
        // of a referral): only the root is in common, so no pointer. This is what the
        // count below finds too, sooner.
        let last =
            |w: &[u8]| w.len().checked_sub(2).and_then(|i| w.get(i)).map(u8::to_ascii_lowercase);
        if last(wire) != last(anchor) {
            return None;
        }
        self.split_common(anchor, wire)
    }

    /// [`split`](Self::split) for a name whose last label may be the anchor's: `anchor`
    /// is the anchor's bytes, `wire` the name's (out of line, so that the common case
    /// above stays small).
    #[inline(never)]
    fn split_common(&self, anchor: &[u8], wire: &[u8]) -> Option<(usize, u16)> {
        let at = usize::from(self.at);
        let common = common_tail(wire, anchor);
        // Only the root in common: never worth a pointer.
        if common <= 1 {
            return None;
        }
        let mut pos = 0usize;
        while let Some(&len) = wire.get(pos).filter(|&&len| len != 0) {
            let suffix = wire.len() - pos;
            if suffix <= common && self.starts_at(anchor.len() - suffix) {
                return Some((pos, u16::try_from(at + anchor.len() - suffix).ok()?));
            }
            pos += usize::from(len) + 1;
        }
        None
    }
}

/// How many bytes `a` and `b` end with in common, ignoring ASCII case.
#[inline]
fn common_tail(a: &[u8], b: &[u8]) -> usize {
    let max = a.len().min(b.len());
    let mut common = 0usize;
    while common < max {
        let take = (max - common).min(8);
        let x = a.get(a.len() - common - take..a.len() - common).map_or(0, load8);
        let y = b.get(b.len() - common - take..b.len() - common).map_or(0, load8);
        if x == y {
            common += take;
            continue;
        }
        let diff = fold8(x) ^ fold8(y);
        if diff != 0 {
            // The last bytes are the word's high bytes; the unused ones are zero in both.
            let equal = diff.leading_zeros() as usize / 8 - (8 - take);
            return common + equal;
        }
        common += take;
    }
    common
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Name;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn longest_common_suffix_with_the_anchor() {
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(name("www.Foo.tld.").as_wire());
        let anchor = Anchor::new(&name("www.Foo.tld."), 12).unwrap();
        // ns1.foo.tld: write "ns1", point to "Foo.tld." at 12 + 4.
        assert_eq!(anchor.split(&msg, &name("ns1.foo.tld.")), Some((4, 16)));
        // The whole anchor: nothing inline.
        assert_eq!(anchor.split(&msg, &name("WWW.foo.TLD.")), Some((0, 12)));
        // Only the apex in common.
        assert_eq!(anchor.split(&msg, &name("a.bar.tld.")), Some((6, 20)));
        // Nothing in common (and the root is never a pointer).
        assert_eq!(anchor.split(&msg, &name("a.ns.example.net.")), None);
        assert_eq!(anchor.split(&msg, &name(".")), None);
    }

    #[test]
    fn deep_names_compress_too() {
        let deep: String = "a.".repeat(100);
        let anchor_name = name(&format!("{deep}tld."));
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(anchor_name.as_wire());
        let anchor = Anchor::new(&anchor_name, 12).unwrap();
        assert_eq!(anchor.split(&msg, &name(&format!("x.{deep}tld."))), Some((2, 12)));
        assert_eq!(anchor.split(&msg, &name("b.a.tld.")), Some((2, 12 + 198)));
    }

    #[test]
    fn a_pointer_goes_only_where_a_label_starts() {
        // The anchor's first label contains bytes that read like the name's labels.
        let anchor_name = Dname::from_wire(b"\x05x\x01y\x01a\x01a\x00").unwrap();
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(anchor_name.as_wire());
        let anchor = Anchor::new(anchor_name, 12).unwrap();
        // "y.a.a." ends like the anchor's bytes, but only "a." starts one of its labels.
        let n = Dname::from_wire(b"\x01y\x01a\x01a\x00").unwrap();
        assert_eq!(anchor.split(&msg, n), Some((4, 12 + 6)));
    }

    /// The longest suffix of `name` (below the root) that is, ignoring case, the suffix
    /// of the anchor from one of its labels on: by trying every pair.
    fn reference_split(anchor: &Dname, at: usize, name: &Dname) -> Option<(usize, u16)> {
        let (a, n) = (anchor.as_wire(), name.as_wire());
        let anchor_starts: Vec<usize> =
            anchor.label_offsets().as_slice().iter().map(|&o| usize::from(o)).collect();
        for pos in name.label_offsets().as_slice().iter().map(|&o| usize::from(o)) {
            let suffix = n.get(pos..).unwrap();
            if suffix.len() <= 1 || suffix.len() > a.len() {
                continue;
            }
            let from = a.len() - suffix.len();
            if anchor_starts.contains(&from) && a[from..].eq_ignore_ascii_case(suffix) {
                return Some((pos, u16::try_from(at + from).unwrap()));
            }
        }
        None
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Names from a few labels that often coincide (in either case).
        fn arb_labels() -> impl Strategy<Value = Name> {
            // `x\001a` holds bytes that read like the label `a` after it.
            let label = prop::sample::select(vec![
                "a", "A", "ns", "NS1", "ns1", "tld", "Tld", "xa", "a.a", r"x\001a", r"x\001A",
            ]);
            prop::collection::vec(label, 0..5).prop_map(|labels| {
                let text: String = labels.iter().map(|l| format!("{l}.")).collect();
                if text.is_empty() {
                    name(".")
                } else {
                    name(&text)
                }
            })
        }

        proptest! {
            #[test]
            fn split_finds_the_longest_common_labels(anchor in arb_labels(), n in arb_labels()) {
                let mut msg = vec![0u8; 12];
                msg.extend_from_slice(anchor.as_wire());
                let split = Anchor::new(&anchor, 12).and_then(|a| a.split(&msg, &n));
                prop_assert_eq!(split, reference_split(&anchor, 12, &n));
            }
        }
    }

    #[test]
    fn common_tail_counts_bytes_ignoring_case() {
        assert_eq!(common_tail(b"", b"abc"), 0);
        assert_eq!(common_tail(b"xyz", b"abc"), 0);
        assert_eq!(common_tail(b"xbC", b"abc"), 2);
        assert_eq!(common_tail(b"0123456789ABCDEFGH", b"z123456789abcdefgh"), 17);
        assert_eq!(common_tail(b"12345678", b"12345678"), 8);
        assert_eq!(common_tail(b"112345678", b"212345678"), 8);
    }
}
