//! The node table of a build: each main-space node made once, in id order, straight into
//! its chunk, with what the adjust pass would give it — flags, wildcard child, child
//! count — and what its data tells the checks ([`Checks`]).
//!
//! A builder's node ids are in topological order (a parent's id is below its children's;
//! phantoms have no parent), so a node's inherited flags come from a parent already
//! made, as `adjust::full`'s pass by depth would give them. A node's own flags and checks
//! are read from its data as soon as it is encoded: in `finish`, or ahead of it for a
//! node encoded while the transfer ran (the `ahead` module). No node's data is read
//! again after it is made; `adjust::zone_wide` and `check::zone` do the rest. The
//! references between nodes are counted the same way, from each blob while it is fresh
//! ([`Targets`]), and each node's count ([`Node::refs`]) is set once the table is made.
//!
//! A small zone's nodes are encoded first, all into one allocation ([`encode_small`]).

use super::ahead::Ahead;
use super::encode::{Encoder, Groups};
use super::space::Owners;
use crate::adjust::{inherited_flags, LocalFlags};
use crate::blob::Blob;
use crate::check::{Checks, ChecksOf};
use crate::cow::ChunkVec;
use crate::node::{has_targets, Flags, Node, NodeId, Rrset, NO_NODE, REFS_UNCOUNTED};

/// The in-zone targets of NS records, as (owner, target) node pairs.
pub(super) type NsTargets = Vec<(NodeId, NodeId)>;

/// What the nodes encoded so far say about the nodes they name as targets.
#[derive(Debug, Default)]
pub(super) struct Targets {
    /// Their NS targets, for the glue check (see [`ChecksOf`]).
    pub ns: NsTargets,
    /// By node id: how many records name the node (see [`Node::refs`]).
    refs: Vec<u16>,
}

impl Targets {
    /// Counts the references of one RRset's records to their targets.
    #[inline]
    fn count(&mut self, rrset: &Rrset<'_>) {
        if !has_targets(rrset.rtype) {
            return;
        }
        for target in (0..usize::from(rrset.count)).map(|i| rrset.target(i)) {
            let i = target as usize;
            if target == NO_NODE {
                continue;
            }
            if i >= self.refs.len() {
                self.refs.resize(i + 1, 0);
            }
            if let Some(count) = self.refs.get_mut(i) {
                *count = count.saturating_add(1);
            }
        }
    }

    /// Takes back the references of a node encoded ahead and then given up (its data is
    /// encoded again, and read again, by `finish`). Its NS targets stay: the glue check
    /// only asks whether a node has one.
    pub fn forget(&mut self, blob: &Blob) {
        for target in Node::new(blob.clone()).targets() {
            if let Some(count) = self.refs.get_mut(target as usize) {
                // A count that reached the most it holds stays there.
                if *count != REFS_UNCOUNTED {
                    *count = count.saturating_sub(1);
                }
            }
        }
    }

    /// Gives each node of the finished table its count.
    fn set_refs(&self, nodes: &mut ChunkVec<Node>) {
        for (id, &count) in self.refs.iter().enumerate().filter(|(_, &c)| c > 0) {
            if let Some(node) = nodes.get_mut(id) {
                node.refs = count;
            }
        }
    }
}

/// What a node's own data says: its own flags (`adjust::local_flags`) and its checks.
/// Packed (3 bytes), so that a node encoded ahead costs no more than before it had them.
#[derive(Clone, Copy, Debug)]
#[repr(C, packed)]
pub(super) struct Facts {
    flags: Flags,
    checks: Checks,
}

impl Facts {
    /// The facts of node `id` with data `blob`, read while the blob is fresh; what it
    /// says of its targets goes to `targets`. A node with data is no phantom (phantoms
    /// are made by `finish`).
    pub fn of_data(blob: Blob, id: NodeId, targets: &mut Targets) -> (Blob, Facts) {
        let mut node = Node::new(blob);
        let facts = Facts::read(&mut node, id, false, targets);
        (node.into_data(), facts)
    }

    /// Sets `node`'s own flags (it has none yet) and reads its facts; what it says of its
    /// targets goes to `targets` (their references, its NS targets). One walk of its
    /// RRsets for all of it: each walk decodes every RRset's header and lengths again.
    fn read(node: &mut Node, id: NodeId, phantom: bool, targets: &mut Targets) -> Facts {
        node.flags.set(Flags::PHANTOM, phantom);
        let mut flags = LocalFlags::new(node, id);
        let mut checks = ChecksOf::default();
        for rrset in node.rrsets() {
            flags.add(&rrset);
            checks.add(&rrset, id, &mut targets.ns);
            targets.count(&rrset);
        }
        node.flags = flags.finish();
        Facts { flags: node.flags, checks: checks.finish(node, id) }
    }
}

