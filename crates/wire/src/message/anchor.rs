//! Anchor compression: names compressed only against one name already in the message,
//! usually the question's (Knot DNS compresses answers this way).
//!
//! The table compressor of [`compress`](super::compress) finds the best pointer among
//! every name written, at the cost of hashing and probing each label. An authoritative
//! answer's names mostly share their tail with the query name — the zone's apex and
//! below — so comparing a name's labels with the anchor's, right to left, finds almost
//! all of the savings in a handful of instructions and touches no table.

use crate::name::Dname;

/// Most labels an anchor keeps offsets for (deeper question names are not anchors).
const MAX_ANCHOR_LABELS: usize = 32;

/// The name compressed against: where it is in the message and where its labels start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Anchor {
    /// Offset of the name in the message.
    at: u16,
    /// Number of labels.
    count: u8,
    /// Offset of each label's length byte, relative to `at`, left to right.
    offsets: [u8; MAX_ANCHOR_LABELS],
}

impl Anchor {
    /// An anchor for `name`, written at `at`; `None` if it cannot serve as one.
    pub(crate) fn new(name: &Dname, at: usize) -> Option<Anchor> {
        let at = u16::try_from(at).ok().filter(|&a| a < 0x4000)?;
        let mut anchor = Anchor { at, count: 0, offsets: [0; MAX_ANCHOR_LABELS] };
        anchor.count = label_starts(name.as_wire(), &mut anchor.offsets)? as u8;
        Some(anchor)
    }

    /// For `name`, the number of leading bytes to write in full and where the pointer for
    /// the rest goes (`None`: no suffix in common, write the whole name). `msg` is the
    /// message written so far (the anchor is in it).
    #[inline]
    pub(crate) fn split(&self, msg: &[u8], name: &Dname) -> Option<(usize, u16)> {
        let wire = name.as_wire();
        let mut starts = [0u8; MAX_ANCHOR_LABELS];
        let count = label_starts(wire, &mut starts)?;
        let anchor_wire = msg.get(usize::from(self.at)..)?;
        let (mut i, mut j) = (count, usize::from(self.count));
        while i > 0 && j > 0 {
            let a = label(wire, starts.get(i - 1).copied());
            let b = label(anchor_wire, self.offsets.get(j - 1).copied());
            if a.len() != b.len() || !a.eq_ignore_ascii_case(b) {
                break;
            }
            i -= 1;
            j -= 1;
        }
        if i == count {
            return None;
        }
        let inline =
            if i == count { wire.len() } else { usize::from(starts.get(i).copied().unwrap_or(0)) };
        let target = usize::from(self.at) + usize::from(self.offsets.get(j).copied().unwrap_or(0));
        Some((inline, u16::try_from(target).ok()?))
    }
}

/// Fills `starts` with the offset of each label's length byte; the label count, or
/// `None` for a name with too many labels.
#[inline]
fn label_starts(wire: &[u8], starts: &mut [u8; MAX_ANCHOR_LABELS]) -> Option<usize> {
    let mut pos = 0usize;
    let mut count = 0usize;
    while let Some(&len) = wire.get(pos) {
        if len == 0 {
            return Some(count);
        }
        *starts.get_mut(count)? = pos as u8;
        count += 1;
        pos += usize::from(len) + 1;
    }
    Some(count)
}

/// The label (length byte and content) starting at `start`.
#[inline]
fn label(wire: &[u8], start: Option<u8>) -> &[u8] {
    let start = usize::from(start.unwrap_or(0));
    let len = usize::from(wire.get(start).copied().unwrap_or(0));
    wire.get(start..start + 1 + len).unwrap_or(&[])
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
    fn deep_names_are_written_in_full() {
        let deep: String = "a.".repeat(40);
        let mut msg = vec![0u8; 12];
        msg.extend_from_slice(name("tld.").as_wire());
        let anchor = Anchor::new(&name("tld."), 12).unwrap();
        assert_eq!(anchor.split(&msg, &name(&format!("{deep}tld."))), None);
        assert!(Anchor::new(&name(&format!("{deep}tld.")), 12).is_none());
    }
}
