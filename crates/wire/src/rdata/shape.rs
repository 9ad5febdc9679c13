//! Where domain names sit inside each type's RDATA, and how they are treated.
//!
//! Three rules depend on it:
//! * compression on output is allowed only for the RFC 1035 types (RFC 3597 §4);
//! * decompression on input is done for those and for the types RFC 3597 §4 lists as
//!   historically compressed (RP, AFSDB, RT, SIG, PX, NXT, NAPTR, SRV);
//! * DNSSEC canonical form lower-cases names in the types of RFC 4034 §6.2 as amended by
//!   RFC 6840 §5.1 (NSEC and HINFO removed).
//!
//! The zone store also uses shapes to find target names (NS, MX, SRV, SVCB) for
//! additional-section processing without decoding typed RDATA.

use crate::types::Rtype;

/// One field of an RDATA layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// A fixed number of bytes.
    Bytes(u8),
    /// A domain name.
    Name,
    /// A `<character-string>`: a length byte and that many bytes.
    CharString,
    /// Everything up to the end of the RDATA (opaque to name handling).
    Rest,
}

/// The layout of one type's RDATA as far as names are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Fields in order; a shape without `Name` fields is opaque.
    pub fields: &'static [Field],
    /// Names may be compressed when writing (RFC 3597 §4).
    pub compress: bool,
    /// Compressed names are accepted and expanded when reading.
    pub decompress: bool,
    /// Names are lower-cased in DNSSEC canonical form (RFC 4034 §6.2, RFC 6840 §5.1).
    /// A6 is the one listed type whose name `fields` cannot place (its offset depends
    /// on the prefix length): its shape is opaque, and [`super::canonical_wire`] finds
    /// the name itself.
    pub canonical_lowercase: bool,
}

impl Shape {
    /// True when the RDATA contains at least one name.
    pub fn has_names(&self) -> bool {
        self.fields.contains(&Field::Name)
    }

    /// True when RDATA read field by field as this shape says is wholly checked: the
    /// shape is decompressed on input, and every field is a name, a fixed number of
    /// bytes or a character string, nothing left to the type's codec (`Rest`). Such
    /// RDATA that [`MessageReader`](crate::message::MessageReader) expanded passes
    /// [`validate`](super::validate) (a test holds every such type to it).
    pub fn read_checks_all(&self) -> bool {
        self.decompress && !self.fields.contains(&Field::Rest)
    }
}

use Field::{Bytes, CharString, Name, Rest};

const fn shape(fields: &'static [Field], compress: bool, decompress: bool, lower: bool) -> Shape {
    Shape { fields, compress, decompress, canonical_lowercase: lower }
}

const OPAQUE: Shape = shape(&[Rest], false, false, false);
const NAME_1035: Shape = shape(&[Name], true, true, true);
const SOA: Shape = shape(&[Name, Name, Bytes(20)], true, true, true);
const TWO_NAMES_1035: Shape = shape(&[Name, Name], true, true, true);
const PREF_NAME_1035: Shape = shape(&[Bytes(2), Name], true, true, true);
const PREF_NAME_OLD: Shape = shape(&[Bytes(2), Name], false, true, true);
const PREF_NAME_LOWER: Shape = shape(&[Bytes(2), Name], false, false, true);
const PREF_NAME_PLAIN: Shape = shape(&[Bytes(2), Name], false, false, false);
const TWO_NAMES_OLD: Shape = shape(&[Name, Name], false, true, true);
const PX: Shape = shape(&[Bytes(2), Name, Name], false, true, true);
const SRV: Shape = shape(&[Bytes(6), Name], false, true, true);
const NAPTR: Shape =
    shape(&[Bytes(4), CharString, CharString, CharString, Name], false, true, true);
