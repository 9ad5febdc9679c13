//! The difference between two versions of a zone as a [`Changeset`]: how a reload of an
//! edited zone file becomes an incremental change that secondaries can fetch with IXFR
//! (what Knot DNS calls `zonefile-load: difference`).
//!
//! Every owner of the new version is looked up in the old one (one hash probe), and the
//! other way round for owners that are gone; RRsets are compared record by record in
//! canonical form (RFC 4034 §6.2). A changed TTL is a removal of the RRset at the old TTL
//! and an addition at the new one, as IXFR expresses it (RFC 1995 §4). The SOA is not
//! among the records: it becomes the changeset's `soa_from` and `soa_to`.

use tern_wire::{Dname, Rtype};

use crate::changeset::{Changeset, RecordData};
use crate::contents::ZoneContents;
use crate::node::{Node, Rrset};
use crate::records::canonical_eq;

impl ZoneContents {
    /// The change that turns `self` into `new` (both versions of the same zone). `None`
    /// when either has no SOA at its apex.
    pub fn diff(&self, new: &ZoneContents) -> Option<Changeset> {
        let mut changes = Changeset::between(self.soa_record()?, new.soa_record()?);
        for (_, node) in new.data_nodes() {
            let old = self.find(node.owner()).and_then(|id| self.node(id));
            diff_node(old, Some(node), &mut changes);
        }
        for (_, node) in self.data_nodes() {
            if new.find(node.owner()).and_then(|id| new.node(id)).is_none_or(Node::is_empty) {
                diff_node(Some(node), None, &mut changes);
            }
        }
        diff_chains(self, new, &mut changes);
        Some(changes)
    }

    /// The apex SOA as a record.
    pub fn soa_record(&self) -> Option<RecordData> {
        let apex = self.apex()?;
        let soa = apex.rrset(Rtype::SOA)?;
        let rdata = soa.rdatas().next()?;
        Some(record(apex.owner(), Rtype::SOA, soa.ttl, rdata))
    }
}

/// The NSEC3 chains' difference: owners of either chain, looked up in the other.
fn diff_chains(old: &ZoneContents, new: &ZoneContents, changes: &mut Changeset) {
    if let Some(chain) = new.nsec3() {
        for node in chain.nodes() {
            diff_node(chain_node(old, node.owner()), Some(node), changes);
        }
    }
    if let Some(chain) = old.nsec3() {
        for node in chain.nodes().filter(|n| chain_node(new, n.owner()).is_none()) {
            diff_node(Some(node), None, changes);
        }
    }
}

/// The NSEC3 chain's node owned by `owner`.
fn chain_node<'z>(zone: &'z ZoneContents, owner: &Dname) -> Option<&'z Node> {
    let chain = zone.nsec3()?;
    chain.find_owner(owner).and_then(|id| chain.node(id))
}

/// The RRsets of a node, if any.
fn rrsets_of(node: Option<&Node>) -> Vec<Rrset<'_>> {
    node.map(|n| n.rrsets().collect()).unwrap_or_default()
}

/// Adds one owner's difference (the SOA left out).
fn diff_node(old: Option<&Node>, new: Option<&Node>, changes: &mut Changeset) {
    let (before, after) = (rrsets_of(old), rrsets_of(new));
    let Some(owner) = new.or(old).map(Node::owner) else { return };
    for set in &after {
        let previous = before.iter().find(|b| b.rtype == set.rtype);
        diff_rrset(owner, previous, Some(set), changes);
    }
    for set in before.iter().filter(|b| !after.iter().any(|a| a.rtype == b.rtype)) {
        diff_rrset(owner, Some(set), None, changes);
    }
}

/// Adds one RRset's difference: its records, then its signatures.
fn diff_rrset(owner: &Dname, old: Option<&Rrset<'_>>, new: Option<&Rrset<'_>>, cs: &mut Changeset) {
    let Some(rtype) = new.or(old).map(|r| r.rtype) else { return };
    if rtype != Rtype::SOA {
        diff_records(owner, rtype, records_of(old), records_of(new), cs);
    }
    diff_records(owner, Rtype::RRSIG, sigs_of(old), sigs_of(new), cs);
}

