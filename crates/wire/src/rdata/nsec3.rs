//! NSEC3 and NSEC3PARAM (RFC 5155 §3 and §4): hashed denial of existence.
//!
//! The salt is hex, or `-` when empty (§3.3); the next hashed owner name is base32hex
//! without padding (§3.3, RFC 4648 §7), 1 to 255 bytes.

use super::bad;
use super::bitmap::TypeBitmap;
use super::encoding;
use super::fields::RdataReader;
use super::format::{rdata_format, FieldKind};
use super::kinds::{CharStr, CharString, U16, U8};
use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::Rtype;

/// The NSEC3 salt: a length byte and up to 255 bytes; hex or `-` in text.
pub(crate) struct Salt;

impl FieldKind for Salt {
    type Value = CharString;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a salt in hex, or '-'")?;
        let len_at = out.len();
        out.push(0);
        if token.text != b"-" {
            encoding::decode_hex(token.text, out).map_err(|m| token.error(m))?;
        }
        let len = u8::try_from(out.len() - len_at - 1)
            .map_err(|_| token.error("salt longer than 255 bytes"))?;
        if let Some(slot) = out.get_mut(len_at) {
            *slot = len;
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        match rd.char_string()? {
            [] => out.push('-'),
            salt => encoding::write_hex_lower(salt, out),
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        CharStr::check(rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<CharString> {
        CharStr::decode(rd)
    }

    fn encode(value: &CharString, out: &mut Vec<u8>) {
        value.encode(out);
    }
}

/// The next hashed owner name: a length byte and 1 to 255 bytes; base32hex in text.
pub(crate) struct NextHashed;

impl NextHashed {
    fn read<'a>(rd: &mut RdataReader<'a>) -> Result<&'a [u8]> {
        let at = rd.pos();
        let hash = rd.char_string()?;
        if hash.is_empty() {
            return Err(bad(at, "empty NSEC3 next hashed owner name"));
        }
        Ok(hash)
    }
}

impl FieldKind for NextHashed {
    type Value = CharString;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("the next hashed owner name in base32hex")?;
        let len_at = out.len();
        out.push(0);
        encoding::decode_base32hex(token.text, out).map_err(|m| token.error(m))?;
        let len = out.len() - len_at - 1;
        let len = u8::try_from(len)
            .ok()
            .filter(|&l| l > 0)
            .ok_or_else(|| token.error("next hashed owner name must be 1 to 255 bytes"))?;
        if let Some(slot) = out.get_mut(len_at) {
            *slot = len;
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        encoding::write_base32hex(NextHashed::read(rd)?, out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        NextHashed::read(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<CharString> {
        CharString::new(NextHashed::read(rd)?).map_err(|m| bad(rd.pos(), m))
    }

    fn encode(value: &CharString, out: &mut Vec<u8>) {
        value.encode(out);
    }
}

rdata_format! {
    /// NSEC3 (RFC 5155 §3).
    Nsec3 {
        /// Hash algorithm (1 = SHA-1).
        algorithm: u8 as U8,
        /// Flags (bit 0 = opt-out).
        flags: u8 as U8,
        /// Additional hash iterations.
        iterations: u16 as U16,
        /// Salt, up to 255 bytes.
        salt: CharString as Salt,
        /// The next hashed owner name, raw hash bytes (1 to 255).
        next_hashed: CharString as NextHashed,
        /// Types present at the original owner name.
        types: Vec<Rtype> as TypeBitmap,
    }
}

rdata_format! {
    /// NSEC3PARAM (RFC 5155 §4).
    Nsec3param {
        /// Hash algorithm.
        algorithm: u8 as U8,
        /// Flags (zero in NSEC3PARAM).
        flags: u8 as U8,
        /// Additional hash iterations.
        iterations: u16 as U16,
        /// Salt, up to 255 bytes.
        salt: CharString as Salt,
    }
}

#[cfg(test)]
mod tests {
    use crate::rdata::tests::round_trip;
    use crate::rdata::{parse_str, validate};
    use crate::types::Rtype;

    #[test]
    fn rfc5155_appendix_a_records() {
        let wire = round_trip(Rtype::NSEC3PARAM, "1 0 12 aabbccdd", "1 0 12 aabbccdd");
        assert_eq!(wire, [1, 0, 0, 12, 4, 0xaa, 0xbb, 0xcc, 0xdd]);
        let text = "1 1 12 aabbccdd ( 2t7b4g4vsa5smi47k61mv5bv1a22bojr MX DNSKEY NS SOA NSEC3PARAM RRSIG )";
        let printed =
            "1 1 12 aabbccdd 2t7b4g4vsa5smi47k61mv5bv1a22bojr NS SOA MX RRSIG DNSKEY NSEC3PARAM";
        let wire = round_trip(Rtype::NSEC3, text, printed);
        assert_eq!(&wire[..9], [1, 1, 0, 12, 4, 0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(wire[9], 20, "SHA-1 hash length");
        assert_eq!(&wire[10..13], [0x17, 0x4e, 0xb2]);
        assert_eq!(&wire[30..], [0x00, 0x07, 0x22, 0x01, 0x00, 0x00, 0x00, 0x02, 0x90]);
        round_trip(
            Rtype::NSEC3,
            "1 1 12 aabbccdd b4um86eghhds6nea196smvmlo4ors995 NS DS RRSIG",
            "1 1 12 aabbccdd b4um86eghhds6nea196smvmlo4ors995 NS DS RRSIG",
        );
        // An empty non-terminal: no types at all.
        round_trip(
            Rtype::NSEC3,
            "1 1 12 aabbccdd 2vptu5timamqttgl4luu9kg21e0aor3s",
            "1 1 12 aabbccdd 2vptu5timamqttgl4luu9kg21e0aor3s",
        );
    }

    #[test]
    fn salt_and_hash_limits() {
        let wire = round_trip(Rtype::NSEC3PARAM, "1 0 0 -", "1 0 0 -");
        assert_eq!(wire, [1, 0, 0, 0, 0]);
        let long_salt = "ab".repeat(255);
        round_trip(Rtype::NSEC3PARAM, &format!("1 0 0 {long_salt}"), &format!("1 0 0 {long_salt}"));
        assert!(parse_str(Rtype::NSEC3PARAM, &format!("1 0 0 {long_salt}ab"), None).is_err());
        assert!(parse_str(Rtype::NSEC3PARAM, "1 0 0 abc", None).is_err());
        assert!(parse_str(Rtype::NSEC3, "1 0 0 - -", None).is_err());
        assert!(parse_str(Rtype::NSEC3, "1 0 0 - 2t7b4g4vsa5smi47k61mv5bv1a22bojr=", None).is_err());
        // Zero-length hash on the wire.
        assert!(validate(Rtype::NSEC3, &[1, 0, 0, 0, 0, 0]).is_err());
        assert!(validate(Rtype::NSEC3, &[1, 0, 0, 0, 0, 1, 0xff]).is_ok());
        // Salt length byte runs past the end.
        assert!(validate(Rtype::NSEC3PARAM, &[1, 0, 0, 0, 2, 0xff]).is_err());
    }
}
