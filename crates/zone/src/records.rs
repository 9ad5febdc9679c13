//! Facts about RDATA that the builder, changesets and checks share: what an RRSIG covers,
//! where a record's target name is, whether two records are the same in canonical form,
//! and whether a record belongs to the NSEC3 chain.

use tern_wire::rdata::Field;
use tern_wire::{Dname, Rtype};

use crate::nsec3::decode_hash_label;

/// The type an RRSIG covers (RFC 4034 §3.1).
pub fn covered_type(rrsig: &[u8]) -> Option<Rtype> {
    let b = rrsig.get(..2)?;
    Some(Rtype(u16::from_be_bytes([*b.first()?, *b.get(1)?])))
}

/// The first name in a record's RDATA (the target of NS, MX, SRV, SVCB, CNAME, …).
pub fn target_name(rtype: Rtype, rdata: &[u8]) -> Option<&Dname> {
    let mut at = 0usize;
    for field in rtype.shape().fields {
        match *field {
            Field::Bytes(n) => at += usize::from(n),
            Field::CharString => at += 1 + usize::from(*rdata.get(at)?),
            Field::Name => return Dname::from_wire_prefix(rdata.get(at..)?).ok().map(|(n, _)| n),
            Field::Rest => return None,
        }
    }
    None
}

/// True when two RDATA of `rtype` are equal in DNSSEC canonical form (RFC 4034 §6.2):
/// byte-equal, except that names in the types listed there compare case-insensitively.
pub fn canonical_eq(rtype: Rtype, a: &[u8], b: &[u8]) -> bool {
    // Equal in canonical form implies equal with every byte's case ignored: RDATA that
    // differ otherwise (nearly every pair an RRset's duplicate check compares) are told
    // apart eight bytes at a time, without walking their fields.
    if !tern_wire::ascii::eq_ignore_case(a, b) {
        return false;
    }
    let shape = rtype.shape();
    if !shape.canonical_lowercase || a == b {
        return a == b;
    }
    let mut at = 0usize;
    for field in shape.fields {
        let len = match *field {
            Field::Bytes(n) => usize::from(n),
            Field::CharString => 1 + usize::from(a.get(at).copied().unwrap_or(0)),
            Field::Name => match a.get(at..).map(Dname::from_wire_prefix) {
                Some(Ok((_, len))) => {
                    let (x, y) = (a.get(at..at + len), b.get(at..at + len));
                    if !x.zip(y).is_some_and(|(x, y)| x.eq_ignore_ascii_case(y)) {
                        return false;
                    }
                    at += len;
                    continue;
                }
                _ => return false,
            },
            Field::Rest => a.len().saturating_sub(at),
        };
        if a.get(at..at + len) != b.get(at..at + len) {
            return false;
        }
        at += len;
    }
    a.get(at..) == b.get(at..)
}

/// NSEC3 records and their signatures belong to the NSEC3 chain when the owner is a
/// hashed name directly below the apex (RFC 5155 §3).
pub fn in_nsec3_chain(origin: &Dname, owner: &Dname, rtype: Rtype, rdata: &[u8]) -> bool {
    let covers_nsec3 = rtype == Rtype::RRSIG && covered_type(rdata) == Some(Rtype::NSEC3);
    if rtype != Rtype::NSEC3 && !covers_nsec3 {
        return false;
    }
    owner.parent().is_some_and(|p| p.eq_ignore_case(origin))
        && owner.first_label().and_then(decode_hash_label).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names in the RFC 4034 §6.2 types compare case-insensitively; every other byte, and
    /// the names of other types, exactly.
    #[test]
    fn canonical_equality_ignores_the_case_of_listed_names_only() {
        let ns = |s: &str| s.parse::<tern_wire::Name>().unwrap().as_wire().to_vec();
        assert!(canonical_eq(Rtype::NS, &ns("NS1.Example."), &ns("ns1.example.")));
        assert!(!canonical_eq(Rtype::NS, &ns("ns1.example."), &ns("ns2.example.")));
        let mx = |pref: u8, name: &str| [vec![0, pref], ns(name)].concat();
        assert!(canonical_eq(Rtype::MX, &mx(10, "Mail.Example."), &mx(10, "mail.example.")));
        assert!(!canonical_eq(Rtype::MX, &mx(10, "mail.example."), &mx(20, "mail.example.")));
        assert!(!canonical_eq(Rtype::TXT, b"\x03ABC", b"\x03abc"), "not a name: exact");
        assert!(canonical_eq(Rtype::TXT, b"\x03abc", b"\x03abc"));
        assert!(!canonical_eq(Rtype::A, &[192, 0, 2, 1], &[192, 0, 2, 2]));
        assert!(!canonical_eq(Rtype::A, &[192, 0, 2, 1], &[192, 0, 2]), "lengths differ");
    }
}