const SIG: Shape = shape(&[Bytes(18), Name, Rest], false, true, true);
const RRSIG: Shape = shape(&[Bytes(18), Name, Rest], false, false, true);
const NXT: Shape = shape(&[Name, Rest], false, true, true);
/// A6 (RFC 2874 §3.1): a prefix length, a suffix of a length that depends on it, then a
/// name that must not be compressed (so is not decompressed either) and that RFC 4034
/// §6.2 lower-cases. `fields` cannot express the suffix, so they show the RDATA as
/// opaque; [`super::canonical_wire`] finds the name itself.
const A6: Shape = shape(&[Rest], false, false, true);
const NSEC: Shape = shape(&[Name, Rest], false, false, false);
const DNAME: Shape = shape(&[Name], false, false, true);
/// NSAP-PTR (RFC 1348): one name, neither compressed (RFC 3597 §4) nor lower-cased in
/// canonical form (it is not in RFC 4034 §6.2's list).
const NAME_PLAIN: Shape = shape(&[Name], false, false, false);
const TALINK: Shape = shape(&[Name, Name], false, false, false);
const SVCB: Shape = shape(&[Bytes(2), Name, Rest], false, false, false);
const ALG_NAME: Shape = shape(&[Name, Rest], false, false, false);

impl Rtype {
    /// The RDATA layout of this type.
    pub fn shape(self) -> &'static Shape {
        match self {
            Rtype::NS | Rtype::MD | Rtype::MF | Rtype::CNAME | Rtype::MB | Rtype::MG => &NAME_1035,
            Rtype::MR | Rtype::PTR => &NAME_1035,
            Rtype::SOA => &SOA,
            Rtype::MINFO => &TWO_NAMES_1035,
            Rtype::MX => &PREF_NAME_1035,
            Rtype::AFSDB | Rtype::RT => &PREF_NAME_OLD,
            Rtype::KX => &PREF_NAME_LOWER,
            Rtype::LP => &PREF_NAME_PLAIN,
            Rtype::RP => &TWO_NAMES_OLD,
            Rtype::PX => &PX,
            Rtype::SRV => &SRV,
            Rtype::NAPTR => &NAPTR,
            Rtype::SIG => &SIG,
            Rtype::RRSIG => &RRSIG,
            Rtype::NXT => &NXT,
            Rtype::A6 => &A6,
            Rtype::NSEC => &NSEC,
            Rtype::DNAME => &DNAME,
            Rtype::NSAP_PTR => &NAME_PLAIN,
            Rtype::TALINK => &TALINK,
            Rtype::SVCB | Rtype::HTTPS => &SVCB,
            Rtype::TSIG | Rtype::TKEY => &ALG_NAME,
            _ => &OPAQUE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3597_compression_rules() {
        for t in [Rtype::NS, Rtype::CNAME, Rtype::SOA, Rtype::PTR, Rtype::MX, Rtype::MINFO] {
            assert!(t.shape().compress && t.shape().decompress, "{t}");
        }
        for t in [Rtype::SRV, Rtype::NAPTR, Rtype::RP, Rtype::AFSDB, Rtype::RT, Rtype::PX] {
            assert!(!t.shape().compress && t.shape().decompress, "{t}");
        }
        assert!(!Rtype::NXT.shape().compress && Rtype::NXT.shape().decompress);
        let plain = [Rtype::DNAME, Rtype::SVCB, Rtype::RRSIG, Rtype::NSEC, Rtype::A6];
        for t in plain.into_iter().chain([Rtype::NSAP_PTR, Rtype(65280)]) {
            assert!(!t.shape().compress && !t.shape().decompress, "{t}");
        }
    }

    #[test]
    fn rfc6840_canonical_lowercase() {
        assert!(Rtype::RRSIG.shape().canonical_lowercase);
        assert!(Rtype::DNAME.shape().canonical_lowercase);
        assert!(Rtype::NXT.shape().canonical_lowercase && Rtype::A6.shape().canonical_lowercase);
        for t in [Rtype::WKS, Rtype::NSAP, Rtype::GPOS, Rtype::RKEY, Rtype::DOA] {
            assert!(!t.shape().has_names() && !t.shape().canonical_lowercase, "{t}");
        }
        assert!(!Rtype::NSEC.shape().canonical_lowercase);
        assert!(!Rtype::HINFO.shape().canonical_lowercase);
        assert!(!Rtype::A.shape().has_names());
        assert!(Rtype::SRV.shape().has_names());
    }
}
