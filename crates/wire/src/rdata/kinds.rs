//! The common field kinds: numbers, names, character strings, addresses, and binary data
//! in hex or base64 up to the end of the RDATA. DNSSEC-specific kinds (type bitmaps,
//! signature times, algorithm mnemonics) live beside the types that use them.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::encoding;
use super::fields::{self, RdataReader};
use super::format::FieldKind;
use super::{bad, push_fmt};
use crate::error::{Error, Result};
use crate::name::{Dname, Name};
use crate::text::{parse_ttl, Lexer};
use crate::types::parse_decimal;

/// A `<character-string>` (RFC 1035 §3.3): at most 255 bytes. Also used for the other
/// one-byte-length fields (NSEC3 salt and hash, CAA tag).
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CharString(Vec<u8>);

impl CharString {
    /// Longest content.
    pub const MAX_LEN: usize = 255;

    /// Wraps `bytes`, failing if longer than 255 bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<CharString, &'static str> {
        let bytes = bytes.into();
        if bytes.len() > Self::MAX_LEN {
            return Err("character string longer than 255 bytes");
        }
        Ok(CharString(bytes))
    }

    /// The content.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The content, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// Length of the content.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends the length byte and the content.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.0.len() as u8); // at most 255 by construction
        out.extend_from_slice(&self.0);
    }
}

impl TryFrom<&[u8]> for CharString {
    type Error = &'static str;
    fn try_from(bytes: &[u8]) -> Result<Self, Self::Error> {
        CharString::new(bytes)
    }
}

impl TryFrom<&str> for CharString {
    type Error = &'static str;
    fn try_from(text: &str) -> Result<Self, Self::Error> {
        CharString::new(text.as_bytes())
    }
}

impl fmt::Debug for CharString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fields::write_char_string(&self.0, f)
    }
}

/// Defines an unsigned number kind of `$bytes` wire bytes read with `RdataReader::$read`.
macro_rules! number_kind {
    ($(#[$meta:meta])* $kind:ident, $ty:ty, $read:ident, $what:literal) => {
        $(#[$meta])*
        pub(crate) struct $kind;

        impl FieldKind for $kind {
            type Value = $ty;

            fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
                let v: $ty = lx.expect($what)?.number($what)?;
                out.extend_from_slice(&v.to_be_bytes());
                Ok(())
            }

            fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
                push_fmt(out, format_args!("{}", rd.$read()?));
                Ok(())
            }

            fn check(rd: &mut RdataReader<'_>) -> Result<()> {
                rd.$read().map(drop)
            }

            fn decode(rd: &mut RdataReader<'_>) -> Result<$ty> {
                rd.$read()
            }

            fn encode(value: &$ty, out: &mut Vec<u8>) {
                out.extend_from_slice(&value.to_be_bytes());
            }
        }
    };
}

number_kind!(
    /// An 8-bit decimal number.
    U8, u8, u8, "a number (0..255)"
);
number_kind!(
    /// A 16-bit decimal number.
    U16, u16, u16, "a number (0..65535)"
);
number_kind!(
    /// A 32-bit decimal number.
    U32, u32, u32, "a number (0..4294967295)"
);

/// A 32-bit duration: plain seconds (up to 2^32-1) or BIND-style units (`1h30m`). Used
/// for the SOA timers and the RRSIG original TTL; printed as plain seconds.
pub(crate) struct Duration;

impl Duration {
    /// Parses seconds or units.
    pub(crate) fn from_text(text: &[u8]) -> Option<u32> {
        match parse_decimal(text) {
            Some(v) => u32::try_from(v).ok(),
            None => parse_ttl(text),
        }
    }
}

impl FieldKind for Duration {
    type Value = u32;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a duration (seconds or 1w2d3h4m5s)")?;
        let v = Duration::from_text(token.text).ok_or_else(|| {
            token.error(format!(
                "expected a duration (seconds or 1w2d3h4m5s), found '{}'",
                token.display()
            ))
        })?;
        out.extend_from_slice(&v.to_be_bytes());
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        U32::print(rd, out)
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        U32::check(rd)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<u32> {
        U32::decode(rd)
    }

    fn encode(value: &u32, out: &mut Vec<u8>) {
        U32::encode(value, out);
    }
}

/// A domain name, uncompressed on the wire; relative names get the origin appended.
pub(crate) struct NameKind;

impl FieldKind for NameKind {
    type Value = Name;

