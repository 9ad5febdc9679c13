//! Zone nodes: one owner name with its RRsets, plus the facts the adjust pass
//! precomputes so that answering needs a single lookup.
//!
//! A node's data is one immutable allocation (a [`Blob`]), shared between snapshots:
//!
//! ```text
//! owner:  [len u8][owner wire form]
//! rrset:  [rtype u16][ttl u32][count u16]
//!         [sig ttl u32][sig count u16][body len u32]  only when signed (see below)
//!         count × ([rdlen u16][rdata])            RDATA in uncompressed wire form
//!         count × [target node u32]               only for types with targets (NS, MX, …)
//!         sig count × ([rdlen u16][rrsig rdata])  RRSIGs covering this RRset
//! ```
//! Numbers are little-endian (internal format). A TTL is at most 2^31 - 1 (RFC 2181 §8),
//! so the TTL word's top bit is free: it is set when the RRset has signatures, and only
//! then does the header go on with their TTL, their count and the body's length. An
//! RRset without signatures has an 8-byte header, not 18 (most RRsets of an unsigned
//! zone: 130 bytes of a 15-record hosting zone); its end is found by walking its
//! records, as a reader does anyway, and its signature TTL reads as its TTL. RRSIGs
//! whose covered type has no RRset at the node are kept in a pseudo RRset of type RRSIG
//! with no records.

use tern_wire::{Dname, Rtype};

use crate::blob::Blob;
use crate::records::rfc2181_ttl;

/// Index of a node in its zone's node table.
pub type NodeId = u32;

/// "No node" in reference fields.
pub const NO_NODE: NodeId = u32::MAX;

/// Flag in [`Node::nsec3`]: the NSEC3 record covers the name's hash instead of matching it.
pub const NSEC3_COVERS: u32 = 1 << 31;

/// Facts about a node computed by the adjust pass.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(u16);

impl Flags {
    /// The zone apex.
    pub const APEX: Flags = Flags(1);
    /// A zone cut: NS at a name other than the apex.
    pub const DELEGATION: Flags = Flags(1 << 1);
    /// Strictly below a zone cut or a DNAME: glue or occluded data, not authoritative.
    pub const NONAUTH: Flags = Flags(1 << 2);
    /// An empty non-terminal: no RRsets, exists because names below it do.
    pub const EMPTY: Flags = Flags(1 << 3);
    /// Not a name of the zone: only the target of references (see `adjust`).
    pub const PHANTOM: Flags = Flags(1 << 4);
    /// The first label is `*` (RFC 4592).
    pub const WILDCARD: Flags = Flags(1 << 5);
    /// Holds a DNAME RRset.
    pub const DNAME: Flags = Flags(1 << 6);
    /// Holds a CNAME RRset.
    pub const CNAME: Flags = Flags(1 << 7);
    /// Holds an NSEC RRset.
    pub const NSEC: Flags = Flags(1 << 8);
    /// Holds a DS RRset.
    pub const DS: Flags = Flags(1 << 9);
    /// Strictly below a DNAME (occluded; RFC 6672 §2.3).
    pub const BELOW_DNAME: Flags = Flags(1 << 10);

    /// No flags.
    pub const fn empty() -> Flags {
        Flags(0)
    }
    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }
    /// Flags from raw bits.
    pub const fn from_bits(bits: u16) -> Flags {
        Flags(bits)
    }
    /// True when every flag of `other` is set.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// True when any flag of `other` is set.
    #[inline]
    pub const fn intersects(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }
    /// Sets or clears `other`.
    pub fn set(&mut self, other: Flags, on: bool) {
        if on {
            self.0 |= other.0;
        } else {
            self.0 &= !other.0;
        }
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [&str; 11] = [
            "APEX",
            "DELEGATION",
            "NONAUTH",
            "EMPTY",
            "PHANTOM",
            "WILDCARD",
            "DNAME",
            "CNAME",
            "NSEC",
            "DS",
            "BELOW_DNAME",
        ];
        let set: Vec<&str> = NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        write!(f, "{}", set.join("|"))
    }
}

/// Types whose RDATA names a host whose addresses go in the additional section, or whose
/// target the engine follows (CNAME): their RRsets carry one target node per record.
pub fn has_targets(rtype: Rtype) -> bool {
    matches!(rtype, Rtype::NS | Rtype::MX | Rtype::SRV | Rtype::SVCB | Rtype::HTTPS | Rtype::CNAME)
}