/// The main space's nodes, in id order, with every fact of theirs that `adjust::full`
/// would set, and what each one's data tells the checks, by id. A node encoded `ahead`
/// (and still good) is not encoded again.
pub(super) fn main_nodes(
    encoder: &mut Encoder<'_>,
    space: &Owners,
    groups: &Groups,
    ahead: &mut Ahead,
) -> (ChunkVec<Node>, Vec<Checks>) {
    let (children, wildcards) = links(space);
    let mut targets = std::mem::take(&mut ahead.targets);
    let mut flags: Vec<Flags> = Vec::with_capacity(space.nodes.len());
    let mut checks = Vec::with_capacity(space.nodes.len());
    let mut blobs = BLOBS.take(); // kept for the next zone: no allocation left behind
    encode_small(encoder, space, groups, ahead, &mut blobs);
    let mut encoded = blobs.drain(..);
    let mut nodes = ChunkVec::from_fn(space.nodes.len(), |i| {
        let id = i as NodeId;
        let built = space.nodes.get(i);
        let (parent, phantom) = built.map_or((NO_NODE, false), |b| (b.parent, b.phantom));
        let (mut node, facts) = match ahead.take(id) {
            Some((blob, count, facts)) => {
                encoder.taken_ahead(count);
                (Node::new(blob), facts)
            }
            None => {
                let blob = encoded
                    .next()
                    .unwrap_or_else(|| encoder.node(space.owner(id), groups.main(id)));
                let mut node = Node::new(blob);
                let facts = Facts::read(&mut node, id, phantom, &mut targets);
                (node, facts)
            }
        };
        debug_assert!(parent == NO_NODE || parent < id, "ids are in topological order");
        let inherited = inherited_flags(flags.get(parent as usize).map(|&f| (parent, f)));
        node.flags = facts.flags | inherited;
        node.parent = parent;
        node.children = children.get(i).copied().unwrap_or(0);
        if let Ok(k) = wildcards.binary_search_by_key(&id, |link| link.0) {
            node.wildcard = wildcards.get(k).map_or(NO_NODE, |link| link.1);
        }
        flags.push(node.flags);
        checks.push(facts.checks);
        node
    });
    drop(encoded);
    BLOBS.set(blobs);
    Checks::settle(&mut checks, &targets.ns);
    targets.set_refs(&mut nodes);
    (nodes, checks)
}

/// A zone of at most this many nodes has them encoded before its node table is made, all
/// at once ([`encode_small`]).
const SMALL_NODES: usize = 256;

/// A small zone whose nodes hold at most this many bytes of data in all has them in one
/// pack.
const PACK_BYTES: usize = 16 << 10;

/// Encodes every node of a small zone (one of at most [`SMALL_NODES`], none encoded
/// ahead), in id order, into `blobs`: into one allocation ([`Blob::pack`]) when they hold
/// at most [`PACK_BYTES`] in all, else a blob each. Leaves `blobs` empty for any other
/// zone: its nodes are encoded one at a time as its table is made.
///
/// A pack is one allocation where a zone of nine names made nine, and an allocator keeps
/// 8 to 24 bytes of its own for each (glibc's header and rounding). The nodes are
/// encoded into a buffer kept for the next zone, not into a blob each copied into the
/// pack afterwards, so that no freed blob leaves a hole beside the pack. A larger zone
/// keeps a blob per node: a change's replaced nodes free their data at once, where a
/// pack goes with the last of its parts (a small zone's pack holds at most
/// `PACK_BYTES` that way).
fn encode_small(
    encoder: &mut Encoder<'_>,
    space: &Owners,
    groups: &Groups,
    ahead: &Ahead,
    blobs: &mut Vec<Blob>,
) {
    if space.nodes.len() > SMALL_NODES || ahead.encoded_any() {
        return;
    }
    ENCODED.with_borrow_mut(|(bytes, ends)| {
        bytes.clear();
        ends.clear();
        for id in 0..space.nodes.len() as NodeId {
            bytes.extend_from_slice(encoder.node_bytes(space.owner(id), groups.main(id)));
            ends.push(bytes.len());
        }
        let parts =
            ends.iter().scan(0, |start, &end| bytes.get(std::mem::replace(start, end)..end));
        if bytes.len() <= PACK_BYTES {
            Blob::pack(parts, |blob| blobs.push(blob));
        } else {
            blobs.extend(parts.map(Blob::new));
        }
    });
}

