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

    /// `change` (made against another version of this zone) made to apply to `self`: the
    /// records it removes that `self` holds, the records it adds that `self` lacks, from
    /// `self`'s SOA to `soa_to`. How an edit of a zone file is merged into a version
    /// that has taken dynamic updates since the file was read: what the edit changed is
    /// changed, what the updates changed meanwhile stays. `None` without an SOA.
    pub fn rebase(&self, change: &Changeset, soa_to: RecordData) -> Option<Changeset> {
        let mut rebased = Changeset::between(self.soa_record()?, soa_to);
        rebased.removed = change.removed.iter().filter(|r| self.has_record(r)).cloned().collect();
        rebased.added = change.added.iter().filter(|r| !self.has_record(r)).cloned().collect();
        Some(rebased)
    }

    /// Whether the zone holds `record` (its TTL aside): its owner, type and RDATA.
    pub fn has_record(&self, record: &RecordData) -> bool {
        let node = match self.find(&record.owner).and_then(|id| self.node(id)) {
            Some(node) => Some(node),
            None => chain_node(self, &record.owner),
        };
        let Some(node) = node else { return false };
        let rdata = record.rdata.as_slice();
        if record.rtype == Rtype::RRSIG {
            let covered = rdata.first_chunk::<2>().map(|b| Rtype(u16::from_be_bytes(*b)));
            let set = covered.and_then(|t| node.rrset(t));
            return set.is_some_and(|s| s.sigs().any(|x| canonical_eq(Rtype::RRSIG, x, rdata)));
        }
        let set = node.rrset(record.rtype);
        set.is_some_and(|s| s.rdatas().any(|x| canonical_eq(record.rtype, x, rdata)))
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

    /// An edit of the file (b gone, c added) merged into a version the updates changed
    /// meanwhile (b gone too, d added): c comes, d stays, and nothing is removed twice.
    #[test]
    fn an_edit_rebased_onto_updated_data_keeps_the_updates() {
        let base = zone("a.example. 300 A 192.0.2.1\nb.example. 300 A 192.0.2.2\n", 1);
        let edited = zone("a.example. 300 A 192.0.2.1\nc.example. 300 A 192.0.2.3\n", 2);
        let updated = zone("a.example. 300 A 192.0.2.1\nd.example. 300 A 192.0.2.4\n", 7);
        let edit = base.diff(&edited).unwrap();
        let mut soa = edited.soa_record().unwrap();
        soa.rdata = crate::records::with_soa_serial(&soa.rdata, 8).unwrap();
        let merged = updated.rebase(&edit, soa).unwrap();
        assert_eq!((merged.from_serial(), merged.to_serial()), (Some(7), Some(8)));
        assert!(merged.removed.is_empty(), "b is gone already: {:?}", merged.removed);
        assert_eq!(texts(&merged.added), ["c.example. 300 A 192.0.2.3"]);
        let (result, _) = updated.apply(&merged).unwrap();
        let names: Vec<String> = result.data_nodes().map(|(_, n)| n.owner().to_string()).collect();
        assert!(
            names.contains(&"c.example.".to_string()) && names.contains(&"d.example.".to_string())
        );
        assert!(!names.contains(&"b.example.".to_string()));
        assert!(updated.has_record(&texts_record("d.example.", "192.0.2.4")));
        assert!(!updated.has_record(&texts_record("b.example.", "192.0.2.2")));
    }

    fn texts_record(owner: &str, ip: &str) -> RecordData {
        let rdata = tern_wire::rdata::parse_str(Rtype::A, ip, None).unwrap();
        RecordData { owner: owner.parse().unwrap(), rtype: Rtype::A, ttl: 1, rdata }
    }
}