    fn parse(lx: &mut Lexer<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        fields::next_name(lx, "a domain name", origin, out)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        push_fmt(out, format_args!("{}", rd.name()?));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.name().map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Name> {
        rd.name().map(Name::from_dname)
    }

    fn encode(value: &Name, out: &mut Vec<u8>) {
        out.extend_from_slice(value.as_wire());
    }
}

/// One `<character-string>`, quoted or not in presentation format; printed quoted.
pub(crate) struct CharStr;

impl FieldKind for CharStr {
    type Value = CharString;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        fields::parse_char_string(&lx.expect("a character string")?, out)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        // Writing into a String never fails.
        let _ = fields::write_char_string(rd.char_string()?, out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.char_string().map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<CharString> {
        Ok(CharString(rd.char_string()?.to_vec()))
    }

    fn encode(value: &CharString, out: &mut Vec<u8>) {
        value.encode(out);
    }
}

/// One or more `<character-string>`s up to the end of the RDATA (TXT, RFC 1035 §3.3.14).
pub(crate) struct CharStrs;

impl FieldKind for CharStrs {
    type Value = Vec<CharString>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        fields::parse_char_string(&lx.expect("a character string")?, out)?;
        while let Some(token) = lx.next_token()? {
            fields::parse_char_string(&token, out)?;
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        CharStr::print(rd, out)?;
        while !rd.is_empty() {
            out.push(' ');
            CharStr::print(rd, out)?;
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.char_string()?;
        while !rd.is_empty() {
            rd.char_string()?;
        }
        Ok(())
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<CharString>> {
        let mut strings = vec![CharStr::decode(rd)?];
        while !rd.is_empty() {
            strings.push(CharStr::decode(rd)?);
        }
        Ok(strings)
    }

    fn encode(value: &Vec<CharString>, out: &mut Vec<u8>) {
        for s in value {
            s.encode(out);
        }
    }
}

/// An IPv4 address in dotted-quad form.
pub(crate) struct Ipv4;

impl FieldKind for Ipv4 {
    type Value = Ipv4Addr;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        fields::next_ipv4(lx, out)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        push_fmt(out, format_args!("{}", Ipv4::decode(rd)?));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.bytes(4).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Ipv4Addr> {
        rd.array::<4>().map(Ipv4Addr::from)
    }

    fn encode(value: &Ipv4Addr, out: &mut Vec<u8>) {
        out.extend_from_slice(&value.octets());
    }
}

/// An IPv6 address in RFC 4291 §2.2 text form.
pub(crate) struct Ipv6;

impl FieldKind for Ipv6 {
    type Value = Ipv6Addr;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        fields::next_ipv6(lx, out)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        push_fmt(out, format_args!("{}", Ipv6::decode(rd)?));
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.bytes(16).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Ipv6Addr> {
        rd.array::<16>().map(Ipv6Addr::from)
    }

    fn encode(value: &Ipv6Addr, out: &mut Vec<u8>) {
        out.extend_from_slice(&value.octets());
    }
}

/// Checks that the rest of the RDATA is at least `min` bytes.
fn check_rest_len<'a>(rd: &mut RdataReader<'a>, min: usize) -> Result<&'a [u8]> {
    let at = rd.pos();
    let rest = rd.rest();
    if rest.len() < min {
        return Err(bad(at, "binary field shorter than its minimum length"));
    }
    Ok(rest)
}

/// Binary data up to the end of the RDATA, in base64 split over any number of tokens
/// (DNSKEY keys, RRSIG signatures, CERT, OPENPGPKEY, DHCID). May be empty: then there is
/// no token at all.
pub(crate) struct Base64;

impl FieldKind for Base64 {
    type Value = Vec<u8>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        encoding::parse_base64_tokens(lx, out).map(drop)
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        encoding::write_base64(rd.rest(), out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.rest();
        Ok(())
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<u8>> {
        Ok(rd.rest().to_vec())
    }

    fn encode(value: &Vec<u8>, out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
}

/// Binary data up to the end of the RDATA, in hex split over any number of tokens (DS
/// digests, TLSA, SSHFP), at least `MIN` bytes.
pub(crate) struct Hex<const MIN: usize>;

impl<const MIN: usize> FieldKind for Hex<MIN> {
    type Value = Vec<u8>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let len = encoding::parse_hex_tokens(lx, out)?;
        if len < MIN {
            return Err(lx.error_here(format!("expected at least {MIN} bytes of hex data")));
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        encoding::write_hex(check_rest_len(rd, MIN)?, out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        check_rest_len(rd, MIN).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<u8>> {
        check_rest_len(rd, MIN).map(<[u8]>::to_vec)
    }

    fn encode(value: &Vec<u8>, out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
}

/// Bytes up to the end of the RDATA written as one character string of any length
/// (CAA value, RFC 8659 §4.1.1; URI target, RFC 7553 §4.5). With `NONEMPTY`, at least
/// one byte. Printed quoted.
pub(crate) struct TextRest<const NONEMPTY: bool>;

impl<const NONEMPTY: bool> FieldKind for TextRest<NONEMPTY> {
    type Value = Vec<u8>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a character string")?;
        let len = fields::unescape_into(&token, out)?;
        if NONEMPTY && len == 0 {
            return Err(token.error("expected a non-empty string"));
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let data = check_rest_len(rd, usize::from(NONEMPTY))?;
        let _ = fields::write_char_string(data, out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        check_rest_len(rd, usize::from(NONEMPTY)).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<u8>> {
        check_rest_len(rd, usize::from(NONEMPTY)).map(<[u8]>::to_vec)
    }

    fn encode(value: &Vec<u8>, out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
}

/// A token that must match a fixed spelling pattern: used for error messages of the
/// small text formats below.
fn syntax_error(token: &crate::text::Token<'_>, what: &str) -> Error {
    token.error(format!("expected {what}, found '{}'", token.display()))
}

/// Reads `groups` groups of `digits` hex digits separated by `sep` (EUI-48
/// `00-00-5e-00-53-2a`, RFC 7043 §3.2; ILNP locators `2001:0db8:1140:1000`, RFC 6742
/// §2.3) and appends the bytes.
fn parse_grouped_hex(
    text: &[u8],
    groups: usize,
    digits: usize,
    sep: u8,
    out: &mut Vec<u8>,
) -> Result<(), &'static str> {
    if text.len() != groups * (digits + 1) - 1 {
        return Err("wrong length");
    }
    for (i, group) in text.split(|&c| c == sep).enumerate() {
        if i >= groups || group.len() != digits {
            return Err("wrong grouping");
        }
        encoding::decode_hex(group, out)?;
    }
    Ok(())
}

/// Writes bytes as groups of `bytes_per_group` bytes in lower-case hex separated by
/// `sep`.
fn write_grouped_hex(data: &[u8], bytes_per_group: usize, sep: char, out: &mut String) {
    for (i, group) in data.chunks(bytes_per_group).enumerate() {
        if i > 0 {
            out.push(sep);
        }
        encoding::write_hex_lower(group, out);
    }
}

/// An EUI-48 or EUI-64 address: `N` bytes as dash-separated hex pairs (RFC 7043 §3.2,
/// §4.2).
pub(crate) struct Eui<const N: usize>;

impl<const N: usize> FieldKind for Eui<N> {
    type Value = [u8; N];

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("an EUI address (xx-xx-…)")?;
        parse_grouped_hex(token.text, N, 2, b'-', out)
            .map_err(|_| syntax_error(&token, "an EUI address of hex pairs joined by '-'"))
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        write_grouped_hex(rd.bytes(N)?, 1, '-', out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.bytes(N).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<[u8; N]> {
        rd.array::<N>()
    }

    fn encode(value: &[u8; N], out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
}

/// A 64-bit ILNP value as four colon-separated groups of four hex digits (NID and L64,
/// RFC 6742 §2.1.2, §2.3.2).
pub(crate) struct Locator64;

impl FieldKind for Locator64 {
    type Value = u64;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let token = lx.expect("a 64-bit locator (xxxx:xxxx:xxxx:xxxx)")?;
        parse_grouped_hex(token.text, 4, 4, b':', out)
            .map_err(|_| syntax_error(&token, "a 64-bit locator (xxxx:xxxx:xxxx:xxxx)"))
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        write_grouped_hex(rd.bytes(8)?, 2, ':', out);
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        rd.bytes(8).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<u64> {
        rd.array::<8>().map(u64::from_be_bytes)
    }

    fn encode(value: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&value.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(Duration::from_text(b"4294967295"), Some(u32::MAX));
        assert_eq!(Duration::from_text(b"4294967296"), None);
        assert_eq!(Duration::from_text(b"1h30m"), Some(5400));
        assert_eq!(Duration::from_text(b"x"), None);
    }

    #[test]
    fn grouped_hex() {
        let mut out = Vec::new();
        parse_grouped_hex(b"00-00-5e-00-53-2A", 6, 2, b'-', &mut out).unwrap();
        assert_eq!(out, [0, 0, 0x5e, 0, 0x53, 0x2a]);
        assert!(parse_grouped_hex(b"00-00-5e-00-53", 6, 2, b'-', &mut out).is_err());
        assert!(parse_grouped_hex(b"00:00-5e-00-53-2a", 6, 2, b'-', &mut out).is_err());
        assert!(parse_grouped_hex(b"000-0-5e-00-53-2a", 6, 2, b'-', &mut out).is_err());
        let mut text = String::new();
        write_grouped_hex(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0xAB, 0xCD], 2, ':', &mut text);
        assert_eq!(text, "2001:0db8:0000:abcd");
    }

    #[test]
    fn char_string_limit() {
        assert!(CharString::new(vec![b'x'; 255]).is_ok());
        assert!(CharString::new(vec![b'x'; 256]).is_err());
        assert_eq!(format!("{:?}", CharString::try_from("a\"b").unwrap()), r#""a\"b""#);
    }
}
