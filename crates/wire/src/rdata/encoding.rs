//! Binary-to-text encodings used in presentation format: hex (RFC 4648 §8), base64
//! (RFC 4648 §4) and base32hex without padding (RFC 4648 §7, as NSEC3 uses it, RFC 5155
//! §3.3).
//!
//! The decoders stream: a value split over several tokens (a DS digest, an RRSIG
//! signature across lines) is fed token by token straight into the wire buffer, with a
//! partial quantum carried from one token to the next. Nothing allocates. Base64 is
//! decoded eight characters at a time, and hex a pair at a time, through tables of
//! pre-shifted digit values, and base32hex a block of eight characters at a time; a
//! character-by-character path handles split quanta, padding, leftovers and errors.

use crate::error::Result;
use crate::text::Token;

/// Marks a byte that is not a digit in the lookup tables below.
const INVALID: u8 = 0xFF;

/// A table of digit values by byte for `alphabet` (digit value = position), upper- and
/// lower-case letters alike when `fold_case`; [`INVALID`] elsewhere.
// Evaluated at compile time only: an index out of bounds would fail the build.
#[allow(clippy::indexing_slicing)]
const fn digit_values(alphabet: &[u8], fold_case: bool) -> [u8; 256] {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < alphabet.len() {
        let c = alphabet[i];
        table[c as usize] = i as u8;
        if fold_case {
            table[c.to_ascii_uppercase() as usize] = i as u8;
            table[c.to_ascii_lowercase() as usize] = i as u8;
        }
        i += 1;
    }
    table
}

/// Hex digit values by byte.
static HEX_VALUES: [u8; 256] = digit_values(b"0123456789abcdef", true);

fn hex_value(c: u8) -> Result<u8, &'static str> {
    match HEX_VALUES.get(usize::from(c)).copied() {
        Some(v) if v != INVALID => Ok(v),
        _ => Err("expected hex digits"),
    }
}

/// Marks a byte that is not a hex digit in [`HEX_HIGH`] and [`HEX_LOW`]: above the 8 data
/// bits.
const NOT_HEX: u16 = 0x100;

/// Hex digit values by byte, shifted by `shift` bits; [`NOT_HEX`] for other bytes.
// Evaluated at compile time only: an index out of bounds would fail the build.
#[allow(clippy::indexing_slicing)]
const fn shifted_hex_values(shift: u32) -> [u16; 256] {
    let mut table = [NOT_HEX; 256];
    let mut c = 0;
    while c < 256 {
        if HEX_VALUES[c] != INVALID {
            table[c] = (HEX_VALUES[c] as u16) << shift;
        }
        c += 1;
    }
    table
}

/// Hex digit values for the first digit of a pair (the high nibble).
static HEX_HIGH: [u16; 256] = shifted_hex_values(4);
/// Hex digit values for the second digit of a pair.
static HEX_LOW: [u16; 256] = shifted_hex_values(0);

/// Characters decoded per batch by [`decode_hex_pairs`] before the bytes are appended.
const HEX_BATCH: usize = 64;

/// Appends the bytes of the leading pairs of `text` that are both hex digits; returns the
/// number of characters decoded (even).
fn decode_hex_pairs(text: &[u8], out: &mut Vec<u8>) -> usize {
    // Never `NOT_HEX` from `unwrap_or`: a byte always indexes a 256-entry table.
    let at = |table: &[u16; 256], c: u8| table.get(usize::from(c)).copied().unwrap_or(NOT_HEX);
    out.reserve(text.len() / 2);
    let mut decoded = 0;
    for batch in text.chunks(HEX_BATCH) {
        let mut buf = [0u8; HEX_BATCH / 2];
        let mut len = 0;
        for (pair, dst) in batch.chunks_exact(2).zip(buf.iter_mut()) {
            let [high, low] = *pair else { break };
            let v = at(&HEX_HIGH, high) | at(&HEX_LOW, low);
            if v & NOT_HEX != 0 {
                break;
            }
            *dst = v as u8;
            len += 1;
        }
        out.extend_from_slice(buf.get(..len).unwrap_or(&[]));
        decoded += 2 * len;
        if 2 * len < batch.len() {
            break;
        }
    }
    decoded
}

