//! RRsets prepared in wire form once and copied into answers: an RRset and its
//! signatures exactly as [`MessageWriter::push_signed_rrset`] writes them for an owner
//! given as labels under a name already in the message ([`Owner::Under`]), with the
//! places where compression pointers go left open. A zone keeps one per NSEC3 record,
//! whose owner is a hash label under the apex (RFC 5155 §3), so a denial proof is a copy
//! and a few pointers instead of walking the stored RDATA again.
//!
//! [`MessageWriter::push_signed_rrset`]: super::MessageWriter::push_signed_rrset
//! [`Owner::Under`]: super::Owner::Under

use std::sync::Arc;

use crate::name::MAX_NAME_LEN;
use crate::types::{Class, Rtype};

/// Bytes before the slots: record count, apex slot, number of owner slots (u16 each).
const HEAD: usize = 6;

/// One prepared RRset with its signatures (see the module docs). Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedRrset {
    /// Record count, apex slot, owner-slot count, the owner slots, then the records.
    bytes: Arc<[u8]>,
}

impl PreparedRrset {
    /// The RRset of type `rtype`, class `class` and TTL `ttl` with RDATA `rdatas`, then
    /// its signatures `sigs` (which take the RRset's TTL, as the writer gives them),
    /// owned by `labels` (one or more labels in wire form, no root) under a name already
    /// in the message. `None` without records, for malformed labels, or past the sizes
    /// a message allows.
    pub fn new<'r, 's>(
        labels: &[u8],
        (rtype, class, ttl): (Rtype, Class, u32),
        rdatas: impl IntoIterator<Item = &'r [u8]>,
        sigs: impl IntoIterator<Item = &'s [u8]>,
    ) -> Option<PreparedRrset> {
        if !well_formed_labels(labels) {
            return None;
        }
        let [c0, c1] = class.0.to_be_bytes();
        let [l0, l1, l2, l3] = ttl.to_be_bytes();
        let typed = |t: Rtype| {
            let [t0, t1] = t.0.to_be_bytes();
            [t0, t1, c0, c1, l0, l1, l2, l3]
        };
        let mut rdatas = rdatas.into_iter().peekable();
        rdatas.peek()?; // an RRset has records
        let records = rdatas.map(|r| (typed(rtype), r));
        let signatures = sigs.into_iter().map(|s| (typed(Rtype::RRSIG), s));
        let mut out = Vec::new();
        let mut slots = Vec::new();
        for (i, (fields, rdata)) in records.chain(signatures).enumerate() {
            if i == 0 {
                out.extend_from_slice(labels);
            } else {
                slots.push(u16::try_from(out.len()).ok()?);
            }
            out.extend_from_slice(&[0, 0]); // the pointer
            out.extend_from_slice(&fields);
            out.extend_from_slice(&u16::try_from(rdata.len()).ok()?.to_be_bytes());
            out.extend_from_slice(rdata);
        }
        let count = u16::try_from(slots.len() + 1).ok()?;
        if out.len() > usize::from(u16::MAX) {
            return None;
        }
        let apex_slot = u16::try_from(labels.len()).ok()?;
        let mut bytes = Vec::with_capacity(HEAD + 2 * slots.len() + out.len());
        for word in [count, apex_slot, u16::try_from(slots.len()).ok()?].into_iter().chain(slots) {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes.extend_from_slice(&out);
        Some(PreparedRrset { bytes: bytes.into() })
    }

    /// Number of records (the RRset's and its signatures).
    #[inline]
    pub fn count(&self) -> u16 {
        self.word(0)
    }

    /// Offset in [`records`](Self::records) of the pointer after the first owner's labels.
    #[inline]
    pub fn apex_slot(&self) -> u16 {
        self.word(1)
    }

    /// Offsets in [`records`](Self::records) of the later records' owners, each a pointer
    /// to the first owner.
    #[inline]
    pub fn owner_slots(&self) -> impl Iterator<Item = u16> + '_ {
        (0..usize::from(self.word(2))).map(|i| self.word(3 + i))
    }

    /// The records in wire form, pointers left as zero bytes.
    #[inline]
    pub fn records(&self) -> &[u8] {
        let start = HEAD + 2 * usize::from(self.word(2));
        self.bytes.get(start..).unwrap_or(&[])
    }

    /// The address of the prepared bytes, to prefetch them without reading them.
    #[inline]
    pub fn address(&self) -> usize {
        self.bytes.as_ptr() as usize
    }

    #[inline]
    fn word(&self, i: usize) -> u16 {
        let at = 2 * i;
        let word = self.bytes.get(at..at + 2).and_then(|w| <[u8; 2]>::try_from(w).ok());
        word.map_or(0, u16::from_le_bytes)
    }
}

/// One or more labels of 1 to 63 bytes that end exactly at the end, short enough to
/// leave room for the name they sit under.
fn well_formed_labels(labels: &[u8]) -> bool {
    if labels.is_empty() || labels.len() > MAX_NAME_LEN - 2 {
        return false;
    }
    let mut at = 0;
    while let Some(&len) = labels.get(at) {
        if len == 0 || len > 63 {
            return false;
        }
        at += 1 + usize::from(len);
    }
    at == labels.len()
}
