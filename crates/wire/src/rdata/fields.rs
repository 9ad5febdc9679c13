//! Field codecs shared by the per-type RDATA modules: numbers, names, character strings
//! and addresses, between presentation tokens and wire bytes.

use std::fmt::{self, Write};

use crate::error::{Error, Result};
use crate::name::{parse_text_onto, Dname};
use crate::text::{Lexer, Token};

/// A bounds-checked reader over one RDATA (rustls-style: every read can fail, none panics).
#[derive(Debug, Clone)]
pub struct RdataReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> RdataReader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        RdataReader { data, pos: 0 }
    }

    /// Current offset from the start of the RDATA.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// True when everything has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let out = self
            .data
            .get(self.pos..self.pos + n)
            .ok_or(Error::Truncated { offset: self.data.len() })?;
        self.pos += n;
        Ok(out)
    }

    /// The whole RDATA, read or not.
    pub fn all(&self) -> &'a [u8] {
        self.data
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let b = self.bytes(N)?;
        Ok(b.try_into().unwrap_or([0; N]))
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        let out = self.data.get(self.pos..).unwrap_or(&[]);
        self.pos = self.data.len();
        out
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8> {
        let b = self.bytes(1)?;
        Ok(b.first().copied().unwrap_or(0))
    }

    /// A big-endian 16-bit number.
    pub fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes(b.try_into().unwrap_or([0; 2])))
    }

    /// A big-endian 32-bit number.
    pub fn u32(&mut self) -> Result<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_be_bytes(b.try_into().unwrap_or([0; 4])))
    }

    /// A big-endian 48-bit number (RRSIG/TSIG times).
    pub fn u48(&mut self) -> Result<u64> {
        let b = self.bytes(6)?;
        Ok(b.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
    }

    /// An uncompressed name.
    pub fn name(&mut self) -> Result<&'a Dname> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        let (name, len) = Dname::from_wire_prefix(rest).map_err(|e| e.shifted(self.pos))?;
        self.pos += len;
        Ok(name)
    }

    /// A `<character-string>` (length byte, then data).
    pub fn char_string(&mut self) -> Result<&'a [u8]> {
        let len = self.u8()?;
        self.bytes(usize::from(len))
    }

    /// Fails unless everything has been read.
    pub fn finish(&self) -> Result<()> {
        if self.pos < self.data.len() {
            return Err(Error::TrailingData { offset: self.pos });
        }
        Ok(())
    }
}

/// Reads a name token (relative to `origin`) and appends its wire form.
pub fn parse_name(token: &Token<'_>, origin: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
    parse_text_onto(token.text, origin, out)
        .map_err(|m| token.error(format!("bad name '{}': {m}", token.display())))
}

/// Reads the next token as a name.
pub fn next_name(
    lx: &mut Lexer<'_>,
    what: &str,
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let token = lx.expect(what)?;
    parse_name(&token, origin, out)
}

/// Reads the next token as a number of type `T` and appends it big-endian.
pub fn next_u8(lx: &mut Lexer<'_>, what: &str, out: &mut Vec<u8>) -> Result<u8> {
    let v: u8 = lx.expect(what)?.number(what)?;
    out.push(v);
    Ok(v)
}

/// Reads the next token as a 16-bit number and appends it big-endian.
pub fn next_u16(lx: &mut Lexer<'_>, what: &str, out: &mut Vec<u8>) -> Result<u16> {
    let v: u16 = lx.expect(what)?.number(what)?;
    out.extend_from_slice(&v.to_be_bytes());
    Ok(v)
}

/// Reads the next token as a 32-bit number and appends it big-endian.
pub fn next_u32(lx: &mut Lexer<'_>, what: &str, out: &mut Vec<u8>) -> Result<u32> {
    let v: u32 = lx.expect(what)?.number(what)?;
    out.extend_from_slice(&v.to_be_bytes());
    Ok(v)
}

/// Reads the next token as a TTL-like duration (seconds or `1h30m`) and appends it.
pub fn next_ttl(lx: &mut Lexer<'_>, what: &str, out: &mut Vec<u8>) -> Result<u32> {
    let token = lx.expect(what)?;
    let v = token.ttl()?;
    out.extend_from_slice(&v.to_be_bytes());
    Ok(v)
}

/// Unescapes a token's text (`\X`, `\DDD`) into `out`; returns the number of bytes added.
pub fn unescape_into(token: &Token<'_>, out: &mut Vec<u8>) -> Result<usize> {
    if !token.text.contains(&b'\\') {
        out.extend_from_slice(token.text);
        return Ok(token.text.len());
    }
    let start = out.len();
    let mut rest = token.text;
    while let Some((&c, tail)) = rest.split_first() {
        rest = tail;
        if c == b'\\' {
            let (byte, tail) = crate::name::parse_escape(rest).map_err(|m| token.error(m))?;
            rest = tail;
            out.push(byte);
        } else {
            out.push(c);
        }
    }
    Ok(out.len() - start)
}