/// Decodes hex digits fed in pieces (pairs may be split between pieces).
#[derive(Debug, Default)]
pub(crate) struct HexDecoder {
    /// A high nibble waiting for its low half.
    pending: Option<u8>,
}

impl TokenDecoder for HexDecoder {
    /// Appends the bytes of `text`'s hex digits to `out`.
    fn feed(&mut self, text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
        let mut rest = text;
        if let Some(high) = self.pending {
            let Some((&c, tail)) = rest.split_first() else { return Ok(()) };
            out.push(high << 4 | hex_value(c)?);
            self.pending = None;
            rest = tail;
        }
        rest = rest.get(decode_hex_pairs(rest, out)..).unwrap_or(&[]);
        let mut pairs = rest.chunks_exact(2);
        for pair in &mut pairs {
            if let [high, low] = *pair {
                out.push(hex_value(high)? << 4 | hex_value(low)?);
            }
        }
        if let [c] = *pairs.remainder() {
            self.pending = Some(hex_value(c)?);
        }
        Ok(())
    }

    /// Fails if an odd number of digits was fed.
    fn finish(self) -> Result<(), &'static str> {
        match self.pending {
            Some(_) => Err("hex digits must come in pairs"),
            None => Ok(()),
        }
    }
}

/// Appends the bytes of an even-length hex string.
pub(crate) fn decode_hex(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    let mut decoder = HexDecoder::default();
    decoder.feed(text, out)?;
    decoder.finish()
}

/// Appends upper-case hex (the style of BIND and Knot DNS for digests).
pub(crate) fn write_hex(data: &[u8], out: &mut String) {
    write_hex_digits(data, b"0123456789ABCDEF", out);
}

/// Appends lower-case hex.
pub(crate) fn write_hex_lower(data: &[u8], out: &mut String) {
    write_hex_digits(data, b"0123456789abcdef", out);
}

fn write_hex_digits(data: &[u8], digits: &[u8; 16], out: &mut String) {
    for &b in data {
        for nibble in [b >> 4, b & 0x0F] {
            out.push(char::from(digits.get(usize::from(nibble)).copied().unwrap_or(b'0')));
        }
    }
}

/// Reads the rest of the entry as hex, split into any number of tokens; returns the
/// number of bytes appended.
pub(crate) fn parse_hex_tokens(
    lx: &mut crate::text::Lexer<'_>,
    out: &mut Vec<u8>,
) -> Result<usize> {
    parse_tokens(lx, out, HexDecoder::default())
}

/// A decoder fed token by token (hex or base64 split by white space).
trait TokenDecoder {
    fn feed(&mut self, text: &[u8], out: &mut Vec<u8>) -> core::result::Result<(), &'static str>;
    fn finish(self) -> core::result::Result<(), &'static str>;
}

