//! A zone snapshot ([`ZoneContents`]) as incremental signing and refresh read it: what a
//! name is to the signer — the [`Kind`]s of [`crate::names`], decided here from the tree's
//! parent links as `names` decides them from the canonical order (below a name with NS
//! that is not the apex: occluded, RFC 4035 §2.2) — its RRsets, and the names below it.
//!
//! Nothing here reads the whole zone but [`descendants`] in its last resort, documented
//! there.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use tern_wire::{Dname, Name, NameBuilder, Rtype};
use tern_zone::{Flags, Node, NodeId, ZoneContents, APEX, NO_NODE};

use crate::names::{node_rrsets, Kind, Owner};

/// A name of a zone, found: its node, what it is, and whether it holds data (an RRset
/// other than RRSIG, NSEC and NSEC3; without, it is an empty non-terminal).
#[derive(Debug, Clone, Copy)]
pub struct Place<'z> {
    /// The node's id.
    pub id: NodeId,
    /// The node.
    pub node: &'z Node,
    /// What it is.
    pub kind: Kind,
    /// True when it holds data.
    pub data: bool,
}

impl<'z> Place<'z> {
    /// The owner as the signer's whole-zone functions take it, its name and records
    /// borrowed from the node.
    pub fn owner(&self) -> Owner<'z> {
        let name = Cow::Borrowed(self.node.owner());
        Owner { name, kind: self.kind, rrsets: node_rrsets(self.node) }
    }
}

/// The name `name` of `zone`, if it is one (a phantom node is not).
pub fn place<'z>(zone: &'z ZoneContents, name: &Dname) -> Option<Place<'z>> {
    place_of(zone, zone.find(name)?)
}

/// Node `id` of `zone`, if it is a name of the zone.
pub fn place_of(zone: &ZoneContents, id: NodeId) -> Option<Place<'_>> {
    let node = zone.node(id).filter(|n| !n.flags.contains(Flags::PHANTOM) && !n.is_vacant())?;
    Some(Place { id, node, kind: kind_of(zone, id, node), data: has_data(node) })
}

/// True when `node` holds an RRset other than RRSIG, NSEC and NSEC3.
pub fn has_data(node: &Node) -> bool {
    let denial = |t: Rtype| matches!(t, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3);
    node.rrsets().any(|r| r.has_records() && !denial(r.rtype))
}

/// True when `node` holds NS records.
pub fn has_ns(node: &Node) -> bool {
    node.rrset(Rtype::NS).is_some_and(|r| r.has_records())
}

/// What node `id` is to the signer: the apex; below a name with NS (occluded); a
/// delegation point; or authoritative.
fn kind_of(zone: &ZoneContents, id: NodeId, node: &Node) -> Kind {
    if id == APEX {
        return Kind::Apex;
    }
    let mut current = node.parent;
    for _ in 0..tern_wire::name::MAX_LABELS {
        if current == APEX || current == NO_NODE {
            break;
        }
        let Some(parent) = zone.node(current) else { break };
        if has_ns(parent) {
            return Kind::Occluded;
        }
        current = parent.parent;
    }
    if has_ns(node) {
        Kind::Delegation
    } else {
        Kind::Authoritative
    }
}

/// The names strictly below node `top` (a name of `zone`), as node ids in no particular
/// order. `known` are names the caller knows of (a change's owners): when the names
/// among them below `top`, with their ancestors, account for every child of every one of
/// them (the nodes' child counts), they are all. Otherwise an NSEC-signed zone walks its
/// canonical order back from the end of `top`'s subtree (RFC 4034 §6.1: descendants
/// follow their ancestor), in proportion to the subtree; an NSEC3-signed zone, which
/// keeps no canonical order, scans its node table: O(zone), the one such case of
/// incremental signing.
pub fn descendants<'n>(
    zone: &ZoneContents,
    top: NodeId,
    known: impl Iterator<Item = &'n Name>,
) -> Vec<NodeId> {
    if let Some(found) = from_known(zone, top, known) {
        return found;
    }
    if let Some(found) = by_order(zone, top) {
        return found;
    }
    by_scan(zone, top)
}

/// The ancestors of `id` up to `top` (excluded), `id` first; `None` when `id` is not
/// below `top`.
fn path_to(zone: &ZoneContents, mut id: NodeId, top: NodeId) -> Option<Vec<NodeId>> {
    let mut path = Vec::new();
    for _ in 0..=tern_wire::name::MAX_LABELS {
        if id == top {
            return Some(path);
        }
        if id == APEX || id == NO_NODE {
            return None;
        }
        path.push(id);
        id = zone.node(id)?.parent;
    }
    None
}

