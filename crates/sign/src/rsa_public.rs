//! An RSA public key in DNSKEY form (RFC 3110 §2), from the DER `RSAPublicKey` the crypto
//! library gives (RFC 8017 §A.1.1: a SEQUENCE of the modulus and the exponent).
//!
//! The DER reader knows only what that structure needs (SEQUENCE, INTEGER, short and
//! long lengths) and checks every length against the input.

use crate::error::{Error, Result};

/// DER tags read here.
const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;

/// The DNSKEY public key field for the DER `RSAPublicKey` `der`: the exponent's length
/// (one byte, or a zero byte and two when it is over 255 bytes), the exponent, the
/// modulus, both without leading zero bytes.
pub(crate) fn dnskey_form(der: &[u8]) -> Result<Vec<u8>> {
    let (body, rest) = element(der, SEQUENCE)?;
    if !rest.is_empty() {
        return Err(malformed());
    }
    let (modulus, rest) = element(body, INTEGER)?;
    let (exponent, rest) = element(rest, INTEGER)?;
    if !rest.is_empty() {
        return Err(malformed());
    }
    let (modulus, exponent) = (strip_zeros(modulus), strip_zeros(exponent));
    let mut out = Vec::with_capacity(3 + exponent.len() + modulus.len());
    match u8::try_from(exponent.len()) {
        Ok(len) if len > 0 => out.push(len),
        _ => {
            let len = u16::try_from(exponent.len()).map_err(|_| malformed())?;
            out.push(0);
            out.extend_from_slice(&len.to_be_bytes());
        }
    }
    out.extend_from_slice(exponent);
    out.extend_from_slice(modulus);
    Ok(out)
}

/// The modulus and exponent of a DNSKEY-form RSA key (for verification in tests and
/// tools): `None` when the lengths do not fit.
pub fn split_dnskey_form(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = key.split_first()?;
    let (len, rest) = if first == 0 {
        let (len, rest) = rest.split_at_checked(2)?;
        (usize::from(u16::from_be_bytes([*len.first()?, *len.get(1)?])), rest)
    } else {
        (usize::from(first), rest)
    };
    let (exponent, modulus) = rest.split_at_checked(len)?;
    Some((modulus, exponent))
}

/// Reads one element with tag `tag`: its contents and what follows it.
fn element(input: &[u8], tag: u8) -> Result<(&[u8], &[u8])> {
    let (&found, rest) = input.split_first().ok_or_else(malformed)?;
    if found != tag {
        return Err(malformed());
    }
    let (&first, mut rest) = rest.split_first().ok_or_else(malformed)?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let count = usize::from(first & 0x7F);
        if count == 0 || count > 4 {
            return Err(malformed());
        }
        let (bytes, after) = rest.split_at_checked(count).ok_or_else(malformed)?;
        rest = after;
        bytes.iter().fold(0usize, |acc, &b| acc << 8 | usize::from(b))
    };
    rest.split_at_checked(len).ok_or_else(malformed)
}

fn strip_zeros(mut bytes: &[u8]) -> &[u8] {
    while let [0, rest @ ..] = bytes {
        bytes = rest;
    }
    bytes
}

fn malformed() -> Error {
    Error::Crypto("the RSA public key is not the DER the crypto library should give")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_exponents() {
        // SEQUENCE { INTEGER 00 C1 C2, INTEGER 01 00 01 }
        let der = [0x30, 0x0A, 0x02, 0x03, 0x00, 0xC1, 0xC2, 0x02, 0x03, 0x01, 0x00, 0x01];
        let key = dnskey_form(&der).unwrap();
        assert_eq!(key, [3, 1, 0, 1, 0xC1, 0xC2]);
        assert_eq!(split_dnskey_form(&key), Some((&[0xC1, 0xC2][..], &[1, 0, 1][..])));
        // A 256-byte exponent takes the three-byte length form.
        let mut der = vec![0x30, 0x82, 0x01, 0x07, 0x02, 0x01, 0x07, 0x02, 0x82, 0x01, 0x00];
        der.extend(std::iter::repeat_n(0x11, 256));
        let key = dnskey_form(&der).unwrap();
        assert_eq!(&key[..3], [0, 1, 0]);
        assert_eq!(split_dnskey_form(&key).unwrap().0, [7]);
    }

    #[test]
    fn malformed_der_is_refused() {
        assert!(dnskey_form(&[]).is_err());
        assert!(dnskey_form(&[0x30, 0x05, 0x02, 0x01]).is_err());
        assert!(dnskey_form(&[0x31, 0x00]).is_err());
        assert!(dnskey_form(&[0x30, 0x03, 0x02, 0x01, 0x05]).is_err(), "no exponent");
        assert_eq!(split_dnskey_form(&[4, 1, 2]), None);
    }
}
