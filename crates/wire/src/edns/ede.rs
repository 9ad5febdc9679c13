//! Extended DNS Errors (RFC 8914): an INFO-CODE and optional UTF-8 EXTRA-TEXT.

use std::fmt;

/// An Extended DNS Error INFO-CODE (IANA "Extended DNS Error Codes").
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct EdeCode(pub u16);

/// Registered codes with their names (RFC 8914 §4 and later registrations).
const NAMES: [&str; 31] = [
    "Other Error",
    "Unsupported DNSKEY Algorithm",
    "Unsupported DS Digest Type",
    "Stale Answer",
    "Forged Answer",
    "DNSSEC Indeterminate",
    "DNSSEC Bogus",
    "Signature Expired",
    "Signature Not Yet Valid",
    "DNSKEY Missing",
    "RRSIGs Missing",
    "No Zone Key Bit Set",
    "NSEC Missing",
    "Cached Error",
    "Not Ready",
    "Blocked",
    "Censored",
    "Filtered",
    "Prohibited",
    "Stale NXDomain Answer",
    "Not Authoritative",
    "Not Supported",
    "No Reachable Authority",
    "Network Error",
    "Invalid Data",
    "Signature Expired before Valid",
    "Too Early",
    "Unsupported NSEC3 Iterations Value",
    "Unable to conform to policy",
    "Synthesized",
    "Invalid Query Type",
];

#[allow(missing_docs)]
impl EdeCode {
    pub const OTHER: EdeCode = EdeCode(0);
    pub const UNSUPPORTED_DNSKEY_ALGORITHM: EdeCode = EdeCode(1);
    pub const UNSUPPORTED_DS_DIGEST: EdeCode = EdeCode(2);
    pub const STALE_ANSWER: EdeCode = EdeCode(3);
    pub const FORGED_ANSWER: EdeCode = EdeCode(4);
    pub const DNSSEC_INDETERMINATE: EdeCode = EdeCode(5);
    pub const DNSSEC_BOGUS: EdeCode = EdeCode(6);
    pub const SIGNATURE_EXPIRED: EdeCode = EdeCode(7);
    pub const SIGNATURE_NOT_YET_VALID: EdeCode = EdeCode(8);
    pub const DNSKEY_MISSING: EdeCode = EdeCode(9);
    pub const RRSIGS_MISSING: EdeCode = EdeCode(10);
    pub const NO_ZONE_KEY_BIT: EdeCode = EdeCode(11);
    pub const NSEC_MISSING: EdeCode = EdeCode(12);
    pub const CACHED_ERROR: EdeCode = EdeCode(13);
    pub const NOT_READY: EdeCode = EdeCode(14);
    pub const BLOCKED: EdeCode = EdeCode(15);
    pub const CENSORED: EdeCode = EdeCode(16);
    pub const FILTERED: EdeCode = EdeCode(17);
    pub const PROHIBITED: EdeCode = EdeCode(18);
    pub const STALE_NXDOMAIN: EdeCode = EdeCode(19);
    pub const NOT_AUTHORITATIVE: EdeCode = EdeCode(20);
    pub const NOT_SUPPORTED: EdeCode = EdeCode(21);
    pub const NO_REACHABLE_AUTHORITY: EdeCode = EdeCode(22);
    pub const NETWORK_ERROR: EdeCode = EdeCode(23);
    pub const INVALID_DATA: EdeCode = EdeCode(24);
    pub const SIGNATURE_EXPIRED_BEFORE_VALID: EdeCode = EdeCode(25);
    pub const TOO_EARLY: EdeCode = EdeCode(26);
    pub const UNSUPPORTED_NSEC3_ITERATIONS: EdeCode = EdeCode(27);
    pub const UNABLE_TO_CONFORM_TO_POLICY: EdeCode = EdeCode(28);
    pub const SYNTHESIZED: EdeCode = EdeCode(29);
    pub const INVALID_QUERY_TYPE: EdeCode = EdeCode(30);

    /// The registered name, if any.
    pub fn name(self) -> Option<&'static str> {
        NAMES.get(usize::from(self.0)).copied()
    }
}

impl fmt::Display for EdeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Debug for EdeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A decoded Extended DNS Error option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtendedError<'a> {
    /// The INFO-CODE.
    pub code: EdeCode,
    /// EXTRA-TEXT as received: UTF-8 by RFC 8914 §2, not NUL-terminated; may be empty.
    pub text: &'a [u8],
}

impl<'a> ExtendedError<'a> {
    /// Decodes option data (at least the 2-byte INFO-CODE).
    pub fn parse(data: &'a [u8]) -> Result<ExtendedError<'a>, &'static str> {
        let ([a, b], text) =
            data.split_first_chunk::<2>().ok_or("extended error shorter than 2 bytes")?;
        Ok(ExtendedError { code: EdeCode(u16::from_be_bytes([*a, *b])), text })
    }

    /// EXTRA-TEXT as a string, if it is valid UTF-8 (RFC 8914 §2 says to ignore it
    /// otherwise).
    pub fn text_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_parse() {
        assert_eq!(EdeCode::BLOCKED.name(), Some("Blocked"));
        assert_eq!(EdeCode::INVALID_DATA.to_string(), "24 (Invalid Data)");
        assert_eq!(EdeCode::INVALID_QUERY_TYPE.name(), Some("Invalid Query Type"));
        assert_eq!(EdeCode(49152).to_string(), "49152");
        let e = ExtendedError::parse(b"\x00\x12no zone").unwrap();
        assert_eq!(e.code, EdeCode::PROHIBITED);
        assert_eq!(e.text_str(), Some("no zone"));
        assert!(ExtendedError::parse(b"\x00").is_err());
        assert_eq!(ExtendedError::parse(b"\x00\x00").unwrap().text, b"");
        assert_eq!(ExtendedError::parse(b"\x00\x00\xff").unwrap().text_str(), None);
    }
}
