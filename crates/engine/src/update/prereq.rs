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
//!
//! The value-dependent records are gathered by name and type in an ordered map, and each
//! set's records found by canonical form ([`Rdatas`]): a message of n of them costs
//! O(n log n), not the O(n²) of comparing each record with the others.

use std::collections::BTreeMap;

use tern_wire::{Class, Dname, Name, Rcode, Rtype};
use tern_zone::ZoneContents;

use super::rdatas::Rdatas;
use super::{Entry, UpdateRefusal};

/// The value-dependent prerequisites by name (any case) and type.
type Sets<'e> = BTreeMap<(&'e Name, Rtype), Rdatas<'e>>;

/// Checks every prerequisite; the first that fails decides the answer.
pub(super) fn check(zone: &ZoneContents, entries: &[Entry]) -> Result<(), UpdateRefusal> {
    // The value-dependent prerequisites, gathered per name and type (§3.2.3).
    let mut sets = Sets::new();
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
    for ((owner, rtype), mut wanted) in sets {
        if !same_set(rrset(zone, owner, rtype), rtype, &mut wanted) {
            let why = format!("prerequisite {owner} {rtype}: the RRset differs");
            return Err(UpdateRefusal::new(Rcode::NXRRSET, why));
        }
    }
    Ok(())
}

/// Adds a value-dependent record to its name and type's set (once: a set has no
/// duplicates).
fn gather<'e>(sets: &mut Sets<'e>, entry: &'e Entry) {
    let set = sets.entry((&entry.owner, entry.rtype)).or_default();
    if set.find(entry.rtype, &entry.rdata).is_none() {
        set.push(entry.rtype, &entry.rdata);
    }
}

/// True when the zone's RRset (its records' RDATA) equals `wanted`: as many records,
/// each of them wanted (neither holds two records equal in canonical form).
fn same_set<'z>(zone_set: Option<Vec<&'z [u8]>>, rtype: Rtype, wanted: &mut Rdatas<'z>) -> bool {
    let Some(have) = zone_set else { return false };
    have.len() == wanted.len() && have.into_iter().all(|h| wanted.find(rtype, h).is_some())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::update::rdatas::COMPARISONS;

    /// `n` TXT records at `big.example.`, and the value-dependent prerequisites naming
    /// them all (in the other order, and each twice), with one changed when `differ`.
    fn zone_and_prerequisites(
        n: usize,
        differ: bool,
    ) -> (std::sync::Arc<ZoneContents>, Vec<Entry>) {
        let soa = "@ 300 SOA ns h 1 3600 600 86400 60\n@ 300 NS ns\nns 300 A 192.0.2.1\n";
        let records: String = (0..n).map(|i| format!("big 300 TXT \"r{i}\"\n")).collect();
        let set = crate::tests::zones(&[("example.", &format!("{soa}{records}"))]);
        let zone = set.slots().next().unwrap().contents_full().unwrap();
        let owner: Name = "big.example.".parse().unwrap();
        let entry = |i: usize| {
            let text = if differ && i == 0 { "\"other\"".to_owned() } else { format!("\"r{i}\"") };
            let rdata = tern_wire::rdata::parse_str(Rtype::TXT, &text, None).unwrap();
            Entry { owner: owner.clone(), rtype: Rtype::TXT, class: Class::IN, ttl: 0, rdata }
        };
        let entries = (0..n).rev().chain(0..n).map(entry).collect();
        (zone, entries)
    }

    fn comparisons(n: usize) -> u64 {
        let (zone, entries) = zone_and_prerequisites(n, false);
        COMPARISONS.with(|c| c.set(0));
        assert_eq!(check(&zone, &entries), Ok(()));
        COMPARISONS.with(|c| c.get())
    }

    /// §3.2.3 on a large RRset costs O(n log n) comparisons, not O(n²): an UPDATE of
    /// 64 KiB holds a few thousand prerequisites, and a batch of them held the writer.
    #[test]
    fn a_large_value_dependent_prerequisite_takes_n_log_n_comparisons() {
        let (small, large) = (comparisons(1_000), comparisons(4_000));
        assert!(large * 10 < small * 60, "{small} then {large} comparisons: not n log n");
        assert!(large < 4_000 * 100, "{large} comparisons for 4,000 records");
        let (zone, entries) = zone_and_prerequisites(100, true);
        assert_eq!(check(&zone, &entries).map_err(|r| r.rcode), Err(Rcode::NXRRSET));
    }
}
