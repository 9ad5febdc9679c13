//! `ZoneContents`: one zone's immutable, query-ready snapshot.
//!
//! Nodes live in a copy-on-write table indexed by [`NodeId`] (the apex is node 0); a hash
//! index finds a node by name in one probe, and the query name's suffix hashes
//! ([`SuffixHashes`]) give every ancestor's probe without rehashing. NSEC3 records live in
//! their own chain ([`Nsec3Chain`]); NSEC-signed zones also keep nodes in canonical order
//! for predecessor search. Everything an answer needs beyond the lookup was precomputed by
//! the adjust pass (`crate::adjust`).

use tern_wire::{Dname, Name, Rtype};

use crate::cow::ChunkVec;
use crate::hash::{NameTag, SuffixHashes};
use crate::index::NameIndex;
use crate::negative_soa::NegativeSoa;
use crate::node::{Flags, Node, NodeId, NO_NODE, NSEC3_COVERS};
use crate::nsec3::Nsec3Chain;
use crate::order::CanonicalOrder;

/// The apex is always node 0.
pub const APEX: NodeId = 0;

/// How a zone proves non-existence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// Not signed (no DNSKEY at the apex).
    Unsigned,
    /// Signed with NSEC (RFC 4034).
    Nsec,
    /// Signed with NSEC3 (RFC 5155).
    Nsec3,
}

/// Result of looking a name up in one zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The name exists (possibly as an empty non-terminal, or below a zone cut).
    Found(NodeId),
    /// The name does not exist; this is its closest existing ancestor.
    NotFound {
        /// The closest encloser (RFC 4592 §3.3.1).
        encloser: NodeId,
        /// Labels of the closest encloser.
        encloser_labels: usize,
    },
}

/// Ancestors of the query name whose index slots a lookup prefetches.
const PREFETCHED_ANCESTORS: usize = 3;

/// One zone's snapshot.
#[derive(Clone, Debug)]
pub struct ZoneContents {
    pub(crate) origin: Name,
    /// Labels of `origin`, counted once: every lookup starts from it.
    pub(crate) origin_labels: u8,
    pub(crate) nodes: ChunkVec<Node>,
    /// Ids of the vacant nodes ([`Node::is_vacant`]: reclaimed by a change), which the
    /// next names a change makes take before the table grows. Each version has its own
    /// list, sharing chunks as the table does; boxed, and `None` when empty, as most
    /// versions' lists are.
    pub(crate) free: Option<Box<ChunkVec<NodeId>>>,
    pub(crate) index: NameIndex,
    /// The NSEC3 chain (NSEC3-signed zones), boxed: most zones have none, and a box
    /// costs them 8 bytes where the chain itself would cost its whole size.
    pub(crate) nsec3: Option<Box<Nsec3Chain>>,
    /// Whether covering links in [`Node::nsec3`] and `apex_wildcard_nsec3` were made
    /// (by the adjust pass). A covering link is then trusted while the chain says the
    /// record still covers what it covered ([`Nsec3Chain::still_covers`]); matching links
    /// are always checked against the chain.
    pub(crate) nsec3_covers: bool,
    /// The NSEC3 record matching or covering the hash of `*.<apex>` (NXDOMAIN proofs).
    pub(crate) apex_wildcard_nsec3: u32,
    /// Node ids in canonical order (NSEC-signed zones only; boxed as `nsec3`).
    pub(crate) order: Option<Box<CanonicalOrder>>,
    pub(crate) denial: Denial,
    pub(crate) serial: u32,
    /// TTL of the SOA in negative answers: min(SOA TTL, SOA MINIMUM) (RFC 2308 §3).
    pub(crate) negative_ttl: u32,
    /// The apex SOA prepared for negative answers (written with `negative_ttl`).
    pub(crate) negative_soa: Option<NegativeSoa>,
    pub(crate) record_count: usize,
    /// The changes that led to this version (IXFR); `None` for none, so that a zone
    /// without history (most zones, most of the time) holds no allocation for it.
    pub(crate) history: Option<std::sync::Arc<crate::history::History>>,
}

impl ZoneContents {
    /// The zone's origin (apex name).
    pub fn origin(&self) -> &Name {
        &self.origin
    }

    /// Takes `name`'s allocation for the origin when it is the same name byte for byte
    /// (a [`Name`]'s clones share one): a server's zones then hold their names once,
    /// in their configuration, not again in each version.
    pub fn share_origin(&mut self, name: &Name) {
        if name.as_wire() == self.origin.as_wire() {
            self.origin = name.clone();
        }
    }

    /// Labels of the origin.
    #[inline]
    pub fn origin_labels(&self) -> usize {
        usize::from(self.origin_labels)
    }

