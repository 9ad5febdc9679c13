//! Numeric protocol codes with their mnemonics: [`Rtype`], [`Class`], [`Rcode`], [`Opcode`].
//!
//! Each is a transparent newtype over its wire integer, so unknown values are carried
//! through unchanged. Presentation follows RFC 3597 §5 (`TYPE65534`, `CLASS32`).

use std::fmt;

/// Defines a newtype code with named constants and a mnemonic table.
macro_rules! code_type {
    ($(#[$meta:meta])* $ty:ident($int:ty), $generic:literal, { $($(#[$cmeta:meta])* $name:ident = $value:literal => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $ty(pub $int);

        #[allow(missing_docs)]
        impl $ty {
            $($(#[$cmeta])* pub const $name: $ty = $ty($value);)*

            /// The mnemonic, if this code has one.
            pub fn mnemonic(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some($text),)*
                    _ => None,
                }
            }

            /// Parses a mnemonic or the generic form (case-insensitive).
            pub fn from_mnemonic(text: &[u8]) -> Option<$ty> {
                $(if text.eq_ignore_ascii_case($text.as_bytes()) { return Some($ty($value)); })*
                let digits = strip_prefix_ignore_case(text, $generic.as_bytes())?;
                parse_decimal(digits).and_then(|v| <$int>::try_from(v).ok()).map($ty)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.mnemonic() {
                    Some(m) => f.write_str(m),
                    None => write!(f, "{}{}", $generic, self.0),
                }
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }

        impl From<$int> for $ty {
            fn from(v: $int) -> Self {
                $ty(v)
            }
        }

        impl From<$ty> for $int {
            fn from(v: $ty) -> Self {
                v.0
            }
        }
    };
}

/// `prefix` removed from the start of `text` (ASCII case-insensitive), if present.
fn strip_prefix_ignore_case<'a>(text: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let (head, tail) = text.split_at_checked(prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then_some(tail)
}

/// A plain decimal number of at most 10 digits (no sign, no leading `+`).
pub(crate) fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 10 {
        return None;
    }
    digits
        .iter()
        .try_fold(0u64, |acc, &d| d.is_ascii_digit().then(|| acc * 10 + u64::from(d - b'0')))
}

code_type!(
    /// A resource record type (RFC 1035 §3.2.2, IANA "Resource Record (RR) TYPEs").
    Rtype(u16), "TYPE", {
    A = 1 => "A",
    NS = 2 => "NS",
    MD = 3 => "MD",
    MF = 4 => "MF",
    CNAME = 5 => "CNAME",
    SOA = 6 => "SOA",
    MB = 7 => "MB",
    MG = 8 => "MG",
    MR = 9 => "MR",
    NULL = 10 => "NULL",
    WKS = 11 => "WKS",
    PTR = 12 => "PTR",
    HINFO = 13 => "HINFO",
    MINFO = 14 => "MINFO",
    MX = 15 => "MX",
    TXT = 16 => "TXT",
    RP = 17 => "RP",
    AFSDB = 18 => "AFSDB",
    X25 = 19 => "X25",
    ISDN = 20 => "ISDN",
    RT = 21 => "RT",
    NSAP = 22 => "NSAP",
    NSAP_PTR = 23 => "NSAP-PTR",
    SIG = 24 => "SIG",
    KEY = 25 => "KEY",
    PX = 26 => "PX",
    GPOS = 27 => "GPOS",
    AAAA = 28 => "AAAA",
    LOC = 29 => "LOC",
    NXT = 30 => "NXT",
    EID = 31 => "EID",
    NIMLOC = 32 => "NIMLOC",
    SRV = 33 => "SRV",
    ATMA = 34 => "ATMA",
    NAPTR = 35 => "NAPTR",
    KX = 36 => "KX",
    CERT = 37 => "CERT",
    A6 = 38 => "A6",
    DNAME = 39 => "DNAME",
    SINK = 40 => "SINK",
    OPT = 41 => "OPT",
    APL = 42 => "APL",
    DS = 43 => "DS",
    SSHFP = 44 => "SSHFP",
    IPSECKEY = 45 => "IPSECKEY",
    RRSIG = 46 => "RRSIG",
    NSEC = 47 => "NSEC",
    DNSKEY = 48 => "DNSKEY",
    DHCID = 49 => "DHCID",
    NSEC3 = 50 => "NSEC3",
    NSEC3PARAM = 51 => "NSEC3PARAM",
    TLSA = 52 => "TLSA",
    SMIMEA = 53 => "SMIMEA",
    HIP = 55 => "HIP",
    NINFO = 56 => "NINFO",
    RKEY = 57 => "RKEY",
    TALINK = 58 => "TALINK",
    CDS = 59 => "CDS",
    CDNSKEY = 60 => "CDNSKEY",
    OPENPGPKEY = 61 => "OPENPGPKEY",
    CSYNC = 62 => "CSYNC",
    ZONEMD = 63 => "ZONEMD",
    SVCB = 64 => "SVCB",
    HTTPS = 65 => "HTTPS",
    SPF = 99 => "SPF",
    NID = 104 => "NID",
    L32 = 105 => "L32",
    L64 = 106 => "L64",
    LP = 107 => "LP",
    EUI48 = 108 => "EUI48",
    EUI64 = 109 => "EUI64",
    TKEY = 249 => "TKEY",
    TSIG = 250 => "TSIG",
    IXFR = 251 => "IXFR",
    AXFR = 252 => "AXFR",
    MAILB = 253 => "MAILB",
    MAILA = 254 => "MAILA",
    ANY = 255 => "ANY",
    URI = 256 => "URI",
    CAA = 257 => "CAA",
    AVC = 258 => "AVC",
    DOA = 259 => "DOA",
    AMTRELAY = 260 => "AMTRELAY",
    RESINFO = 261 => "RESINFO",
    WALLET = 262 => "WALLET",
    TA = 32768 => "TA",
    DLV = 32769 => "DLV",
});

