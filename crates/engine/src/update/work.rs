//! The update section applied (RFC 2136 §3.4.2), one record after the other, to a
//! working copy of the names it touches; then the difference between the copy and the
//! zone as one [`Changeset`].
//!
//! The rules of §3.4.2, with the choices where the RFC leaves room:
//! * Adding (zone class): a record already there (canonical RDATA, RFC 4034 §6.2; for
//!   WKS the same address and protocol) is not added again but replaces the zone's: its
//!   TTL becomes the RRset's, as BIND does (Knot DNS keeps the old TTL). A record added
//!   to an RRset of another TTL gives the whole RRset its TTL (an RRset has one TTL, RFC
//!   2181 §5.2; BIND and Knot DNS agree). A CNAME is ignored at a name holding other
//!   data, other data at a name holding a CNAME (DNSSEC types aside), and a CNAME
//!   replaces the name's CNAME. An SOA replaces the apex SOA only with a higher serial
//!   (RFC 1982), and is ignored elsewhere.
//! * Deleting an RRset (ANY) or every RRset of a name (ANY ANY): at the apex the SOA and
//!   NS RRsets stay (§3.4.2.3).
//! * Deleting a record (NONE): the SOA is never deleted, nor the last apex NS
//!   (§3.4.2.4); a record that is not there is no error.
//!
//! The changeset removes and adds records (a TTL change as the whole RRset removed and
//! added again, as a zone diff does) and goes from the zone's SOA to the update's own
//! SOA when it replaced it, else to the same SOA with the next serial.
//!
//! Cost: the working copy borrows the records of the zone and of the update (nothing
//! is copied but the pointers), finds a record through its RRset's index once the RRset
//! is large ([`Rdatas`]), and finds the records an update left alone by their place, so
//! that an edit of n records to one RRset costs O(n log n), and a change of a few
//! records to an RRset of n records O(n) (issue 49: both were O(n²)).

use std::collections::HashMap;

use tern_wire::{Class, Dname, Name, Rcode, Rtype};
use tern_zone::records::{serial_gt, soa_serial};
use tern_zone::{Changeset, RecordData, ZoneContents};

use super::rdatas::Rdatas;
use super::{Entry, UpdatePolicy, UpdateRefusal};

/// One RRset of the working copy.
#[derive(Debug, Clone)]
struct Set<'a> {
    rtype: Rtype,
    ttl: u32,
    rdatas: Rdatas<'a>,
    /// Copied from the zone's RRset of this type, so that a record in the place it had
    /// there, and the same bytes of the zone, is one the update left alone.
    copied: bool,
}

impl<'a> Set<'a> {
    /// A new RRset of one record.
    fn one(rtype: Rtype, ttl: u32, rdata: &'a [u8]) -> Set<'a> {
        Set { rtype, ttl, rdatas: std::iter::once(rdata).collect(), copied: false }
    }
}

/// One name of the working copy: its RRsets before the update and now.
#[derive(Debug)]
struct Owner<'a> {
    /// The zone's spelling of the name when it has a node, else the update's.
    name: Name,
    before: Vec<Set<'a>>,
    now: Vec<Set<'a>>,
}

/// The working copy of the names the update touches, borrowing the records of the zone
/// and of the update (`'a`).
pub(super) struct Work<'a> {
    zone: &'a ZoneContents,
    /// Each name (as the update spelled it first, found in any case) with its copy.
    owners: HashMap<Name, Owner<'a>>,
}

impl<'a> Work<'a> {
    pub(super) fn new(zone: &'a ZoneContents) -> Work<'a> {
        Work { zone, owners: HashMap::new() }
    }

    /// Applies one record of the update section (prescanned).
    pub(super) fn apply(&mut self, entry: &'a Entry) {
        let apex = entry.owner.eq_ignore_case(self.zone.origin());
        let Some(owner) = self.owner(&entry.owner) else { return };
        match (entry.class, entry.rtype) {
            (Class::ANY, Rtype::ANY) => {
                owner.now.retain(|s| apex && matches!(s.rtype, Rtype::SOA | Rtype::NS));
            }
            (Class::ANY, rtype) => {
                if !(apex && matches!(rtype, Rtype::SOA | Rtype::NS)) {
                    owner.now.retain(|s| s.rtype != rtype);
                }
            }
            (Class::NONE, rtype) => delete_record(owner, apex, rtype, &entry.rdata),
            _ => add(owner, apex, entry),
        }
    }

    /// The working copy of `name`, read from the zone when first touched.
    fn owner(&mut self, name: &Name) -> Option<&mut Owner<'a>> {
        if !self.owners.contains_key(name) {
            let zone = self.zone;
            let node = zone.find(name).and_then(|id| zone.node(id));
            let before = node.map(sets_of).unwrap_or_default();
            let spelled = node.map_or_else(|| name.clone(), |n| n.owner().to_name());
            let owner = Owner { name: spelled, now: before.clone(), before };
            self.owners.insert(name.clone(), owner);
        }
        self.owners.get_mut(name)
    }

