//! The NSEC3 chain of a zone (RFC 5155): hashing, and the hashed-owner-ordered list of
//! NSEC3 nodes kept apart from the zone's main name table.

use aws_lc_rs::digest;
use tern_wire::message::PreparedRrset;
use tern_wire::rdata::RdataReader;
use tern_wire::{Class, Dname, Rtype};

use crate::cow::ChunkVec;
use crate::hash::name_hash;
use crate::index::{IndexBuilder, NameIndex};
use crate::node::Node;
use crate::nsec3_order::{sort_by_hash, HashOrder, Place};

/// Length of a SHA-1 NSEC3 hash, the only algorithm defined (RFC 5155 §11).
pub const HASH_LEN: usize = 20;

/// A hashed owner name.
pub type Nsec3Hash = [u8; HASH_LEN];

/// NSEC3 hashing parameters (from NSEC3PARAM, RFC 5155 §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nsec3Params {
    /// Hash algorithm (1 = SHA-1).
    pub algorithm: u8,
    /// Flags (opt-out is a flag of NSEC3 records, not of NSEC3PARAM).
    pub flags: u8,
    /// Additional hash iterations.
    pub iterations: u16,
    /// Salt.
    pub salt: Vec<u8>,
}

impl Nsec3Params {
    /// Reads NSEC3PARAM RDATA (also accepts the leading fields of NSEC3 RDATA).
    pub fn from_rdata(rdata: &[u8]) -> Option<Nsec3Params> {
        let mut rd = RdataReader::new(rdata);
        let algorithm = rd.u8().ok()?;
        let flags = rd.u8().ok()?;
        let iterations = rd.u16().ok()?;
        let salt = rd.char_string().ok()?.to_vec();
        Some(Nsec3Params { algorithm, flags, iterations, salt })
    }

    /// True when these parameters can be used (SHA-1).
    pub fn is_supported(&self) -> bool {
        self.algorithm == 1
    }

    /// The hashed owner name of `name` (RFC 5155 §5): IH(salt, x, k) over the canonical
    /// (lower-case) wire form.
    ///
    /// Each round hashes `x || salt` laid out in one stack buffer with the one-shot digest
    /// (a streaming digest context allocates its state on the heap, per hash). The buffer
    /// is cleared before use: a short name with a short salt, nearly every hash, takes a
    /// small one, cleared in a few stores rather than a call clearing 510 bytes.
    pub fn hash(&self, name: &Dname) -> Nsec3Hash {
        const SHORT: usize = 128;
        if name.len().max(HASH_LEN) + self.salt.len() <= SHORT {
            self.hash_in::<SHORT>(name)
        } else {
            self.hash_in::<{ 255 + 255 }>(name)
        }
    }

    /// [`hash`](Self::hash) with a buffer of `N` bytes (enough for the name or a hash,
    /// and the salt).
    #[inline]
    fn hash_in<const N: usize>(&self, name: &Dname) -> Nsec3Hash {
        let mut buf = [0u8; N];
        let mut out = [0u8; HASH_LEN];
        let Some(len) = self.lay_out(&mut buf, name.as_wire(), true) else { return out };
        let mut input = buf.get(..len).unwrap_or(&[]);
        for _ in 0..=self.iterations {
            out.copy_from_slice(digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, input).as_ref());
            let Some(len) = self.lay_out(&mut buf, &out, false) else { return out };
            input = buf.get(..len).unwrap_or(&[]);
        }
        out
    }

    /// Writes `x` (lower-cased when `fold`) then the salt to the start of `buf`; returns
    /// the length written.
    fn lay_out(&self, buf: &mut [u8], x: &[u8], fold: bool) -> Option<usize> {
        let total = x.len() + self.salt.len();
        let (head, tail) = buf.get_mut(..total)?.split_at_mut(x.len());
        head.copy_from_slice(x);
        if fold {
            head.make_ascii_lowercase();
        }
        tail.copy_from_slice(&self.salt);
        Some(total)
    }
}