    /// The SOA serial.
    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// TTL of the SOA in negative answers: min(SOA TTL, SOA MINIMUM) (RFC 2308 §3).
    #[inline]
    pub fn negative_ttl(&self) -> u32 {
        self.negative_ttl
    }

    /// The apex SOA as negative answers carry it, prepared (see [`NegativeSoa`]).
    #[inline]
    pub fn negative_soa(&self) -> Option<&NegativeSoa> {
        self.negative_soa.as_ref()
    }

    /// How non-existence is proven.
    pub fn denial(&self) -> Denial {
        self.denial
    }

    /// Number of records (RRSIGs and NSEC3 included).
    pub fn record_count(&self) -> usize {
        self.record_count
    }

    /// Number of nodes (phantoms, empty non-terminals and vacant places included): one
    /// past the highest node id.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of vacant places in the node table, waiting for new names.
    pub fn vacant_count(&self) -> usize {
        self.free.as_ref().map_or(0, |free| free.len())
    }

    /// The node with this id.
    #[inline]
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// Starts loading node `id` (a hint; nothing happens for a missing node).
    #[inline]
    pub fn prefetch_node(&self, id: NodeId) {
        if let Some(node) = self.nodes.get(id as usize) {
            crate::index::prefetch(node);
        }
    }

    /// True when node `id` lies strictly below node `ancestor` in the tree: the parent
    /// links, without reading a name. (A phantom has no parent: it is below nothing.)
    pub fn is_below_node(&self, id: NodeId, ancestor: NodeId) -> bool {
        let mut current = self.node(id).map_or(NO_NODE, |n| n.parent);
        // A name has at most 127 labels above it: the bound only guards against a cycle.
        for _ in 0..tern_wire::name::MAX_LABELS {
            if current == NO_NODE {
                return false;
            }
            if current == ancestor {
                return true;
            }
            current = self.node(current).map_or(NO_NODE, |n| n.parent);
        }
        false
    }

    /// The apex node.
    #[inline]
    pub fn apex(&self) -> Option<&Node> {
        self.node(APEX)
    }

    /// The NSEC3 record covering node `id`'s hash (the name has no record of its own),
    /// when precomputed and current.
    #[inline]
    pub fn nsec3_cover(&self, id: NodeId) -> Option<u32> {
        let link = self.node(id)?.nsec3;
        if !self.nsec3_covers || link == u32::MAX || link & NSEC3_COVERS == 0 {
            return None;
        }
        let cover = link & !NSEC3_COVERS;
        self.nsec3.as_ref()?.still_covers(cover).then_some(cover)
    }

    /// The NSEC3 record matching or covering the hash of `*.<apex>`, when current.
    #[inline]
    pub fn apex_wildcard_nsec3(&self) -> Option<u32> {
        (self.nsec3_covers && self.apex_wildcard_nsec3 != u32::MAX)
            .then_some(self.apex_wildcard_nsec3)
    }

    /// The NSEC3 chain, for NSEC3-signed zones.
    pub fn nsec3(&self) -> Option<&Nsec3Chain> {
        self.nsec3.as_deref()
    }

    /// Finds a node (phantoms included) whose owner is `name`, given `name`'s hash.
    #[inline]
    pub fn find_hashed(&self, name: &Dname, hash: NameTag) -> Option<NodeId> {
        self.index.find(hash, |id| self.node(id).is_some_and(|n| n.owner().eq_ignore_case(name)))
    }

    /// Finds the real (non-phantom) node of `name`.
    pub fn find(&self, name: &Dname) -> Option<NodeId> {
        let id = self.find_hashed(name, crate::hash::name_hash(name))?;
        let node = self.node(id)?;
        (!node.flags.contains(Flags::PHANTOM)).then_some(id)
    }

    /// Looks up `qname` (which must be at or below the origin): the exact node, or the
    /// closest encloser. `hashes` are `qname`'s suffix hashes.
    #[inline]
    pub fn lookup(&self, qname: &Dname, hashes: &SuffixHashes) -> Lookup {
        let apex_labels = self.origin_labels();
        let mut labels = hashes.labels();
        while labels > apex_labels {
            let name = hashes.suffix_name(qname, labels);
            if let Some(id) = self.find_real(name, hashes.suffix(labels)) {
                if labels == hashes.labels() {
                    return Lookup::Found(id);
                }
                return Lookup::NotFound { encloser: id, encloser_labels: labels };
            }
            labels -= 1;
        }
        if hashes.labels() == apex_labels {
            return Lookup::Found(APEX);
        }
        Lookup::NotFound { encloser: APEX, encloser_labels: apex_labels }
    }

    /// Starts loading the index slots a [`lookup`](Self::lookup) of the name with these
    /// hashes reads first, each a likely cache miss: the name's own and its nearest
    /// ancestors' (a name below a delegation probes two). A caller that knows the name
    /// early calls this then, and the lookup finds them in cache.
    #[inline]
    pub fn prefetch_lookup(&self, hashes: &SuffixHashes) {
        for tag in self.first_probes(hashes) {
            self.index.prefetch(tag);
        }
    }