    /// The difference as a changeset: empty when nothing changed. Numbered by `number`'s
    /// policy at its time when the update left the SOA alone; without `number`, such a
    /// change has no SOA (the caller numbers it, see `UpdateRequest::changes_unnumbered`).
    pub(super) fn changeset(
        self,
        number: Option<(&UpdatePolicy, u64)>,
    ) -> Result<Changeset, UpdateRefusal> {
        let (zone, mut owners) = (self.zone, Vec::from_iter(self.owners));
        sort_canonically(&mut owners);
        let mut changes = Changeset::default();
        let mut soa_to = None;
        for (_, owner) in &mut owners {
            let Owner { name, before, now } = owner;
            for rtype in types_of(before, now) {
                let before = before.iter_mut().find(|s| s.rtype == rtype);
                let after = now.iter_mut().find(|s| s.rtype == rtype);
                if rtype == Rtype::SOA {
                    soa_to = after.filter(|a| !same_soa(before.as_deref(), a)).and_then(|a| {
                        let rdata = a.rdatas.iter().next()?;
                        Some(record(name, Rtype::SOA, a.ttl, rdata))
                    });
                    continue;
                }
                diff(name, before, after, &mut changes);
            }
        }
        if changes.is_empty() && soa_to.is_none() {
            return Ok(Changeset::default());
        }
        let soa_to = match (soa_to, number) {
            (None, None) => return Ok(changes),
            (Some(soa), _) => Ok(soa),
            (None, Some(number)) => Err(number),
        };
        let Some(soa_from) = zone.soa_record() else {
            return Err(UpdateRefusal::new(Rcode::SERVFAIL, "the zone has no SOA"));
        };
        let soa_to = soa_to.unwrap_or_else(|(policy, now)| policy.next_soa(&soa_from, now));
        changes.soa_from = Some(soa_from);
        changes.soa_to = Some(soa_to);
        Ok(changes)
    }
}

/// Puts the owners in canonical order (RFC 4034 §6.1), as a zone diff lists them: many
/// by their lookup keys, whose byte order is that order, computed once each.
fn sort_canonically(owners: &mut [(Name, Owner<'_>)]) {
    if owners.len() > 16 {
        owners.sort_by_cached_key(|(name, _)| name.lookup_key().as_bytes().to_vec());
    } else {
        owners.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
}

/// True when the SOA RRset `after` is the one `before` was (the same TTL and bytes).
fn same_soa(before: Option<&Set<'_>>, after: &Set<'_>) -> bool {
    before.is_some_and(|b| b.ttl == after.ttl && b.rdatas.iter().eq(after.rdatas.iter()))
}

/// The types an ANY ANY deletion at `name` would remove: every RRset it holds but, at
/// the apex, the SOA and NS.
pub(super) fn deleted_types(zone: &ZoneContents, name: &Dname) -> Vec<Rtype> {
    let apex = name.eq_ignore_case(zone.origin());
    let Some(node) = zone.find(name).and_then(|id| zone.node(id)) else { return Vec::new() };
    node.rrsets()
        .filter(|r| r.has_records())
        .map(|r| r.rtype)
        .filter(|t| !(apex && matches!(*t, Rtype::SOA | Rtype::NS)))
        .collect()
}

/// A node's RRsets that have records (the RRSIG pseudo-set of orphans has none).
fn sets_of(node: &tern_zone::Node) -> Vec<Set<'_>> {
    node.rrsets()
        .filter(|r| r.has_records())
        .map(|r| Set { rtype: r.rtype, ttl: r.ttl, rdatas: r.rdatas().collect(), copied: true })
        .collect()
}

/// RFC 2136 §3.4.2.2: adds a record of the zone's class.
fn add<'a>(owner: &mut Owner<'a>, apex: bool, entry: &'a Entry) {
    let rtype = entry.rtype;
    let holds =
        |owner: &Owner<'_>, pick: &dyn Fn(Rtype) -> bool| owner.now.iter().any(|s| pick(s.rtype));
    if rtype == Rtype::CNAME && holds(owner, &|t| t != Rtype::CNAME && !t.is_dnssec()) {
        return;
    }
    if rtype != Rtype::CNAME && !rtype.is_dnssec() && holds(owner, &|t| t == Rtype::CNAME) {
        return;
    }
    let set = owner.now.iter_mut().find(|s| s.rtype == rtype);
    match (rtype, set) {
        (Rtype::SOA, Some(set)) if apex => {
            let current = set.rdatas.iter().next().and_then(soa_serial);
            let new = soa_serial(&entry.rdata);
            if let (Some(current), Some(new)) = (current, new) {
                if serial_gt(new, current) {
                    *set = Set::one(rtype, entry.ttl, &entry.rdata);
                }
            }
        }
        // No SOA to replace (not the apex): ignored.
        (Rtype::SOA, _) => {}
        (Rtype::CNAME, Some(set)) => *set = Set::one(rtype, entry.ttl, &entry.rdata),
        (_, Some(set)) => {
            set.ttl = entry.ttl;
            add_record(set, &entry.rdata);
        }
        (_, None) => owner.now.push(Set::one(rtype, entry.ttl, &entry.rdata)),
    }
}

/// RFC 2136 §3.4.2.2's duplicates: a record equal in canonical form is there already;
/// for WKS, one of the same address and protocol takes the new bitmap (the one first
/// in canonical order, should the zone hold several).
fn add_record<'a>(set: &mut Set<'a>, rdata: &'a [u8]) {
    let rtype = set.rtype;
    if set.rdatas.find(rtype, rdata).is_some() {
        return;
    }
    if rtype == Rtype::WKS {
        if let Some(at) = set.rdatas.find_wks(rdata) {
            set.rdatas.replace(rtype, at, rdata);
            return;
        }
    }
    set.rdatas.push(rtype, rdata);
}