/// Decodes a base32hex label (RFC 4648 §7, no padding, any case) holding a SHA-1 hash.
pub fn decode_hash_label(label: &[u8]) -> Option<Nsec3Hash> {
    if label.len() != 32 {
        return None;
    }
    let mut out = [0u8; HASH_LEN];
    let mut acc: u64 = 0;
    let mut bits = 0;
    let mut pos = 0;
    for &c in label {
        let v = match c.to_ascii_uppercase() {
            d @ b'0'..=b'9' => d - b'0',
            l @ b'A'..=b'V' => l - b'A' + 10,
            _ => return None,
        };
        acc = acc << 5 | u64::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            *out.get_mut(pos)? = (acc >> bits) as u8;
            pos += 1;
        }
    }
    Some(out)
}

/// The NSEC3 records of a zone.
///
/// Nodes keep stable ids (so links from the main tree survive changes to the chain);
/// the live nodes' (hash, id) pairs in hash order (`HashOrder`) answer "which record
/// matches or covers this hash", and an owner index finds a node by name for updates.
/// Each node's NSEC3 RRset is also kept ready to copy into denial proofs
/// ([`PreparedRrset`]).
#[derive(Clone, Debug)]
pub struct Nsec3Chain {
    /// The parameters from the apex NSEC3PARAM (or the first NSEC3 record).
    pub params: Nsec3Params,
    nodes: ChunkVec<Node>,
    /// Per node id: its NSEC3 RRset and signatures in wire form, its owner's hash label
    /// under the apex; `None` for a node without NSEC3 records.
    prepared: ChunkVec<Option<PreparedRrset>>,
    sorted: HashOrder,
    index: NameIndex,
    /// One bit per node id: set when the hashes the node's record covers are no longer
    /// those it covered when the zone's links were made (a record was inserted just
    /// after it, or it left the chain), so a link saying it covers a name may be stale.
    reshaped: ChunkVec<u64>,
}

/// A node's NSEC3 RRset with its signatures in wire form, owned by the node's first label
/// (chain nodes are one label below the apex, `records::in_nsec3_chain`).
fn prepare(node: &Node) -> Option<PreparedRrset> {
    let owner = node.owner();
    let label = owner.as_wire().get(..owner.len() - owner.parent()?.len())?;
    let rrset = node.rrset(Rtype::NSEC3).filter(|r| r.has_records())?;
    PreparedRrset::new(label, (Rtype::NSEC3, Class::IN, rrset.ttl), rrset.rdatas(), rrset.sigs())
}

/// Where a hash falls in the chain (ids are stable node ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nsec3Position {
    /// An NSEC3 record has exactly this hash.
    Match(u32),
    /// The NSEC3 record whose interval covers the hash (RFC 5155 §1.3 "covers").
    Covered(u32),
}

impl Nsec3Chain {
    /// Builds the chain from (hash, node) pairs in any order.
    pub fn new(params: Nsec3Params, entries: Vec<(Nsec3Hash, Node)>) -> Nsec3Chain {
        let mut index = IndexBuilder::with_capacity(entries.len());
        let mut sorted = Vec::with_capacity(entries.len());
        let mut nodes = Vec::with_capacity(entries.len());
        let mut prepared = Vec::with_capacity(entries.len());
        for (id, (hash, node)) in entries.into_iter().enumerate() {
            index.insert(name_hash(node.owner()), id as u32);
            if !node.is_empty() {
                sorted.push((hash, id as u32));
            }
            prepared.push(prepare(&node));
            nodes.push(node);
        }
        let words = nodes.len() / 64 + 1;
        Nsec3Chain {
            params,
            reshaped: ChunkVec::filled(0, words),
            nodes: ChunkVec::from_vec(nodes),
            prepared: ChunkVec::from_vec(prepared),
            sorted: HashOrder::new(sorted),
            index: index.finish(|_| 0, |_| {}),
        }
    }

