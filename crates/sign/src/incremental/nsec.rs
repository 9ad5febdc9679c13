//! The NSEC chain's part of a change (RFC 4034 §4, RFC 4035 §2.3): names joining the
//! chain get an NSEC record, names leaving it lose theirs, names whose types changed get
//! a new one, and so does the member before each name that joined or left (its next
//! name changes). Neighbours are found in the served zone's chain: the canonical order's
//! predecessor, then the NSEC records' next names, stepping over the names that left.

use std::collections::BTreeSet;

use tern_wire::rdata::{Nsec, Rdata};
use tern_wire::{Dname, Name, Rtype};
use tern_zone::ZoneContents;

use super::{broken, Ring, Served};
use crate::delta::Delta;
use crate::error::Result;
use crate::key::SigningKey;
use crate::names::{Kind, Rrset};
use crate::nsec::nsec_rdata;
use crate::view::place;
use crate::zone::signing_keys;

/// Adds to `delta` the NSEC records (TTL `ttl`) made, removed and replaced around
/// `names`, the names the change reached, in the zones before and after it (the latter
/// holding the change's data, its denial records not yet made).
pub(super) fn change(
    (base, after): (&ZoneContents, &ZoneContents),
    names: &BTreeSet<Name>,
    ttl: u32,
    keys: &[SigningKey],
    delta: &mut Delta,
) -> Result<()> {
    let (mut joined, mut left, mut redo) = (Vec::new(), Vec::new(), BTreeSet::new());
    for name in names {
        let member = place(after, name).is_some_and(|p| p.data && p.kind != Kind::Occluded);
        match (nsec_at(base, name).is_some(), member) {
            (false, true) => joined.push(name.clone()),
            (true, false) => left.push(name.clone()),
            _ => {}
        }
        if member {
            redo.insert(name.clone());
        }
    }
    let ring = Ring { served: Nsecs(base), joined: &joined, left: &left };
    for name in joined.iter().chain(&left) {
        redo.insert(ring.before(name)?);
    }
    for name in &left {
        if let Some((owner, nsec)) = nsec_at(base, name) {
            delta.remove_rrset(owner, &nsec);
        }
    }
    for name in &redo {
        record(base, after, &ring, (name, ttl), keys, delta)?;
    }
    Ok(())
}

/// The NSEC RRset at `name` in `zone`, with the owner as the zone spells it.
fn nsec_at<'z>(zone: &'z ZoneContents, name: &Dname) -> Option<(&'z Dname, tern_zone::Rrset<'z>)> {
    let node = zone.node(zone.find(name)?)?;
    let nsec = node.rrset(Rtype::NSEC).filter(|r| r.has_records())?;
    Some((node.owner(), nsec))
}

/// Makes the NSEC record of `name`, a member of the new chain, unless the served zone
/// holds it already (with a signature).
fn record(
    base: &ZoneContents,
    after: &ZoneContents,
    ring: &Ring<'_, Nsecs<'_>>,
    (name, ttl): (&Name, u32),
    keys: &[SigningKey],
    delta: &mut Delta,
) -> Result<()> {
    let owner = place(after, name).ok_or_else(|| broken(format!("{name} vanished")))?.owner();
    let next = ring.after(name)?;
    let next =
        after.find(&next).and_then(|id| after.node(id)).map_or(next, |n| n.owner().to_name());
    let rdata = nsec_rdata(next, &owner);
    if let Some((old_owner, old)) = nsec_at(base, name) {
        if old.ttl == ttl && old.sig_count > 0 && old.rdatas().eq([rdata.as_slice()]) {
            return Ok(());
        }
        delta.remove_rrset(old_owner, &old);
    }
    let rrset = Rrset::new(Rtype::NSEC, ttl, vec![rdata]);
    delta.add_rrset(&owner.name, &rrset);
    delta.sign(&owner.name, rrset, signing_keys(keys, owner.kind, Rtype::NSEC));
    Ok(())
}

/// The served NSEC chain.
struct Nsecs<'z>(&'z ZoneContents);

impl Served for Nsecs<'_> {
    type Key = Name;

    fn holds(&self, name: &Name) -> bool {
        nsec_at(self.0, name).is_some()
    }

    fn next_of(&self, name: &Name) -> Result<Name> {
        let (_, nsec) =
            nsec_at(self.0, name).ok_or_else(|| broken(format!("no NSEC at {name}")))?;
        let rdata = nsec.rdatas().next().unwrap_or_default();
        match Rdata::from_wire(Rtype::NSEC, rdata) {
            Ok(Rdata::Nsec(Nsec { next, .. })) => Ok(next),
            _ => Err(broken(format!("a malformed NSEC at {name}"))),
        }
    }

    fn cover_of(&self, name: &Name) -> Result<Name> {
        let zone = self.0;
        let id = zone.predecessor(name).and_then(|id| zone.nsec_node_at_or_before(id));
        let node = id.and_then(|id| zone.node(id));
        node.map(|n| n.owner().to_name()).ok_or_else(|| broken(format!("nothing covers {name}")))
    }
}