    /// After [`prefetch_lookup`](Self::prefetch_lookup), when the slots have had time to
    /// arrive: starts loading the nodes (and, through the hints, their data) those slots
    /// point to. The first entry with each tag is taken unconfirmed: no name is read.
    #[inline]
    pub fn prefetch_lookup_nodes(&self, hashes: &SuffixHashes) {
        for tag in self.first_probes(hashes) {
            self.index.find(tag, |id| {
                self.prefetch_node(id);
                true
            });
        }
    }

    /// The tags a lookup of the name with these hashes probes first: its own, then its
    /// nearest ancestors' below the apex.
    #[inline]
    fn first_probes<'h>(&self, hashes: &'h SuffixHashes) -> impl Iterator<Item = NameTag> + 'h {
        let suffixes = self.origin_labels() + 1..=hashes.labels();
        suffixes.rev().take(1 + PREFETCHED_ANCESTORS).map(|labels| hashes.suffix(labels))
    }

    #[inline]
    fn find_real(&self, name: &Dname, hash: NameTag) -> Option<NodeId> {
        let id = self.find_hashed(name, hash)?;
        let phantom = self.node(id).is_none_or(|n| n.flags.contains(Flags::PHANTOM));
        (!phantom).then_some(id)
    }

    /// The highest zone cut or DNAME at or above `id` (below the apex), if `id` is at or
    /// below one: the node that decides the answer instead of `id` (RFC 1034 §4.3.2 step
    /// 3b, RFC 6672 §3).
    pub fn cut_above(&self, id: NodeId) -> Option<NodeId> {
        self.cut_above_node(id, self.node(id)?)
    }

    /// [`cut_above`](Self::cut_above) for node `id` already at hand (`node`).
    #[inline]
    pub fn cut_above_node(&self, id: NodeId, node: &Node) -> Option<NodeId> {
        if id == NO_NODE || id == APEX {
            return None;
        }
        let cut_flags = Flags::DELEGATION | Flags::DNAME;
        let mut found = node.flags.intersects(cut_flags).then_some(id);
        let mut current = node.parent;
        while current != NO_NODE && current != APEX {
            let node = self.node(current)?;
            if node.flags.intersects(cut_flags) {
                found = Some(current);
            }
            current = node.parent;
        }
        found
    }

    /// The node just before `name` in canonical order, or the last node if `name` sorts
    /// before every node (NSEC-signed zones only; `None` otherwise).
    pub fn predecessor(&self, name: &Dname) -> Option<NodeId> {
        let owner = |id| self.node(id).map_or(Dname::ROOT, Node::owner);
        self.order.as_ref()?.predecessor(|id| owner(id).canonical_cmp(name))
    }

    /// Walks back from `id` (inclusive) in canonical order to the first node holding an
    /// NSEC RRset.
    pub fn nsec_node_at_or_before(&self, mut id: NodeId) -> Option<NodeId> {
        for _ in 0..self.nodes.len() {
            let node = self.node(id)?;
            if node.flags.contains(Flags::NSEC) {
                return Some(id);
            }
            id = node.prev;
        }
        None
    }

    /// Every node id holding data, in table order (phantoms and empty non-terminals
    /// skipped).
    pub fn data_nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.flags.intersects(Flags::PHANTOM | Flags::EMPTY))
            .map(|(i, n)| (i as NodeId, n))
    }

    /// Calls `f` for every record of the zone (SOA first, then nodes in table order, then
    /// the NSEC3 chain), as (owner, type, ttl, rdata). RRSIGs are reported with type RRSIG.
    pub fn for_each_record(&self, mut f: impl FnMut(&Dname, Rtype, u32, &[u8])) {
        if let Some(apex) = self.apex() {
            if let Some(soa) = apex.rrset(Rtype::SOA) {
                soa.rdatas().for_each(|rd| f(apex.owner(), Rtype::SOA, soa.ttl, rd));
            }
        }
        let mut emit = |node: &Node, skip_soa: bool| {
            for rrset in node.rrsets() {
                if !(skip_soa && rrset.rtype == Rtype::SOA) {
                    rrset.rdatas().for_each(|rd| f(node.owner(), rrset.rtype, rrset.ttl, rd));
                }
                rrset.sigs().for_each(|rd| f(node.owner(), Rtype::RRSIG, rrset.sig_ttl, rd));
            }
        };
        for (id, node) in self.data_nodes() {
            emit(node, id == APEX);
        }
        if let Some(chain) = &self.nsec3 {
            for node in chain.nodes() {
                emit(node, false);
            }
        }
    }
}