/// Feeds every remaining token of the entry to `decoder`; errors point at the token (or,
/// for a dangling end, the last one).
fn parse_tokens(
    lx: &mut crate::text::Lexer<'_>,
    out: &mut Vec<u8>,
    mut decoder: impl TokenDecoder,
) -> Result<usize> {
    let start = out.len();
    let mut last: Option<Token<'_>> = None;
    while let Some(token) = lx.next_token()? {
        decoder.feed(token.text, out).map_err(|m| token.error(m))?;
        last = Some(token);
    }
    if let Err(m) = decoder.finish() {
        return Err(match last {
            Some(token) => token.error(m),
            None => lx.error_here(m),
        });
    }
    Ok(out.len() - start)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// `=` in [`BASE64_VALUES`].
const PAD: u8 = 0xFE;

/// Base64 digit values by byte; [`PAD`] for `=`, [`INVALID`] for the rest. Both
/// markers have the top bits set, which no digit value (0..64) has.
// Evaluated at compile time only: an index out of bounds would fail the build.
#[allow(clippy::indexing_slicing)]
static BASE64_VALUES: [u8; 256] = {
    let mut table = digit_values(BASE64, false);
    table[b'=' as usize] = PAD;
    table
};

fn base64_value(c: u8) -> u8 {
    BASE64_VALUES.get(usize::from(c)).copied().unwrap_or(INVALID)
}

/// Marks padding or a non-base64 byte in [`BASE64_SHIFTED`]: above the 24 data bits.
const NOT_DATA: u32 = 0xFF00_0000;

/// For each position in a quantum, the digit value of every byte shifted into place
/// (18, 12, 6 and 0 bits); [`NOT_DATA`] for padding and bytes outside the alphabet. Or-ing
/// the four entries of a quantum gives its 24 bits, or a value with top bits set.
// Evaluated at compile time only: an index out of bounds would fail the build.
#[allow(clippy::indexing_slicing)]
static BASE64_SHIFTED: [[u32; 256]; 4] = {
    let mut tables = [[NOT_DATA; 256]; 4];
    let mut c = 0;
    while c < 256 {
        let v = BASE64_VALUES[c];
        if v & 0xC0 == 0 {
            let mut pos = 0;
            while pos < 4 {
                tables[pos][c] = (v as u32) << (18 - 6 * pos);
                pos += 1;
            }
        }
        c += 1;
    }
    tables
};

/// The 24 bits of four data characters, or a value with bits of [`NOT_DATA`] set if one
/// is padding or not base64.
#[inline(always)]
fn decode_quantum_bits(quantum: [u8; 4]) -> u32 {
    let [t0, t1, t2, t3] = &BASE64_SHIFTED;
    // Never `NOT_DATA` from `unwrap_or`: a byte always indexes a 256-entry table.
    let at = |table: &[u32; 256], c: u8| table.get(usize::from(c)).copied().unwrap_or(NOT_DATA);
    let [a, b, c, d] = quantum;
    at(t0, a) | at(t1, b) | at(t2, c) | at(t3, d)
}

/// The 24 bits of four data characters; `None` if one is padding or not base64.
fn decode_quantum(quantum: [u8; 4]) -> Option<u32> {
    let bits = decode_quantum_bits(quantum);
    (bits & NOT_DATA == 0).then_some(bits)
}

/// Characters decoded per batch by [`decode_data_quanta`] before the bytes are appended.
const BATCH: usize = 64;

/// Appends the bytes of the leading whole quanta of `text` that hold only data characters
/// (no padding); returns the number of characters decoded (a multiple of 4).
fn decode_data_quanta(text: &[u8], out: &mut Vec<u8>) -> usize {
    out.reserve(text.len() / 4 * 3);
    let mut decoded = 0;
    for batch in text.chunks(BATCH) {
        // Two spare bytes: each pair of quanta is stored as 8 bytes, the last 2 zero.
        let mut buf = [0u8; BATCH / 4 * 3 + 2];
        let (chars, len) = decode_batch(batch, &mut buf);
        out.extend_from_slice(buf.get(..len).unwrap_or(&[]));
        decoded += chars;
        if chars < batch.len() {
            break;
        }
    }
    decoded
}

/// Decodes the leading data quanta of `batch` (at most [`BATCH`] characters) into `buf`;
/// returns the characters read and the bytes written.
fn decode_batch(batch: &[u8], buf: &mut [u8; BATCH / 4 * 3 + 2]) -> (usize, usize) {
    let mut len = 0;
    for pair in batch.chunks_exact(8) {
        let Ok([a, b, c, d, e, f, g, h]) = <[u8; 8]>::try_from(pair) else { break };
        let (x, y) = (decode_quantum_bits([a, b, c, d]), decode_quantum_bits([e, f, g, h]));
        if (x | y) & NOT_DATA != 0 {
            break;
        }
        let bytes = (u64::from(x) << 40 | u64::from(y) << 16).to_be_bytes();
        if let Some(dst) = buf.get_mut(len..len + 8) {
            dst.copy_from_slice(&bytes);
        }
        len += 6;
    }
    // One more quantum: the first of a pair whose second failed, or an odd last one.
    let rest = batch.get(len / 3 * 4..).unwrap_or(&[]);
    if let Some(bits) = rest.first_chunk::<4>().and_then(|q| decode_quantum(*q)) {
        let [_, b0, b1, b2] = bits.to_be_bytes();
        if let Some(dst) = buf.get_mut(len..len + 3) {
            dst.copy_from_slice(&[b0, b1, b2]);
        }
        len += 3;
    }
    (len / 3 * 4, len)
}

/// The bytes of a final padded quantum (`xx==` or `xxx=`, data characters before the
/// padding): 1 or 2 bytes in a 3-byte array, with the count; `None` for anything else.
fn decode_padded_quantum(quantum: &[u8]) -> Option<([u8; 3], usize)> {
    let (quantum, keep) = match *quantum {
        [a, b, b'=', b'='] => ([a, b, b'A', b'A'], 1),
        [a, b, c, b'='] => ([a, b, c, b'A'], 2),
        _ => return None,
    };
    let [_, b0, b1, b2] = decode_quantum(quantum)?.to_be_bytes();
    Some(([b0, b1, b2], keep))
}

/// Decodes base64 fed in pieces. Quanta may be split between pieces; `=` padding may only
/// end the data, and the data must end on a quantum boundary (RFC 4648 §4).
#[derive(Debug, Default)]
pub(crate) struct Base64Decoder {
    /// Bits collected for the current quantum.
    acc: u32,
    /// Characters of the current quantum seen so far (0..4), padding included.
    chars: u8,
    /// Padding characters seen in the current quantum.
    pad: u8,
    /// True once a padded quantum has been completed: nothing may follow.
    done: bool,
}

impl TokenDecoder for Base64Decoder {
    /// Appends the bytes encoded by `text`.
    fn feed(&mut self, text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
        let mut rest = text;
        // Complete a quantum begun in an earlier piece.
        while self.chars != 0 {
            let Some((&c, tail)) = rest.split_first() else { return Ok(()) };
            self.push_char(c, out)?;
            rest = tail;
        }
        if !self.done {
            // Whole quanta of data characters, then a padded final quantum.
            rest = rest.get(decode_data_quanta(rest, out)..).unwrap_or(&[]);
            if let Some((bytes, keep)) = decode_padded_quantum(rest) {
                out.extend_from_slice(bytes.get(..keep).unwrap_or(&[]));
                self.done = true;
                return Ok(());
            }
        }
        for &c in rest {
            self.push_char(c, out)?;
        }
        Ok(())
    }

    /// Fails unless the data ended on a quantum boundary.
    fn finish(self) -> Result<(), &'static str> {
        match self.chars {
            0 => Ok(()),
            _ => Err("base64 data does not end on a 4-character boundary"),
        }
    }
}

