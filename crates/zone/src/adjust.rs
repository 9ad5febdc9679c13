//! The adjust pass: everything a query needs beyond the lookup, computed once per load or
//! change so that answering tests flags instead of searching (ARCHITECTURE.md "one lookup
//! per query").
//!
//! Per node: apex / delegation / non-authoritative (below a cut) / below a DNAME / empty
//! non-terminal / wildcard flags, the wildcard child, the canonical predecessor (NSEC
//! zones) and the matching NSEC3 record (NSEC3 zones). The zone's denial mode and serial
//! are read here too.
//!
//! [`full`] computes everything, for a load; a changeset redoes only what its change
//! reaches (`crate::changeset`): the touched nodes' flags and links, and the canonical
//! order relinked around the names that came and went ([`relink_order`]).

use tern_wire::rdata::RdataReader;
use tern_wire::Rtype;

use crate::contents::{Denial, ZoneContents, APEX};
use crate::cow::ChunkVec;
use crate::negative_soa::NegativeSoa;
use crate::node::{Flags, Node, NodeId, Rrset, NO_NODE, NSEC3_COVERS};
use crate::nsec3::Nsec3Position;
use crate::order::CanonicalOrder;

/// Recomputes every derived fact of the zone.
pub fn full(zone: &mut ZoneContents) {
    flags(zone);
    wildcards(zone);
    zone_wide(zone);
}

/// What [`full`] computes once every node's flags and wildcard link are current (a
/// builder sets those as it makes each node): the zone's facts, and the canonical order
/// or the NSEC3 links.
pub fn zone_wide(zone: &mut ZoneContents) {
    zone_facts(zone);
    zone.order = None;
    match zone.denial {
        Denial::Nsec => canonical_order(zone),
        Denial::Nsec3 => {
            let ids: Vec<NodeId> = (0..zone.nodes.len() as NodeId).collect();
            nsec3_link(zone, &ids);
            apex_wildcard_link(zone);
            if let Some(chain) = zone.nsec3.as_mut() {
                chain.links_made();
            }
            zone.nsec3_covers = true;
        }
        Denial::Unsigned => {}
    }
}

/// Reads the serial, the negative TTL and the denial mode (after the apex's flags are
/// current).
pub fn zone_facts(zone: &mut ZoneContents) {
    if let Some((serial, negative_ttl)) = apex_soa_facts(zone) {
        zone.serial = serial;
        zone.negative_ttl = negative_ttl;
    }
    zone.negative_soa = zone.apex().and_then(|apex| {
        let rdata = apex.rrset(Rtype::SOA)?.rdatas().next()?;
        NegativeSoa::new(zone.origin(), apex.data(), zone.negative_ttl, rdata)
    });
    zone.denial = denial(zone);
}

/// Recomputes one node's flags from its data and its parent's flags (the parent's must
/// be current). Leaves the node's chunk unshared when nothing changes.
pub fn node_flags(zone: &mut ZoneContents, id: NodeId) {
    let Some(node) = zone.node(id) else { return };
    let parent = node.parent;
    let flags =
        local_flags(node, id) | inherited_flags(zone.node(parent).map(|p| (parent, p.flags)));
    if node.flags != flags {
        if let Some(n) = zone.nodes.get_mut(id as usize) {
            n.flags = flags;
        }
    }
}

/// Updates the wildcard links of the parents of the wildcard nodes among `ids`.
pub fn wildcard_links(zone: &mut ZoneContents, ids: &[NodeId]) {
    for &id in ids {
        let Some(node) = zone.node(id) else { continue };
        if !node.owner().is_wildcard() {
            continue;
        }
        let real = !node.flags.contains(Flags::PHANTOM);
        let Some(parent_name) = node.owner().parent().map(|p| p.to_name()) else { continue };
        let Some(pid) = zone.find_hashed(&parent_name, crate::hash::name_hash(&parent_name)) else {
            continue;
        };
        let current = zone.node(pid).map_or(NO_NODE, |p| p.wildcard);
        let wanted = if real {
            id
        } else if current == id {
            NO_NODE
        } else {
            current
        };
        if wanted != current {
            if let Some(p) = zone.nodes.get_mut(pid as usize) {
                p.wildcard = wanted;
            }
        }
    }
}

