//! Keys, certificates and fingerprints outside DNSSEC proper: SSHFP (RFC 4255), TLSA
//! (RFC 6698) and SMIMEA (RFC 8162), CERT (RFC 4398), OPENPGPKEY (RFC 7929) and DHCID
//! (RFC 4701).

use super::dnssec::Algorithm;
use super::fields::RdataReader;
use super::format::{rdata_format, FieldKind};
use super::kinds::{Base64, Hex, U16, U8};
use super::push_fmt;
use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;

rdata_format! {
    /// SSHFP (RFC 4255 §3.1).
    Sshfp {
        /// Key algorithm (1 RSA, 2 DSA, 3 ECDSA, 4 Ed25519).
        algorithm: u8 as U8,
        /// Fingerprint type (1 SHA-1, 2 SHA-256).
        fp_type: u8 as U8,
        /// The fingerprint, printed in hex.
        fingerprint: Vec<u8> as Hex<0>,
    }
}

rdata_format! {
    /// TLSA (RFC 6698 §2.1), also SMIMEA (RFC 8162 §2).
    Tlsa {
        /// Certificate usage (0..3).
        usage: u8 as U8,
        /// Selector (0 full certificate, 1 SubjectPublicKeyInfo).
        selector: u8 as U8,
        /// Matching type (0 exact, 1 SHA-256, 2 SHA-512).
        matching_type: u8 as U8,
        /// Certificate association data, printed in hex.
        data: Vec<u8> as Hex<0>,
    }
}

/// Certificate type mnemonics (RFC 4398 §2.1).
const CERT_TYPES: &[(&str, u16)] = &[
    ("PKIX", 1),
    ("SPKI", 2),
    ("PGP", 3),
    ("IPKIX", 4),
    ("ISPKI", 5),
    ("IPGP", 6),
    ("ACPKIX", 7),
    ("IACPKIX", 8),
    ("URI", 253),
    ("OID", 254),
];

/// The CERT type: mnemonic or decimal in text (RFC 4398 §2.2), printed as the mnemonic
/// when there is one.
pub(crate) struct CertType;

impl FieldKind for CertType {
    type Value = u16;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a certificate type")?;
        let named =
            CERT_TYPES.iter().find(|(name, _)| token.text.eq_ignore_ascii_case(name.as_bytes()));
        let value: u16 = match named {
            Some(&(_, v)) => v,
            None => token.number("a certificate type mnemonic or number")?,
        };
        out.extend_from_slice(&value.to_be_bytes());
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let value = rd.u16()?;
        match CERT_TYPES.iter().find(|&&(_, v)| v == value) {
            Some((name, _)) => out.push_str(name),
            None => push_fmt(out, format_args!("{value}")),
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        U16::check(rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<u16> {
        U16::decode(rd)
    }

    fn encode(value: &u16, out: &mut Vec<u8>) {
        U16::encode(value, out);
    }
}

rdata_format! {
    /// CERT (RFC 4398 §2).
    Cert {
        /// Certificate type.
        cert_type: u16 as CertType,
        /// Key tag of the related DNSKEY, or 0.
        key_tag: u16 as U16,
        /// DNSSEC algorithm number, or 0.
        algorithm: u8 as Algorithm,
        /// The certificate or CRL, printed in base64.
        certificate: Vec<u8> as Base64,
    }
}

rdata_format! {
    /// OPENPGPKEY (RFC 7929 §2).
    Openpgpkey {
        /// The transferable public key (RFC 4880 §11.1), printed in base64.
        public_key: Vec<u8> as Base64,
    }
}

rdata_format! {
    /// DHCID (RFC 4701 §3): identifier type, digest type and digest, printed as one
    /// base64 string.
    Dhcid {
        /// The whole RDATA.
        data: Vec<u8> as Base64,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::parse_str;
    use crate::rdata::tests::round_trip;
    use crate::types::Rtype;

    #[test]
    fn rfc4255_sshfp() {
        let wire = round_trip(
            Rtype::SSHFP,
            "2 1 123456789abcdef67890123456789abcdef67890",
            "2 1 123456789ABCDEF67890123456789ABCDEF67890",
        );
        assert_eq!(&wire[..4], [2, 1, 0x12, 0x34]);
        assert_eq!(wire.len(), 22);
    }

    #[test]
    fn rfc6698_tlsa_examples() {
        let wire = round_trip(
            Rtype::TLSA,
            "( 0 0 1 d2abde240d7cd3ee6b4b28c54df034b9\n 7983a1d16e8a410e4561cb106618e971 )",
            "0 0 1 D2ABDE240D7CD3EE6B4B28C54DF034B97983A1D16E8A410E4561CB106618E971",
        );
        assert_eq!(&wire[..4], [0, 0, 1, 0xd2]);
        assert_eq!(wire.len(), 35);
        let wire = round_trip(
            Rtype::TLSA,
            "( 1 1 2 92003ba34942dc74152e2f2c408d29ec a5a520e7f2e06bb944f4dca346baf63c 1b177615d466f6c4b71c216a50292bd5 8c9ebdd2f74e38fe51ffd48c43326cbc )",
            "1 1 2 92003BA34942DC74152E2F2C408D29ECA5A520E7F2E06BB944F4DCA346BAF63C1B177615D466F6C4B71C216A50292BD58C9EBDD2F74E38FE51FFD48C43326CBC",
        );
        assert_eq!(wire.len(), 3 + 64);
        // Hex may be split anywhere, even inside a byte.
        assert_eq!(
            parse_str(Rtype::SMIMEA, "3 0 0 308 20307", None).unwrap(),
            [3, 0, 0, 0x30, 0x82, 0x03, 0x07]
        );
        assert!(parse_str(Rtype::TLSA, "3 0 0 308", None).is_err());
    }

    #[test]
    fn rfc4398_cert() {
        let wire = round_trip(Rtype::CERT, "PGP 0 0 AQID", "PGP 0 0 AQID");
        assert_eq!(wire, [0, 3, 0, 0, 0, 1, 2, 3]);
        round_trip(Rtype::CERT, "1 12345 RSASHA256 AQID", "PKIX 12345 8 AQID");
        round_trip(Rtype::CERT, "65000 1 1 AQID", "65000 1 1 AQID");
        assert!(parse_str(Rtype::CERT, "BOGUS 1 1 AQID", None).is_err());
    }

    #[test]
    fn rfc4701_dhcid_examples() {
        // §3.6: the three examples (35 bytes each: type, digest type, SHA-256).
        for text in [
            "AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA=",
            "AAEBOSD+XR3Os/0LozeXVqcNc7FwCfQdWL3b/NaiUDlW2No=",
            "AAABxLmlskllE0MVjd57zHcWmEH3pCQ6VytcKD//7es/deY=",
        ] {
            let wire = round_trip(Rtype::DHCID, &format!("( {text} )"), text);
            assert_eq!(wire.len(), 35);
            assert_eq!(wire[2], 1, "SHA-256 digest type");
        }
    }

    #[test]
    fn rfc7929_openpgpkey() {
        let wire = round_trip(Rtype::OPENPGPKEY, "mQENBFV 6bw==", "mQENBFV6bw==");
        assert_eq!(wire, [0x99, 0x01, 0x0d, 0x04, 0x55, 0x7a, 0x6f]);
        assert!(parse_str(Rtype::OPENPGPKEY, "mQENBFV6bw=", None).is_err());
    }
}
