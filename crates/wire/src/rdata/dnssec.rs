//! DNSSEC records (RFC 4034): DS and its look-alikes (CDS, TA, DLV), DNSKEY and its
//! look-alikes (CDNSKEY, KEY, RKEY), RRSIG (and the old SIG), NSEC, and NSEC's
//! predecessor NXT (RFC 2535 §5, obsoleted by RFC 3755 but still loaded by BIND). NSEC3
//! lives in [`super::nsec3`].

use super::bitmap::{NxtBitmap, TypeBitmap};
use super::fields::RdataReader;
use super::format::{hash_length, rdata_format, FieldKind};
use super::kinds::{number_or_mnemonic, Base64, Duration, Hex, NameKind, U16, U8};
use super::push_fmt;
use super::time::SigTime;
use crate::error::Result;
use crate::name::{Dname, Name};
use crate::text::Lexer;
use crate::types::Rtype;

/// DNSSEC algorithm mnemonics (IANA "DNS Security Algorithm Numbers"; RFC 4034 §A.1),
/// with the hyphen-less spellings some tools write.
const ALGORITHMS: &[(&str, u8)] = &[
    ("RSAMD5", 1),
    ("DH", 2),
    ("DSA", 3),
    ("ECC", 4),
    ("RSASHA1", 5),
    ("DSA-NSEC3-SHA1", 6),
    ("DSANSEC3SHA1", 6),
    ("NSEC3DSA", 6),
    ("RSASHA1-NSEC3-SHA1", 7),
    ("RSASHA1NSEC3SHA1", 7),
    ("NSEC3RSASHA1", 7),
    ("RSASHA256", 8),
    ("RSASHA512", 10),
    ("ECC-GOST", 12),
    ("ECCGOST", 12),
    ("ECDSAP256SHA256", 13),
    ("ECDSAP384SHA384", 14),
    ("ED25519", 15),
    ("ED448", 16),
    ("INDIRECT", 252),
    ("PRIVATEDNS", 253),
    ("PRIVATEOID", 254),
];

/// A DNSSEC algorithm number: decimal or mnemonic in text (RFC 4034 §2.2, §3.2, §5.3),
/// printed as a number.
pub(crate) struct Algorithm;

impl FieldKind for Algorithm {
    type Value = u8;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("an algorithm number or mnemonic")?;
        out.push(number_or_mnemonic(&token, ALGORITHMS, "an algorithm number or mnemonic")?);
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        U8::print(rd, out)
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        U8::check(rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<u8> {
        U8::decode(rd)
    }

    fn encode(value: &u8, out: &mut Vec<u8>) {
        out.push(*value);
    }
}

/// A record type: mnemonic or `TYPEnnn` in text, printed as the mnemonic.
pub(crate) struct RtypeKind;

impl FieldKind for RtypeKind {
    type Value = Rtype;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a record type")?;
        let t = Rtype::from_mnemonic(token.text).ok_or_else(|| {
            token.error(format!("expected a record type, found '{}'", token.display()))
        })?;
        out.extend_from_slice(&t.0.to_be_bytes());
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        push_fmt(out, format_args!("{}", Rtype(rd.u16()?)));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.u16().map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Rtype> {
        rd.u16().map(Rtype)
    }

    fn encode(value: &Rtype, out: &mut Vec<u8>) {
        out.extend_from_slice(&value.0.to_be_bytes());
    }
}

/// The digest length each known digest type requires (SHA-1 RFC 3658 §2.4, SHA-256
/// RFC 4509 §2.2, GOST RFC 5933 §4, SHA-384 RFC 6605 §2); other types take any length.
fn ds_digest_length(wire: &[u8]) -> Result<(), &'static str> {
    hash_length(wire, 3, 4, &[(1, 20), (2, 32), (3, 32), (4, 48)])
}

