//! Records that locate services: SRV (RFC 2782), NAPTR (RFC 3403), URI (RFC 7553), CAA
//! (RFC 8659), which names the CAs allowed to issue for a domain, and DOA
//! (draft-durand-doa-over-dns), which locates digital objects.

use super::bad;
use super::encoding;
use super::fields::{self, RdataReader};
use super::format::{rdata_format, FieldKind};
use super::kinds::{Base64, CharStr, CharString, NameKind, TextRest, U16, U32, U8};
use crate::error::Result;
use crate::name::{Dname, Name};
use crate::text::Lexer;

rdata_format! {
    /// SRV (RFC 2782).
    Srv {
        /// Lower is tried first.
        priority: u16 as U16,
        /// Relative weight among equal priorities.
        weight: u16 as U16,
        /// Port of the service.
        port: u16 as U16,
        /// The host, `.` for "not available".
        target: Name as NameKind,
    }
}

rdata_format! {
    /// NAPTR (RFC 3403 §4.1).
    Naptr {
        /// Order of processing, lower first.
        order: u16 as U16,
        /// Preference among equal orders.
        preference: u16 as U16,
        /// Flags (`S`, `A`, `U`, `P`).
        flags: CharString as CharStr,
        /// Service parameters.
        services: CharString as CharStr,
        /// Substitution expression.
        regexp: CharString as CharStr,
        /// Replacement name, `.` when the regexp is used.
        replacement: Name as NameKind,
    }
}

rdata_format! {
    /// URI (RFC 7553 §4).
    Uri {
        /// Lower is tried first.
        priority: u16 as U16,
        /// Relative weight among equal priorities.
        weight: u16 as U16,
        /// The URI (RFC 3986), not empty; a quoted string in text.
        target: Vec<u8> as TextRest<true>,
    }
}

/// The CAA property tag (RFC 8659 §4.1): 1 to 255 ASCII letters and digits, unquoted.
pub(crate) struct CaaTag;

impl CaaTag {
    fn read<'a>(rd: &mut RdataReader<'a>) -> Result<&'a [u8]> {
        let at = rd.pos();
        let tag = rd.char_string()?;
        if tag.is_empty() || !tag.iter().all(u8::is_ascii_alphanumeric) {
            return Err(bad(at, "CAA tag must be 1 to 255 ASCII letters and digits"));
        }
        Ok(tag)
    }
}