impl Base64Decoder {
    /// Adds one character, checking the padding rules.
    fn push_char(&mut self, c: u8, out: &mut Vec<u8>) -> Result<(), &'static str> {
        if self.done {
            return Err("base64 data after the padding");
        }
        match base64_value(c) {
            PAD if self.chars < 2 => return Err("misplaced base64 padding"),
            PAD => self.pad += 1,
            INVALID => return Err("expected base64 data"),
            _ if self.pad > 0 => return Err("base64 data after the padding"),
            v => self.acc |= u32::from(v) << (18 - 6 * u32::from(self.chars)),
        }
        self.chars += 1;
        if self.chars == 4 {
            self.flush(out);
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        let bytes = self.acc.to_be_bytes();
        let keep = 3 - usize::from(self.pad);
        out.extend_from_slice(bytes.get(1..1 + keep).unwrap_or(&[]));
        *self = Base64Decoder { done: self.pad > 0, ..Base64Decoder::default() };
    }
}

/// Reads the rest of the entry as base64 split into any number of tokens; returns the
/// number of bytes appended.
pub(crate) fn parse_base64_tokens(
    lx: &mut crate::text::Lexer<'_>,
    out: &mut Vec<u8>,
) -> Result<usize> {
    parse_tokens(lx, out, Base64Decoder::default())
}

