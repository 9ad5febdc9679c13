//! Key pins: the SHA-256 digest of a certificate's SubjectPublicKeyInfo, written in
//! base64 — the "SPKI pin" of RFC 7858 §4.2 and RFC 9103 §9.3, and what Knot DNS calls a
//! `cert-key` (`kdig +tls-pin`, `knotc` print the same string). A pin names a key, not a
//! certificate: it survives the certificate's renewal with the same key.
//!
//! Only the few DER elements in front of the key are walked (X.509, RFC 5280 §4.1); the
//! certificate's signature and dates are the TLS library's business.

use std::fmt;

use tern_wire::rdata::days_from_civil;

/// A SHA-256 digest of a SubjectPublicKeyInfo.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pin(pub [u8; 32]);

impl Pin {
    /// The pin of the DER certificate `cert`; `None` when it is not one.
    pub fn of_certificate(cert: &[u8]) -> Option<Pin> {
        spki(cert).map(Pin::of_spki)
    }

    /// The pin of a DER SubjectPublicKeyInfo.
    pub fn of_spki(spki: &[u8]) -> Pin {
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, spki);
        let mut pin = [0u8; 32];
        pin.copy_from_slice(digest.as_ref());
        Pin(pin)
    }

    /// Reads a pin written in base64 (44 characters).
    pub fn parse(text: &str) -> Result<Pin, String> {
        let bytes = tern_wire::base64::decode(text.trim())
            .map_err(|e| format!("`{text}` is not a key pin: {e}"))?;
        let pin = <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
            format!("`{text}` is not a key pin: a SHA-256 digest of 32 bytes in base64 is expected")
        })?;
        Ok(Pin(pin))
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&tern_wire::base64::encode(&self.0))
    }
}

impl fmt::Debug for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pin({self})")
    }
}

/// One DER element at the start of `der`: its tag, its whole encoding and its contents.
fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let octets = usize::from(first & 0x7f);
        if octets == 0 || octets > 4 {
            return None; // indefinite lengths are not DER; 4 GiB is plenty
        }
        let (bytes, rest) = rest.split_at_checked(octets)?;
        (bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b)), rest)
    };
    let header = der.len() - rest.len();
    let contents = rest.get(..len)?;
    Some((tag, der.get(..header + len)?, contents))
}

const SEQUENCE: u8 = 0x30;

/// The element at `index` of a DER X.509 certificate's TBSCertificate, counted after
/// the explicit `[0]` version when there is one (0: serialNumber, 1: signature,
/// 2: issuer, 3: validity, 4: subject, 5: subjectPublicKeyInfo); its tag, whole encoding
/// and contents.
fn tbs_element(cert: &[u8], index: usize) -> Option<(u8, &[u8], &[u8])> {
    const VERSION: u8 = 0xa0;
    let (tag, _, certificate) = element(cert)?;
    let (tbs_tag, _, mut tbs) = element(certificate)?;
    if tag != SEQUENCE || tbs_tag != SEQUENCE {
        return None;
    }
    if let Some((VERSION, whole, _)) = element(tbs) {
        tbs = tbs.get(whole.len()..)?;
    }
    for _ in 0..index {
        let (_, whole, _) = element(tbs)?;
        tbs = tbs.get(whole.len()..)?;
    }
    element(tbs)
}

/// The SubjectPublicKeyInfo of a DER X.509 certificate.
fn spki(cert: &[u8]) -> Option<&[u8]> {
    let (tag, whole, _) = tbs_element(cert, 5)?;
    (tag == SEQUENCE).then_some(whole)
}

/// When the DER X.509 certificate `cert` stops being valid (its notAfter), in seconds
/// since the epoch.
pub fn not_after(cert: &[u8]) -> Option<i64> {
    let (tag, _, validity) = tbs_element(cert, 3)?;
    if tag != SEQUENCE {
        return None;
    }
    let (_, not_before, _) = element(validity)?;
    let (tag, _, time) = element(validity.get(not_before.len()..)?)?;
    seconds(tag, time)
}

/// A UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`)
/// in seconds since the epoch (RFC 5280 §4.1.2.5).
fn seconds(tag: u8, text: &[u8]) -> Option<i64> {
    const UTC_TIME: u8 = 0x17;
    const GENERALIZED_TIME: u8 = 0x18;
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = std::str::from_utf8(text.get(range)?).ok()?;
        part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse().ok())?
    };
    let (year, rest) = match (tag, text.len()) {
        (UTC_TIME, 13) => {
            let yy = digits(0..2)?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, 2)
        }
        (GENERALIZED_TIME, 15) => (digits(0..4)?, 4),
        _ => return None,
    };
    if text.last() != Some(&b'Z') {
        return None;
    }
    let field = |n: usize| digits(rest + 2 * n..rest + 2 * n + 2);
    let (month, day) = (field(0)?, field(1)?);
    let (hour, minute, second) = (field(2)?, field(3)?, field(4)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate made by `openssl req -x509 -newkey ec
    /// -pkeyopt ec_paramgen_curve:P-256`, and the pin `openssl x509 -pubkey | openssl
    /// pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` printed for it.
    const CERT: &str = include_str!("testdata/cert.pem");
    const CERT_PIN: &str = include_str!("testdata/cert.pin");

    fn der(pem: &str) -> Vec<u8> {
        use rustls_pki_types::pem::PemObject;
        rustls_pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).unwrap().to_vec()
    }

    #[test]
    fn the_pin_is_the_digest_openssl_prints() {
        let pin = Pin::of_certificate(&der(CERT)).unwrap();
        assert_eq!(pin.to_string(), CERT_PIN.trim());
        assert_eq!(Pin::parse(CERT_PIN).unwrap(), pin);
    }

    #[test]
    fn the_end_of_validity_is_the_date_openssl_prints() {
        // `openssl x509 -enddate -noout`, in seconds: `date -d ... +%s`.
        let expected: i64 = include_str!("testdata/cert.enddate").trim().parse().unwrap();
        assert_eq!(not_after(&der(CERT)), Some(expected));
        assert_eq!(seconds(0x17, b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(seconds(0x17, b"700101000000Z"), Some(0));
        assert_eq!(seconds(0x18, b"20380119031408Z"), Some(2_147_483_648));
        assert_eq!(seconds(0x17, b"701301000000Z"), None, "month 13");
        assert_eq!(seconds(0x17, b"7001010000Z"), None);
    }

    #[test]
    fn garbage_is_no_certificate_and_no_pin() {
        let cert = der(CERT);
        for cut in [0, 1, 2, 10, 100, cert.len() / 2] {
            assert!(Pin::of_certificate(cert.get(..cut).unwrap()).is_none(), "cut at {cut}");
        }
        assert!(Pin::of_certificate(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]).is_none());
        assert!(Pin::parse("Zm9v").unwrap_err().contains("32 bytes"));
        assert!(Pin::parse("not base64!").is_err());
    }
}
