//! Type bitmaps (RFC 4034 §4.1.2), used by NSEC, NSEC3 (RFC 5155 §3.2.1) and CSYNC
//! (RFC 7477 §2.1.1), and the flat bitmaps of the older WKS (RFC 1035 §3.4.2) and NXT
//! (RFC 2535 §5.2).
//!
//! On the wire: windows of (window number, bitmap length 1..=32, bitmap), in strictly
//! increasing window order, with no trailing zero octet in any bitmap. In presentation
//! format: the type mnemonics (or `TYPEnnn`) in any order, up to the end of the entry.
//! Type 0 is reserved and refused in both forms.
//!
//! A flat bitmap is one run of bytes where bit `n` (most significant bit first) stands
//! for number `n`: a port for WKS, a type for NXT. Encoders drop trailing zero bytes, and
//! so does Tern; one that ends in a zero byte is refused on the wire, as BIND does, so
//! that every set of numbers has one wire form.

use super::fields::RdataReader;
use super::format::FieldKind;
use super::{bad, push_fmt};
use crate::error::Result;
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::{parse_decimal, Rtype};

/// The type bitmap field kind: everything up to the end of the RDATA.
pub(crate) struct TypeBitmap;

/// Types collected from text before sorting; on the stack for the usual few.
struct TypeList {
    inline: [u16; 64],
    len: usize,
    spill: Vec<u16>,
}

impl TypeList {
    fn new() -> Self {
        TypeList { inline: [0; 64], len: 0, spill: Vec::new() }
    }

    fn push(&mut self, t: u16) {
        match self.inline.get_mut(self.len) {
            Some(slot) if self.spill.is_empty() => {
                *slot = t;
                self.len += 1;
            }
            _ => {
                if self.spill.is_empty() {
                    self.spill.extend_from_slice(&self.inline);
                }
                self.spill.push(t);
            }
        }
    }

    fn as_mut_slice(&mut self) -> &mut [u16] {
        if self.spill.is_empty() {
            self.inline.get_mut(..self.len).unwrap_or(&mut [])
        } else {
            &mut self.spill
        }
    }
}

/// Appends the windows for `types`, which must be sorted and free of duplicates.
fn write_windows(types: &[u16], out: &mut Vec<u8>) {
    let mut rest = types;
    while let Some(&first) = rest.first() {
        let window = (first >> 8) as u8;
        let count = rest.iter().take_while(|&&t| (t >> 8) as u8 == window).count();
        let (these, tail) = rest.split_at(count);
        rest = tail;
        let mut bits = [0u8; 32];
        let mut len = 0usize;
        for &t in these {
            let low = usize::from(t & 0xFF);
            if let Some(byte) = bits.get_mut(low / 8) {
                *byte |= 0x80 >> (low % 8);
            }
            len = low / 8 + 1;
        }
        out.push(window);
        out.push(len as u8); // 1..=32
        out.extend_from_slice(bits.get(..len).unwrap_or(&[]));
    }
}

/// Sorts, removes duplicates and writes.
fn write_types(types: &mut [u16], out: &mut Vec<u8>) {
    types.sort_unstable();
    let mut unique = 0usize;
    for i in 0..types.len() {
        let t = types.get(i).copied().unwrap_or(0);
        if unique == 0 || types.get(unique - 1) != Some(&t) {
            if let Some(slot) = types.get_mut(unique) {
                *slot = t;
            }
            unique += 1;
        }
    }
    write_windows(types.get(..unique).unwrap_or(&[]), out);
}

