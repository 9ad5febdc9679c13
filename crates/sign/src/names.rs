//! The zone's names as the signer sees them: every owner with its RRsets (old DNSSEC
//! records left out, to be made anew), in canonical order (RFC 4034 §6.1), each marked
//! by what it is to the signer — the apex, authoritative, a delegation point, or below a
//! zone cut (glue and occluded data, RFC 4035 §2.2).
//!
//! An owner of the zone borrows its name and its records from the loaded zone (`'z`):
//! reading the zone costs an owner one allocation, its list of RRsets. What the signer
//! makes — signatures, denial records, the apex's keys, the NSEC3 chain's owners — is
//! held.

use std::borrow::Cow;

use tern_wire::{Dname, Rtype};
use tern_zone::{Flags, ZoneContents, APEX};

use crate::error::{Error, Result};
pub use crate::rdatas::Rdatas;

/// What an owner is to the signer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The zone apex.
    Apex,
    /// Authoritative data: every RRset signed, in the denial chain.
    Authoritative,
    /// A delegation point (NS, not at the apex): only DS and the denial record are
    /// signed (RFC 4035 §2.2).
    Delegation,
    /// Below a zone cut: glue or occluded data, neither signed nor in a chain.
    Occluded,
}

/// One RRset: its records' RDATA (borrowed from the zone, `'z`, or held) and, once
/// signed, its RRSIGs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rrset<'z> {
    /// The type.
    pub rtype: Rtype,
    /// The TTL.
    pub ttl: u32,
    /// The records' RDATA in wire form.
    pub rdatas: Rdatas<'z>,
    /// The RRSIG RDATA covering it.
    pub sigs: Rdatas<'static>,
}

impl<'z> Rrset<'z> {
    /// An unsigned RRset.
    pub fn new(rtype: Rtype, ttl: u32, rdatas: impl Into<Rdatas<'z>>) -> Rrset<'z> {
        Rrset { rtype, ttl, rdatas: rdatas.into(), sigs: Rdatas::default() }
    }

    /// The RRset with its records held: copied when borrowed.
    pub fn into_owned(self) -> Rrset<'static> {
        Rrset {
            rtype: self.rtype,
            ttl: self.ttl,
            rdatas: self.rdatas.into_owned(),
            sigs: self.sigs,
        }
    }
}

/// One owner name and its RRsets, sorted by type; the name and records borrowed from the
/// zone (`'z`) or held.
#[derive(Debug, Clone)]
pub struct Owner<'z> {
    /// The name.
    pub name: Cow<'z, Dname>,
    /// What it is.
    pub kind: Kind,
    /// Its RRsets.
    pub rrsets: Vec<Rrset<'z>>,
}

impl<'z> Owner<'z> {
    /// The RRset of `rtype`, if any.
    pub fn rrset(&self, rtype: Rtype) -> Option<&Rrset<'z>> {
        self.rrsets.iter().find(|r| r.rtype == rtype)
    }

    /// Adds an RRset, keeping them sorted by type.
    pub fn insert(&mut self, rrset: Rrset<'z>) {
        let at = self.rrsets.partition_point(|r| r.rtype.0 < rrset.rtype.0);
        self.rrsets.insert(at, rrset);
    }

    /// Puts `rrset` in place of the RRset of its type (added when there is none).
    pub fn replace(&mut self, rrset: Rrset<'z>) {
        self.remove(rrset.rtype);
        self.insert(rrset);
    }

    /// Takes out the RRset of `rtype`, if any.
    pub fn remove(&mut self, rtype: Rtype) {
        self.rrsets.retain(|r| r.rtype != rtype);
    }
}

/// True for records the signer makes again, so they are left out of its input: RRSIG,
/// NSEC, NSEC3, NSEC3PARAM anywhere, and the apex DNSKEY RRset (the keys given make it).
fn remade(rtype: Rtype, at_apex: bool) -> bool {
    matches!(rtype, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3 | Rtype::NSEC3PARAM)
        || (at_apex && rtype == Rtype::DNSKEY)
}

/// The zone's owners with data, in canonical order, classified; the apex first; their
/// names and records borrowed from `zone`. Each owner's list of RRsets has room for one
/// more when `nsec_room` (the NSEC chain adds its record there; an NSEC3 chain has
/// owners of its own).
pub fn collect(zone: &ZoneContents, nsec_room: bool) -> Result<Vec<Owner<'_>>> {
    let ids = canonical_ids(zone);
    // Made in canonical order, so that the owners' records lie in memory in the order
    // every later pass (the chain, the signing, the snapshot) reads them.
    let mut owners = Vec::with_capacity(ids.len());
    tern_zone::memory::advise_huge(owners.spare_capacity_mut()); // written whole
    let mut cut = None;
    for (i, &id) in ids.iter().enumerate() {
        prefetch_ahead(zone, &ids, i);
        let Some(node) = zone.node(id) else { continue };
        let at_apex = id == APEX;
        let kept = || node.rrsets().filter(|r| r.has_records() && !remade(r.rtype, at_apex));
        // Exactly the room needed: a zone has millions of these lists.
        let mut rrsets = Vec::with_capacity(kept().count() + usize::from(nsec_room));
        rrsets.extend(kept().map(|r| borrowed(&r)));
        rrsets.sort_by_key(|r| r.rtype.0);
        // Classified now, while the node's data is in the cache.
        let kind = kind_at(at_apex, node.owner(), &rrsets, &mut cut);
        owners.push(Owner { name: Cow::Borrowed(node.owner()), kind, rrsets });
    }
    check_apex(zone.origin(), &owners)?;
    Ok(owners)
}

