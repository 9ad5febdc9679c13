//! The apex SOA as negative answers carry it, prepared once per snapshot.
//!
//! Every NXDOMAIN and NODATA answer has the zone's SOA in its authority section with the
//! negative-caching TTL, min(SOA TTL, SOA MINIMUM) (RFC 2308 §3). Its owner is the apex,
//! and its MNAME and RNAME usually end in the apex too — a suffix of the query name, so
//! in the answer all three compress to a pointer into the question (RFC 1035 §4.1.4).
//! Written through the general record path that costs a name parse and a suffix search
//! per name; prepared here, it is one copy plus a pointer patched in at each
//! [`NegativeSoa::slots`] offset, with the same bytes as the general path writes when the
//! apex is where the pointers point.

use tern_wire::rdata::RdataReader;
use tern_wire::{Class, Dname, Rtype};

/// The negative SOA record in wire form, pointers to the apex left to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegativeSoa {
    record: Box<[u8]>,
    slots: [u16; 3],
    slot_count: u8,
}

impl NegativeSoa {
    /// The record for an apex `apex` whose SOA has RDATA `rdata`, with TTL `ttl`. `None`
    /// for the root zone (a pointer never replaces a lone root label) and for RDATA that
    /// does not read as an SOA.
    pub fn new(apex: &Dname, ttl: u32, rdata: &[u8]) -> Option<NegativeSoa> {
        if apex.is_root() {
            return None;
        }
        let mut rd = RdataReader::new(rdata);
        let (mname, rname) = (rd.name().ok()?, rd.name().ok()?);
        let numbers = rd.bytes(20).ok()?;
        let mut soa = NegativeSoa { record: Box::default(), slots: [0; 3], slot_count: 0 };
        let mut record = Vec::with_capacity(12 + rdata.len());
        soa.slot(&mut record);
        record.extend_from_slice(&Rtype::SOA.0.to_be_bytes());
        record.extend_from_slice(&Class::IN.0.to_be_bytes());
        record.extend_from_slice(&ttl.to_be_bytes());
        record.extend_from_slice(&[0, 0]); // RDLENGTH, set below
        for name in [mname, rname] {
            soa.name(&mut record, name, apex);
        }
        record.extend_from_slice(numbers);
        let rdlength = u16::try_from(record.len() - 12).ok()?.to_be_bytes();
        record.get_mut(10..12)?.copy_from_slice(&rdlength);
        soa.record = record.into_boxed_slice();
        Some(soa)
    }

    /// The record: owner, type, class, TTL, RDLENGTH and RDATA, with two zero bytes at
    /// each slot.
    pub fn record(&self) -> &[u8] {
        &self.record
    }

    /// Offsets into [`record`](Self::record) where a pointer to the apex goes: the owner
    /// (always, at 0) and each RDATA name that ends in the apex.
    pub fn slots(&self) -> &[u16] {
        self.slots.get(..usize::from(self.slot_count)).unwrap_or(&[])
    }

    /// Appends a pointer slot at the end of `record`.
    fn slot(&mut self, record: &mut Vec<u8>) {
        if let (Some(slot), Ok(at)) =
            (self.slots.get_mut(usize::from(self.slot_count)), u16::try_from(record.len()))
        {
            *slot = at;
            self.slot_count += 1;
        }
        record.extend_from_slice(&[0, 0]);
    }

    /// Appends `name`: its labels above the apex, then a slot; or all of it when it is
    /// not under the apex.
    fn name(&mut self, record: &mut Vec<u8>, name: &Dname, apex: &Dname) {
        let wire = name.as_wire();
        match wire.len().checked_sub(apex.len()).and_then(|n| wire.get(..n)) {
            Some(prefix) if name.ends_with(apex) => {
                record.extend_from_slice(prefix);
                self.slot(record);
            }
            _ => record.extend_from_slice(wire),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    fn soa_rdata(mname: &str, rname: &str) -> Vec<u8> {
        let mut rdata = Vec::new();
        for name in [mname, rname] {
            rdata.extend_from_slice(name.parse::<Name>().unwrap().as_wire());
        }
        rdata.extend((1u8..=20).collect::<Vec<_>>());
        rdata
    }

    #[test]
    fn names_under_the_apex_become_slots() {
        let apex: Name = "Example.com.".parse().unwrap();
        let soa =
            NegativeSoa::new(&apex, 300, &soa_rdata("ns1.example.COM.", "example.com.")).unwrap();
        let mut expected = vec![0, 0, 0, 6, 0, 1, 0, 0, 1, 44, 0, 28, 3, b'n', b's', b'1', 0, 0];
        expected.extend_from_slice(&[0, 0]);
        expected.extend(1u8..=20);
        assert_eq!(soa.record(), &expected[..]);
        assert_eq!(soa.slots(), &[0, 16, 18]);
    }

    #[test]
    fn names_elsewhere_are_written_whole() {
        let apex: Name = "example.com.".parse().unwrap();
        let soa =
            NegativeSoa::new(&apex, 60, &soa_rdata("ns.other.net.", "hostmaster.com.")).unwrap();
        assert_eq!(soa.slots(), &[0]);
        let rdata = soa.record().get(12..).unwrap();
        assert_eq!(&rdata[..14], "ns.other.net.".parse::<Name>().unwrap().as_wire());
        // "com." is an ancestor of the apex, not below it: no slot.
        assert_eq!(&rdata[14..30], "hostmaster.com.".parse::<Name>().unwrap().as_wire());
        assert_eq!(rdata.len(), 14 + 16 + 20);
    }

    #[test]
    fn the_root_zone_and_bad_rdata_get_none() {
        let root: Name = ".".parse().unwrap();
        assert_eq!(NegativeSoa::new(&root, 1, &soa_rdata("a.", "b.")), None);
        let apex: Name = "example.".parse().unwrap();
        assert_eq!(NegativeSoa::new(&apex, 1, &[3, b'n', b's']), None);
        assert_eq!(NegativeSoa::new(&apex, 1, &soa_rdata("a.", "b.")[..21]), None);
    }
}