    /// Number of NSEC3 records' owners in the chain.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// True when the chain is empty.
    pub fn is_empty(&self) -> bool {
        self.sorted.len() == 0
    }

    /// The NSEC3 node with a stable id.
    #[inline]
    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// Node `id`'s NSEC3 RRset and signatures, ready to copy: its owner is the node's
    /// first label under the name a pointer leads to (the apex, RFC 5155 §3).
    #[inline]
    pub fn prepared(&self, id: u32) -> Option<&PreparedRrset> {
        self.prepared.get(id as usize)?.as_ref()
    }

    /// Starts loading where node `id`'s prepared RRset is (a hint), so that
    /// [`prefetch_prepared`](Self::prefetch_prepared) later finds it without waiting:
    /// otherwise the two loads of a proof's copy come back to back, each a cache miss on
    /// a large chain.
    #[inline]
    pub fn prefetch_prepared_slot(&self, id: u32) {
        if let Some(slot) = self.prepared.get(id as usize) {
            crate::index::prefetch(slot);
        }
    }

    /// Starts loading node `id`'s prepared RRset (a hint).
    #[inline]
    pub fn prefetch_prepared(&self, id: u32) {
        if let Some(Some(prepared)) = self.prepared.get(id as usize) {
            crate::index::prefetch_address(prepared.address());
        }
    }

    /// Starts loading node `id` (a hint; nothing happens for a missing node).
    #[inline]
    pub fn prefetch_node(&self, id: u32) {
        if let Some(node) = self.nodes.get(id as usize) {
            crate::index::prefetch(node);
        }
    }