/// Flags a node has from its own RRsets and name.
pub fn local_flags(node: &Node, id: NodeId) -> Flags {
    let mut local = LocalFlags::new(node, id);
    for rrset in node.rrsets() {
        local.add(&rrset);
    }
    local.finish()
}

/// [`local_flags`] read RRset by RRset, for a caller that walks a node's RRsets for
/// other reasons too (the zone builder: one walk of each new node).
pub struct LocalFlags {
    flags: Flags,
    any: bool,
}

impl LocalFlags {
    /// Before `node`'s (node `id`'s) RRsets: what its id and owner say.
    pub fn new(node: &Node, id: NodeId) -> LocalFlags {
        let mut flags = Flags::empty();
        flags.set(Flags::PHANTOM, node.flags.contains(Flags::PHANTOM));
        flags.set(Flags::APEX, id == APEX);
        flags.set(Flags::WILDCARD, node.owner().is_wildcard());
        LocalFlags { flags, any: false }
    }

    /// One RRset of the node.
    #[inline]
    pub fn add(&mut self, rrset: &Rrset<'_>) {
        self.any |= rrset.has_records();
        let f = &mut self.flags;
        match rrset.rtype {
            Rtype::NS if !f.contains(Flags::APEX) => f.set(Flags::DELEGATION, true),
            Rtype::DNAME => f.set(Flags::DNAME, true),
            Rtype::CNAME => f.set(Flags::CNAME, true),
            Rtype::NSEC => f.set(Flags::NSEC, true),
            Rtype::DS => f.set(Flags::DS, true),
            _ => {}
        }
    }

    /// The node's own flags, once every RRset was added.
    pub fn finish(self) -> Flags {
        let mut f = self.flags;
        f.set(Flags::EMPTY, !self.any && !f.contains(Flags::PHANTOM));
        f
    }
}

/// Flags inherited from the parent: below a cut (RFC 1034 §4.2.1: data below a cut is not
/// authoritative) and below a DNAME (RFC 6672 §2.3).
pub fn inherited_flags(parent: Option<(NodeId, Flags)>) -> Flags {
    let mut f = Flags::empty();
    if let Some((pid, pf)) = parent {
        let cut = pid != APEX && pf.intersects(Flags::DELEGATION | Flags::NONAUTH);
        f.set(Flags::NONAUTH, cut);
        f.set(Flags::BELOW_DNAME, pf.intersects(Flags::DNAME | Flags::BELOW_DNAME));
    }
    f
}

/// Sets the flags of every node, ancestors first (by label count, since updates may give
/// a parent a higher id than its children).
fn flags(zone: &mut ZoneContents) {
    for id in by_depth(&zone.nodes) {
        let Some(node) = zone.nodes.get(id as usize) else { continue };
        let parent = node.parent;
        let local = local_flags(node, id);
        let parent_flags = zone.nodes.get(parent as usize).map(|p| (parent, p.flags));
        let flags = local | inherited_flags(parent_flags);
        if let Some(n) = zone.nodes.get_mut(id as usize) {
            n.flags = flags;
        }
    }
}

/// Node ids ordered by label count (a counting sort).
fn by_depth(nodes: &ChunkVec<Node>) -> Vec<NodeId> {
    let depths: Vec<u8> = nodes.iter().map(|n| n.owner().label_count() as u8).collect();
    let mut starts = [0usize; 129];
    for &d in &depths {
        if let Some(s) = starts.get_mut(usize::from(d) + 1) {
            *s += 1;
        }
    }
    for i in 1..starts.len() {
        let prev = starts.get(i - 1).copied().unwrap_or(0);
        if let Some(s) = starts.get_mut(i) {
            *s += prev;
        }
    }
    let mut out = vec![0 as NodeId; depths.len()];
    for (id, &d) in depths.iter().enumerate() {
        if let Some(pos) = starts.get_mut(usize::from(d)) {
            if let Some(slot) = out.get_mut(*pos) {
                *slot = id as NodeId;
            }
            *pos += 1;
        }
    }
    out
}