impl Rtype {
    /// Meta-types and query-only types (RFC 6895 §3.1: 128–255, plus OPT): never stored
    /// in a zone.
    pub fn is_meta(self) -> bool {
        self == Rtype::OPT || (128..=255).contains(&self.0)
    }

    /// Types that only DNSSEC maintains and that may sit beside a CNAME (RFC 4035 §2.5,
    /// RFC 2181 §10.1).
    pub fn is_dnssec(self) -> bool {
        matches!(self, Rtype::RRSIG | Rtype::NSEC | Rtype::NSEC3 | Rtype::KEY | Rtype::SIG)
    }
}

code_type!(
    /// A record class (RFC 1035 §3.2.4, RFC 2136 §2.4 for NONE and ANY).
    Class(u16), "CLASS", {
    IN = 1 => "IN",
    CH = 3 => "CH",
    HS = 4 => "HS",
    NONE = 254 => "NONE",
    ANY = 255 => "ANY",
});

code_type!(
    /// A response code, 12 bits with the EDNS extension (RFC 6895 §2.3).
    Rcode(u16), "RCODE", {
    NOERROR = 0 => "NOERROR",
    FORMERR = 1 => "FORMERR",
    SERVFAIL = 2 => "SERVFAIL",
    NXDOMAIN = 3 => "NXDOMAIN",
    NOTIMP = 4 => "NOTIMP",
    REFUSED = 5 => "REFUSED",
    YXDOMAIN = 6 => "YXDOMAIN",
    YXRRSET = 7 => "YXRRSET",
    NXRRSET = 8 => "NXRRSET",
    NOTAUTH = 9 => "NOTAUTH",
    NOTZONE = 10 => "NOTZONE",
    DSOTYPENI = 11 => "DSOTYPENI",
    /// BADVERS in an OPT record, BADSIG in a TSIG record (RFC 6891, RFC 8945).
    BADVERS = 16 => "BADVERS",
    BADKEY = 17 => "BADKEY",
    BADTIME = 18 => "BADTIME",
    BADMODE = 19 => "BADMODE",
    BADNAME = 20 => "BADNAME",
    BADALG = 21 => "BADALG",
    BADTRUNC = 22 => "BADTRUNC",
    BADCOOKIE = 23 => "BADCOOKIE",
});

impl Rcode {
    /// BADSIG shares code 16 with BADVERS; it appears only in TSIG records.
    pub const BADSIG: Rcode = Rcode(16);

    /// The low four bits that go into the message header.
    pub fn header_bits(self) -> u8 {
        (self.0 & 0x0F) as u8
    }

    /// The high eight bits that go into the OPT record's extended RCODE field.
    pub fn extended_bits(self) -> u8 {
        ((self.0 >> 4) & 0xFF) as u8
    }

    /// Joins the header bits with the OPT record's extended bits.
    pub fn from_parts(header: u8, extended: u8) -> Rcode {
        Rcode(u16::from(extended) << 4 | u16::from(header & 0x0F))
    }
}

code_type!(
    /// A message opcode (RFC 1035 §4.1.1, RFC 1996, RFC 2136, RFC 8490).
    Opcode(u8), "OPCODE", {
    QUERY = 0 => "QUERY",
    IQUERY = 1 => "IQUERY",
    STATUS = 2 => "STATUS",
    NOTIFY = 4 => "NOTIFY",
    UPDATE = 5 => "UPDATE",
    DSO = 6 => "DSO",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_round_trip() {
        assert_eq!(Rtype::from_mnemonic(b"aaaa"), Some(Rtype::AAAA));
        assert_eq!(Rtype::from_mnemonic(b"NSAP-PTR"), Some(Rtype::NSAP_PTR));
        assert_eq!(Rtype::from_mnemonic(b"TYPE65534"), Some(Rtype(65534)));
        assert_eq!(Rtype::from_mnemonic(b"type1"), Some(Rtype::A));
        assert_eq!(Rtype::from_mnemonic(b"TYPE65536"), None);
        assert_eq!(Rtype::from_mnemonic(b"TYPE"), None);
        assert_eq!(Rtype::from_mnemonic(b"TYPE-1"), None);
        assert_eq!(Rtype::from_mnemonic(b"BOGUS"), None);
        assert_eq!(Rtype(65534).to_string(), "TYPE65534");
        assert_eq!(Rtype::HTTPS.to_string(), "HTTPS");
        assert_eq!(Class::from_mnemonic(b"in"), Some(Class::IN));
        assert_eq!(Class::from_mnemonic(b"CLASS32"), Some(Class(32)));
        assert_eq!(Class(32).to_string(), "CLASS32");
        assert_eq!(Opcode(15).to_string(), "OPCODE15");
    }

    #[test]
    fn meta_types() {
        assert!(Rtype::OPT.is_meta());
        assert!(Rtype::AXFR.is_meta());
        assert!(Rtype::ANY.is_meta());
        assert!(!Rtype::URI.is_meta());
        assert!(!Rtype::A.is_meta());
    }

    #[test]
    fn extended_rcode_split() {
        assert_eq!(Rcode::BADVERS.header_bits(), 0);
        assert_eq!(Rcode::BADVERS.extended_bits(), 1);
        assert_eq!(Rcode::from_parts(3, 0), Rcode::NXDOMAIN);
        assert_eq!(Rcode::from_parts(0, 1), Rcode::BADVERS);
        assert_eq!(Rcode::BADCOOKIE.header_bits(), 7);
    }
}
