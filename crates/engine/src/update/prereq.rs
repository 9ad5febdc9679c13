//! The prerequisite section (RFC 2136 §2.4, §3.2), checked against the zone as it is
//! before any update of the message.
//!
//! Each record has TTL 0 (else FORMERR) and a name in the zone (else NOTZONE); its class
//! says which test it is:
//! * ANY, no RDATA: type ANY "name is in use" (§2.4.4, else NXDOMAIN), another type
//!   "RRset exists" (§2.4.1, value-independent, else NXRRSET);
//! * NONE, no RDATA: type ANY "name is not in use" (§2.4.5, else YXDOMAIN), another type
//!   "RRset does not exist" (§2.4.3, else YXRRSET);
//! * the zone's class (IN): "RRset exists (value dependent)" (§2.4.2): the records of one
//!   name and type together must equal the zone's RRset, TTLs aside (else NXRRSET);
//! * anything else, or RDATA with ANY or NONE: FORMERR.
//!
//! A name is in use when it owns at least one record (§2.4.4): an empty non-terminal is
//! not, as BIND and Knot DNS agree.

use tern_wire::{Class, Dname, Name, Rcode, Rtype};
use tern_zone::records::canonical_eq;
use tern_zone::ZoneContents;

use super::{Entry, UpdateRefusal};

/// Checks every prerequisite; the first that fails decides the answer.
pub(super) fn check(zone: &ZoneContents, entries: &[Entry]) -> Result<(), UpdateRefusal> {
    // The value-dependent prerequisites, gathered per name and type (§3.2.3).
    let mut sets: Vec<(&Name, Rtype, Vec<&[u8]>)> = Vec::new();
    for entry in entries {
        let fail = |rcode: Rcode, why: &str| {
            Err(UpdateRefusal::new(rcode, format!("prerequisite {entry}: {why}")))
        };
        if entry.ttl != 0 {
            return fail(Rcode::FORMERR, "the TTL must be 0");
        }
        if !entry.owner.ends_with(zone.origin()) {
            return fail(Rcode::NOTZONE, "the name is outside the zone");
        }
        let any_type = entry.rtype == Rtype::ANY;
        match entry.class {
            Class::ANY | Class::NONE if !entry.rdata.is_empty() => {
                return fail(Rcode::FORMERR, "RDATA is not empty");
            }
            Class::ANY if any_type && !in_use(zone, &entry.owner) => {
                return fail(Rcode::NXDOMAIN, "the name is not in use");
            }
            Class::ANY if !any_type && rrset(zone, &entry.owner, entry.rtype).is_none() => {
                return fail(Rcode::NXRRSET, "the RRset does not exist");
            }
            Class::NONE if any_type && in_use(zone, &entry.owner) => {
                return fail(Rcode::YXDOMAIN, "the name is in use");
            }
            Class::NONE if !any_type && rrset(zone, &entry.owner, entry.rtype).is_some() => {
                return fail(Rcode::YXRRSET, "the RRset exists");
            }
            Class::ANY | Class::NONE => {}
            Class::IN => {
                if entry.rtype.is_meta() {
                    return fail(Rcode::FORMERR, "a meta-type has no value");
                }
                if let Err(e) = tern_wire::rdata::validate(entry.rtype, &entry.rdata) {
                    return fail(Rcode::FORMERR, &format!("bad RDATA: {e}"));
                }
                gather(&mut sets, entry);
            }
            _ => return fail(Rcode::FORMERR, "the class must be IN, ANY or NONE"),
        }
    }
    for (owner, rtype, wanted) in sets {
        if !same_set(rrset(zone, owner, rtype), rtype, &wanted) {
            let why = format!("prerequisite {owner} {rtype}: the RRset differs");
            return Err(UpdateRefusal::new(Rcode::NXRRSET, why));
        }
    }
    Ok(())
}

/// Adds a value-dependent record to its name and type's set (once: a set has no
/// duplicates).
fn gather<'e>(sets: &mut Vec<(&'e Name, Rtype, Vec<&'e [u8]>)>, entry: &'e Entry) {
    let found =
        sets.iter_mut().find(|(o, t, _)| *t == entry.rtype && o.eq_ignore_case(&entry.owner));
    match found {
        Some((_, _, list)) => {
            if !list.iter().any(|rd| canonical_eq(entry.rtype, rd, &entry.rdata)) {
                list.push(&entry.rdata);
            }
        }
        None => sets.push((&entry.owner, entry.rtype, vec![&entry.rdata])),
    }
}

/// True when the zone's RRset (its records' RDATA) equals `wanted`.
fn same_set(zone_set: Option<Vec<&[u8]>>, rtype: Rtype, wanted: &[&[u8]]) -> bool {
    let Some(have) = zone_set else { return false };
    have.len() == wanted.len()
        && wanted.iter().all(|w| have.iter().any(|h| canonical_eq(rtype, h, w)))
}

/// True when `name` owns at least one record.
pub(super) fn in_use(zone: &ZoneContents, name: &Dname) -> bool {
    let node = zone.find(name).and_then(|id| zone.node(id));
    node.is_some_and(|n| n.rrsets().any(|r| r.has_records()))
}

/// The RDATA of the RRset of `rtype` at `name`, when it has records.
fn rrset<'z>(zone: &'z ZoneContents, name: &Dname, rtype: Rtype) -> Option<Vec<&'z [u8]>> {
    let node = zone.node(zone.find(name)?)?;
    let set = node.rrset(rtype).filter(|r| r.has_records())?;
    Some(set.rdatas().collect())
}
