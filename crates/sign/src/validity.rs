//! Signature validity: the inception and expiration every RRSIG carries (RFC 4034
//! §3.1.5, serial number arithmetic of RFC 1982), with a deterministic jitter that
//! spreads expirations over a window so that a signed zone's refreshes spread out too.
//!
//! The clock is not read here: the caller passes the times in.

use tern_wire::Dname;

use crate::error::{Error, Result};

/// Inception and expiration (seconds since the epoch, modulo 2^32), and the jitter
/// window that moves each owner's expiration earlier by up to `jitter` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    inception: u32,
    expiration: u32,
    jitter: u32,
    seed: u64,
}

impl Validity {
    /// Signatures valid from `inception` to `expiration`, which must be later (RFC 1982
    /// serial arithmetic, as RFC 4034 §3.1.5 compares them), without jitter.
    pub fn new(inception: u32, expiration: u32) -> Result<Validity> {
        let span = expiration.wrapping_sub(inception);
        if span == 0 || span >= 0x8000_0000 {
            return Err(Error::Validity("the expiration must come after the inception"));
        }
        Ok(Validity { inception, expiration, jitter: 0, seed: 0 })
    }

    /// The same, each owner's expiration moved earlier by a number of seconds in
    /// `0..=window` that `seed` and the owner name decide. The window must be shorter
    /// than the validity period.
    pub fn with_jitter(self, window: u32, seed: u64) -> Result<Validity> {
        if window >= self.expiration.wrapping_sub(self.inception) {
            return Err(Error::Validity("the jitter window must be shorter than the validity"));
        }
        Ok(Validity { jitter: window, seed, ..self })
    }

    /// The inception.
    pub fn inception(&self) -> u32 {
        self.inception
    }

    /// The latest expiration (an owner's is this or up to the jitter window earlier).
    pub fn expiration(&self) -> u32 {
        self.expiration
    }

    /// The jitter window.
    pub fn jitter(&self) -> u32 {
        self.jitter
    }

    /// The expiration of the signatures at `owner`.
    pub fn expiration_for(&self, owner: &Dname) -> u32 {
        self.expiration.wrapping_sub(jitter_offset(self.seed, owner, self.jitter))
    }
}

/// A number in `0..=window` from `seed` and `owner` (case-insensitive): the same for the
/// same inputs on every machine and run, spread evenly over the window. Not
/// cryptographic: FNV-1a over the seed and the lower-cased owner, then a 64-bit
/// finalizer (SplitMix64's) so that names that differ in one byte land far apart.
pub fn jitter_offset(seed: u64, owner: &Dname, window: u32) -> u32 {
    if window == 0 {
        return 0;
    }
    const PRIME: u64 = 0x0000_0100_0000_01B3;
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    let bytes = seed.to_le_bytes().into_iter();
    for byte in bytes.chain(owner.as_wire().iter().map(u8::to_ascii_lowercase)) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    hash ^= hash >> 31;
    (hash % (u64::from(window) + 1)) as u32 // below 2^32
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    #[test]
    fn periods_follow_serial_arithmetic() {
        assert!(Validity::new(100, 200).is_ok());
        assert!(Validity::new(200, 100).is_err());
        assert!(Validity::new(100, 100).is_err());
        assert!(Validity::new(u32::MAX - 10, 50).is_ok(), "wraps past 2^32");
        let v = Validity::new(0, 1000).unwrap();
        assert!(v.with_jitter(1000, 1).is_err());
        assert_eq!(v.with_jitter(999, 1).unwrap().jitter(), 999);
        assert_eq!(v.expiration_for(&name("a.example.")), 1000, "no jitter");
    }

    #[test]
    fn jitter_is_deterministic_and_spread() {
        let v = Validity::new(0, 100_000).unwrap().with_jitter(86_400, 7).unwrap();
        let a = v.expiration_for(&name("www.example."));
        assert_eq!(a, v.expiration_for(&name("WWW.Example.")), "case-insensitive");
        let other = Validity::new(0, 100_000).unwrap().with_jitter(86_400, 8).unwrap();
        let names: Vec<Name> = (0..1000).map(|i| name(&format!("n{i}.example."))).collect();
        let differ = names.iter().filter(|n| v.expiration_for(n) != other.expiration_for(n));
        assert!(differ.count() > 990, "another seed, other expirations");
        // Ten buckets over the window: each holds about a tenth of the names.
        let mut buckets = [0usize; 10];
        for n in &names {
            let offset = 100_000 - v.expiration_for(n);
            assert!(offset <= 86_400);
            buckets[(offset as usize * 10 / 86_401).min(9)] += 1;
        }
        assert!(buckets.iter().all(|&b| (60..=140).contains(&b)), "{buckets:?}");
    }
}