/// Starts loading what the owner `ahead` places after `ids[i]` will read: the nodes
/// are visited in canonical order, which is not the order they lie in memory, so each
/// would otherwise wait on its loads in turn.
fn prefetch_ahead(zone: &ZoneContents, ids: &[u32], i: usize) {
    const AHEAD: usize = 8;
    if let Some(&id) = ids.get(i + AHEAD) {
        zone.prefetch_node(id);
    }
    if let Some(node) = ids.get(i + AHEAD / 2).and_then(|&id| zone.node(id)) {
        node.prefetch_data();
    }
}

/// True when the node `id` is an owner the signer reads: the apex, or a node with an
/// RRset that is not [`remade`].
fn has_data(zone: &ZoneContents, id: u32) -> bool {
    let Some(node) = zone.node(id) else { return false };
    if node.flags.intersects(Flags::PHANTOM | Flags::EMPTY) || node.is_vacant() {
        return false;
    }
    let at_apex = id == APEX;
    at_apex || node.rrsets().any(|r| r.has_records() && !remade(r.rtype, at_apex))
}

/// A stored RRset, unsigned, its records borrowed where they lie.
fn borrowed<'z>(rrset: &tern_zone::Rrset<'z>) -> Rrset<'z> {
    Rrset::new(rrset.rtype, rrset.ttl, Rdatas::stored(rrset))
}

/// The ids of the zone's nodes with data ([`has_data`]) sorted in canonical order (RFC
/// 4034 §6.1). What is sorted is small — for each node the first 16 bytes of its
/// owner's lookup key past the origin's ([`Dname::lookup_key_prefix`]), whose order is
/// canonical order, and its id — so that the sort compares integers; the few names
/// alike in those bytes are then put in order by their whole names.
fn canonical_ids(zone: &ZoneContents) -> Vec<u32> {
    let skip = zone.origin().label_count();
    let owner = |id: u32| zone.node(id).map_or(Dname::ROOT, |n| n.owner());
    // The prefix in two halves: a u128 would make each entry 32 bytes, not 24.
    let mut order: Vec<(u64, u64, u32)> = Vec::with_capacity(zone.node_count());
    tern_zone::memory::advise_huge(order.spare_capacity_mut()); // nearly every node has data
    order.extend((0..zone.node_count() as u32).filter(|&id| has_data(zone, id)).map(|id| {
        let prefix = owner(id).lookup_key_prefix(skip);
        ((prefix >> 64) as u64, prefix as u64, id)
    }));
    order.sort_unstable();
    for alike in order.chunk_by_mut(|a, b| (a.0, a.1) == (b.0, b.1)).filter(|run| run.len() > 1) {
        alike.sort_unstable_by(|a, b| owner(a.2).canonical_cmp(owner(b.2)));
    }
    order.into_iter().map(|(_, _, id)| id).collect()
}

/// What the owner `name` holding `rrsets` is, names met in canonical order (a name's
/// descendants follow it): below the delegation point `cut`, the last one met while the
/// names since were below it, it is occluded (RFC 4035 §2.2); with NS and not the apex,
/// it is a delegation point, and the new `cut`.
fn kind_at<'z>(
    at_apex: bool,
    name: &'z Dname,
    rrsets: &[Rrset<'_>],
    cut: &mut Option<&'z Dname>,
) -> Kind {
    if at_apex {
        return Kind::Apex;
    }
    if cut.is_some_and(|c| name.is_below(c)) {
        return Kind::Occluded;
    }
    let delegation = rrsets.iter().any(|r| r.rtype == Rtype::NS);
    *cut = delegation.then_some(name);
    if delegation {
        Kind::Delegation
    } else {
        Kind::Authoritative
    }
}