/// Decodes one complete base64 string.
pub(crate) fn decode_base64(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    let mut decoder = Base64Decoder::default();
    decoder.feed(text, out)?;
    decoder.finish()
}

/// Appends base64 with padding.
pub(crate) fn write_base64(data: &[u8], out: &mut String) {
    let digit = |v: u32| char::from(BASE64.get((v & 63) as usize).copied().unwrap_or(b'A'));
    for chunk in data.chunks(3) {
        let mut bytes = [0u8; 4];
        for (dst, src) in bytes.iter_mut().skip(1).zip(chunk) {
            *dst = *src;
        }
        let acc = u32::from_be_bytes(bytes);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(digit(acc >> (18 - 6 * i)));
            } else {
                out.push('=');
            }
        }
    }
}

const BASE32HEX: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

/// Base32hex digit values by byte, either case.
static BASE32HEX_VALUES: [u8; 256] = digit_values(BASE32HEX, true);

/// Decodes unpadded base32hex (case-insensitive). Rejects padding, impossible lengths and
/// non-zero bits after the last byte, so every byte string has exactly one spelling.
pub(crate) fn decode_base32hex(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    if matches!(text.len() % 8, 1 | 3 | 6) {
        return Err("base32hex data of impossible length");
    }
    out.reserve(text.len() * 5 / 8);
    let rest = text.get(decode_base32hex_blocks(text, out)..).unwrap_or(&[]);
    decode_base32hex_chars(rest, out)
}

