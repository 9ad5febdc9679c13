//! The NSEC3 chain of a zone (RFC 5155): hashing, and the hashed-owner-ordered list of
//! NSEC3 nodes kept apart from the zone's main name table.

use ring::digest;
use tern_wire::rdata::RdataReader;
use tern_wire::Dname;

use crate::cow::ChunkVec;
use crate::hash::name_hash;
use crate::index::NameIndex;
use crate::node::Node;

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
    pub fn hash(&self, name: &Dname) -> Nsec3Hash {
        let mut lower = [0u8; 255];
        for (dst, src) in lower.iter_mut().zip(name.as_wire()) {
            *dst = src.to_ascii_lowercase();
        }
        let mut input: &[u8] = lower.get(..name.len()).unwrap_or(&[]);
        let mut out = [0u8; HASH_LEN];
        for _ in 0..=self.iterations {
            let mut ctx = digest::Context::new(&digest::SHA1_FOR_LEGACY_USE_ONLY);
            ctx.update(input);
            ctx.update(&self.salt);
            out.copy_from_slice(ctx.finish().as_ref());
            input = &out;
        }
        out
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
/// a sorted list of (hash, id) answers "which record matches or covers this hash", and an
/// owner index finds a node by name for updates.
#[derive(Clone, Debug)]
pub struct Nsec3Chain {
    /// The parameters from the apex NSEC3PARAM (or the first NSEC3 record).
    pub params: Nsec3Params,
    nodes: ChunkVec<Node>,
    sorted: ChunkVec<(Nsec3Hash, u32)>,
    index: NameIndex,
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
        let mut index = NameIndex::with_capacity(entries.len());
        let mut sorted = Vec::with_capacity(entries.len());
        let mut nodes = Vec::with_capacity(entries.len());
        for (id, (hash, node)) in entries.into_iter().enumerate() {
            index.insert(name_hash(node.owner()), id as u32);
            sorted.push((hash, id as u32));
            nodes.push(node);
        }
        sorted.sort_unstable_by_key(|e| e.0);
        Nsec3Chain {
            params,
            nodes: ChunkVec::from_vec(nodes),
            sorted: ChunkVec::from_vec(sorted),
            index,
        }
    }

    /// Number of NSEC3 records' owners in the chain.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// True when the chain is empty.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The NSEC3 node with a stable id.
    #[inline]
    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// All live NSEC3 nodes in hash order.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        self.sorted.iter().filter_map(|(_, id)| self.node(*id))
    }

    /// Finds the NSEC3 record matching or covering `hash`; `None` for an empty chain.
    pub fn find(&self, hash: &Nsec3Hash) -> Option<Nsec3Position> {
        let (mut lo, mut hi) = (0usize, self.sorted.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (h, id) = self.sorted.get(mid)?;
            match h.cmp(hash) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Equal => return Some(Nsec3Position::Match(*id)),
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        // The predecessor covers the hash; before the first hash, the last one wraps.
        let pos = if lo == 0 { self.sorted.len().checked_sub(1)? } else { lo - 1 };
        self.sorted.get(pos).map(|(_, id)| Nsec3Position::Covered(*id))
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

    /// Replaces a node's data, or adds a node for a new owner; returns its id. The sorted
    /// list is rebuilt by [`Nsec3Chain::resort`].
    pub(crate) fn put(&mut self, owner: &Dname, data: std::sync::Arc<[u8]>) -> u32 {
        if let Some(id) = self.find_owner(owner) {
            if let Some(node) = self.nodes.get_mut(id as usize) {
                node.set_data(data);
            }
            return id;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node::new(data));
        self.index.insert(name_hash(owner), id);
        id
    }

    /// Rebuilds the sorted list from the live (non-empty) nodes.
    pub(crate) fn resort(&mut self) {
        let mut sorted: Vec<(Nsec3Hash, u32)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_empty())
            .filter_map(|(id, n)| {
                Some((n.owner().first_label().and_then(decode_hash_label)?, id as u32))
            })
            .collect();
        sorted.sort_unstable_by_key(|e| e.0);
        self.sorted = ChunkVec::from_vec(sorted);
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

    #[test]
    fn base32hex_rejects_bad_labels() {
        assert!(decode_hash_label(b"0p9mhaveqvm6t7vbl5lop2u3t2rp3tow").is_none());
        assert!(decode_hash_label(b"0p9mhaveqvm6t7vbl5lop2u3t2rp3to").is_none());
        assert!(decode_hash_label(b"0P9MHAVEQVM6T7VBL5LOP2U3T2RP3TOM").is_some());
    }

    #[test]
    fn find_matches_and_covers_with_wraparound() {
        let owner: Name = "x.".parse().unwrap();
        let node = || Node::new(crate::node::encode(&owner, &[]));
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
}