/// Points each node at its `*` child (RFC 4592 §3.3.1: the source of synthesis is the
/// closest encloser's wildcard child).
fn wildcards(zone: &mut ZoneContents) {
    let mut stale: Vec<NodeId> = Vec::new();
    let mut links: Vec<(NodeId, NodeId)> = Vec::new();
    for (id, node) in zone.nodes.iter().enumerate() {
        if node.wildcard != NO_NODE {
            stale.push(id as NodeId);
        }
        let real = !node.flags.contains(Flags::PHANTOM) && node.parent != NO_NODE;
        if real && node.flags.contains(Flags::WILDCARD) {
            links.push((node.parent, id as NodeId));
        }
    }
    for id in stale {
        if let Some(n) = zone.nodes.get_mut(id as usize) {
            n.wildcard = NO_NODE;
        }
    }
    for (parent, child) in links {
        if let Some(p) = zone.nodes.get_mut(parent as usize) {
            p.wildcard = child;
        }
    }
}

/// The apex SOA's serial, and min(SOA TTL, MINIMUM) for negative answers (RFC 2308 §3).
fn apex_soa_facts(zone: &ZoneContents) -> Option<(u32, u32)> {
    let soa = zone.apex()?.rrset(Rtype::SOA)?;
    let rdata = soa.rdatas().next()?;
    let mut rd = RdataReader::new(rdata);
    rd.name().ok()?;
    rd.name().ok()?;
    let serial = rd.u32().ok()?;
    rd.bytes(12).ok()?;
    let minimum = rd.u32().ok()?;
    Some((serial, soa.ttl.min(minimum)))
}

/// NSEC3 when the zone has an NSEC3 chain; NSEC when the apex has an NSEC record (every
/// NSEC-signed zone has one there, RFC 4035 §2.3); else unsigned.
fn denial(zone: &ZoneContents) -> Denial {
    if zone.nsec3.as_ref().is_some_and(|c| !c.is_empty()) {
        return Denial::Nsec3;
    }
    if zone.apex().is_some_and(|n| n.flags.contains(Flags::NSEC)) {
        return Denial::Nsec;
    }
    Denial::Unsigned
}

/// Canonical order of real nodes and each node's predecessor (RFC 4034 §6.1), for NSEC
/// denial. A phantom's predecessor is [`NO_NODE`]: a node has one exactly when it is in
/// the order, which is how [`relink_order`] tells the names a change added.
pub fn canonical_order(zone: &mut ZoneContents) {
    let mut ids: Vec<NodeId> = Vec::with_capacity(zone.nodes.len());
    for id in 0..zone.nodes.len() as NodeId {
        match zone.node(id) {
            Some(n) if !n.flags.contains(Flags::PHANTOM) => ids.push(id),
            _ => set_prev(zone, id, NO_NODE),
        }
    }
    ids.sort_by_cached_key(|&id| zone.node(id).map(|n| n.owner().lookup_key().as_bytes().to_vec()));
    let last = ids.last().copied().unwrap_or(APEX);
    let mut prev = last;
    for &id in &ids {
        if let Some(n) = zone.nodes.get_mut(id as usize) {
            n.prev = prev;
        }
        prev = id;
    }
    zone.order = Some(Box::new(CanonicalOrder::from_sorted(&ids)));
}

