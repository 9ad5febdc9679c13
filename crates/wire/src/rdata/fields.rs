//! Field codecs shared by the per-type RDATA modules: numbers, names, character strings
//! and addresses, between presentation tokens and wire bytes.

use std::fmt::{self, Write};

use crate::error::{Error, Result};
use crate::name::{Dname, NameBuilder};
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
    let name = NameBuilder::parse_text(token.text, origin)
        .map_err(|m| token.error(format!("bad name '{}': {m}", token.display())))?;
    out.extend_from_slice(name.as_wire());
    Ok(())
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
    let addr: std::net::Ipv4Addr = parse_utf8(&token, "an IPv4 address")?;
    out.extend_from_slice(&addr.octets());
    Ok(())
}

/// Reads the next token as an IPv6 address.
pub fn next_ipv6(lx: &mut Lexer<'_>, out: &mut Vec<u8>) -> Result<()> {
    let token = lx.expect("an IPv6 address")?;
    let addr: std::net::Ipv6Addr = parse_utf8(&token, "an IPv6 address")?;
    out.extend_from_slice(&addr.octets());
    Ok(())
}

/// Parses a token with `FromStr`, for values whose syntax std already knows.
pub fn parse_utf8<T: std::str::FromStr>(token: &Token<'_>, what: &str) -> Result<T> {
    std::str::from_utf8(token.text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| token.error(format!("expected {what}, found '{}'", token.display())))
}