/// One node of a zone: 32 bytes, aligned so that it never straddles two cache lines.
#[derive(Clone)]
#[repr(align(32))]
pub struct Node {
    data: Blob,
    /// The parent node (`NO_NODE` for the apex and for phantoms).
    pub parent: NodeId,
    /// The child node whose first label is `*`, if any.
    pub wildcard: NodeId,
    /// The NSEC3 record for this name (id in the NSEC3 chain): the one whose hashed owner
    /// matches it, or with [`NSEC3_COVERS`] set, the one covering its hash (a name without
    /// its own record, such as an opt-out delegation); `u32::MAX` when not computed.
    pub nsec3: u32,
    /// The previous node in canonical order (NSEC-signed zones; `NO_NODE` otherwise).
    pub prev: NodeId,
    /// Number of child nodes (phantoms excluded): an emptied node without children is no
    /// longer a name of the zone.
    pub children: u32,
    /// Adjust facts.
    pub flags: Flags,
    /// How many records of the zone name this node as their target (see
    /// [`has_targets`]); [`REFS_UNCOUNTED`] once that many or more, and then for good. A
    /// phantom nobody names is reclaimed by a changeset (`crate::changeset`).
    pub refs: u16,
}

/// [`Node::refs`] when references are too many to count: the node is never reclaimed.
pub const REFS_UNCOUNTED: u16 = u16::MAX;

impl Node {
    /// A node with the given data and no adjust facts yet.
    pub fn new(data: Blob) -> Node {
        Node {
            data,
            parent: NO_NODE,
            wildcard: NO_NODE,
            nsec3: u32::MAX,
            prev: NO_NODE,
            children: 0,
            flags: Flags::empty(),
            refs: 0,
        }
    }

    /// A vacant node: the place of a reclaimed one, waiting on the zone's free list. It
    /// has no data, not even an owner, and is a phantom, so that every pass over the
    /// table skips it; no index entry or reference leads to it.
    pub(crate) fn vacant() -> Node {
        Node { flags: Flags::PHANTOM, ..Node::default() }
    }

    /// True for a vacant node: the place of a node reclaimed by a change, on the zone's
    /// free list (a node of the zone always has an owner; a vacant one has no data).
    pub fn is_vacant(&self) -> bool {
        self.data.is_empty()
    }

    /// The nodes this node's records name as targets (`NO_NODE` left out), RRset by
    /// RRset, record by record.
    pub(crate) fn targets(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.rrsets()
            .filter(|r| has_targets(r.rtype))
            .flat_map(|r| (0..usize::from(r.count)).map(move |i| r.target(i)))
            .filter(|&t| t != NO_NODE)
    }

    /// The owner name (in the zone's original spelling).
    #[inline]
    pub fn owner(&self) -> &Dname {
        owner_of(&self.data)
    }

    /// Where the data blob starts: the name index's hint for this node.
    #[inline]
    pub fn data_address(&self) -> usize {
        self.data.address()
    }

    /// Starts loading the start of the data blob (its owner and first RRsets).
    #[inline]
    pub fn prefetch_data(&self) {
        crate::index::prefetch_address(self.data_address());
    }

    /// The node's data blob (shared between snapshots).
    pub fn data(&self) -> &Blob {
        &self.data
    }

    /// The data blob, the node given up.
    pub(crate) fn into_data(self) -> Blob {
        self.data
    }

    /// Replaces the data blob.
    pub fn set_data(&mut self, data: Blob) {
        self.data = data;
    }

    /// The RRsets in stored order.
    #[inline]
    pub fn rrsets(&self) -> RrsetIter<'_> {
        RrsetIter { rest: rrsets_of(&self.data) }
    }

    /// The RRset of one type (RRSIG pseudo-set for orphan signatures included).
    #[inline]
    pub fn rrset(&self, rtype: Rtype) -> Option<Rrset<'_>> {
        self.rrsets().find(|r| r.rtype == rtype)
    }

    /// True when the node holds no RRset at all.
    pub fn is_empty(&self) -> bool {
        self.rrsets().next().is_none()
    }
}

impl Default for Node {
    /// A node without an owner or data: what pads the end of a node table (see
    /// `crate::cow`), never a node of the zone. Every such node shares one empty blob,
    /// so padding a table allocates nothing.
    fn default() -> Node {
        static EMPTY: std::sync::OnceLock<Blob> = std::sync::OnceLock::new();
        Node::new(EMPTY.get_or_init(|| Blob::new(&[])).clone())
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let types: Vec<String> = self.rrsets().map(|r| r.rtype.to_string()).collect();
        write!(f, "Node({} [{}] {:?})", self.owner(), types.join(" "), self.flags)
    }
}

