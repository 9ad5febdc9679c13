//! The apex SOA as negative answers carry it, prepared once per snapshot.
//!
//! Every NXDOMAIN and NODATA answer has the zone's SOA in its authority section with the
//! negative-caching TTL, min(SOA TTL, SOA MINIMUM) (RFC 2308 §3). Its owner is the apex,
//! and its MNAME and RNAME usually end in the apex too — a suffix of the query name, so
//! in the answer all three compress to a pointer into the question (RFC 1035 §4.1.4).
//! Written through the general record path that costs a name parse and a suffix search
//! per name; prepared here, it is one copy plus a pointer patched in at each slot
//! ([`NegativeSoa::record`]), with the same bytes as the general path writes when
//! the apex is where the pointers point.
//!
//! When neither MNAME nor RNAME ends in the apex (a hosting platform's zones name the
//! platform's servers and mailbox), the RDATA is written as it is: the preparation then
//! keeps the apex's data blob (shared with the node table: a count, not a copy) and
//! where the RDATA is in it, instead of a copy of the record — an allocation of about 80
//! bytes (96 as glibc holds it) a zone, which a million small zones feel. The answer
//! costs the same: the fixed fields, then the RDATA in one copy.

use crate::blob::Blob;
use tern_wire::rdata::RdataReader;
use tern_wire::{Class, Dname, Rtype};

/// The negative SOA record, ready to copy (see the module docs).
#[derive(Debug, Clone)]
pub enum NegativeSoa {
    /// The record in wire form, pointers to the apex left to fill in at `slots`.
    Prepared {
        /// Owner, type, class, TTL, RDLENGTH and RDATA, two zero bytes at each slot.
        record: Box<[u8]>,
        /// Offsets of the slots: the owner (0), then each name ending in the apex.
        slots: [u16; 3],
        /// How many of `slots` are used.
        slot_count: u8,
    },
    /// No RDATA name ends in the apex: the RDATA as the apex's data holds it.
    Whole {
        /// The apex node's data.
        data: Blob,
        /// Where the RDATA starts in `data`.
        at: u16,
        /// Its length.
        len: u16,
    },
}

/// The owner's slot alone.
const OWNER_SLOT: [u16; 1] = [0];

impl NegativeSoa {
    /// The negative SOA of an apex `apex` whose data is `data`, its SOA's TTL in
    /// negative answers `ttl` and its RDATA `rdata` (a part of `data`). `None` for the
    /// root zone (a pointer never replaces a lone root label), and for RDATA that does
    /// not read as an SOA.
    pub fn new(apex: &Dname, data: &Blob, ttl: u32, rdata: &[u8]) -> Option<NegativeSoa> {
        if apex.is_root() {
            return None;
        }
        let mut rd = RdataReader::new(rdata);
        let (mname, rname) = (rd.name().ok()?, rd.name().ok()?);
        let numbers = rd.bytes(20).ok()?;
        if !mname.ends_with(apex) && !rname.ends_with(apex) {
            if let Some(whole) = NegativeSoa::whole(data, rdata) {
                return Some(whole);
            }
        }
        let mut record = Vec::with_capacity(12 + rdata.len());
        let (mut slots, mut slot_count) = ([0u16; 3], 0u8);
        let mut slot = |record: &mut Vec<u8>| {
            if let (Some(slot), Ok(at)) =
                (slots.get_mut(usize::from(slot_count)), u16::try_from(record.len()))
            {
                *slot = at;
                slot_count += 1;
            }
            record.extend_from_slice(&[0, 0]);
        };
        slot(&mut record);
        record.extend_from_slice(soa_fields(ttl, 0).get(2..).unwrap_or(&[]));
        for name in [mname, rname] {
            let wire = name.as_wire();
            match wire.len().checked_sub(apex.len()).and_then(|n| wire.get(..n)) {
                Some(prefix) if name.ends_with(apex) => {
                    record.extend_from_slice(prefix);
                    slot(&mut record);
                }
                _ => record.extend_from_slice(wire),
            }
        }
        record.extend_from_slice(numbers);
        let rdlength = u16::try_from(record.len() - 12).ok()?.to_be_bytes();
        record.get_mut(10..12)?.copy_from_slice(&rdlength);
        Some(NegativeSoa::Prepared { record: record.into_boxed_slice(), slots, slot_count })
    }

    /// [`NegativeSoa::Whole`] of `rdata` in `data`; `None` when it is not there.
    fn whole(data: &Blob, rdata: &[u8]) -> Option<NegativeSoa> {
        let at = (rdata.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
        let within = data.get(at..at.checked_add(rdata.len())?)?;
        std::ptr::eq(within, rdata).then_some(())?;
        let (at, len) = (u16::try_from(at).ok()?, u16::try_from(rdata.len()).ok()?);
        Some(NegativeSoa::Whole { data: data.clone(), at, len })
    }

    /// The record with TTL `ttl` (the TTL the zone gave when it was prepared, for
    /// [`NegativeSoa::Prepared`]): its start and the rest (owner, type, class, TTL,
    /// RDLENGTH and RDATA, two zero bytes at each slot), as
    /// [`tern_wire::message::MessageWriter::push_prepared`] takes them, and the offsets
    /// where a pointer to the apex goes: the owner (always, at 0) and each RDATA name
    /// that ends in the apex. `fields` is room for the start of a [`NegativeSoa::Whole`].
    #[inline]
    pub fn record<'a>(
        &'a self,
        ttl: u32,
        fields: &'a mut [u8; 12],
    ) -> ((&'a [u8], &'a [u8]), &'a [u16]) {
        match self {
            NegativeSoa::Prepared { record, slots, slot_count } => {
                ((record, &[]), slots.get(..usize::from(*slot_count)).unwrap_or(&[]))
            }
            NegativeSoa::Whole { data, at, len } => {
                let start = usize::from(*at);
                *fields = soa_fields(ttl, *len);
                ((fields, data.get(start..start + usize::from(*len)).unwrap_or(&[])), &OWNER_SLOT)
            }
        }
    }
}