fn records_of<'a>(r: Option<&Rrset<'a>>) -> Option<(u32, Vec<&'a [u8]>)> {
    r.map(|r| (r.ttl, r.rdatas().collect()))
}

fn sigs_of<'a>(r: Option<&Rrset<'a>>) -> Option<(u32, Vec<&'a [u8]>)> {
    r.map(|r| (r.sig_ttl, r.sigs().collect()))
}

/// Records of one type (or the RRSIGs of one RRset) that went and came; all of them when
/// the TTL changed.
fn diff_records(
    owner: &Dname,
    rtype: Rtype,
    old: Option<(u32, Vec<&[u8]>)>,
    new: Option<(u32, Vec<&[u8]>)>,
    changes: &mut Changeset,
) {
    let (old_ttl, old) = old.unwrap_or_default();
    let (new_ttl, new) = new.unwrap_or_default();
    let same_ttl = old_ttl == new_ttl;
    let contains = |list: &[&[u8]], rd: &[u8]| list.iter().any(|x| canonical_eq(rtype, x, rd));
    for rd in old.iter().filter(|rd| !same_ttl || !contains(&new, rd)) {
        changes.removed.push(record(owner, rtype, old_ttl, rd));
    }
    for rd in new.iter().filter(|rd| !same_ttl || !contains(&old, rd)) {
        changes.added.push(record(owner, rtype, new_ttl, rd));
    }
}

fn record(owner: &Dname, rtype: Rtype, ttl: u32, rdata: &[u8]) -> RecordData {
    RecordData { owner: owner.to_name(), rtype, ttl, rdata: rdata.to_vec() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;

    fn zone(extra: &str, serial: u32) -> ZoneContents {
        let apex = testutil::APEX.replace(" 1 ", &format!(" {serial} "));
        testutil::zone("example.", &format!("{apex}{extra}")).0
    }

    fn texts(records: &[RecordData]) -> Vec<String> {
        let mut out: Vec<String> = records
            .iter()
            .map(|r| {
                let rdata = tern_wire::rdata::to_text(r.rtype, &r.rdata);
                format!("{} {} {} {rdata}", r.owner, r.ttl, r.rtype)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn diff_lists_what_changed_and_applies() {
        let old = zone(
            "a.example. 300 A 192.0.2.1\nb.example. 300 A 192.0.2.2\nt.example. 60 TXT \"x\"\n",
            1,
        );
        let new = zone(
            "a.example. 300 A 192.0.2.1\nc.example. 300 A 192.0.2.3\nt.example. 90 TXT \"x\"\n",
            2,
        );
        let cs = old.diff(&new).unwrap();
        assert_eq!((cs.from_serial(), cs.to_serial()), (Some(1), Some(2)));
        assert_eq!(texts(&cs.removed), ["b.example. 300 A 192.0.2.2", "t.example. 60 TXT \"x\""]);
        assert_eq!(texts(&cs.added), ["c.example. 300 A 192.0.2.3", "t.example. 90 TXT \"x\""]);
        let (applied, _) = old.apply(&cs).unwrap();
        assert_eq!(applied.diff(&new).unwrap().len(), 2, "only the SOA pair is left");
        assert_eq!(applied.serial(), 2);
    }

    #[test]
    fn identical_zones_differ_by_nothing_but_the_soa() {
        let a = zone("x.example. 300 MX 10 a.example.\na.example. 300 A 192.0.2.1\n", 5);
        let b = zone("x.example. 300 MX 10 A.EXAMPLE.\na.example. 300 A 192.0.2.1\n", 5);
        let cs = a.diff(&b).unwrap();
        assert!(cs.removed.is_empty() && cs.added.is_empty(), "{cs:?}");
    }
}