fn owner_of(data: &[u8]) -> &Dname {
    let len = usize::from(data.first().copied().unwrap_or(0));
    // Validated when the node was built.
    data.get(1..1 + len).and_then(Dname::from_stored).unwrap_or(Dname::ROOT)
}

fn rrsets_of(data: &[u8]) -> &[u8] {
    let len = usize::from(data.first().copied().unwrap_or(0));
    data.get(1 + len..).unwrap_or(&[])
}

/// Header of an RRset without signatures: type, TTL word, count.
const SHORT: usize = 8;
/// Header of an RRset with signatures: then their TTL, their count and the body length.
const HEADER: usize = 18;
/// In the TTL word: the RRset has signatures, and the long header.
const SIGNED: u32 = 1 << 31;

#[inline]
fn le16(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2).and_then(|s| s.try_into().ok()).map(u16::from_le_bytes).unwrap_or(0)
}

#[inline]
fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).and_then(|s| s.try_into().ok()).map(u32::from_le_bytes).unwrap_or(0)
}

/// A view of one stored RRset.
#[derive(Clone, Copy, Debug)]
pub struct Rrset<'a> {
    /// The type.
    pub rtype: Rtype,
    /// The TTL (the lowest of the records', RFC 2181 §5.2).
    pub ttl: u32,
    /// Number of records.
    pub count: u16,
    /// TTL of the covering RRSIGs.
    pub sig_ttl: u32,
    /// Number of covering RRSIGs.
    pub sig_count: u16,
    rdatas: &'a [u8],
    targets: &'a [u8],
    sigs: &'a [u8],
}

impl<'a> Rrset<'a> {
    /// The records' RDATA, in stored order.
    #[inline]
    pub fn rdatas(&self) -> RdataIter<'a> {
        RdataIter { rest: self.rdatas }
    }

    /// The records' RDATA as stored, one after another, each after its length (two
    /// bytes, little-endian): what [`rdatas`](Self::rdatas) walks, for a reader that
    /// keeps it without copying it.
    #[inline]
    pub fn rdata_bytes(&self) -> &'a [u8] {
        self.rdatas
    }

    /// The covering RRSIGs' RDATA.
    #[inline]
    pub fn sigs(&self) -> RdataIter<'a> {
        RdataIter { rest: self.sigs }
    }

    /// The target node of record `i` (types with targets only).
    #[inline]
    pub fn target(&self, i: usize) -> NodeId {
        if self.targets.is_empty() {
            return NO_NODE;
        }
        let at = i * 4;
        match self.targets.get(at..at + 4) {
            Some(b) => u32::from_le_bytes(b.try_into().unwrap_or([0xFF; 4])),
            None => NO_NODE,
        }
    }

    /// True when the RRset has records (the RRSIG pseudo-set of orphans has none).
    pub fn has_records(&self) -> bool {
        self.count > 0
    }
}

/// Iterator over a node's RRsets.
#[derive(Clone, Debug)]
pub struct RrsetIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for RrsetIter<'a> {
    type Item = Rrset<'a>;
    #[inline]
    fn next(&mut self) -> Option<Rrset<'a>> {
        let b = self.rest;
        if b.len() < SHORT {
            return None;
        }
        let rtype = Rtype(le16(b, 0));
        let ttl_word = le32(b, 2);
        let ttl = ttl_word & !SIGNED;
        let count = le16(b, 6);
        let (head, sig_ttl, sig_count, body_len) = match ttl_word & SIGNED {
            0 => (SHORT, ttl, 0, None),
            _ => (HEADER, le32(b, 8), le16(b, 12), Some(le32(b, 14) as usize)),
        };
        let after = b.get(head..)?;
        let rd_len = records_len(after, usize::from(count));
        let targets_len = if has_targets(rtype) { usize::from(count) * 4 } else { 0 };
        let body_len = body_len.unwrap_or(rd_len + targets_len);
        let body = after.get(..body_len)?;
        self.rest = after.get(body_len..).unwrap_or(&[]);
        let rdatas = body.get(..rd_len)?;
        let targets = body.get(rd_len..rd_len + targets_len)?;
        let sigs = body.get(rd_len + targets_len..)?;
        Some(Rrset { rtype, ttl, count, sig_ttl, sig_count, rdatas, targets, sigs })
    }
}