rdata_format! {
    /// DS (RFC 4034 §5), also CDS (RFC 7344 §3.1), TA and DLV (RFC 4431).
    Ds [ds_digest_length] {
        /// Key tag of the DNSKEY referred to.
        key_tag: u16 as U16,
        /// Its algorithm.
        algorithm: u8 as Algorithm,
        /// The digest algorithm.
        digest_type: u8 as U8,
        /// The digest, printed in hex.
        digest: Vec<u8> as Hex<0>,
    }
}

/// RKEY (draft-reid-dnsext-rkey): DNSKEY's fields with no flag defined, so the flags are
/// zero, and a key. BIND refuses anything else in text and on the wire, and a resolver
/// built on it drops a whole response that carries such a record.
fn rkey_rules(wire: &[u8]) -> Result<(), &'static str> {
    match wire {
        [0, 0, _, _, _, ..] => Ok(()),
        [0, 0, ..] => Err("an RKEY record needs a public key"),
        _ => Err("RKEY flags must be 0 (none is defined)"),
    }
}

rdata_format! {
    /// RKEY (draft-reid-dnsext-rkey): a key for encrypting NAPTR records, in DNSKEY's
    /// layout; the flags must be 0 and the key present.
    Rkey [rkey_rules] {
        /// Flags: none defined, always 0.
        flags: u16 as U16,
        /// The protocol (1 for NAPTR in the draft).
        protocol: u8 as U8,
        /// Algorithm number.
        algorithm: u8 as Algorithm,
        /// The public key, printed in base64.
        public_key: Vec<u8> as Base64,
    }
}

rdata_format! {
    /// DNSKEY (RFC 4034 §2), also CDNSKEY (RFC 7344 §3.2) and KEY (RFC 2535 §3.1,
    /// RFC 3445).
    Dnskey {
        /// Flags (256 zone key, 257 with the secure entry point bit).
        flags: u16 as U16,
        /// Always 3 for DNSSEC.
        protocol: u8 as U8,
        /// Algorithm number.
        algorithm: u8 as Algorithm,
        /// The public key, printed in base64.
        public_key: Vec<u8> as Base64,
    }
}

rdata_format! {
    /// RRSIG (RFC 4034 §3), also SIG (RFC 2535 §4.1).
    Rrsig {
        /// The type of the RRset signed.
        type_covered: Rtype as RtypeKind,
        /// Algorithm number.
        algorithm: u8 as Algorithm,
        /// Labels of the original owner name (wildcards have fewer).
        labels: u8 as U8,
        /// TTL of the RRset as signed.
        original_ttl: u32 as Duration,
        /// End of validity, seconds since 1970 (serial arithmetic).
        expiration: u32 as SigTime,
        /// Start of validity.
        inception: u32 as SigTime,
        /// Key tag of the signing key.
        key_tag: u16 as U16,
        /// Owner of the signing key.
        signer: Name as NameKind,
        /// The signature, printed in base64.
        signature: Vec<u8> as Base64,
    }
}

rdata_format! {
    /// NSEC (RFC 4034 §4).
    Nsec {
        /// The next owner name in canonical order.
        next: Name as NameKind,
        /// Types present at the owner.
        types: Vec<Rtype> as TypeBitmap,
    }
}

