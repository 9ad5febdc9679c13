//! An operator's edit of a zone (the control interface's transactions): the four forms
//! of RFC 2136's update section — add a record, delete a record, an RRset, or every
//! RRset of a name — with the same §3.4 semantics as UPDATE and the same changeset out,
//! but no prerequisites and no access rules (whoever holds the control socket may edit).

use tern_wire::{Class, Name, Rtype};
use tern_zone::{Changeset, ZoneContents};

use super::{is_signed, prescan, work, Entry, UpdatePolicy, UpdateRefusal};

/// Steps of an edit, applied in order (see the module comment).
#[derive(Debug, Clone, Default)]
pub struct Edit {
    entries: Vec<Entry>,
}

impl Edit {
    /// Adds a record (RFC 2136 §2.5.1); a TTL with its top bit set counts as 0 (RFC
    /// 2181 §8), as in a zone file.
    pub fn add(&mut self, owner: Name, rtype: Rtype, ttl: u32, rdata: Vec<u8>) {
        let ttl = tern_zone::records::rfc2181_ttl(ttl);
        self.entries.push(Entry { owner, rtype, class: Class::IN, ttl, rdata });
    }

    /// Deletes one record (§2.5.4).
    pub fn delete_record(&mut self, owner: Name, rtype: Rtype, rdata: Vec<u8>) {
        self.entries.push(Entry { owner, rtype, class: Class::NONE, ttl: 0, rdata });
    }

    /// Deletes an RRset (§2.5.2).
    pub fn delete_rrset(&mut self, owner: Name, rtype: Rtype) {
        self.entries.push(Entry { owner, rtype, class: Class::ANY, ttl: 0, rdata: Vec::new() });
    }

    /// Deletes every RRset of a name (§2.5.3; at the apex the SOA and NS stay).
    pub fn delete_name(&mut self, owner: Name) {
        let rtype = Rtype::ANY;
        self.entries.push(Entry { owner, rtype, class: Class::ANY, ttl: 0, rdata: Vec::new() });
    }

    /// Steps so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True before the first step.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The changeset the steps make of `zone` (empty when they change nothing), with
    /// the serial raised by `policy`; refused as UPDATE would refuse the same records.
    pub fn changeset(
        &self,
        zone: &ZoneContents,
        policy: &UpdatePolicy,
        now: u64,
    ) -> Result<Changeset, UpdateRefusal> {
        if !policy.signed_here && is_signed(zone) {
            return Err(UpdateRefusal::new(
                tern_wire::Rcode::REFUSED,
                "the zone is signed, and changes to signed zones need online signing",
            ));
        }
        for entry in &self.entries {
            prescan(zone.origin(), entry)?;
        }
        let mut work = work::Work::new(zone);
        for entry in &self.entries {
            work.apply(entry);
        }
        work.changeset(Some((policy, now)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Rcode;

    const ZONE: &str = "@ 300 SOA ns hostmaster 7 3600 600 86400 60\n@ 300 NS ns\n\
        ns 300 A 192.0.2.53\nwww 300 A 192.0.2.1\n";

    fn zone() -> std::sync::Arc<ZoneContents> {
        let set = crate::tests::zones(&[("example.com.", ZONE)]);
        let zone = set.slots().next().unwrap().contents_full().unwrap();
        zone
    }

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    #[test]
    fn adds_and_deletes_become_one_changeset_with_the_next_serial() {
        let zone = zone();
        let mut edit = Edit::default();
        edit.add(name("mail.example.com."), Rtype::A, 300, vec![192, 0, 2, 25]);
        edit.delete_rrset(name("www.example.com."), Rtype::A);
        let change = edit.changeset(&zone, &UpdatePolicy::default(), 0).unwrap();
        assert_eq!(change.from_serial(), Some(7));
        assert_eq!(change.to_serial(), Some(8));
        assert_eq!(change.added.len(), 1);
        assert_eq!(change.removed.len(), 1);
        let next = zone.apply(&change).unwrap().0;
        assert!(next.find(&name("mail.example.com.")).is_some());
    }

    /// RFC 2181 §8, as in a zone file: a TTL with its top bit set counts as 0.
    #[test]
    fn a_ttl_with_the_top_bit_set_counts_as_zero() {
        let mut edit = Edit::default();
        edit.add(name("t.example.com."), Rtype::A, u32::MAX, vec![192, 0, 2, 5]);
        let change = edit.changeset(&zone(), &UpdatePolicy::default(), 0).unwrap();
        assert_eq!(change.added.iter().map(|r| r.ttl).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn apex_rules_and_zone_bounds_hold() {
        let zone = zone();
        let mut edit = Edit::default();
        edit.delete_name(name("example.com."));
        let change = edit.changeset(&zone, &UpdatePolicy::default(), 0).unwrap();
        assert!(change.is_empty(), "SOA and NS stay at the apex: {change:?}");
        let mut outside = Edit::default();
        outside.add(name("www.example.net."), Rtype::A, 300, vec![192, 0, 2, 1]);
        let refused = outside.changeset(&zone, &UpdatePolicy::default(), 0).unwrap_err();
        assert_eq!(refused.rcode, Rcode::NOTZONE);
    }
}