/// Length of `count` length-prefixed records at the start of `body`.
fn records_len(body: &[u8], count: usize) -> usize {
    let mut at = 0;
    for _ in 0..count {
        at += 2 + usize::from(le16(body, at));
    }
    at.min(body.len())
}

/// Iterator over length-prefixed RDATA.
#[derive(Clone, Debug)]
pub struct RdataIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for RdataIter<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let len = usize::from(le16(self.rest, 0));
        let rdata = self.rest.get(2..2 + len)?;
        self.rest = self.rest.get(2 + len..).unwrap_or(&[]);
        Some(rdata)
    }
}

/// One RRset to be encoded into a node blob.
#[derive(Debug, Clone, Default)]
pub struct RrsetData {
    /// The type.
    pub rtype: Rtype,
    /// The TTL.
    pub ttl: u32,
    /// The records' RDATA.
    pub rdatas: Vec<Vec<u8>>,
    /// One target node per record (types with targets; empty otherwise).
    pub targets: Vec<NodeId>,
    /// TTL of the covering RRSIGs.
    pub sig_ttl: u32,
    /// Covering RRSIGs' RDATA.
    pub sigs: Vec<Vec<u8>>,
}

impl RrsetData {
    /// Copies a stored RRset out for editing. A pseudo-set of orphan RRSIGs comes out
    /// under the type its signatures cover, with no records.
    pub fn from_stored(r: &Rrset<'_>) -> RrsetData {
        let covered = r.sigs().next().and_then(crate::records::covered_type);
        let rtype = if r.has_records() { r.rtype } else { covered.unwrap_or(r.rtype) };
        RrsetData {
            rtype,
            ttl: r.ttl,
            rdatas: r.rdatas().map(<[u8]>::to_vec).collect(),
            // Only types with targets keep them (`encode` writes no others).
            targets: match has_targets(r.rtype) {
                true => (0..usize::from(r.count)).map(|i| r.target(i)).collect(),
                false => Vec::new(),
            },
            sig_ttl: r.sig_ttl,
            sigs: r.sigs().map(<[u8]>::to_vec).collect(),
        }
    }
}

/// Encodes an owner and its RRsets into a node blob.
#[derive(Debug, Default)]
pub struct BlobWriter {
    buf: Vec<u8>,
}

impl BlobWriter {
    /// Starts a blob for `owner` in a buffer of `capacity` bytes (it grows past them
    /// as needed).
    pub fn with_capacity(owner: &Dname, capacity: usize) -> BlobWriter {
        let mut w = BlobWriter { buf: Vec::with_capacity(capacity) };
        w.restart(owner);
        w
    }

    /// A writer without a buffer (none allocated): [`restart`](Self::restart) it before
    /// writing.
    pub(crate) fn unallocated() -> BlobWriter {
        BlobWriter { buf: Vec::new() }
    }

    /// The bytes its buffer has room for.
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Discards what was written and starts a blob for `owner`, keeping the buffer (a
    /// builder encoding a million nodes reuses one writer).
    pub fn restart(&mut self, owner: &Dname) {
        self.buf.clear();
        self.buf.push(owner.len() as u8);
        self.buf.extend_from_slice(owner.as_wire());
    }

    /// Appends one RRset; records and signatures are given as length-free slices. A TTL
    /// past 2^31 - 1 is stored as 0 (RFC 2181 §8; every way into a zone applies that
    /// rule before this one).
    pub fn rrset<'r>(
        &mut self,
        head: RrsetHead,
        rdatas: impl IntoIterator<Item = &'r [u8]>,
        targets: &[NodeId],
        sigs: impl IntoIterator<Item = &'r [u8]>,
    ) {
        let mut sigs = sigs.into_iter().peekable();
        let signed = sigs.peek().is_some();
        let start = self.buf.len();
        let ttl = rfc2181_ttl(head.ttl) | if signed { SIGNED } else { 0 };
        self.buf.extend_from_slice(&head.rtype.0.to_le_bytes());
        self.buf.extend_from_slice(&ttl.to_le_bytes());
        self.buf.extend_from_slice(&[0, 0]); // count, patched below
        if signed {
            self.buf.extend_from_slice(&rfc2181_ttl(head.sig_ttl).to_le_bytes());
            self.buf.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // sig count, body len
        }
        let count = self.records(rdatas);
        if has_targets(head.rtype) {
            for i in 0..usize::from(count) {
                let t = targets.get(i).copied().unwrap_or(NO_NODE);
                self.buf.extend_from_slice(&t.to_le_bytes());
            }
        }
        self.patch(start + 6, &count.to_le_bytes());
        if signed {
            let sig_count = self.records(sigs);
            let body_len = (self.buf.len() - start - HEADER) as u32;
            self.patch(start + 12, &sig_count.to_le_bytes());
            self.patch(start + 14, &body_len.to_le_bytes());
        }
    }