/// Appends a token as a `<character-string>` (at most 255 bytes once unescaped).
pub fn parse_char_string(token: &Token<'_>, out: &mut Vec<u8>) -> Result<()> {
    let len_at = out.len();
    out.push(0);
    let len = unescape_into(token, out)?;
    let len = u8::try_from(len)
        .map_err(|_| token.error(format!("character string of {len} bytes is longer than 255")))?;
    if let Some(slot) = out.get_mut(len_at) {
        *slot = len;
    }
    Ok(())
}

/// Writes a `<character-string>`'s contents in quotes, escaping `"`, `\` and
/// non-printable bytes.
pub fn write_char_string(data: &[u8], out: &mut dyn Write) -> fmt::Result {
    out.write_char('"')?;
    for &b in data {
        match b {
            b'"' | b'\\' => {
                out.write_char('\\')?;
                out.write_char(char::from(b))?;
            }
            0x20..=0x7E => out.write_char(char::from(b))?,
            _ => write!(out, "\\{b:03}")?,
        }
    }
    out.write_char('"')
}

/// Reads the next token as an IPv4 address.
pub fn next_ipv4(lx: &mut Lexer<'_>, out: &mut Vec<u8>) -> Result<()> {
    let token = lx.expect("an IPv4 address")?;
    let octets = parse_ipv4(token.text).ok_or_else(|| {
        token.error(format!("expected an IPv4 address, found '{}'", token.display()))
    })?;
    out.extend_from_slice(&octets);
    Ok(())
}

/// Parses a dotted-quad IPv4 address: four decimal parts of at most three digits, each
/// up to 255, without leading zeros (which some parsers read as octal; `std` and
/// dnspython refuse them too).
pub fn parse_ipv4(text: &[u8]) -> Option<[u8; 4]> {
    let mut octets = [0u8; 4];
    let (mut part, mut value, mut digits) = (0usize, 0u32, 0u32);
    for &c in text {
        if c == b'.' {
            if digits == 0 {
                return None;
            }
            *octets.get_mut(part)? = value as u8; // at most 255, checked below
            part += 1;
            (value, digits) = (0, 0);
            continue;
        }
        let d = c.wrapping_sub(b'0');
        if d > 9 || (digits == 1 && value == 0) {
            return None; // not a digit, or a digit after a leading zero
        }
        value = value * 10 + u32::from(d);
        digits += 1;
        if value > 255 {
            return None;
        }
    }
    if digits == 0 || part != 3 {
        return None;
    }
    *octets.get_mut(3)? = value as u8;
    Some(octets)
}

/// Reads the next token as an IPv6 address.
pub fn next_ipv6(lx: &mut Lexer<'_>, out: &mut Vec<u8>) -> Result<()> {
    let token = lx.expect("an IPv6 address")?;
    let octets = parse_ipv6(token.text).ok_or_else(|| {
        token.error(format!("expected an IPv6 address, found '{}'", token.display()))
    })?;
    out.extend_from_slice(&octets);
    Ok(())
}

/// Parses an IPv6 address in RFC 4291 §2.2 text form: eight groups of one to four hex
/// digits, one `::` standing for one or more zero groups, and optionally a dotted IPv4
/// address as the last 32 bits. Accepts exactly what `std::net::Ipv6Addr` accepts
/// (tested against it), several times faster.
pub fn parse_ipv6(text: &[u8]) -> Option<[u8; 16]> {
    let gap = text.windows(2).position(|w| w == b"::");
    let mut head = [0u16; 8];
    let mut tail = [0u16; 8];
    let (head_len, tail_len) = match gap {
        None => (parse_groups(text, &mut head)?, 0),
        Some(i) => {
            let (before, after) = (text.get(..i)?, text.get(i + 2..)?);
            if before.contains(&b'.') {
                return None; // an IPv4 part may only end the address
            }
            (parse_groups(before, &mut head)?, parse_groups(after, &mut tail)?)
        }
    };
    let used = head_len + tail_len;
    if (gap.is_none() && used != 8) || (gap.is_some() && used > 7) {
        return None;
    }
    let mut groups = [0u16; 8];
    groups.get_mut(..head_len)?.copy_from_slice(head.get(..head_len)?);
    groups.get_mut(8 - tail_len..)?.copy_from_slice(tail.get(..tail_len)?);
    let mut octets = [0u8; 16];
    for (pair, group) in octets.chunks_exact_mut(2).zip(groups) {
        pair.copy_from_slice(&group.to_be_bytes());
    }
    Some(octets)
}

