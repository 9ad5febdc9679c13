//! The typed RDATA API: [`Rdata`], one variant per known type, and the one table that
//! maps each type code to its layout. The presentation dispatch ([`super::codec`]) is
//! generated from the same table, so a type is added in one line.
//!
//! The typed value is for code that wants fields (DNSSEC signing, tools, tests). Zones
//! keep wire bytes; conversions go through the same codecs: [`Rdata::parse`] is
//! `parse_text` then [`Rdata::from_wire`], and `Display` is [`Rdata::to_wire`] then
//! `write_text`.

use std::fmt;

use super::address::{Apl, Eui48, Eui64, Nid, L32, L64};
use super::basic::{Aaaa, Exchange, Hinfo, Isdn, NamePair, Px, Soa, Target, Txt, A, X25};
use super::certs::{Cert, Dhcid, Hip, Openpgpkey, Sshfp, Tlsa};
use super::dnssec::{Dnskey, Ds, Nsec, Nxt, Rkey, Rrsig};
use super::fields::RdataReader;
use super::format::Format;
use super::gateway::{Amtrelay, Ipseckey};
use super::legacy::{Gpos, Nsap, Wks, A6};
use super::loc::Loc;
use super::nsec3::{Nsec3, Nsec3param};
use super::services::{Caa, Doa, Naptr, Srv, Uri};
use super::svcb::Svcb;
use super::zone_sync::{Csync, Zonemd};
use super::Codec;
use crate::error::Result;
use crate::name::Dname;
use crate::types::Rtype;

/// Declares [`Rdata`] and the per-type codec dispatch from one list.
macro_rules! rdata_types {
    ($( $rtype:ident => $variant:ident($format:ty), )*) => {
        /// Typed RDATA: one variant per type Tern knows the format of, and `Unknown`
        /// for the others (kept as opaque wire bytes, RFC 3597).
        ///
        /// Types that share a layout share a struct (CNAME, NS and PTR are all a
        /// [`Target`]). Equality compares names case-insensitively; use
        /// [`super::canonical_wire`] for DNSSEC's byte-exact comparison.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Rdata {
            $(
                #[doc = concat!("`", stringify!($rtype), "`")]
                $variant($format),
            )*
            /// A type without a known format, or a meta type.
            Unknown {
                /// The type code.
                rtype: Rtype,
                /// The RDATA in wire form.
                data: Vec<u8>,
            },
        }

        impl Rdata {
            /// The record type.
            pub fn rtype(&self) -> Rtype {
                match self {
                    $( Rdata::$variant(_) => Rtype::$rtype, )*
                    Rdata::Unknown { rtype, .. } => *rtype,
                }
            }

            /// Decodes wire-form RDATA (uncompressed) of type `rtype`. Known types must
            /// follow their format exactly; other types become [`Rdata::Unknown`].
            pub fn from_wire(rtype: Rtype, data: &[u8]) -> Result<Rdata> {
                let mut rd = RdataReader::new(data);
                let value = match rtype {
                    $( Rtype::$rtype => Rdata::$variant(<$format as Format>::decode(&mut rd)?), )*
                    _ => return Ok(Rdata::Unknown { rtype, data: data.to_vec() }),
                };
                rd.finish()?;
                Ok(value)
            }

            /// Appends the uncompressed wire form.
            pub fn to_wire(&self, out: &mut Vec<u8>) {
                match self {
                    $( Rdata::$variant(v) => v.encode(out), )*
                    Rdata::Unknown { data, .. } => out.extend_from_slice(data),
                }
            }
        }

        /// The presentation codec for a type, if Tern knows its format.
        pub(super) fn codec(rtype: Rtype) -> Option<&'static Codec> {
            match rtype {
                $( Rtype::$rtype => Some(&<$format as Format>::CODEC), )*
                _ => None,
            }
        }
    };
}

rdata_types! {
    A => A(A),
    NS => Ns(Target),
    MD => Md(Target),
    MF => Mf(Target),
    CNAME => Cname(Target),
    SOA => Soa(Soa),
    MB => Mb(Target),
    MG => Mg(Target),
    MR => Mr(Target),
    WKS => Wks(Wks),
    PTR => Ptr(Target),
    HINFO => Hinfo(Hinfo),
    MINFO => Minfo(NamePair),
    MX => Mx(Exchange),
    TXT => Txt(Txt),
    RP => Rp(NamePair),
    AFSDB => Afsdb(Exchange),
    X25 => X25(X25),
    ISDN => Isdn(Isdn),
    RT => Rt(Exchange),
    NSAP => Nsap(Nsap),
    NSAP_PTR => NsapPtr(Target),
    SIG => Sig(Rrsig),
    KEY => Key(Dnskey),
    PX => Px(Px),
    GPOS => Gpos(Gpos),
    AAAA => Aaaa(Aaaa),
    LOC => Loc(Loc),
    NXT => Nxt(Nxt),
    SRV => Srv(Srv),
    NAPTR => Naptr(Naptr),
    KX => Kx(Exchange),
    CERT => Cert(Cert),
    A6 => A6(A6),
    DNAME => Dname(Target),
    APL => Apl(Apl),
    DS => Ds(Ds),
    SSHFP => Sshfp(Sshfp),
    IPSECKEY => Ipseckey(Ipseckey),
    RRSIG => Rrsig(Rrsig),
    NSEC => Nsec(Nsec),
    DNSKEY => Dnskey(Dnskey),
    DHCID => Dhcid(Dhcid),
    NSEC3 => Nsec3(Nsec3),
    NSEC3PARAM => Nsec3param(Nsec3param),
    TLSA => Tlsa(Tlsa),
    SMIMEA => Smimea(Tlsa),
    HIP => Hip(Hip),
    NINFO => Ninfo(Txt),
    RKEY => Rkey(Rkey),
    TALINK => Talink(NamePair),
    CDS => Cds(Ds),
    CDNSKEY => Cdnskey(Dnskey),
    OPENPGPKEY => Openpgpkey(Openpgpkey),
    CSYNC => Csync(Csync),
    ZONEMD => Zonemd(Zonemd),
    SVCB => Svcb(Svcb),
    HTTPS => Https(Svcb),
    SPF => Spf(Txt),
    NID => Nid(Nid),
    L32 => L32(L32),
    L64 => L64(L64),
    LP => Lp(Exchange),
    EUI48 => Eui48(Eui48),
    EUI64 => Eui64(Eui64),
    URI => Uri(Uri),
    CAA => Caa(Caa),
    AVC => Avc(Txt),
    DOA => Doa(Doa),
    AMTRELAY => Amtrelay(Amtrelay),
    RESINFO => Resinfo(Txt),
    WALLET => Wallet(Txt),
    TA => Ta(Ds),
    DLV => Dlv(Ds),
}

impl Rdata {
    /// Parses presentation-format RDATA of type `rtype` (relative names get `origin`).
    pub fn parse(rtype: Rtype, text: &str, origin: Option<&Dname>) -> Result<Rdata> {
        let wire = super::parse_str(rtype, text, origin)?;
        Rdata::from_wire(rtype, &wire)
    }

    /// The uncompressed wire form as a new vector.
    pub fn to_wire_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.to_wire(&mut out);
        out
    }
}

impl fmt::Display for Rdata {
    /// Presentation format (the generic `\# len hex` form for unknown types).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::to_text(self.rtype(), &self.to_wire_vec()))
    }
}