/// RFC 2136 §3.4.2.4: deletes one record.
fn delete_record<'a>(owner: &mut Owner<'a>, apex: bool, rtype: Rtype, rdata: &'a [u8]) {
    if rtype == Rtype::SOA {
        return;
    }
    let Some(set) = owner.now.iter_mut().find(|s| s.rtype == rtype) else { return };
    let Some(at) = set.rdatas.find(rtype, rdata) else { return };
    if apex && rtype == Rtype::NS && set.rdatas.len() == 1 {
        return; // the last apex NS stays
    }
    set.rdatas.remove(rtype, at);
    owner.now.retain(|s| !s.rdatas.is_empty());
}

/// Every type the name had or has, in a stable order.
fn types_of(before: &[Set<'_>], now: &[Set<'_>]) -> Vec<Rtype> {
    let mut types: Vec<Rtype> = before.iter().chain(now).map(|s| s.rtype).collect();
    types.sort_unstable();
    types.dedup();
    types
}

/// One RRset's change: records gone and come, or the whole RRset when its TTL changed;
/// the records gone in the order they were, those come in the order they are.
fn diff<'a>(
    owner: &Dname,
    before: Option<&mut Set<'a>>,
    after: Option<&mut Set<'a>>,
    changes: &mut Changeset,
) {
    let all = |set: &Set<'_>, list: &mut Vec<RecordData>| {
        list.extend(set.rdatas.iter().map(|rd| record(owner, set.rtype, set.ttl, rd)));
    };
    let (rtype, ttl, (gone, came)) = match (before, after) {
        (None, None) => return,
        (Some(b), None) => return all(b, &mut changes.removed),
        (None, Some(a)) => return all(a, &mut changes.added),
        (Some(b), Some(a)) if a.ttl != b.ttl => {
            all(b, &mut changes.removed);
            return all(a, &mut changes.added);
        }
        (Some(b), Some(a)) if a.copied => (a.rtype, a.ttl, moved(b, a)),
        (Some(b), Some(a)) => (a.rtype, a.ttl, searched(b, a)),
    };
    changes.removed.extend(gone.iter().map(|rd| record(owner, rtype, ttl, rd)));
    changes.added.extend(came.iter().map(|rd| record(owner, rtype, ttl, rd)));
}
/// The records of `b` not in `a`, and those of `a` not in `b`, for an RRset `a` copied
/// from `b`: a record of `b` still in its place in `a` (the same bytes of the zone) was
/// left alone, the others were deleted, replaced or added. A record deleted and added
/// again is in both lists at first, and is taken out of them. (No RRset holds two
/// records equal in canonical form, so a record left alone is equal to none of these.)
fn moved<'a>(b: &Set<'a>, a: &Set<'a>) -> (Rdatas<'a>, Rdatas<'a>) {
    let changed = |from: &Set<'a>, other: &Set<'a>| -> Rdatas<'a> {
        let others = other.rdatas.places();
        let kept = |at: usize, rd: &[u8]| {
            others.get(at).copied().flatten().is_some_and(|x| std::ptr::eq(x, rd))
        };
        let places = from.rdatas.places().iter().enumerate();
        places.filter_map(|(at, rd)| rd.filter(|rd| !kept(at, rd))).collect()
    };
    let (mut gone, mut came) = (changed(b, a), changed(a, b));
    let rtype = a.rtype;
    for at in 0..came.places().len() {
        let Some(rd) = came.places().get(at).copied().flatten() else { continue };
        if let Some(found) = gone.find(rtype, rd) {
            gone.remove(rtype, found);
            came.remove(rtype, at);
        }
    }
    (gone, came)
}

/// The records of `b` not in `a`, and those of `a` not in `b`, each searched in the
/// other (an RRset deleted and made again).
fn searched<'a>(b: &mut Set<'a>, a: &mut Set<'a>) -> (Rdatas<'a>, Rdatas<'a>) {
    let rtype = a.rtype;
    let gone = b.rdatas.iter().filter(|rd| a.rdatas.find(rtype, rd).is_none()).collect();
    let came = a.rdatas.iter().filter(|rd| b.rdatas.find(rtype, rd).is_none()).collect();
    (gone, came)
}

fn record(owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) -> RecordData {
    RecordData { owner: owner.to_name(), rtype, ttl, rdata: rdata.to_vec() }
}

#[cfg(test)]
#[path = "work_tests.rs"]
mod tests;