/// Walks the windows of a wire bitmap, checking the rules, and calls `each` for every
/// type present, in increasing order.
fn walk(rd: &mut RdataReader<'_>, mut each: impl FnMut(Rtype)) -> Result<()> {
    let mut last_window: Option<u8> = None;
    while !rd.is_empty() {
        let at = rd.pos();
        let window = rd.u8()?;
        if last_window.is_some_and(|w| window <= w) {
            return Err(bad(at, "type bitmap windows not in increasing order"));
        }
        last_window = Some(window);
        let len = usize::from(rd.u8()?);
        if !(1..=32).contains(&len) {
            return Err(bad(at + 1, "type bitmap length outside 1..=32"));
        }
        let bits = rd.bytes(len)?;
        if bits.last() == Some(&0) {
            return Err(bad(at + 1 + len, "type bitmap with a trailing zero octet"));
        }
        if window == 0 && bits.first().is_some_and(|b| b & 0x80 != 0) {
            return Err(bad(at + 2, "type bitmap lists the reserved type 0"));
        }
        for (i, &byte) in bits.iter().enumerate() {
            for bit in 0..8 {
                if byte & (0x80 >> bit) != 0 {
                    each(Rtype(u16::from(window) << 8 | (i * 8 + bit) as u16));
                }
            }
        }
    }
    Ok(())
}

impl FieldKind for TypeBitmap {
    type Value = Vec<Rtype>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let mut types = TypeList::new();
        while let Some(token) = lx.next_token()? {
            let t = Rtype::from_mnemonic(token.text).filter(|t| t.0 != 0).ok_or_else(|| {
                token.error(format!("expected a record type, found '{}'", token.display()))
            })?;
            types.push(t.0);
        }
        write_types(types.as_mut_slice(), out);
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let mut first = true;
        walk(rd, |t| {
            if !first {
                out.push(' ');
            }
            first = false;
            push_fmt(out, format_args!("{t}"));
        })
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        walk(rd, |_| {})
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<Rtype>> {
        let mut types = Vec::new();
        walk(rd, |t| types.push(t))?;
        Ok(types)
    }

    fn encode(value: &Vec<Rtype>, out: &mut Vec<u8>) {
        let mut types: Vec<u16> = value.iter().map(|t| t.0).filter(|&t| t != 0).collect();
        write_types(&mut types, out);
    }
}

/// Sets bit `n` of the flat bitmap that starts at `out[at]`, growing it as needed.
pub(crate) fn set_flat_bit(out: &mut Vec<u8>, at: usize, n: u16) {
    let index = at + usize::from(n / 8);
    if out.len() <= index {
        out.resize(index + 1, 0);
    }
    if let Some(byte) = out.get_mut(index) {
        *byte |= 0x80 >> (n % 8);
    }
}

/// Appends the flat bitmap of `values` (any order, repeats allowed).
pub(crate) fn write_flat(values: &[u16], out: &mut Vec<u8>) {
    let at = out.len();
    for &n in values {
        set_flat_bit(out, at, n);
    }
}

/// Reads a flat bitmap to the end of the RDATA: at most `max_len` bytes, no trailing
/// zero byte.
pub(crate) fn read_flat<'a>(rd: &mut RdataReader<'a>, max_len: usize) -> Result<&'a [u8]> {
    let at = rd.pos();
    let bits = rd.rest();
    if bits.len() > max_len {
        return Err(bad(at + max_len, "bitmap longer than its numbers allow"));
    }
    if bits.last() == Some(&0) {
        return Err(bad(at + bits.len() - 1, "bitmap with a trailing zero octet"));
    }
    Ok(bits)
}

/// Calls `each` with every number set in a flat bitmap, in increasing order.
pub(crate) fn flat_bits(bits: &[u8], mut each: impl FnMut(u16)) {
    for (i, &byte) in bits.iter().enumerate() {
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                each((i * 8 + bit) as u16); // at most 65535 bytes of bitmap: fits
            }
        }
    }
}

/// The NXT type bitmap (RFC 2535 §5.2): a flat bitmap of types 1 to 127, so at most 16
/// bytes. Bit 0 must be clear (set, it would announce a format that was never defined).
/// In text: type mnemonics, `TYPEnnn` or plain numbers (BIND prints types without a
/// mnemonic as plain numbers in NXT), in any order; printed as mnemonics or `TYPEnnn`.
pub(crate) struct NxtBitmap;

/// Largest type an NXT bitmap can hold.
const NXT_MAX_TYPE: u16 = 127;