/// The names below `top` when `known` accounts for all of them (see [`descendants`]).
fn from_known<'n>(
    zone: &ZoneContents,
    top: NodeId,
    known: impl Iterator<Item = &'n Name>,
) -> Option<Vec<NodeId>> {
    let mut found: HashSet<NodeId> = HashSet::new();
    for name in known {
        let Some(id) = zone.find(name) else { continue };
        found.extend(path_to(zone, id, top).unwrap_or_default());
    }
    let mut children: HashMap<NodeId, u32> = HashMap::new();
    for &id in &found {
        *children.entry(zone.node(id)?.parent).or_default() += 1;
    }
    let complete = found.iter().chain([&top]).all(|id| {
        let counted = children.get(id).copied().unwrap_or(0);
        zone.node(*id).is_some_and(|n| n.children == counted)
    });
    complete.then(|| found.into_iter().collect())
}

/// The names below `top` from the canonical order (NSEC-signed zones): back from the
/// last name of its subtree to `top`. `None` without an order, or for a name whose
/// subtree end cannot be named (see [`subtree_end`]).
fn by_order(zone: &ZoneContents, top: NodeId) -> Option<Vec<NodeId>> {
    let end = subtree_end(zone.node(top)?.owner())?;
    let mut id = zone.predecessor(&end)?;
    let mut found = Vec::new();
    for _ in 0..zone.node_count() {
        if id == top {
            return Some(found);
        }
        found.push(id);
        id = zone.node(id)?.prev;
    }
    None
}

/// A name that sorts after every name below `name` and before every other name after
/// it: `name` with a zero byte appended to its first label (RFC 4034 §6.1 compares
/// labels as octet strings, a shorter one first). `None` for a first label of 63 bytes
/// or a name of 255.
fn subtree_end(name: &Dname) -> Option<Name> {
    let mut label = name.first_label()?.to_vec();
    label.push(0);
    let mut builder = NameBuilder::new();
    builder.push_label(&label).ok()?;
    Some(builder.finish_with(name.parent()?).ok()?.to_name())
}

/// The names below `top`, by a scan of the node table.
fn by_scan(zone: &ZoneContents, top: NodeId) -> Vec<NodeId> {
    (0..zone.node_count() as NodeId)
        .filter(|&id| id != top && place_of(zone, id).is_some())
        .filter(|&id| path_to(zone, id, top).is_some())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::zone;

    const ZONE: &str = "@ SOA ns h 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\n\
        sub NS ns.sub\nns.sub A 192.0.2.2\nx.y.sub TXT t\nsub2 A 192.0.2.3\n\
        a.ent TXT a\nb.ent TXT b\nc.b.ent TXT c\n";

    fn names(z: &ZoneContents, ids: Vec<NodeId>) -> Vec<String> {
        let mut out: Vec<String> =
            ids.into_iter().map(|id| z.node(id).unwrap().owner().to_string()).collect();
        out.sort();
        out
    }

    #[test]
    fn kinds_from_the_tree() {
        let z = zone("example.", ZONE);
        let kind = |n: &str| place(&z, &n.parse::<Name>().unwrap()).map(|p| (p.kind, p.data));
        assert_eq!(kind("example."), Some((Kind::Apex, true)));
        assert_eq!(kind("sub.example."), Some((Kind::Delegation, true)));
        assert_eq!(kind("ns.sub.example."), Some((Kind::Occluded, true)));
        assert_eq!(kind("y.sub.example."), Some((Kind::Occluded, false)));
        assert_eq!(kind("ent.example."), Some((Kind::Authoritative, false)));
        assert_eq!(kind("nothing.example."), None);
    }

    #[test]
    fn descendants_every_way_agree() {
        let z = zone("example.", ZONE);
        for (top, expect) in [
            ("sub.example.", vec!["ns.sub.example.", "x.y.sub.example.", "y.sub.example."]),
            ("ent.example.", vec!["a.ent.example.", "b.ent.example.", "c.b.ent.example."]),
            ("sub2.example.", vec![]),
        ] {
            let id = z.find(&top.parse::<Name>().unwrap()).unwrap();
            assert_eq!(names(&z, by_scan(&z, id)), expect, "{top} by scan");
            assert_eq!(names(&z, descendants(&z, id, [].iter())), expect, "{top}");
            let known: Vec<Name> = expect.iter().map(|n| n.parse().unwrap()).collect();
            let complete = from_known(&z, id, known.iter()).unwrap();
            assert_eq!(names(&z, complete), expect, "{top} from the names known");
            if let Some(missing) = known.first() {
                let some = known.iter().filter(|n| *n != missing);
                assert!(from_known(&z, id, some).is_none(), "{top}: one name missing");
            }
        }
        let end = subtree_end(&"sub.example.".parse::<Name>().unwrap()).unwrap();
        assert!(end.canonical_cmp(&"x.y.sub.example.".parse::<Name>().unwrap()).is_gt());
        assert!(end.canonical_cmp(&"sub2.example.".parse::<Name>().unwrap()).is_lt());
    }
}