/// The largest TTL (RFC 2181 §8: 2^31 - 1).
pub const MAX_TTL: u32 = 0x7FFF_FFFF;

/// A TTL as RFC 2181 §8 has it read: one with the most significant bit set counts as 0
/// ("as if the entire value received was zero"), as BIND does. The zone-file parser,
/// transfers in, UPDATE, the control interface's edits and changesets (the journal's
/// included) all apply it, so a record's TTL is served the same before and after a
/// restart, whichever way it came in.
pub fn rfc2181_ttl(ttl: u32) -> u32 {
    if ttl > MAX_TTL {
        0
    } else {
        ttl
    }
}

/// The numbers of an SOA record (RFC 1035 §3.3.13), after its two names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoaNumbers {
    /// Version of the zone (RFC 1982 serial arithmetic).
    pub serial: u32,
    /// Seconds between a secondary's checks for a new serial.
    pub refresh: u32,
    /// Seconds before a failed check is retried.
    pub retry: u32,
    /// Seconds after which a secondary that could not check stops answering.
    pub expire: u32,
    /// The negative-caching TTL bound (RFC 2308 §4).
    pub minimum: u32,
}

/// Reads an SOA's numbers; `None` when the RDATA is not a well-formed SOA.
pub fn soa_numbers(rdata: &[u8]) -> Option<SoaNumbers> {
    let (_, mname) = Dname::from_wire_prefix(rdata).ok()?;
    let rest = rdata.get(mname..)?;
    let (_, rname) = Dname::from_wire_prefix(rest).ok()?;
    let n = rest.get(rname..)?;
    if n.len() != 20 {
        return None;
    }
    let word =
        |i: usize| -> Option<u32> { Some(u32::from_be_bytes(n.get(i..i + 4)?.try_into().ok()?)) };
    Some(SoaNumbers {
        serial: word(0)?,
        refresh: word(4)?,
        retry: word(8)?,
        expire: word(12)?,
        minimum: word(16)?,
    })
}

/// An SOA's serial (see [`soa_numbers`]).
pub fn soa_serial(rdata: &[u8]) -> Option<u32> {
    soa_numbers(rdata).map(|n| n.serial)
}

/// The SOA RDATA with another serial (`None` when it is not a well-formed SOA).
pub fn with_soa_serial(rdata: &[u8], serial: u32) -> Option<Vec<u8>> {
    soa_numbers(rdata)?;
    let at = rdata.len() - 20;
    let mut out = rdata.to_vec();
    out.get_mut(at..at + 4)?.copy_from_slice(&serial.to_be_bytes());
    Some(out)
}

/// RFC 1982 serial arithmetic: is `a` greater than `b`? (Undefined pairs, exactly 2^31
/// apart, are not greater either way.)
pub fn serial_gt(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000_0000
}

#[cfg(test)]
mod soa_tests {
    use super::*;

    #[test]
    fn ttls_with_the_top_bit_set_count_as_zero() {
        assert_eq!(rfc2181_ttl(0), 0);
        assert_eq!(rfc2181_ttl(MAX_TTL), MAX_TTL);
        assert_eq!(rfc2181_ttl(MAX_TTL + 1), 0);
        assert_eq!(rfc2181_ttl(u32::MAX), 0);
    }

    #[test]
    fn soa_numbers_and_serial_arithmetic() {
        let rdata =
            tern_wire::rdata::parse_str(Rtype::SOA, "ns. h. 7 3600 600 86400 300", None).unwrap();
        let n = soa_numbers(&rdata).unwrap();
        assert_eq!((n.serial, n.refresh, n.retry, n.expire, n.minimum), (7, 3600, 600, 86400, 300));
        let bumped = with_soa_serial(&rdata, 8).unwrap();
        assert_eq!(soa_serial(&bumped), Some(8));
        assert_eq!(soa_numbers(&rdata[..rdata.len() - 1]), None);
        assert!(serial_gt(8, 7) && !serial_gt(7, 8) && !serial_gt(7, 7));
        assert!(serial_gt(1, u32::MAX), "wraps (RFC 1982 §3.2)");
        assert!(!serial_gt(0x8000_0000, 0) && !serial_gt(0, 0x8000_0000));
    }
}
