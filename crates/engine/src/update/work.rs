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

use tern_wire::{Class, Dname, Name, Rcode, Rtype};
use tern_zone::records::{canonical_eq, serial_gt, soa_serial};
use tern_zone::{Changeset, RecordData, ZoneContents};

use super::{Entry, UpdatePolicy, UpdateRefusal};

/// One RRset of the working copy.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Set {
    rtype: Rtype,
    ttl: u32,
    rdatas: Vec<Vec<u8>>,
}

/// One name of the working copy: its RRsets before the update and now.
#[derive(Debug)]
struct Owner {
    /// The zone's spelling of the name when it has a node, else the update's.
    name: Name,
    before: Vec<Set>,
    now: Vec<Set>,
}

/// The working copy of the names the update touches.
pub(super) struct Work<'z> {
    zone: &'z ZoneContents,
    /// Each name as the update spelled it first, with its copy, sorted by name (as a
    /// `BTreeMap` would keep them; a vector, since an update touches few names).
    owners: Vec<(Name, Owner)>,
}

impl<'z> Work<'z> {
    pub(super) fn new(zone: &'z ZoneContents) -> Work<'z> {
        Work { zone, owners: Vec::new() }
    }

    /// Applies one record of the update section (prescanned).
    pub(super) fn apply(&mut self, entry: &Entry) {
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
    fn owner(&mut self, name: &Name) -> Option<&mut Owner> {
        let zone = self.zone;
        let at = match self.owners.binary_search_by(|(key, _)| key.cmp(name)) {
            Ok(at) => at,
            Err(at) => {
                let node = zone.find(name).and_then(|id| zone.node(id));
                let before = node.map(sets_of).unwrap_or_default();
                let spelled = node.map_or_else(|| name.clone(), |n| n.owner().to_name());
                let owner = Owner { name: spelled, now: before.clone(), before };
                self.owners.insert(at, (name.clone(), owner));
                at
            }
        };
        self.owners.get_mut(at).map(|(_, owner)| owner)
    }

    /// The difference as a changeset: empty when nothing changed. Numbered by `number`'s
    /// policy at its time when the update left the SOA alone; without `number`, such a
    /// change has no SOA (the caller numbers it, see `UpdateRequest::changes_unnumbered`).
    pub(super) fn changeset(
        self,
        number: Option<(&UpdatePolicy, u64)>,
    ) -> Result<Changeset, UpdateRefusal> {
        let mut changes = Changeset::default();
        let mut soa_to = None;
        for (_, owner) in &self.owners {
            for rtype in types_of(owner) {
                let before = owner.before.iter().find(|s| s.rtype == rtype);
                let after = owner.now.iter().find(|s| s.rtype == rtype);
                if rtype == Rtype::SOA {
                    soa_to = after.filter(|a| Some(*a) != before).and_then(|a| {
                        let rdata = a.rdatas.first()?;
                        Some(record(&owner.name, Rtype::SOA, a.ttl, rdata))
                    });
                    continue;
                }
                diff(&owner.name, before, after, &mut changes);
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
        let Some(soa_from) = self.zone.soa_record() else {
            return Err(UpdateRefusal::new(Rcode::SERVFAIL, "the zone has no SOA"));
        };
        let soa_to = soa_to.unwrap_or_else(|(policy, now)| policy.next_soa(&soa_from, now));
        changes.soa_from = Some(soa_from);
        changes.soa_to = Some(soa_to);
        Ok(changes)
    }
}

/// The types an ANY ANY deletion at `name` would remove: every RRset it holds but, at
/// the apex, the SOA and NS.
pub(super) fn deleted_types(zone: &ZoneContents, name: &Dname) -> Vec<Rtype> {
    let apex = name.eq_ignore_case(zone.origin());
    let node = zone.find(name).and_then(|id| zone.node(id));
    let sets = node.map(sets_of).unwrap_or_default();
    sets.into_iter()
        .map(|s| s.rtype)
        .filter(|t| !(apex && matches!(*t, Rtype::SOA | Rtype::NS)))
        .collect()
}

/// A node's RRsets that have records (the RRSIG pseudo-set of orphans has none).
fn sets_of(node: &tern_zone::Node) -> Vec<Set> {
    node.rrsets()
        .filter(|r| r.has_records())
        .map(|r| Set {
            rtype: r.rtype,
            ttl: r.ttl,
            rdatas: r.rdatas().map(<[u8]>::to_vec).collect(),
        })
        .collect()
}

/// RFC 2136 §3.4.2.2: adds a record of the zone's class.
fn add(owner: &mut Owner, apex: bool, entry: &Entry) {
    let rtype = entry.rtype;
    let holds =
        |owner: &Owner, pick: &dyn Fn(Rtype) -> bool| owner.now.iter().any(|s| pick(s.rtype));
    if rtype == Rtype::CNAME && holds(owner, &|t| t != Rtype::CNAME && !t.is_dnssec()) {
        return;
    }
    if rtype != Rtype::CNAME && !rtype.is_dnssec() && holds(owner, &|t| t == Rtype::CNAME) {
        return;
    }
    let set = owner.now.iter_mut().find(|s| s.rtype == rtype);
    match (rtype, set) {
        (Rtype::SOA, Some(set)) if apex => {
            let current = set.rdatas.first().and_then(|rd| soa_serial(rd));
            let new = soa_serial(&entry.rdata);
            if let (Some(current), Some(new)) = (current, new) {
                if serial_gt(new, current) {
                    *set = Set { rtype, ttl: entry.ttl, rdatas: vec![entry.rdata.clone()] };
                }
            }
        }
        // No SOA to replace (not the apex): ignored.
        (Rtype::SOA, _) => {}
        (Rtype::CNAME, Some(set)) => {
            *set = Set { rtype, ttl: entry.ttl, rdatas: vec![entry.rdata.clone()] };
        }
        (_, Some(set)) => {
            set.ttl = entry.ttl;
            match set.rdatas.iter_mut().find(|rd| duplicate(rtype, rd, &entry.rdata)) {
                // WKS: same address and protocol, new bitmap; others: equal already.
                Some(rd) if rtype == Rtype::WKS => rd.clone_from(&entry.rdata),
                Some(_) => {}
                None => set.rdatas.push(entry.rdata.clone()),
            }
        }
        (_, None) => {
            owner.now.push(Set { rtype, ttl: entry.ttl, rdatas: vec![entry.rdata.clone()] })
        }
    }
}

/// RFC 2136 §3.4.2.2's duplicates: equal in canonical form, or for WKS the same
/// address and protocol (its first five bytes).
fn duplicate(rtype: Rtype, a: &[u8], b: &[u8]) -> bool {
    if rtype == Rtype::WKS {
        return a.get(..5).is_some_and(|x| Some(x) == b.get(..5));
    }
    canonical_eq(rtype, a, b)
}

/// RFC 2136 §3.4.2.4: deletes one record.
fn delete_record(owner: &mut Owner, apex: bool, rtype: Rtype, rdata: &[u8]) {
    if rtype == Rtype::SOA {
        return;
    }
    let Some(set) = owner.now.iter_mut().find(|s| s.rtype == rtype) else { return };
    let Some(at) = set.rdatas.iter().position(|rd| canonical_eq(rtype, rd, rdata)) else {
        return;
    };
    if apex && rtype == Rtype::NS && set.rdatas.len() == 1 {
        return; // the last apex NS stays
    }
    set.rdatas.remove(at);
    owner.now.retain(|s| !s.rdatas.is_empty());
}

/// Every type the name had or has, in a stable order.
fn types_of(owner: &Owner) -> Vec<Rtype> {
    let mut types: Vec<Rtype> = owner.before.iter().chain(&owner.now).map(|s| s.rtype).collect();
    types.sort_unstable();
    types.dedup();
    types
}

/// One RRset's change: records gone and come, or the whole RRset when its TTL changed.
fn diff(owner: &Dname, before: Option<&Set>, after: Option<&Set>, changes: &mut Changeset) {
    let ttl_changed = matches!((before, after), (Some(b), Some(a)) if a.ttl != b.ttl);
    let missing_from = |set: Option<&Set>, rtype: Rtype, rd: &[u8]| {
        ttl_changed || !set.is_some_and(|s| s.rdatas.iter().any(|x| canonical_eq(rtype, x, rd)))
    };
    if let Some(b) = before {
        for rd in b.rdatas.iter().filter(|rd| missing_from(after, b.rtype, rd)) {
            changes.removed.push(record(owner, b.rtype, b.ttl, rd));
        }
    }
    if let Some(a) = after {
        for rd in a.rdatas.iter().filter(|rd| missing_from(before, a.rtype, rd)) {
            changes.added.push(record(owner, a.rtype, a.ttl, rd));
        }
    }
}

fn record(owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) -> RecordData {
    RecordData { owner: owner.to_name(), rtype, ttl, rdata: rdata.to_vec() }
}
