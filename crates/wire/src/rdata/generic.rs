//! The generic RDATA form of RFC 3597 §5: `\# <length> <hex>`.

use crate::error::Result;
use crate::text::Lexer;

/// Reads `<length> <hex...>` (after the `\#` token); the hex may be split into tokens.
pub(super) fn parse(lx: &mut Lexer<'_>, out: &mut Vec<u8>) -> Result<()> {
    let len_token = lx.expect("the RDATA length after \\#")?;
    let len: u16 = len_token.number("the RDATA length (0..65535)")?;
    let start = out.len();
    while let Some(token) = lx.next_token()? {
        decode_hex(token.text, out).map_err(|m| token.error(m))?;
    }
    let got = out.len() - start;
    if got != usize::from(len) {
        return Err(len_token.error(format!("\\# says {len} bytes but {got} bytes of hex follow")));
    }
    Ok(())
}

/// Appends the bytes of an even-length hex string.
pub(crate) fn decode_hex(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    if text.len() % 2 != 0 {
        return Err("hex digits must come in pairs");
    }
    for pair in text.chunks_exact(2) {
        let mut byte = 0u8;
        for &c in pair {
            let v = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return Err("expected hex digits"),
            };
            byte = byte << 4 | v;
        }
        out.push(byte);
    }
    Ok(())
}

/// Appends upper-case hex.
pub(crate) fn write_hex(data: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    for &b in data {
        for nibble in [b >> 4, b & 0x0F] {
            out.push(char::from(DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0')));
        }
    }
}

/// Writes `\# <length> <hex>`.
pub(super) fn write(data: &[u8], out: &mut String) {
    super::push_fmt(out, format_args!("\\# {}", data.len()));
    if !data.is_empty() {
        out.push(' ');
        write_hex(data, out);
    }
}