/// [`decode_base32hex`] a character at a time, from the start of a block: what the whole
/// blocks leave (a short last block), and where a bad character or bits are found.
fn decode_base32hex_chars(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &c in text {
        let v = match BASE32HEX_VALUES.get(usize::from(c)).copied() {
            Some(v) if v != INVALID => v,
            _ => return Err("expected base32hex digits (0-9, a-v) without padding"),
        };
        acc = acc << 5 | u64::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if acc != 0 {
        return Err("base32hex data with non-zero trailing bits");
    }
    Ok(())
}

/// Appends the bytes of the leading whole 8-character blocks of `text` that hold only
/// base32hex digits (5 bytes a block, no bits left over); returns the characters decoded.
fn decode_base32hex_blocks(text: &[u8], out: &mut Vec<u8>) -> usize {
    let mut decoded = 0;
    for block in text.chunks_exact(8) {
        let (mut acc, mut seen) = (0u64, 0u8);
        for &c in block {
            let v = BASE32HEX_VALUES.get(usize::from(c)).copied().unwrap_or(INVALID);
            seen |= v;
            acc = acc << 5 | u64::from(v & 31);
        }
        // Digit values are below 32; INVALID is not.
        if seen >= 32 {
            break;
        }
        out.extend_from_slice(acc.to_be_bytes().get(3..).unwrap_or(&[]));
        decoded += 8;
    }
    decoded
}

/// Appends lower-case base32hex without padding.
pub(crate) fn write_base32hex(data: &[u8], out: &mut String) {
    let digit = |v: u64| char::from(BASE32HEX.get((v & 31) as usize).copied().unwrap_or(b'0'));
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &b in data {
        acc = acc << 8 | u64::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(digit(acc >> bits));
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        out.push(digit(acc << (5 - bits)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> Result<Vec<u8>, &'static str> {
        let mut out = Vec::new();
        decode_base64(text.as_bytes(), &mut out).map(|()| out)
    }

    #[test]
    fn rfc4648_base64_vectors() {
        // RFC 4648 §10.
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(b64(encoded).unwrap(), plain.as_bytes(), "{encoded}");
            let mut out = String::new();
            write_base64(plain.as_bytes(), &mut out);
            assert_eq!(out, encoded);
        }
    }

    #[test]
    fn base64_split_and_errors() {
        let mut out = Vec::new();
        let mut d = Base64Decoder::default();
        d.feed(b"Zm9", &mut out).unwrap();
        d.feed(b"vYm", &mut out).unwrap();
        d.feed(b"E=", &mut out).unwrap();
        d.finish().unwrap();
        assert_eq!(out, b"fooba");
        assert!(b64("Zm9vY").is_err());
        assert!(b64("Zm9vYg").is_err());
        assert!(b64("Zg==Zg==").is_err());
        assert!(b64("Z===").is_err());
        assert!(b64("Zm=v").is_err());
        assert!(b64("Zm9v!").is_err());
    }

    /// Feeds `tokens` to a decoder, by whole tokens or one character at a time through
    /// the slow path only; an error comes with the index of the token it points at.
    fn feed_tokens(tokens: &[Vec<u8>], slow: bool) -> Result<Vec<u8>, (usize, &'static str)> {
        let mut out = Vec::new();
        let mut d = Base64Decoder::default();
        for (i, token) in tokens.iter().enumerate() {
            let fed = match slow {
                true => token.iter().try_for_each(|&c| d.push_char(c, &mut out)),
                false => d.feed(token, &mut out),
            };
            fed.map_err(|m| (i, m))?;
        }
        d.finish().map_err(|m| (tokens.len().saturating_sub(1), m))?;
        Ok(out)
    }

    /// Base64 text with a few padding and invalid characters, as split tokens.
    fn base64_tokens() -> impl proptest::strategy::Strategy<Value = Vec<Vec<u8>>> {
        use proptest::prelude::*;
        let data = proptest::sample::select(BASE64.to_vec());
        let odd = proptest::sample::select(b"==== !\x80\xFF\0-_.".to_vec());
        let c = prop_oneof![60 => data, 1 => odd];
        let token = proptest::collection::vec(c, 0..140);
        proptest::collection::vec(token, 0..4)
    }

    /// Base64 that is valid, or valid with one character replaced.
    fn mostly_valid_base64() -> impl proptest::strategy::Strategy<Value = Vec<Vec<u8>>> {
        use proptest::prelude::*;
        let bad = proptest::sample::select(b"=!A\n\xC0".to_vec());
        (proptest::collection::vec(any::<u8>(), 0..120), any::<usize>(), bad, any::<bool>())
            .prop_map(|(data, at, bad, spoil)| {
                let mut text = String::new();
                write_base64(&data, &mut text);
                let mut text = text.into_bytes();
                if spoil && !text.is_empty() {
                    let at = at % text.len();
                    text[at] = bad;
                }
                let split = (at / 7) % (text.len() + 1);
                let (a, b) = text.split_at(split);
                vec![a.to_vec(), b.to_vec()]
            })
    }

    /// Hex tokens decoded by a decoder, or one digit at a time by a plain reference; an
    /// error comes with the index of the token it points at.
    fn hex_tokens(tokens: &[Vec<u8>], reference: bool) -> Result<Vec<u8>, (usize, &'static str)> {
        let mut out = Vec::new();
        let mut d = HexDecoder::default();
        for (i, token) in tokens.iter().enumerate() {
            let fed = match reference {
                true => token.iter().try_for_each(|&c| {
                    let v = hex_value(c)?;
                    match d.pending.take() {
                        Some(high) => out.push(high << 4 | v),
                        None => d.pending = Some(v),
                    }
                    Ok(())
                }),
                false => d.feed(token, &mut out),
            };
            fed.map_err(|m| (i, m))?;
        }
        d.finish().map_err(|m| (tokens.len().saturating_sub(1), m))?;
        Ok(out)
    }

    /// Hex digits in both cases with a few other bytes, as split tokens.
    fn hex_text() -> impl proptest::strategy::Strategy<Value = Vec<Vec<u8>>> {
        use proptest::prelude::*;
        let digit = proptest::sample::select(b"0123456789abcdefABCDEF".to_vec());
        let odd = proptest::sample::select(b"gG/:@`\x00 \xFF".to_vec());
        let c = prop_oneof![200 => digit, 1 => odd];
        proptest::collection::vec(proptest::collection::vec(c, 0..150), 0..4)
    }

    /// The character-at-a-time base32hex decoder this module had before the block path
    /// (still its path for what the blocks leave).
    fn base32hex_reference(text: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
        if matches!(text.len() % 8, 1 | 3 | 6) {
            return Err("base32hex data of impossible length");
        }
        decode_base32hex_chars(text, out)
    }

    /// Base32hex digits in both cases with a few other bytes.
    fn base32hex_text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let digit = proptest::sample::select(
            b"0123456789abcdefghijklmnopqrstuvABCDEFGHIJKLMNOPQRSTUV".to_vec(),
        );
        let odd = proptest::sample::select(b"wWzZ=/:@`\x00 \xFF".to_vec());
        let c = prop_oneof![300 => digit, 1 => odd];
        proptest::collection::vec(c, 0..90)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]

        #[test]
        fn base64_fast_path_matches_char_by_char(tokens in base64_tokens()) {
            proptest::prop_assert_eq!(feed_tokens(&tokens, false), feed_tokens(&tokens, true));
        }

        #[test]
        fn base32hex_blocks_match_reference(text in base32hex_text()) {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            let fast = decode_base32hex(&text, &mut fast).map(|()| fast);
            let slow = base32hex_reference(&text, &mut slow).map(|()| slow);
            proptest::prop_assert_eq!(fast, slow);
        }

        #[test]
        fn hex_fast_path_matches_digit_by_digit(tokens in hex_text()) {
            proptest::prop_assert_eq!(hex_tokens(&tokens, false), hex_tokens(&tokens, true));
        }

        #[test]
        fn base64_fast_path_matches_on_near_valid(tokens in mostly_valid_base64()) {
            proptest::prop_assert_eq!(feed_tokens(&tokens, false), feed_tokens(&tokens, true));
        }
    }

    #[test]
    fn rfc4648_base32hex_vectors() {
        // RFC 4648 §10, padding removed, lower-cased.
        let vectors = [
            ("", ""),
            ("f", "co"),
            ("fo", "cpng"),
            ("foo", "cpnmu"),
            ("foob", "cpnmuog"),
            ("fooba", "cpnmuoj1"),
            ("foobar", "cpnmuoj1e8"),
        ];
        for (plain, encoded) in vectors {
            let mut out = Vec::new();
            decode_base32hex(encoded.to_uppercase().as_bytes(), &mut out).unwrap();
            assert_eq!(out, plain.as_bytes());
            let mut text = String::new();
            write_base32hex(plain.as_bytes(), &mut text);
            assert_eq!(text, encoded);
        }
        let mut out = Vec::new();
        assert!(decode_base32hex(b"cp", &mut out).is_err(), "non-zero trailing bits");
        assert!(decode_base32hex(b"c", &mut out).is_err(), "impossible length");
        assert!(decode_base32hex(b"co======", &mut out).is_err(), "padding");
        assert!(decode_base32hex(b"cw", &mut out).is_err(), "not base32hex");
    }

    #[test]
    fn hex_split_over_pieces() {
        let mut out = Vec::new();
        let mut d = HexDecoder::default();
        d.feed(b"a", &mut out).unwrap();
        d.feed(b"Bc", &mut out).unwrap();
        d.feed(b"D", &mut out).unwrap();
        d.finish().unwrap();
        assert_eq!(out, [0xAB, 0xCD]);
        assert!(decode_hex(b"abc", &mut out).is_err());
        assert!(decode_hex(b"zz", &mut out).is_err());
        let mut text = String::new();
        write_hex(&[0x00, 0xAB, 0x7F], &mut text);
        assert_eq!(text, "00AB7F");
    }
}
