//! Copying and comparing the short byte strings of a DNS message (names, labels, RDATA
//! fields) without a call to `memcpy` or `memcmp`: a copy of 4 to 32 bytes is two
//! overlapping word-sized moves (a compare, of 8 to 32), shorter ones a move per byte.
//! Longer ones go to the library, where the call pays off.
//!
//! Also the word-at-a-time ("SWAR") tests that find given bytes eight at a time: the
//! bytes are loaded as one little-endian `u64`, so byte `i` is bits `8i..8i + 8`, a test
//! leaves the high bit of each byte it finds, and `trailing_zeros() / 8` is the first.

/// Copies `src` into `dst`, which must be as long (otherwise nothing is copied and false
/// is returned).
#[inline(always)]
pub fn copy(dst: &mut [u8], src: &[u8]) -> bool {
    let n = src.len();
    if dst.len() != n {
        return false;
    }
    match n {
        0 => {}
        // The first, middle and last byte cover 1 to 3 (a loop would become a call).
        1..=3 => {
            for i in [0, n / 2, n - 1] {
                if let (Some(d), Some(s)) = (dst.get_mut(i), src.get(i)) {
                    *d = *s;
                }
            }
        }
        4..=7 => overlapping::<4>(dst, src),
        8..=16 => overlapping::<8>(dst, src),
        17..=32 => overlapping::<16>(dst, src),
        _ => dst.copy_from_slice(src),
    }
    true
}

/// Byte-wise equality of `a` and `b`.
#[inline(always)]
pub fn equal(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if b.len() != n {
        return false;
    }
    match n {
        8..=16 => same_ends::<8>(a, b),
        17..=32 => same_ends::<16>(a, b),
        _ => a == b,
    }
}

/// True when the first and the last `W` bytes, which cover `W..=2W` bytes, are equal.
#[inline(always)]
fn same_ends<const W: usize>(a: &[u8], b: &[u8]) -> bool {
    a.first_chunk::<W>() == b.first_chunk::<W>() && a.last_chunk::<W>() == b.last_chunk::<W>()
}

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_le_bytes([0x01; 8]);
/// The low seven bits of every byte of a word.
const LOWS: u64 = ONES * 0x7F;

/// `b` in every byte of a word: `word ^ splat(b)` has a zero byte where `word` has `b`.
#[inline(always)]
pub const fn splat(b: u8) -> u64 {
    ONES * b as u64
}

/// The high bit of exactly the bytes of `word` that are zero. Adding `0x7F` to a byte's
/// low seven bits carries into its high bit unless they are all zero, and never out of
/// the byte (so, unlike the shorter `(w - ONES) & !w`, no byte disturbs the next); or-ing
/// in the byte itself sets the high bit of bytes that had it. What stays clear is a zero.
#[inline(always)]
pub fn zero_bytes(word: u64) -> u64 {
    !((word & LOWS).wrapping_add(LOWS) | word) & !LOWS
}

/// The first and the last `W` bytes, which together cover `W..=2W` bytes.
#[inline(always)]
fn overlapping<const W: usize>(dst: &mut [u8], src: &[u8]) {
    if let (Some(head), Some(tail)) = (src.first_chunk::<W>(), src.last_chunk::<W>()) {
        let (head, tail) = (*head, *tail);
        if let Some(d) = dst.first_chunk_mut::<W>() {
            *d = head;
        }
        if let Some(d) = dst.last_chunk_mut::<W>() {
            *d = tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_copies_exactly() {
        let src: Vec<u8> = (1..=80).collect();
        for n in 0..=80 {
            let mut dst = vec![0xEE; n + 2];
            assert!(copy(&mut dst[1..=n], &src[..n]), "{n}");
            assert_eq!(&dst[1..=n], &src[..n], "{n}");
            assert_eq!((dst[0], dst[n + 1]), (0xEE, 0xEE), "{n}: wrote outside");
        }
    }

    #[test]
    fn zero_bytes_marks_exactly_the_zeros() {
        for zero_at in 0..8 {
            for filler in [0x01u8, 0x2E, 0x7F, 0x80, 0xFF] {
                let mut bytes = [filler; 8];
                bytes[zero_at] = 0;
                let found = zero_bytes(u64::from_le_bytes(bytes));
                assert_eq!(found, 0x80 << (8 * zero_at), "{zero_at} among {filler:#x}");
            }
        }
        let word = u64::from_le_bytes(*b"a.b.\\.cd");
        assert_eq!(zero_bytes(word ^ splat(b'.')), 0x0000_8000_8000_8000);
        assert_eq!(zero_bytes(u64::MAX), 0);
        assert_eq!(zero_bytes(0), !LOWS);
    }

    #[test]
    fn equal_sees_a_difference_in_any_byte() {
        let a: Vec<u8> = (1..=80).collect();
        for n in 0..=80 {
            assert!(equal(&a[..n], &a[..n]), "{n}");
            assert!(!equal(&a[..n], &a[..n.saturating_sub(1)]) || n == 0, "{n}: length");
            for i in 0..n {
                let mut b = a[..n].to_vec();
                b[i] ^= 0x20;
                assert!(!equal(&a[..n], &b), "{n}: byte {i}");
            }
        }
    }

    #[test]
    fn a_length_mismatch_copies_nothing() {
        let mut dst = [0u8; 10];
        assert!(!copy(&mut dst, &[1; 9]));
        assert_eq!(dst, [0; 10]);
    }
}