/// Parses `:`-separated hex groups (the last may be a dotted IPv4 address, worth two
/// groups) into `out`; returns how many groups were written. Empty text is no group.
fn parse_groups(text: &[u8], out: &mut [u16; 8]) -> Option<usize> {
    if text.is_empty() {
        return Some(0);
    }
    let mut count = 0usize;
    let mut parts = text.split(|&c| c == b':').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() && part.contains(&b'.') {
            let [a, b, c, d] = parse_ipv4(part)?;
            *out.get_mut(count)? = u16::from_be_bytes([a, b]);
            *out.get_mut(count + 1)? = u16::from_be_bytes([c, d]);
            return Some(count + 2);
        }
        if part.is_empty() || part.len() > 4 {
            return None;
        }
        let mut value = 0u16;
        for &c in part {
            value = value << 4 | u16::from(char::from(c).to_digit(16)? as u8);
        }
        *out.get_mut(count)? = value;
        count += 1;
    }
    Some(count)
}

/// Parses a token with `FromStr`, for values whose syntax std already knows.
pub fn parse_utf8<T: std::str::FromStr>(token: &Token<'_>, what: &str) -> Result<T> {
    std::str::from_utf8(token.text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| token.error(format!("expected {what}, found '{}'", token.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_text() {
        assert_eq!(parse_ipv4(b"192.0.2.1"), Some([192, 0, 2, 1]));
        assert_eq!(parse_ipv4(b"0.0.0.0"), Some([0; 4]));
        assert_eq!(parse_ipv4(b"255.255.255.255"), Some([255; 4]));
        for bad in [
            "192.0.2",
            "192.0.2.1.",
            "192.0.2.256",
            "01.2.3.4",
            "1..2.3",
            "1.2.3.4.5",
            "",
            "a.b.c.d",
            "1.2.3.1000",
            "+1.2.3.4",
            "1.2.3.-4",
        ] {
            assert_eq!(parse_ipv4(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn ipv6_text() {
        let parse = |s: &str| parse_ipv6(s.as_bytes()).map(std::net::Ipv6Addr::from);
        assert_eq!(parse("2001:db8::1"), Some("2001:db8::1".parse().unwrap()));
        assert_eq!(parse("::"), Some(std::net::Ipv6Addr::UNSPECIFIED));
        assert_eq!(parse("::ffff:192.0.2.1"), Some("::ffff:192.0.2.1".parse().unwrap()));
        assert_eq!(parse("1:2:3:4:5:6:7::"), Some("1:2:3:4:5:6:7:0".parse().unwrap()));
        assert_eq!(parse("1:2:3:4:5:6:192.0.2.1"), Some("1:2:3:4:5:6:c000:201".parse().unwrap()));
        for bad in [
            "",
            ":",
            ":::",
            "1:::2",
            "1::2::3",
            ":1::",
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9",
            "1:2:3:4:5:6:7:8::",
            "12345::",
            "g::",
            "1.2.3.4::",
            "::1.2.3",
            "::1.2.3.4:5",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(5_000))]

            #[test]
            fn ipv6_matches_std_on_printed(octets in any::<[u8; 16]>()) {
                let text = std::net::Ipv6Addr::from(octets).to_string();
                prop_assert_eq!(parse_ipv6(text.as_bytes()), Some(octets));
            }

            #[test]
            fn ipv6_matches_std_on_noise(text in "[0-9a-fA-F:.]{0,45}") {
                let std = text.parse::<std::net::Ipv6Addr>().ok().map(|a| a.octets());
                prop_assert_eq!(parse_ipv6(text.as_bytes()), std, "{}", text);
            }

            #[test]
            fn ipv6_matches_std_on_near_misses(
                parts in prop::collection::vec("[0-9a-fA-F]{0,5}|[0-9]{1,3}(\\.[0-9]{1,3}){3}", 1..10),
                seps in prop::collection::vec(prop_oneof![4 => Just(":"), 1 => Just("::")], 9),
            ) {
                let mut text = String::new();
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        text.push_str(seps[i - 1]);
                    }
                    text.push_str(part);
                }
                let std = text.parse::<std::net::Ipv6Addr>().ok().map(|a| a.octets());
                prop_assert_eq!(parse_ipv6(text.as_bytes()), std, "{}", text);
            }

            #[test]
            fn ipv4_matches_std(text in "[0-9.]{0,20}") {
                let std = text.parse::<std::net::Ipv4Addr>().ok().map(|a| a.octets());
                prop_assert_eq!(parse_ipv4(text.as_bytes()), std, "{}", text);
            }
        }
    }

    #[test]
    fn reader_bounds() {
        let mut rd = RdataReader::new(&[1, 2, 3]);
        assert_eq!(rd.u16().unwrap(), 0x0102);
        assert!(rd.u16().is_err());
        assert_eq!(rd.array::<1>().unwrap(), [3]);
        assert!(rd.finish().is_ok());
        assert!(RdataReader::new(&[1]).finish().is_err());
    }
}
