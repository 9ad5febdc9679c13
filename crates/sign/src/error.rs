//! The one error type of the signer crate.

use std::fmt;

/// Everything that can go wrong while making keys or signing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An algorithm number this crate cannot sign with.
    UnsupportedAlgorithm(u8),
    /// Key bytes (PKCS#8) that do not hold a usable key of the algorithm asked for.
    KeyRejected {
        /// The algorithm the key was read for.
        algorithm: u8,
        /// Why the crypto library refused it.
        reason: &'static str,
    },
    /// The crypto library failed to generate, export or use a key.
    Crypto(&'static str),
    /// The set of keys cannot sign a zone (none for the DNSKEY RRset, none for the rest,
    /// an algorithm without both).
    Keys(&'static str),
    /// Inception and expiration that make no validity period, or a jitter window as long
    /// as the period.
    Validity(&'static str),
    /// The zone cannot be signed as it is (no SOA, a name too long for its NSEC3 owner).
    Zone(String),
    /// NSEC3 parameters that cannot be used (salt over 255 bytes).
    Nsec3(&'static str),
    /// Two names of the zone with the same NSEC3 hash (RFC 5155 §7.1: choose another
    /// salt).
    HashCollision(String),
    /// The signed records did not make a zone (the zone crate's error, as text).
    Build(String),
    /// A key and signing policy that cannot work.
    Policy(&'static str),
    /// A change the signer cannot take: DNSSEC records in an unsigned change, or one that
    /// does not apply to the zone it is made against (the zone crate's error, as text).
    Change(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnsupportedAlgorithm(n) => write!(f, "DNSSEC algorithm {n} is not supported"),
            Error::KeyRejected { algorithm, reason } => {
                write!(f, "key rejected for algorithm {algorithm}: {reason}")
            }
            Error::Crypto(what) => write!(f, "crypto failure: {what}"),
            Error::Keys(what) => write!(f, "unusable key set: {what}"),
            Error::Validity(what) => write!(f, "bad signature validity: {what}"),
            Error::Zone(what) => write!(f, "zone cannot be signed: {what}"),
            Error::Nsec3(what) => write!(f, "bad NSEC3 parameters: {what}"),
            Error::HashCollision(name) => {
                write!(f, "NSEC3 hash collision at {name}: choose another salt")
            }
            Error::Build(what) => write!(f, "signed zone refused: {what}"),
            Error::Policy(what) => write!(f, "unusable key and signing policy: {what}"),
            Error::Change(what) => write!(f, "change cannot be signed: {what}"),
        }
    }
}

impl std::error::Error for Error {}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