thread_local! {
    /// [`encode_small`]'s buffers, kept for the next zone: the nodes' data, and where
    /// each node's ends in it.
    static ENCODED: std::cell::RefCell<(Vec<u8>, Vec<usize>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    /// [`encode_small`]'s blobs, until [`main_nodes`] puts them in their nodes.
    static BLOBS: std::cell::Cell<Vec<Blob>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Each node's child count (phantoms are nobody's child), and the links from parents to
/// their `*` child (RFC 4592 §3.3.1: the source of synthesis is the closest encloser's
/// wildcard child), sorted by parent.
fn links(space: &Owners) -> (Vec<u32>, Vec<(NodeId, NodeId)>) {
    let mut children = vec![0u32; space.nodes.len()];
    let mut wildcards = Vec::new();
    for (id, built) in (0..).zip(&space.nodes) {
        if built.phantom || built.parent == NO_NODE {
            continue;
        }
        if let Some(count) = children.get_mut(built.parent as usize) {
            *count += 1;
        }
        if space.is_wildcard(id) {
            wildcards.push((built.parent, id));
        }
    }
    wildcards.sort_unstable();
    (children, wildcards)
}

#[cfg(test)]
mod tests {
    use super::super::ZoneBuilder;
    use crate::adjust;
    use crate::blob::Blob;
    use crate::node::{Node, NodeId};
    use crate::testutil::{self, fingerprint, APEX};
    use tern_wire::Name;

    /// Names whose facts differ: wildcards (one below an empty non-terminal), a cut with
    /// glue and data below it, a DNAME at a leaf, CNAMEs, DS, and phantom targets.
    const ZONE: &str = "
        *.example. 300 A 192.0.2.1
        *.w.example. 300 TXT \"wild\"
        d.example. 300 NS ns.d.example.
        d.example. 300 NS ns.elsewhere.example.
        d.example. 300 DS 12345 13 2 abababababababababababababababababababababababababababababababab
        ns.d.example. 300 A 192.0.2.2
        txt.d.example. 300 TXT \"below the cut\"
        a.b.ns.d.example. 300 AAAA 2001:db8::2
        dn.example. 300 DNAME other.
        www.example. 300 CNAME host.example.
        host.example. 300 A 192.0.2.3
        mx.example. 300 MX 10 nowhere.example.
        ds.example. 300 DS 12345 13 2 abababababababababababababababababababababababababababababababab
        e.f.g.example. 300 A 192.0.2.4";

    /// The zone built from `text` (working ahead every `batch` records, 0: never), and
    /// the same zone adjusted again by `adjust::full`, as comparable text.
    fn built_and_adjusted(text: &str, batch: usize) -> (Vec<String>, Vec<String>) {
        let origin: Name = "example.".parse().unwrap();
        let mut b = ZoneBuilder::working_ahead_every(&origin, batch);
        testutil::add_lines_then(&mut b, "example.", text, ZoneBuilder::work_ahead);
        let (zone, _) = b.finish().unwrap();
        let mut again = zone.clone();
        adjust::full(&mut again);
        (fingerprint(&zone), fingerprint(&again))
    }

    #[test]
    fn nodes_are_made_with_the_facts_adjust_gives_them() {
        let text = format!("{APEX}{ZONE}");
        for batch in [0, 1, 3, 64] {
            let (built, adjusted) = built_and_adjusted(&text, batch);
            assert_eq!(built, adjusted, "batch {batch}");
        }
    }

    /// The data of `zone`'s node `name`.
    fn data_of<'z>(zone: &'z crate::ZoneContents, name: &str) -> &'z Blob {
        zone.node(zone.find(&name.parse::<Name>().unwrap()).unwrap()).unwrap().data()
    }

    #[test]
    fn a_small_zone_has_its_nodes_in_one_pack_and_a_larger_one_a_blob_each() {
        let text = format!("{APEX}{ZONE}");
        let (small, _) = testutil::zone("example.", &text);
        let data: Vec<&Blob> = (0..small.node_count() as NodeId)
            .filter_map(|id| small.node(id))
            .map(Node::data)
            .collect();
        assert!(data.len() > 10 && data.iter().all(|d| !d.is_empty()));
        assert!(data.iter().all(|d| Blob::same_allocation(d, data[0])), "one pack");
        // The same zone with its nodes encoded ahead (a blob each) holds the same bytes.
        let (packed, _) = built_and_adjusted(&text, 0);
        let (ahead, _) = built_and_adjusted(&text, 1);
        assert_eq!(packed, ahead);

        let many: String =
            (0..=super::SMALL_NODES).map(|i| format!("h{i}.example. 300 A 192.0.2.9\n")).collect();
        let (large, _) = testutil::zone("example.", &format!("{APEX}{many}"));
        let (a, b) = (data_of(&large, "h0.example."), data_of(&large, "h1.example."));
        assert!(!Blob::same_allocation(a, b), "past {} nodes, a blob each", super::SMALL_NODES);

        let long = format!("\"{}\" ", "x".repeat(255)).repeat(8); // about 2 KiB a record
        let big: String = (0..10).map(|i| format!("t{i}.example. 300 TXT {long}\n")).collect();
        let (big, _) = testutil::zone("example.", &format!("{APEX}{big}"));
        let (a, b) = (data_of(&big, "t0.example."), data_of(&big, "t1.example."));
        assert!(a.len() > 2000 && b.len() > 2000);
        assert!(!Blob::same_allocation(a, b), "past {} bytes, a blob each", super::PACK_BYTES);
    }

    #[test]
    fn a_wildcard_link_and_child_counts_are_set() {
        let (zone, _) = testutil::zone("example.", &format!("{APEX}{ZONE}"));
        let apex = zone.node(0).unwrap();
        let wildcard = zone.node(apex.wildcard).unwrap();
        assert_eq!(wildcard.owner().to_string(), "*.example.");
        let w = zone.find(&"w.example.".parse::<Name>().unwrap()).unwrap();
        assert_ne!(zone.node(w).unwrap().wildcard, crate::node::NO_NODE);
        assert_eq!(zone.node(w).unwrap().children, 1);
    }
}