/// Brings the canonical order and the predecessor links up to date after a change that
/// reached nodes `ids`. The order holds the names of the zone (nodes that are not
/// phantoms), and a node has a predecessor exactly when it is in the order: a node that
/// became a name is inserted, one that stopped being one is removed, and only their
/// neighbours' links change (RFC 4034 §4.1.1: each name's NSEC names the next one,
/// wrapping from the last to the apex; a node's `prev` is where the NSEC covering names
/// just before it is found).
pub fn relink_order(zone: &mut ZoneContents, ids: &[NodeId]) {
    let Some(mut order) = zone.order.take() else {
        canonical_order(zone);
        return;
    };
    let (mut left, mut came) = (Vec::new(), Vec::new());
    for &id in ids {
        let Some(node) = zone.node(id) else { continue };
        match (node.prev != NO_NODE, !node.flags.contains(Flags::PHANTOM)) {
            (true, false) => left.push(id),
            (false, true) => came.push(id),
            _ => {}
        }
    }
    for id in left {
        if let Some(n) = order.remove(id, |other| owner_cmp(zone, other, id)) {
            set_prev(zone, n.next, n.prev);
        }
        set_prev(zone, id, NO_NODE);
    }
    for id in came {
        let n = order.insert(id, |other| owner_cmp(zone, other, id));
        set_prev(zone, id, n.prev);
        set_prev(zone, n.next, id);
    }
    zone.order = Some(order);
}

/// How node `a`'s owner compares with node `b`'s in canonical order (RFC 4034 §6.1).
fn owner_cmp(zone: &ZoneContents, a: NodeId, b: NodeId) -> std::cmp::Ordering {
    let owner = |id| zone.node(id).map_or(tern_wire::Dname::ROOT, Node::owner);
    owner(a).canonical_cmp(owner(b))
}

/// Sets node `id`'s predecessor, leaving its chunk shared when it is already right.
fn set_prev(zone: &mut ZoneContents, id: NodeId, prev: NodeId) {
    if zone.node(id).is_some_and(|n| n.prev != prev) {
        if let Some(n) = zone.nodes.get_mut(id as usize) {
            n.prev = prev;
        }
    }
}

/// Finds the NSEC3 record for `*.<apex>` (every NXDOMAIN directly below the apex needs
/// its cover, RFC 5155 §7.2.2).
pub fn apex_wildcard_link(zone: &mut ZoneContents) {
    let Some(chain) = zone.nsec3.as_ref() else { return };
    let mut builder = tern_wire::NameBuilder::new();
    let wildcard = builder.push_label(b"*").and_then(|()| builder.finish_with(zone.origin()));
    zone.apex_wildcard_nsec3 = match wildcard.ok().and_then(|w| chain.find(&chain.params.hash(&w)))
    {
        Some(Nsec3Position::Match(id) | Nsec3Position::Covered(id)) => id,
        None => u32::MAX,
    };
}

/// Links each of `ids` that is authoritative (or a delegation) to the NSEC3 record of its
/// hash (RFC 5155 §7.2: closest-encloser and NODATA proofs use it). Links are a cache: the
/// engine hashes at query time when a link is missing.
pub fn nsec3_link(zone: &mut ZoneContents, ids: &[NodeId]) {
    let Some(chain) = zone.nsec3.as_ref() else { return };
    if !chain.params.is_supported() {
        return;
    }
    // Hash every linked node, then look the hashes up in one sorted walk of the chain.
    let mut links = vec![u32::MAX; ids.len()];
    let mut queries = Vec::with_capacity(ids.len());
    let skip = Flags::PHANTOM | Flags::NONAUTH | Flags::BELOW_DNAME;
    for (key, &id) in (0u32..).zip(ids) {
        if let Some(node) = zone.node(id).filter(|n| !n.flags.intersects(skip)) {
            queries.push((chain.params.hash(node.owner()), key));
        }
    }
    chain.find_sorted(&mut queries, |key, position| {
        if let Some(link) = links.get_mut(key as usize) {
            *link = match position {
                Some(Nsec3Position::Match(id)) => id,
                Some(Nsec3Position::Covered(id)) => id | NSEC3_COVERS,
                None => u32::MAX,
            };
        }
    });
    for (&id, &link) in ids.iter().zip(&links) {
        if zone.node(id).is_some_and(|n| n.nsec3 != link) {
            if let Some(n) = zone.nodes.get_mut(id as usize) {
                n.nsec3 = link;
            }
        }
    }
}