/// Checks that the apex is the first owner and holds the SOA.
fn check_apex(origin: &Dname, owners: &[Owner<'_>]) -> Result<()> {
    match owners.first() {
        Some(apex) if apex.name.eq_ignore_case(origin) && apex.rrset(Rtype::SOA).is_some() => {
            Ok(())
        }
        _ => Err(Error::Zone(format!("{origin} has no SOA at its apex"))),
    }
}

/// The types at `owner` that its denial record lists, without RRSIG, NSEC or NSEC3
/// (the chains add them): all of them at authoritative names, NS and DS at a delegation
/// (RFC 4035 §2.3: only what the parent is authoritative for), none below a cut. The
/// list has room for the two types a chain adds.
pub fn denial_types(owner: &Owner<'_>) -> Vec<Rtype> {
    let mut types = Vec::with_capacity(owner.rrsets.len() + 2);
    denial_types_into(owner, &mut types);
    types
}

/// Appends [`denial_types`] of `owner` to `types`.
pub fn denial_types_into(owner: &Owner<'_>, types: &mut Vec<Rtype>) {
    let listed = |t: Rtype| match owner.kind {
        Kind::Apex | Kind::Authoritative => true,
        Kind::Delegation => matches!(t, Rtype::NS | Rtype::DS),
        Kind::Occluded => false,
    };
    types.extend(owner.rrsets.iter().map(|r| r.rtype).filter(|&t| listed(t)));
}

/// True when the RRset of `rtype` at `owner` is signed (RFC 4035 §2.2): every
/// authoritative RRset, at a delegation only DS and the denial records.
pub fn is_signed(owner: &Owner<'_>, rtype: Rtype) -> bool {
    owner.kind.signs(rtype)
}

impl Kind {
    /// True when an RRset of `rtype` at an owner of this kind is signed (see
    /// [`is_signed`]).
    pub fn signs(self, rtype: Rtype) -> bool {
        match self {
            Kind::Apex | Kind::Authoritative => true,
            Kind::Delegation => matches!(rtype, Rtype::DS | Rtype::NSEC),
            Kind::Occluded => false,
        }
    }
}

/// The RRsets of a zone's node as the signer reads them: every one with records but the
/// denial records and signatures (RRSIG, NSEC, NSEC3), sorted by type. Unlike
/// [`collect`], the apex keeps its DNSKEY and NSEC3PARAM RRsets: the node is taken to
/// hold what the signed zone holds.
pub fn node_rrsets(node: &tern_zone::Node) -> Vec<Rrset<'_>> {
    let mut rrsets: Vec<Rrset<'_>> = node
        .rrsets()
        .filter(|r| {
            r.has_records() && !matches!(r.rtype, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3)
        })
        .map(|r| borrowed(&r))
        .collect();
    rrsets.sort_by_key(|r| r.rtype.0);
    rrsets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::zone;
    use tern_wire::Name;

    /// Names alike in their first 8 or 16 bytes past the origin, of every length, in any
    /// case, with bytes that lookup keys escape: sorted as RFC 4034 §6.1 orders them.
    #[test]
    fn canonical_order_of_names_alike_in_their_first_bytes() {
        let mut labels = vec![
            "abcdefgh",
            "abcdefghi",
            "ABCDEFGHa",
            "abcdefgh-",
            "abcdefg",
            "a",
            "b",
            "\\000",
            "\\001x",
            "\\000\\000",
            "abcdefghij.abcdefgh",
            "z.abcdefgh",
            "x.abcdefghi",
            "abcdefghijklmnop",
            "ABCDEFGHIJKLMNOPa",
            "abcdefghijklmnop-",
            "abcdefghijklmno",
            "b.abcdefghijklmno",
            "a.abcdefghijklmnop",
            "B.abcdefghijklmnop",
            "x.b.abcdefghijklmnop",
        ];
        let text: String = labels.iter().map(|l| format!("{l} A 192.0.2.1\n")).collect();
        let z = zone("example.", &format!("@ SOA ns h 1 2 3 4 5\n@ NS ns.example.net.\n{text}"));
        let owners = collect(&z, true).unwrap();
        let names: Vec<Name> = owners.iter().map(|o| o.name.to_name()).collect();
        let mut expect = names.clone();
        expect.sort_by(|a, b| a.canonical_cmp(b));
        assert_eq!(names, expect);
        labels.push("example.");
        assert_eq!(names.len(), labels.len());
    }

    #[test]
    fn owners_sorted_and_classified() {
        let z = zone(
            "example.",
            "@ SOA ns h 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\nZ A 192.0.2.9\n\
             sub NS ns.sub\nns.sub A 192.0.2.2\nx.y.sub A 192.0.2.3\nsub DS 1 13 2 00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF\n\
             a.b.ent TXT x\n@ NSEC3PARAM 1 0 0 -\n@ DNSKEY 256 3 13 AAAA\nold RRSIG A 13 2 300 20300101000000 20200101000000 1 example. AAAA\n",
        );
        let owners = collect(&z, true).unwrap();
        let names: Vec<String> = owners.iter().map(|o| o.name.to_string()).collect();
        assert_eq!(
            names,
            [
                "example.",
                "a.b.ent.example.",
                "ns.example.",
                "sub.example.",
                "ns.sub.example.",
                "x.y.sub.example.",
                "Z.example."
            ]
        );
        let kinds: Vec<Kind> = owners.iter().map(|o| o.kind).collect();
        use Kind::*;
        assert_eq!(
            kinds,
            [Apex, Authoritative, Authoritative, Delegation, Occluded, Occluded, Authoritative]
        );
        let apex: Vec<Rtype> = owners[0].rrsets.iter().map(|r| r.rtype).collect();
        assert_eq!(apex, [Rtype::NS, Rtype::SOA], "old DNSSEC records left out");
        assert_eq!(denial_types(&owners[3]), [Rtype::NS, Rtype::DS]);
        assert!(is_signed(&owners[3], Rtype::DS) && !is_signed(&owners[3], Rtype::NS));
        assert!(!is_signed(&owners[4], Rtype::A));
    }
}