/// The owner's slot, type, class, TTL and RDLENGTH of an SOA record.
#[inline]
fn soa_fields(ttl: u32, rdlength: u16) -> [u8; 12] {
    let ([t0, t1], [c0, c1]) = (Rtype::SOA.0.to_be_bytes(), Class::IN.0.to_be_bytes());
    let ([l0, l1, l2, l3], [r0, r1]) = (ttl.to_be_bytes(), rdlength.to_be_bytes());
    [0, 0, t0, t1, c0, c1, l0, l1, l2, l3, r0, r1]
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

    /// The negative SOA of `rdata` kept in a blob after a few other bytes, as in a node.
    fn prepared(apex: &Name, ttl: u32, rdata: &[u8]) -> Option<NegativeSoa> {
        let mut bytes = b"\x03abc".to_vec();
        bytes.extend_from_slice(rdata);
        let data = Blob::new(&bytes);
        NegativeSoa::new(apex, &data, ttl, data.get(4..).unwrap())
    }

    /// The record's bytes and slots.
    fn written(soa: &NegativeSoa, ttl: u32) -> (Vec<u8>, Vec<u16>) {
        let mut fields = [0; 12];
        let ((head, tail), slots) = soa.record(ttl, &mut fields);
        ([head, tail].concat(), slots.to_vec())
    }

    #[test]
    fn names_under_the_apex_become_slots() {
        let apex: Name = "Example.com.".parse().unwrap();
        let soa = prepared(&apex, 300, &soa_rdata("ns1.example.COM.", "example.com.")).unwrap();
        assert!(matches!(soa, NegativeSoa::Prepared { .. }));
        let mut expected = vec![0, 0, 0, 6, 0, 1, 0, 0, 1, 44, 0, 28, 3, b'n', b's', b'1', 0, 0];
        expected.extend_from_slice(&[0, 0]);
        expected.extend(1u8..=20);
        assert_eq!(written(&soa, 300), (expected, vec![0, 16, 18]));
    }

    #[test]
    fn one_name_under_the_apex_is_enough_for_a_copy() {
        let apex: Name = "example.com.".parse().unwrap();
        let rdata = soa_rdata("ns.other.net.", "hostmaster.example.com.");
        let soa = prepared(&apex, 1, &rdata).unwrap();
        assert!(matches!(soa, NegativeSoa::Prepared { .. }));
        let (all, slots) = written(&soa, 1);
        // The owner, then "hostmaster" after the 12-byte head and the 14-byte MNAME.
        assert_eq!(slots, [0, 12 + 14 + 11]);
        assert_eq!(all.len(), 12 + 14 + 11 + 2 + 20);
        assert_eq!(&all[10..12], &(14u16 + 11 + 2 + 20).to_be_bytes());
    }

    #[test]
    fn names_elsewhere_are_written_whole_from_the_apex_data() {
        let apex: Name = "example.com.".parse().unwrap();
        let rdata = soa_rdata("ns.other.net.", "hostmaster.com.");
        let soa = prepared(&apex, 60, &rdata).unwrap();
        assert!(matches!(soa, NegativeSoa::Whole { at: 4, .. }));
        let (all, slots) = written(&soa, 60);
        assert_eq!(slots, [0]);
        assert_eq!(&all[..12], &[0, 0, 0, 6, 0, 1, 0, 0, 0, 60, 0, 50]);
        // "com." is an ancestor of the apex, not below it: no slot.
        assert_eq!(&all[12..], &rdata[..]);
        assert_eq!(rdata.len(), 14 + 16 + 20);
        // The TTL is the one asked.
        assert_eq!(&written(&soa, 7).0[6..10], &7u32.to_be_bytes());
    }

    #[test]
    fn rdata_not_in_the_data_is_copied() {
        let apex: Name = "example.".parse().unwrap();
        let data = Blob::new(b"\x03abc");
        let rdata = soa_rdata("a.", "b.");
        let soa = NegativeSoa::new(&apex, &data, 5, &rdata).unwrap();
        assert!(matches!(soa, NegativeSoa::Prepared { .. }));
        let (all, slots) = written(&soa, 5);
        assert_eq!((&all[12..], slots), (&rdata[..], vec![0]));
    }

    #[test]
    fn the_root_zone_and_bad_rdata_get_none() {
        let root: Name = ".".parse().unwrap();
        assert!(prepared(&root, 1, &soa_rdata("a.", "b.")).is_none());
        let apex: Name = "example.".parse().unwrap();
        assert!(prepared(&apex, 1, &[3, b'n', b's']).is_none());
        assert!(prepared(&apex, 1, &soa_rdata("a.", "b.")[..21]).is_none());
    }
}