    /// Appends an [`RrsetData`]; one without records becomes an RRSIG pseudo-set.
    pub fn rrset_data(&mut self, r: &RrsetData) {
        let (rtype, ttl) =
            if r.rdatas.is_empty() { (Rtype::RRSIG, r.sig_ttl) } else { (r.rtype, r.ttl) };
        let head = RrsetHead { rtype, ttl, sig_ttl: r.sig_ttl };
        self.rrset(
            head,
            r.rdatas.iter().map(Vec::as_slice),
            &r.targets,
            r.sigs.iter().map(Vec::as_slice),
        );
    }

    fn records<'r>(&mut self, items: impl IntoIterator<Item = &'r [u8]>) -> u16 {
        let mut count = 0u16;
        for rdata in items {
            self.buf.extend_from_slice(&(rdata.len() as u16).to_le_bytes());
            self.buf.extend_from_slice(rdata);
            count += 1;
        }
        count
    }

    fn patch(&mut self, at: usize, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// The finished blob.
    pub fn finish(self) -> Blob {
        self.blob()
    }

    /// A copy of the blob written since the last [`restart`](Self::restart).
    pub fn blob(&self) -> Blob {
        Blob::new(&self.buf)
    }

    /// The bytes written since the last [`restart`](Self::restart).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// The fixed part of an RRset being written.
#[derive(Debug, Clone, Copy)]
pub struct RrsetHead {
    /// The type.
    pub rtype: Rtype,
    /// The TTL.
    pub ttl: u32,
    /// TTL of the covering RRSIGs.
    pub sig_ttl: u32,
}

/// Encodes a node blob from owned RRsets.
pub fn encode(owner: &Dname, rrsets: &[RrsetData]) -> Blob {
    let mut w = BlobWriter::with_capacity(owner, encoded_len(owner, rrsets));
    for r in rrsets {
        w.rrset_data(r);
    }
    w.finish()
}

/// The length of the blob [`encode`] makes (so that it writes it without growing).
fn encoded_len(owner: &Dname, rrsets: &[RrsetData]) -> usize {
    let records = |list: &[Vec<u8>]| list.iter().map(|rd| 2 + rd.len()).sum::<usize>();
    let rrset = |r: &RrsetData| {
        let targets = if has_targets(r.rtype) { 4 * r.rdatas.len() } else { 0 };
        let head = if r.sigs.is_empty() { SHORT } else { HEADER };
        head + records(&r.rdatas) + targets + records(&r.sigs)
    };
    1 + owner.len() + rrsets.iter().map(rrset).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::MAX_TTL;
    use tern_wire::Name;

    #[test]
    fn blob_round_trip() {
        let owner: Name = "Www.Example.".parse().unwrap();
        let ns = RrsetData {
            rtype: Rtype::NS,
            ttl: 3600,
            rdatas: vec![b"\x02ns\x00".to_vec(), b"\x03ns2\x00".to_vec()],
            targets: vec![7, NO_NODE],
            sig_ttl: 3600,
            sigs: vec![vec![1, 2, 3]],
        };
        let a = RrsetData {
            rtype: Rtype::A,
            ttl: 60,
            rdatas: vec![vec![192, 0, 2, 1]],
            ..Default::default()
        };
        let node = Node::new(encode(&owner, &[ns, a]));
        assert_eq!(node.owner().to_string(), "Www.Example.");
        let types: Vec<Rtype> = node.rrsets().map(|r| r.rtype).collect();
        assert_eq!(types, [Rtype::NS, Rtype::A]);
        let ns = node.rrset(Rtype::NS).unwrap();
        assert_eq!(ns.count, 2);
        assert_eq!(ns.rdatas().collect::<Vec<_>>(), [&b"\x02ns\x00"[..], b"\x03ns2\x00"]);
        assert_eq!((ns.target(0), ns.target(1), ns.target(2)), (7, NO_NODE, NO_NODE));
        assert_eq!(ns.sigs().collect::<Vec<_>>(), [&[1u8, 2, 3][..]]);
        let a = node.rrset(Rtype::A).unwrap();
        assert_eq!((a.ttl, a.target(0), a.sig_count), (60, NO_NODE, 0));
        assert!(node.rrset(Rtype::MX).is_none());
        assert_eq!(RrsetData::from_stored(&a).rdatas, vec![vec![192, 0, 2, 1]]);
    }

    #[test]
    fn only_a_signed_rrset_has_the_long_header() {
        let owner: Name = "a.example.".parse().unwrap();
        let a = |ttl, sigs: Vec<Vec<u8>>| RrsetData {
            rtype: Rtype::A,
            ttl,
            rdatas: vec![vec![192, 0, 2, 1], vec![192, 0, 2, 2]],
            sig_ttl: 77,
            sigs,
            ..Default::default()
        };
        let records = 2 * (2 + 4);
        let plain = encode(&owner, &[a(300, vec![])]);
        assert_eq!(plain.len(), 1 + owner.len() + SHORT + records);
        let node = Node::new(plain);
        let read = node.rrset(Rtype::A).unwrap();
        assert_eq!((read.ttl, read.count, read.sig_count, read.sig_ttl), (300, 2, 0, 300));
        assert_eq!(read.rdatas().count(), 2);
        let signed = encode(&owner, &[a(300, vec![vec![5; 9]]), a(60, vec![])]);
        assert_eq!(signed.len(), 1 + owner.len() + HEADER + records + 2 + 9 + SHORT + records);
        let node = Node::new(signed);
        let sets: Vec<_> = node.rrsets().map(|r| (r.ttl, r.sig_ttl, r.sig_count)).collect();
        assert_eq!(sets, [(300, 77, 1), (60, 60, 0)], "both read back, in order");
        let huge = Node::new(encode(&owner, &[a(u32::MAX, vec![]), a(MAX_TTL, vec![vec![1]])]));
        let ttls: Vec<u32> = huge.rrsets().map(|r| r.ttl).collect();
        assert_eq!(ttls, [0, MAX_TTL], "past 2^31 - 1 counts as 0 (RFC 2181 §8)");
    }

    #[test]
    fn encoded_len_is_the_blob_length() {
        let owner: Name = "a.example.".parse().unwrap();
        let ns = RrsetData {
            rtype: Rtype::NS,
            ttl: 1,
            rdatas: vec![b"\x01b\x00".to_vec(), b"\x02cc\x00".to_vec()],
            targets: vec![3],
            sig_ttl: 1,
            sigs: vec![vec![1, 2, 3, 4, 5]],
        };
        let orphans = RrsetData { rtype: Rtype::A, sigs: vec![vec![9; 20]], ..Default::default() };
        for rrsets in [vec![], vec![ns.clone()], vec![ns, orphans]] {
            let mut w = BlobWriter::with_capacity(&owner, 0);
            rrsets.iter().for_each(|r| w.rrset_data(r));
            assert_eq!(encoded_len(&owner, &rrsets), w.buf.len());
            assert_eq!(&*encode(&owner, &rrsets), &w.buf[..]);
        }
    }

    #[test]
    fn a_node_fills_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Node>(), 32);
        assert!(Node::vacant().is_vacant() && Node::vacant().flags.contains(Flags::PHANTOM));
        let owner: Name = "a.".parse().unwrap();
        assert!(!Node::new(encode(&owner, &[])).is_vacant());
    }

    #[test]
    fn targets_are_listed_without_the_absent_ones() {
        let owner: Name = "a.".parse().unwrap();
        let rrset = |rtype, targets: Vec<NodeId>| RrsetData {
            rtype,
            ttl: 1,
            rdatas: targets.iter().map(|_| b"\x01b\x00".to_vec()).collect(),
            targets,
            ..Default::default()
        };
        let node = Node::new(encode(
            &owner,
            &[rrset(Rtype::NS, vec![3, NO_NODE, 3]), rrset(Rtype::MX, vec![9])],
        ));
        assert_eq!(node.targets().collect::<Vec<_>>(), [3, 3, 9]);
    }

    #[test]
    fn empty_node_and_flags() {
        let owner: Name = "a.".parse().unwrap();
        let node = Node::new(encode(&owner, &[]));
        assert!(node.is_empty());
        let mut f = Flags::APEX | Flags::NSEC;
        assert!(f.contains(Flags::APEX) && !f.contains(Flags::DS));
        f.set(Flags::APEX, false);
        assert_eq!(format!("{f:?}"), "NSEC");
    }
}
