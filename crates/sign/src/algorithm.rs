//! The DNSSEC signing algorithms this crate signs with (IANA "DNS Security Algorithm
//! Numbers"), and what each needs from the crypto library.

use crate::error::{Error, Result};

/// A DNSSEC algorithm Tern can sign with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// RSA/SHA-256 (8, RFC 5702), for existing deployments.
    RsaSha256,
    /// RSA/SHA-512 (10, RFC 5702), for existing deployments.
    RsaSha512,
    /// ECDSA P-256 with SHA-256 (13, RFC 6605): the default.
    #[default]
    EcdsaP256Sha256,
    /// ECDSA P-384 with SHA-384 (14, RFC 6605).
    EcdsaP384Sha384,
    /// Ed25519 (15, RFC 8080).
    Ed25519,
}

impl Algorithm {
    /// Every supported algorithm.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::RsaSha256,
        Algorithm::RsaSha512,
        Algorithm::EcdsaP256Sha256,
        Algorithm::EcdsaP384Sha384,
        Algorithm::Ed25519,
    ];

    /// The algorithm number in DNSKEY, RRSIG and DS records.
    pub fn number(self) -> u8 {
        match self {
            Algorithm::RsaSha256 => 8,
            Algorithm::RsaSha512 => 10,
            Algorithm::EcdsaP256Sha256 => 13,
            Algorithm::EcdsaP384Sha384 => 14,
            Algorithm::Ed25519 => 15,
        }
    }

    /// The algorithm with this number, if supported.
    pub fn from_number(number: u8) -> Result<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.number() == number)
            .ok_or(Error::UnsupportedAlgorithm(number))
    }

    /// The IANA mnemonic (`ECDSAP256SHA256`, …).
    pub fn mnemonic(self) -> &'static str {
        match self {
            Algorithm::RsaSha256 => "RSASHA256",
            Algorithm::RsaSha512 => "RSASHA512",
            Algorithm::EcdsaP256Sha256 => "ECDSAP256SHA256",
            Algorithm::EcdsaP384Sha384 => "ECDSAP384SHA384",
            Algorithm::Ed25519 => "ED25519",
        }
    }

    /// The algorithm with this mnemonic (any case) or number.
    pub fn from_mnemonic(text: &str) -> Result<Algorithm> {
        if let Ok(number) = text.parse::<u8>() {
            return Algorithm::from_number(number);
        }
        Algorithm::ALL
            .into_iter()
            .find(|a| a.mnemonic().eq_ignore_ascii_case(text))
            .ok_or(Error::UnsupportedAlgorithm(0))
    }

    /// True for the RSA algorithms (keys loaded or generated at 2048 bits or more).
    pub fn is_rsa(self) -> bool {
        matches!(self, Algorithm::RsaSha256 | Algorithm::RsaSha512)
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.mnemonic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_mnemonics_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_number(a.number()), Ok(a));
            assert_eq!(Algorithm::from_mnemonic(a.mnemonic()), Ok(a));
        }
        assert_eq!(Algorithm::from_mnemonic("ed25519"), Ok(Algorithm::Ed25519));
        assert_eq!(Algorithm::from_mnemonic("13"), Ok(Algorithm::EcdsaP256Sha256));
        assert_eq!(Algorithm::from_number(5), Err(Error::UnsupportedAlgorithm(5)));
        assert_eq!(Algorithm::default().number(), 13);
    }
}