impl FieldKind for CaaTag {
    type Value = CharString;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a CAA tag")?;
        let start = out.len();
        fields::parse_char_string(&token, out)?;
        if CaaTag::read(&mut RdataReader::new(out.get(start..).unwrap_or(&[]))).is_err() {
            return Err(token.error(format!(
                "CAA tag must be ASCII letters and digits, found '{}'",
                token.display()
            )));
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let tag = CaaTag::read(rd)?;
        out.extend(tag.iter().map(|&b| char::from(b)));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        CaaTag::read(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<CharString> {
        CharString::new(CaaTag::read(rd)?).map_err(|m| bad(rd.pos(), m))
    }

    fn encode(value: &CharString, out: &mut Vec<u8>) {
        value.encode(out);
    }
}

rdata_format! {
    /// CAA (RFC 8659 §4.1).
    Caa {
        /// Flags (bit 0 = issuer critical).
        flags: u8 as U8,
        /// Property tag (`issue`, `issuewild`, `iodef`, …).
        tag: CharString as CaaTag,
        /// Property value, up to the end of the RDATA; a quoted string in text.
        value: Vec<u8> as TextRest<false>,
    }
}

/// Binary data to the end of the RDATA in base64, written `-` when empty (DOA-DATA). A
/// token is required: the data or the dash.
pub(crate) struct Base64OrDash;

impl FieldKind for Base64OrDash {
    type Value = Vec<u8>;

    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        match lx.peek_token()? {
            Some(token) if token.text == b"-" && !token.quoted() => lx.expect("-").map(drop),
            Some(_) => Base64::parse(lx, origin, out),
            None => Err(lx.error_here("expected base64 data, or '-' for none")),
        }
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        match rd.rest() {
            [] => out.push('-'),
            data => encoding::write_base64(data, out),
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        Base64::check(rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<u8>> {
        Base64::decode(rd)
    }

    fn encode(value: &Vec<u8>, out: &mut Vec<u8>) {
        Base64::encode(value, out);
    }
}

rdata_format! {
    /// DOA (draft-durand-doa-over-dns): where to find a digital object and what it is.
    Doa {
        /// Private enterprise number of the body defining `doa_type` (0 for the IETF).
        enterprise: u32 as U32,
        /// The object's type, as defined by `enterprise`.
        doa_type: u32 as U32,
        /// Where the object is: 1 in `data`, 2 at the URI in `data`, 3 at the handle in
        /// `data`.
        location: u8 as U8,
        /// The object's media type (RFC 6838), possibly empty.
        media_type: CharString as CharStr,
        /// The object, or where to find it; base64 in text, `-` when empty.
        data: Vec<u8> as Base64OrDash,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::round_trip;
    use crate::rdata::{parse_str, validate};
    use crate::types::Rtype;

    #[test]
    fn rfc2782_srv() {
        let wire = round_trip(Rtype::SRV, "0 0 389 ldap.example.com.", "0 0 389 ldap.example.com.");
        assert_eq!(&wire[..6], [0, 0, 0, 0, 0x01, 0x85]);
        round_trip(Rtype::SRV, "65535 65535 65535 .", "65535 65535 65535 .");
    }

    #[test]
    fn rfc3403_naptr_examples() {
        // §6.2. The RFC writes `\.` and `\2` inside the quoted regexp; in a zone file
        // a literal backslash must itself be escaped (RFC 1035 §5.1: `\2!` is not a
        // valid escape, `\DDD` takes three digits; dnspython refuses it too).
        let wire = round_trip(
            Rtype::NAPTR,
            r#"100 10 "" "" "!^urn:cid:.+@([^\\.]+\\.)(.*)$!\\2!i" ."#,
            r#"100 10 "" "" "!^urn:cid:.+@([^\\.]+\\.)(.*)$!\\2!i" ."#,
        );
        assert_eq!(&wire[..6], [0, 100, 0, 10, 0, 0]);
        assert_eq!(&wire[6..40], b"\x21!^urn:cid:.+@([^\\.]+\\.)(.*)$!\\2!i");
        round_trip(
            Rtype::NAPTR,
            r#"100 50 "a" "z3950+N2L+N2C" "" cidserver.example.com."#,
            r#"100 50 "a" "z3950+N2L+N2C" "" cidserver.example.com."#,
        );
        round_trip(
            Rtype::NAPTR,
            r#"10 100 "u" "E2U+sip" "!^.*$!sip:information@foo.se!i" ."#,
            r#"10 100 "u" "E2U+sip" "!^.*$!sip:information@foo.se!i" ."#,
        );
    }

    #[test]
    fn rfc7553_uri() {
        let wire = round_trip(
            Rtype::URI,
            r#"10 1 "ftp://ftp1.example.com/public""#,
            r#"10 1 "ftp://ftp1.example.com/public""#,
        );
        assert_eq!(&wire[..4], [0, 10, 0, 1]);
        assert_eq!(&wire[4..], b"ftp://ftp1.example.com/public");
        assert!(parse_str(Rtype::URI, r#"10 1 """#, None).is_err());
        assert!(validate(Rtype::URI, &[0, 10, 0, 1]).is_err());
        // Longer than a character string is fine: the target runs to the end.
        let long = format!("\"{}\"", "x".repeat(300));
        round_trip(Rtype::URI, &format!("1 1 {long}"), &format!("1 1 {long}"));
    }

    #[test]
    fn doa() {
        // BIND's test record, and one with no data.
        let wire = round_trip(
            Rtype::DOA,
            r#"0 1 2 "" aHR0cHM6Ly93d3cuaXNjLm9yZy8="#,
            r#"0 1 2 "" aHR0cHM6Ly93d3cuaXNjLm9yZy8="#,
        );
        assert_eq!(&wire[..10], [0, 0, 0, 0, 0, 0, 0, 1, 2, 0]);
        assert_eq!(&wire[10..], b"https://www.isc.org/");
        let wire = round_trip(
            Rtype::DOA,
            "4294967295 4294967295 255 image/png -",
            r#"4294967295 4294967295 255 "image/png" -"#,
        );
        assert_eq!(&wire[9..], b"\x09image/png");
        round_trip(
            Rtype::DOA,
            r#"1 2 1 "text/plain" ( aGVs bG8= )"#,
            r#"1 2 1 "text/plain" aGVsbG8="#,
        );
        for text in [r#"0 1 2 """#, r#"0 1 2 "" - AQID"#, r#"0 1 2 "" "-""#, r#"0 1 256 "" -"#] {
            assert!(parse_str(Rtype::DOA, text, None).is_err(), "{text}");
        }
        assert!(validate(Rtype::DOA, &[0, 0, 0, 0, 0, 0, 0, 1, 2]).is_err(), "no media type");
    }

    #[test]
    fn rfc8659_caa_examples() {
        let wire =
            round_trip(Rtype::CAA, r#"0 issue "ca1.example.net""#, r#"0 issue "ca1.example.net""#);
        assert_eq!(wire, b"\x00\x05issueca1.example.net");
        round_trip(
            Rtype::CAA,
            r#"0 iodef "mailto:security@example.com""#,
            r#"0 iodef "mailto:security@example.com""#,
        );
        round_trip(
            Rtype::CAA,
            r#"0 issue "ca1.example.net; account=230123""#,
            r#"0 issue "ca1.example.net; account=230123""#,
        );
        round_trip(Rtype::CAA, r#"0 issue ";""#, r#"0 issue ";""#);
        round_trip(Rtype::CAA, r#"128 tbs "Unknown""#, r#"128 tbs "Unknown""#);
        round_trip(Rtype::CAA, r#"0 issue """#, r#"0 issue """#);
        round_trip(Rtype::CAA, "0 issue unquoted", r#"0 issue "unquoted""#);
        assert!(parse_str(Rtype::CAA, r#"0 "is-sue" "x""#, None).is_err());
        assert!(parse_str(Rtype::CAA, r#"0 "" "x""#, None).is_err());
        assert!(validate(Rtype::CAA, b"\x00\x00").is_err());
        assert!(validate(Rtype::CAA, b"\x00\x02a.").is_err());
    }
}