impl NxtBitmap {
    fn read<'a>(rd: &mut RdataReader<'a>) -> Result<&'a [u8]> {
        let at = rd.pos();
        let bits = read_flat(rd, usize::from(NXT_MAX_TYPE / 8 + 1))?;
        if bits.first().is_some_and(|b| b & 0x80 != 0) {
            return Err(bad(at, "NXT bitmap with bit 0 set (not the RFC 2535 format)"));
        }
        Ok(bits)
    }
}

impl FieldKind for NxtBitmap {
    type Value = Vec<Rtype>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let at = out.len();
        while let Some(token) = lx.next_token()? {
            let t = parse_decimal(token.text)
                .and_then(|v| u16::try_from(v).ok())
                .map(Rtype)
                .or_else(|| Rtype::from_mnemonic(token.text))
                .filter(|t| (1..=NXT_MAX_TYPE).contains(&t.0))
                .ok_or_else(|| {
                    token.error(format!(
                        "expected a record type from 1 to 127 (all NXT can list), found '{}'",
                        token.display()
                    ))
                })?;
            set_flat_bit(out, at, t.0);
        }
        Ok(())
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let mut first = true;
        flat_bits(NxtBitmap::read(rd)?, |t| {
            if !first {
                out.push(' ');
            }
            first = false;
            push_fmt(out, format_args!("{}", Rtype(t)));
        });
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        NxtBitmap::read(rd).map(drop)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<Rtype>> {
        let mut types = Vec::new();
        flat_bits(NxtBitmap::read(rd)?, |t| types.push(Rtype(t)));
        Ok(types)
    }

    fn encode(value: &Vec<Rtype>, out: &mut Vec<u8>) {
        let at = out.len();
        for t in value.iter().filter(|t| (1..=NXT_MAX_TYPE).contains(&t.0)) {
            set_flat_bit(out, at, t.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        TypeBitmap::parse(&mut Lexer::for_fields(text.as_bytes()), None, &mut out).map(|()| out)
    }

    fn print(wire: &[u8]) -> Result<String> {
        let mut out = String::new();
        TypeBitmap::print(&mut RdataReader::new(wire), &mut out).map(|()| out)
    }

    #[test]
    fn rfc4034_section_4_3_example() {
        // "A MX RRSIG NSEC TYPE1234" from RFC 4034 §4.3.
        let wire = parse("A MX RRSIG NSEC TYPE1234").unwrap();
        let mut expected = vec![0x00, 0x06, 0x40, 0x01, 0x00, 0x00, 0x00, 0x03, 0x04, 0x1b];
        expected.extend_from_slice(&[0; 26]);
        expected.push(0x20); // type 1234 = 4 * 256 + 210: byte 26, bit 2
        assert_eq!(wire, expected);
        assert_eq!(print(&wire).unwrap(), "A MX RRSIG NSEC TYPE1234");
    }

    #[test]
    fn unsorted_duplicates_and_many_types() {
        assert_eq!(parse("NSEC A a NSEC").unwrap(), parse("A NSEC").unwrap());
        assert_eq!(parse("").unwrap(), b"");
        let many: Vec<String> = (1..200).rev().map(|t| format!("TYPE{t}")).collect();
        let wire = parse(&many.join(" ")).unwrap();
        let mut rd = RdataReader::new(&wire);
        assert_eq!(TypeBitmap::decode(&mut rd).unwrap().len(), 199);
    }

    #[test]
    fn wire_rules() {
        let rd = |w: &[u8]| TypeBitmap::check(&mut RdataReader::new(w));
        assert!(rd(&[0, 1, 0x40]).is_ok());
        assert!(rd(&[0, 1, 0x40, 0, 1, 0x40]).is_err(), "repeated window");
        assert!(rd(&[1, 1, 0x40, 0, 1, 0x40]).is_err(), "decreasing windows");
        assert!(rd(&[0, 0]).is_err(), "empty bitmap");
        assert!(rd(&[0, 33]).is_err(), "too long");
        assert!(rd(&[0, 2, 0x40, 0]).is_err(), "trailing zero");
        assert!(rd(&[0, 1, 0x80]).is_err(), "type 0");
        assert!(rd(&[0, 2, 0x40]).is_err(), "truncated");
        assert!(parse("TYPE0").is_err());
        assert!(parse("BOGUS").is_err());
    }
}