rdata_format! {
    /// NXT (RFC 2535 §5.2): the next name in the zone and the types present at the owner,
    /// as a flat bitmap of types 1 to 127 (not NSEC's windows). Like SIG it may arrive
    /// compressed and its name is lower-cased in canonical form (RFC 3597 §4, RFC 4034
    /// §6.2).
    Nxt {
        /// The next owner name in canonical order.
        next: Name as NameKind,
        /// Types present at the owner, 1 to 127 (others are dropped when encoding).
        types: Vec<Rtype> as NxtBitmap,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::round_trip;
    use crate::types::Rtype;

    #[test]
    fn rfc4034_dnskey_example() {
        // RFC 4034 §2.3.
        let text = "256 3 5 ( AQPSKmynfzW4kyBv015MUG2DeIQ3 Cbl+BBZH4b/0PY1kxkmvHjcZc8no kfzj31GajIQKY+5CptLr3buXA10h WqTkF7H6RfoRqXQeogmMHfpftf6z Mv1LyBUgia7za6ZEzOJBOztyvhjL 742iU/TpPSEDhm2SNKLijfUppn1U aNvv4w==  )";
        let printed = "256 3 5 AQPSKmynfzW4kyBv015MUG2DeIQ3Cbl+BBZH4b/0PY1kxkmvHjcZc8nokfzj31GajIQKY+5CptLr3buXA10hWqTkF7H6RfoRqXQeogmMHfpftf6zMv1LyBUgia7za6ZEzOJBOztyvhjL742iU/TpPSEDhm2SNKLijfUppn1UaNvv4w==";
        let wire = round_trip(Rtype::DNSKEY, text, printed);
        assert_eq!(&wire[..4], [0x01, 0x00, 0x03, 0x05]);
        assert_eq!(wire.len(), 4 + 130);
        round_trip(Rtype::CDNSKEY, printed, printed);
        round_trip(Rtype::KEY, "256 3 RSASHA1 AQPSKmyn", "256 3 5 AQPSKmyn");
        // RKEY has the same fields, with the flags zero and a key (as BIND wants them).
        let wire = round_trip(Rtype::RKEY, "0 3 RSASHA256 ( AQ ID )", "0 3 8 AQID");
        assert_eq!(wire, [0, 0, 3, 8, 1, 2, 3]);
        for bad in ["256 3 8 AQID", "0 3 8"] {
            assert!(super::super::parse_str(Rtype::RKEY, bad, None).is_err(), "{bad}");
        }
        assert!(super::super::validate(Rtype::RKEY, &[1, 0, 3, 8, 1]).is_err());
        assert!(super::super::validate(Rtype::RKEY, &[0, 0, 3, 8]).is_err());
    }

    #[test]
    fn rfc4034_rrsig_example() {
        // RFC 4034 §3.3.
        let text = "A 5 3 86400 20030322173103 ( 20030220173103 2642 example.com. oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTr PYGv07h108dUKGMeDPKijVCHX3DDKdfb+v6o B9wfuh3DTJXUAfI/M0zmO/zz8bW0Rznl8O3t GNazPwQKkRN20XPXV6nwwfoXmJQbsLNrLfkG J5D6fwFm8nN+6pBzeDQfsS3Ap3o= )";
        let printed = "A 5 3 86400 20030322173103 20030220173103 2642 example.com. oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTrPYGv07h108dUKGMeDPKijVCHX3DDKdfb+v6oB9wfuh3DTJXUAfI/M0zmO/zz8bW0Rznl8O3tGNazPwQKkRN20XPXV6nwwfoXmJQbsLNrLfkGJ5D6fwFm8nN+6pBzeDQfsS3Ap3o=";
        let wire = round_trip(Rtype::RRSIG, text, printed);
        assert_eq!(
            &wire[..18],
            [
                0, 1, 5, 3, 0, 1, 0x51, 0x80, 0x3e, 0x7c, 0x9d, 0xd7, 0x3e, 0x55, 0x10, 0xd7, 0x0a,
                0x52
            ]
        );
        // Plain seconds and TTL units are accepted; the date form is printed.
        round_trip(
            Rtype::RRSIG,
            "TYPE1 RSASHA1 3 1d 1048354263 1045762263 2642 example.com. oJB1W6WNGv+ldvQ3",
            "A 5 3 86400 20030322173103 20030220173103 2642 example.com. oJB1W6WNGv+ldvQ3",
        );
        round_trip(Rtype::SIG, printed, printed);
    }

    #[test]
    fn rfc4034_nsec_example() {
        // RFC 4034 §4.3.
        let wire = round_trip(
            Rtype::NSEC,
            "host.example.com. ( A MX RRSIG NSEC TYPE1234 )",
            "host.example.com. A MX RRSIG NSEC TYPE1234",
        );
        assert_eq!(&wire[..18], b"\x04host\x07example\x03com\x00");
        assert_eq!(&wire[18..26], [0x00, 0x06, 0x40, 0x01, 0x00, 0x00, 0x00, 0x03]);
        // An empty bitmap prints as nothing.
        round_trip(Rtype::NSEC, "example.", "example.");
    }

    #[test]
    fn nxt_old_bitmap() {
        // RFC 2535 §5.4's example: "big.foo.tld. NXT medium.foo.tld. A MX SIG NXT".
        let wire =
            round_trip(Rtype::NXT, "medium.foo.tld. A MX SIG NXT", "medium.foo.tld. A MX SIG NXT");
        assert_eq!(&wire[16..], [0x40, 0x01, 0x00, 0x82]);
        // Any order, repeats, TYPEnnn and BIND's plain numbers; printed as mnemonics.
        round_trip(Rtype::NXT, "n. NXT 1 a TYPE127 A", "n. A NXT TYPE127");
        round_trip(Rtype::NXT, "n.", "n.");
        // Its name is lower-cased in canonical form (RFC 4034 §6.2).
        let wire = crate::rdata::parse_str(Rtype::NXT, "Next.EXAMPLE. A", None).unwrap();
        let mut canonical = Vec::new();
        crate::rdata::canonical_wire(Rtype::NXT, &wire, &mut canonical).unwrap();
        assert_eq!(canonical, b"\x04next\x07example\x00\x40");
        let err = |text| crate::rdata::parse_str(Rtype::NXT, text, None).unwrap_err().to_string();
        for text in ["n. TYPE0", "n. 0", "n. TYPE128", "n. CAA", "n. BOGUS"] {
            assert!(err(text).contains("from 1 to 127"), "{text}: {}", err(text));
        }
        let check = |w: &[u8]| crate::rdata::validate(Rtype::NXT, w).map_err(|e| e.to_string());
        assert!(check(b"\x01n\x00\x40").is_ok());
        assert!(check(b"\x01n\x00\xC0").unwrap_err().contains("bit 0"));
        assert!(check(b"\x01n\x00\x40\x00").unwrap_err().contains("trailing zero"));
        let mut long = b"\x01n\x00".to_vec();
        long.extend_from_slice(&[0x40; 17]);
        assert!(check(&long).unwrap_err().contains("longer"));
        long.pop();
        assert!(check(&long).is_ok(), "16 bytes hold types up to 127");
        // The typed value drops types NXT cannot hold.
        let typed = crate::rdata::Rdata::Nxt(super::Nxt {
            next: "n.".parse().unwrap(),
            types: vec![Rtype::NXT, Rtype(0), Rtype::A, Rtype::CAA],
        });
        assert_eq!(typed.to_string(), "n. A NXT");
    }

    #[test]
    fn rfc4034_ds_example() {
        // RFC 4034 §5.4.
        let text = "60485 5 1 ( 2BB183AF5F22588179A53B0A9 8631FAD1A292118 )";
        let printed = "60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118";
        let wire = round_trip(Rtype::DS, text, printed);
        assert_eq!(&wire[..4], [0xec, 0x45, 5, 1]);
        round_trip(Rtype::CDS, printed, printed);
        round_trip(Rtype::DLV, printed, printed);
        // Digest length must fit the digest type; unknown types take any length.
        let o = None;
        assert!(crate::rdata::parse_str(Rtype::DS, "60485 5 1 2BB183", o).is_err());
        assert!(crate::rdata::parse_str(Rtype::DS, "60485 5 2 2BB183", o).is_err());
        round_trip(Rtype::DS, "60485 RSASHA1 99 2B", "60485 5 99 2B");
        assert!(crate::rdata::validate(Rtype::DS, &[0xec, 0x45, 5, 1, 0xAB]).is_err());
    }
}