    /// All live NSEC3 nodes in hash order.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        self.sorted.iter().filter_map(|(_, id)| self.node(*id))
    }

    /// Finds the NSEC3 record matching or covering `hash`; `None` for an empty chain.
    #[inline]
    pub fn find(&self, hash: &Nsec3Hash) -> Option<Nsec3Position> {
        self.position_at(self.sorted.lower_bound(hash), hash)
    }

    /// Where `hash` falls, given `at`, the place of the first entry not below it.
    #[inline]
    fn position_at(&self, at: Place, hash: &Nsec3Hash) -> Option<Nsec3Position> {
        if let Some((_, id)) = self.sorted.get(at).filter(|(h, _)| h == hash) {
            return Some(Nsec3Position::Match(*id));
        }
        // The predecessor covers the hash; before the first hash, the last one wraps.
        self.sorted.before(at).map(|(_, id)| Nsec3Position::Covered(*id))
    }

    /// [`find`](Self::find) for many hashes at once, each with a caller's key: sorts
    /// `queries` by hash and looks them up in that order (the chain's memory is read
    /// front to back, not at random), calling `found(key, position)` in hash order.
    pub fn find_sorted(
        &self,
        queries: &mut [(Nsec3Hash, u32)],
        mut found: impl FnMut(u32, Option<Nsec3Position>),
    ) {
        sort_by_hash(queries);
        for (hash, key) in queries.iter() {
            found(*key, self.find(hash));
        }
    }

    /// The id of the record whose hash equals `hash`.
    pub fn find_exact(&self, hash: &Nsec3Hash) -> Option<u32> {
        match self.find(hash)? {
            Nsec3Position::Match(i) => Some(i),
            Nsec3Position::Covered(_) => None,
        }
    }

    /// The id of the NSEC3 node owned by `owner` (live or emptied).
    pub fn find_owner(&self, owner: &Dname) -> Option<u32> {
        self.index.find(name_hash(owner), |id| {
            self.node(id).is_some_and(|n| n.owner().eq_ignore_case(owner))
        })
    }

    /// Replaces a node's data, or adds a node for a new owner; returns its id. The hash
    /// order follows in [`Nsec3Chain::reorder`].
    pub(crate) fn put(&mut self, owner: &Dname, data: crate::blob::Blob) -> u32 {
        if let Some(id) = self.find_owner(owner) {
            if let Some(node) = self.nodes.get_mut(id as usize) {
                node.set_data(data);
                let prepared = prepare(node);
                self.prepared.set(id as usize, prepared);
            }
            return id;
        }
        let id = self.nodes.len() as u32;
        let node = Node::new(data);
        self.prepared.push(prepare(&node));
        self.nodes.push(node);
        self.index.insert(name_hash(owner), id, 0);
        id
    }

    /// Brings the hash order up to date after [`put`](Self::put)s: `edited` lists each
    /// node put, with whether it was live (held records) before. Nodes that became live
    /// join the order, nodes left empty leave it, and the records whose covered hashes
    /// changed are marked (see [`still_covers`](Self::still_covers)). Costs in
    /// proportion to the nodes edited; returns whether the order changed.
    pub(crate) fn reorder(&mut self, edited: &[(u32, bool)]) -> bool {
        let mut removed: Vec<(Nsec3Hash, u32)> = Vec::new();
        let mut added: Vec<(Nsec3Hash, u32)> = Vec::new();
        for &(id, was_live) in edited {
            let Some(node) = self.node(id) else { continue };
            let Some(hash) = node.owner().first_label().and_then(decode_hash_label) else {
                continue;
            };
            match (was_live, !node.is_empty()) {
                (true, false) => removed.push((hash, id)),
                (false, true) => added.push((hash, id)),
                _ => {}
            }
        }
        if removed.is_empty() && added.is_empty() {
            return false;
        }
        let hashes: Vec<Nsec3Hash> = removed.iter().map(|r| r.0).collect();
        self.sorted.update(&hashes, &added);
        // RFC 5155 §1.3: a record covers the hashes up to the next one, so a record
        // inserted shortens its predecessor's span, and a removed one covers nothing.
        let mut marked: Vec<u32> = removed.iter().map(|r| r.1).collect();
        for (hash, _) in &added {
            let at = self.sorted.lower_bound(hash);
            marked.extend(self.sorted.before(at).map(|(_, id)| *id));
        }
        for id in marked {
            self.mark_reshaped(id);
        }
        true
    }

    /// True when record `id` still covers every hash it covered when the zone's links
    /// to the chain were made (`crate::adjust`): a link from a name to the record covering
    /// it can be trusted.
    #[inline]
    pub fn still_covers(&self, id: u32) -> bool {
        let word = self.reshaped.get(id as usize / 64).copied().unwrap_or(0);
        word & 1 << (id % 64) == 0
    }

    /// Forgets the marks of [`reorder`](Self::reorder): every link was made again.
    pub(crate) fn links_made(&mut self) {
        self.reshaped = ChunkVec::filled(0, self.nodes.len() / 64 + 1);
    }

    /// Groups of the hash order shared with `other`, and the number of groups.
    #[cfg(test)]
    pub(crate) fn shared_order_groups(&self, other: &Nsec3Chain) -> (usize, usize) {
        self.sorted.shared_groups(&other.sorted)
    }

    /// Marks record `id` (the marks are sized for the nodes at the last full link, and
    /// grow a word at a time for nodes added since).
    fn mark_reshaped(&mut self, id: u32) {
        let word = id as usize / 64;
        while self.reshaped.len() <= word {
            self.reshaped.push(0);
        }
        if let Some(w) = self.reshaped.get_mut(word) {
            *w |= 1 << (id % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    /// RFC 5155 Appendix A: salt AABBCCDD, 12 iterations.
    fn rfc5155_params() -> Nsec3Params {
        Nsec3Params { algorithm: 1, flags: 0, iterations: 12, salt: vec![0xAA, 0xBB, 0xCC, 0xDD] }
    }

    #[test]
    fn rfc5155_appendix_a_hashes() {
        let p = rfc5155_params();
        let cases = [
            ("example.", "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom"),
            ("a.example.", "35mthgpgcu1qg68fab165klnsnk3dpvl"),
            ("ai.example.", "gjeqe526plbf1g8mklp59enfd789njgi"),
            ("ns1.example.", "2t7b4g4vsa5smi47k61mv5bv1a22bojr"),
            ("w.example.", "k8udemvp1j2f7eg6jebps17vp3n8i58h"),
            ("*.w.example.", "r53bq7cc2uvmubfu5ocmm6pers9tk9en"),
            ("x.w.example.", "b4um86eghhds6nea196smvmlo4ors995"),
            ("xx.example.", "t644ebqk9bibcna874givr6joj62mlhv"),
        ];
        for (name, b32) in cases {
            let n: Name = name.parse().unwrap();
            let expected = decode_hash_label(b32.as_bytes()).unwrap();
            assert_eq!(p.hash(&n), expected, "{name}");
        }
    }

    /// Names and salts too long for the small buffer hash as a direct computation of
    /// RFC 5155 §5 does, and so do those right at its edge.
    #[test]
    fn long_names_and_salts_hash_as_defined() {
        let reference = |p: &Nsec3Params, name: &Name| {
            let sha1 = |x: &[u8]| {
                let input = [x, &p.salt].concat();
                let d = digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, &input);
                <Nsec3Hash>::try_from(d.as_ref()).unwrap()
            };
            let mut h = sha1(&name.as_wire().to_ascii_lowercase());
            for _ in 0..p.iterations {
                h = sha1(&h);
            }
            h
        };
        let label = "Ab".repeat(31);
        let long: Name =
            format!("{label}.{label}.{label}.x{}.example.", "y".repeat(40)).parse().unwrap();
        for (name, salt_len) in
            [("a.Example.", 255), (long.to_string().as_str(), 0), ("x.example.", 110)]
        {
            let n: Name = name.parse().unwrap();
            let edge = 128usize.saturating_sub(n.len().max(HASH_LEN)); // the small buffer, full
            for salt_len in [salt_len, edge, edge + 1, 107, 108, 109] {
                let salt = (0..salt_len).map(|i| i as u8).collect();
                let p = Nsec3Params { algorithm: 1, flags: 0, iterations: 2, salt };
                assert_eq!(p.hash(&n), reference(&p, &n), "{name}, salt {salt_len}");
            }
        }
    }

    #[test]
    fn base32hex_rejects_bad_labels() {
        assert!(decode_hash_label(b"0p9mhaveqvm6t7vbl5lop2u3t2rp3tow").is_none());
        assert!(decode_hash_label(b"0p9mhaveqvm6t7vbl5lop2u3t2rp3to").is_none());
        assert!(decode_hash_label(b"0P9MHAVEQVM6T7VBL5LOP2U3T2RP3TOM").is_some());
    }

    /// An NSEC3 node's data: one NSEC3 record (`next` as its RDATA tail) and `sigs`.
    fn nsec3_node(owner: &Name, next: u8, sigs: usize) -> crate::blob::Blob {
        let rrset = crate::node::RrsetData {
            rtype: Rtype::NSEC3,
            ttl: 300,
            rdatas: vec![vec![1, 0, 0, 0, 0, 20, next]],
            targets: Vec::new(),
            sig_ttl: 300,
            sigs: (0..sigs).map(|i| vec![i as u8; 40]).collect(),
        };
        crate::node::encode(owner, &[rrset])
    }

    #[test]
    fn nsec3_rrsets_are_prepared_and_follow_updates() {
        let owner: Name = "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.Example.".parse().unwrap();
        let other: Name = "2t7b4g4vsa5smi47k61mv5bv1a22bojr.example.".parse().unwrap();
        let empty = Node::new(crate::node::encode(&other, &[]));
        let mut chain = Nsec3Chain::new(
            rfc5155_params(),
            vec![([1; HASH_LEN], Node::new(nsec3_node(&owner, 7, 1))), ([2; HASH_LEN], empty)],
        );
        let first = chain.prepared(0).expect("prepared");
        assert_eq!((first.count(), first.apex_slot()), (2, 33), "NSEC3 and RRSIG; one label");
        assert!(first.records().starts_with(b"\x200p9mhaveqvm6t7vbl5lop2u3t2rp3tom\0\0"));
        assert!(first.records().windows(2).any(|w| w == [20, 7]), "the NSEC3 RDATA");
        assert!(chain.prepared(1).is_none(), "no NSEC3 records, nothing prepared");
        assert!(chain.prepared(2).is_none());
        // An update replaces the prepared RRset; a new owner gets one.
        assert_eq!(chain.put(&owner, nsec3_node(&owner, 9, 2)), 0);
        let updated = chain.prepared(0).expect("prepared");
        assert_eq!(updated.count(), 3);
        assert!(updated.records().windows(2).any(|w| w == [20, 9]));
        let third: Name = "35mthgpgcu1qg68fab165klnsnk3dpvl.example.".parse().unwrap();
        assert_eq!(chain.put(&third, nsec3_node(&third, 3, 0)), 2);
        assert_eq!(chain.prepared(2).map(PreparedRrset::count), Some(1));
    }

    #[test]
    fn find_matches_and_covers_with_wraparound() {
        let owner: Name = "x.".parse().unwrap();
        let node = || Node::new(nsec3_node(&owner, 0, 0));
        let h = |b: u8| [b; HASH_LEN];
        let chain = Nsec3Chain::new(
            rfc5155_params(),
            vec![(h(50), node()), (h(10), node()), (h(30), node())],
        );
        // Stable ids follow insertion order: 50 → 0, 10 → 1, 30 → 2.
        assert_eq!(chain.find(&h(30)), Some(Nsec3Position::Match(2)));
        assert_eq!(chain.find(&h(40)), Some(Nsec3Position::Covered(2)));
        assert_eq!(chain.find(&h(60)), Some(Nsec3Position::Covered(0)));
        assert_eq!(chain.find(&h(5)), Some(Nsec3Position::Covered(0)));
        assert_eq!(chain.find_exact(&h(10)), Some(1));
        assert_eq!(chain.find_exact(&h(11)), None);
    }

    #[test]
    fn sorted_walk_agrees_with_single_finds() {
        let owner: Name = "x.".parse().unwrap();
        let mut x: u64 = 0x0DDB_1A5E_5BAD_5EED;
        let mut hash = |tie: bool| {
            let mut h = [0u8; HASH_LEN];
            for chunk in h.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                chunk.copy_from_slice(&x.to_be_bytes()[..chunk.len()]);
            }
            if tie {
                h[..4].copy_from_slice(&[0x40, 1, 2, 3]); // leading 32 bits shared
            }
            h
        };
        let entries: Vec<(Nsec3Hash, Node)> =
            (0..300).map(|i| (hash(i % 7 == 0), Node::new(nsec3_node(&owner, 0, 0)))).collect();
        let mut probes: Vec<Nsec3Hash> = entries.iter().map(|e| e.0).collect();
        probes.extend((0..500).map(|i| hash(i % 9 == 0)));
        probes.extend([[0; HASH_LEN], [0xFF; HASH_LEN]]);
        let chain = Nsec3Chain::new(rfc5155_params(), entries);
        let mut queries: Vec<(Nsec3Hash, u32)> =
            probes.iter().zip(0..).map(|(h, k)| (*h, k)).collect();
        let mut seen = 0;
        chain.find_sorted(&mut queries, |key, position| {
            assert_eq!(position, chain.find(&probes[key as usize]), "probe {key}");
            seen += 1;
        });
        assert_eq!(seen, probes.len());
        let empty = Nsec3Chain::new(rfc5155_params(), Vec::new());
        empty.find_sorted(&mut [([7; HASH_LEN], 0)], |_, position| assert_eq!(position, None));
    }
}
