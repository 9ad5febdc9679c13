//! ASCII case folding eight bytes at a time, for the hot paths that compare and hash
//! names (RFC 4343: DNS names compare without regard to ASCII case).

/// Lower-cases every ASCII upper-case letter among the eight bytes of `x`; other bytes
/// (length bytes, digits, non-ASCII) are unchanged.
#[inline]
pub fn fold8(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let low = x & LOW7;
    let ge_a = low + 0x3F3F_3F3F_3F3F_3F3F; // high bit set where the byte is >= 'A'
    let gt_z = low + 0x2525_2525_2525_2525; // high bit set where the byte is > 'Z'
    let upper = !x & ge_a & !gt_z & HIGH;
    x | (upper >> 2)
}

/// Up to eight bytes as a little-endian word, zero-padded.
#[inline]
pub fn load8(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    if let Some(word) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*word);
    }
    if len >= 4 {
        // Two overlapping 4-byte loads cover 4..=7 bytes.
        let lo = bytes.first_chunk::<4>().map_or(0, |w| u32::from_le_bytes(*w));
        let hi = bytes.last_chunk::<4>().map_or(0, |w| u32::from_le_bytes(*w));
        return u64::from(lo) | u64::from(hi) << (8 * (len - 4));
    }
    if len == 0 {
        return 0;
    }
    // First, middle and last byte cover 1..=3 bytes.
    let byte = |i: usize| u64::from(bytes.get(i).copied().unwrap_or(0)) << (8 * i);
    byte(0) | byte(len / 2) | byte(len - 1)
}

/// ASCII case-insensitive equality of two byte strings (names in wire form, labels).
#[inline]
pub fn eq_ignore_case(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut a_chunks = a.chunks_exact(8);
    let mut b_chunks = b.chunks_exact(8);
    for (x, y) in (&mut a_chunks).zip(&mut b_chunks) {
        if !eq8(load8(x), load8(y)) {
            return false;
        }
    }
    eq8(load8(a_chunks.remainder()), load8(b_chunks.remainder()))
}

/// Equality of two words ignoring ASCII case; the same spelling needs no folding.
#[inline]
pub fn eq8(x: u64, y: u64) -> bool {
    x == y || fold8(x) == fold8(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold8_matches_scalar_lowercase() {
        for b in 0u8..=255 {
            let word = u64::from_le_bytes([b, b'A', b'z', b'Z', b'@', b'[', 0xC1, b]);
            let expect: Vec<u8> = word.to_le_bytes().iter().map(u8::to_ascii_lowercase).collect();
            assert_eq!(fold8(word).to_le_bytes().to_vec(), expect, "byte {b}");
        }
    }

    #[test]
    fn load8_pads_with_zeros() {
        assert_eq!(load8(b""), 0);
        assert_eq!(load8(b"\x01\x02"), 0x0201);
        assert_eq!(load8(b"abcdefghij"), u64::from_le_bytes(*b"abcdefgh"));
        for len in 0..8 {
            let bytes = &b"\x11\x22\x33\x44\x55\x66\x77"[..len];
            let mut padded = [0u8; 8];
            padded[..len].copy_from_slice(bytes);
            assert_eq!(load8(bytes), u64::from_le_bytes(padded), "{len} bytes");
        }
    }

    #[test]
    fn equality_ignores_ascii_case_only() {
        for (a, b, eq) in [
            (&b""[..], &b""[..], true),
            (b"\x03WwW", b"\x03www", true),
            (b"\x03www", b"\x03wwx", false),
            (b"abcdefghIJKLMNOPq", b"ABCDEFGHijklmnopQ", true),
            (b"abcdefghIJKLMNOPq", b"ABCDEFGHijklmnopR", false),
            (b"abc", b"abcd", false),
            (b"\xC1", b"\xE1", false),
            (b"[", b"{", false),
        ] {
            assert_eq!(eq_ignore_case(a, b), eq, "{a:?} {b:?}");
            assert_eq!(a.eq_ignore_ascii_case(b), eq, "oracle {a:?} {b:?}");
        }
    }
}
