//! DNS cookies (RFC 7873) and interoperable server cookies (RFC 9018).
//!
//! A COOKIE option holds an 8-byte client cookie, optionally followed by an 8..=32-byte
//! server cookie; any other length is malformed and answered with FORMERR (RFC 7873
//! §5.2.2). [`ServerSecret`] makes and checks server cookies in the RFC 9018 format so
//! that every server of an anycast set sharing the secret accepts the others' cookies:
//!
//! ```text
//! Version (1) = 1 | Reserved (3) = 0 | Timestamp (4) | Hash (8)
//! Hash = SipHash-2-4(key = secret, Client Cookie | Version | Reserved | Timestamp | Client-IP)
//! ```
//!
//! Time is an argument (seconds since the epoch, modulo 2^32), never read from a clock.

use std::hash::Hasher;
use std::net::IpAddr;

use siphasher::sip::SipHasher24;

/// Length of a client cookie (RFC 7873 §4).
pub const CLIENT_COOKIE_LEN: usize = 8;
/// Length of an RFC 9018 server cookie.
pub const SERVER_COOKIE_LEN: usize = 16;
/// Version of the RFC 9018 server cookie format.
const VERSION: u8 = 1;
/// A server cookie older than this is still valid but should be replaced (RFC 9018 §4.3).
const RENEW_AFTER: u32 = 1800;
/// A server cookie older than this is invalid (RFC 9018 §4.3).
const LIFETIME: u32 = 3600;
/// Allowed clock skew into the future (RFC 9018 §4.3).
const FUTURE_SKEW: u32 = 300;

/// A decoded COOKIE option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie<'a> {
    /// The client cookie.
    pub client: [u8; CLIENT_COOKIE_LEN],
    /// The server cookie (empty when the client has none yet).
    pub server: &'a [u8],
}

impl<'a> Cookie<'a> {
    /// Splits option data into client and server cookie (RFC 7873 §4, §5.2.2).
    pub fn parse(data: &'a [u8]) -> Result<Cookie<'a>, &'static str> {
        let (client, server) =
            data.split_first_chunk::<CLIENT_COOKIE_LEN>().ok_or("COOKIE shorter than 8 bytes")?;
        if !server.is_empty() && !(8..=32).contains(&server.len()) {
            return Err("server cookie is not 8 to 32 bytes long");
        }
        Ok(Cookie { client: *client, server })
    }
}

/// What a received server cookie is worth (RFC 7873 §5.2.3–§5.2.4, RFC 9018 §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieStatus {
    /// Made by this secret for this client, and fresh.
    Valid,
    /// Valid, but older than half an hour: answer with a new server cookie.
    ValidRenew,
    /// Not ours, for another client, expired or from the future.
    Invalid,
}

/// The secret shared by the servers that accept each other's cookies (RFC 9018 §5).
#[derive(Clone, Copy)]
pub struct ServerSecret {
    key: [u8; 16],
}

impl std::fmt::Debug for ServerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerSecret(..)")
    }
}

impl ServerSecret {
    /// A secret from 16 random bytes.
    pub fn new(key: [u8; 16]) -> ServerSecret {
        ServerSecret { key }
    }

    /// Makes a server cookie for `client` at `client_ip`, stamped `now`.
    pub fn make(&self, client: &[u8; 8], client_ip: IpAddr, now: u32) -> [u8; 16] {
        let [t0, t1, t2, t3] = now.to_be_bytes();
        let head = [VERSION, 0, 0, 0, t0, t1, t2, t3];
        let hash = self.hash(client, &head, client_ip);
        let mut cookie = [0u8; SERVER_COOKIE_LEN];
        let (first, second) = cookie.split_at_mut(8);
        first.copy_from_slice(&head);
        second.copy_from_slice(&hash);
        cookie
    }

    /// Checks a received cookie: the hash over the bytes as received (reserved bytes
    /// included), then the timestamp window with serial-number arithmetic (RFC 1982).
    pub fn check(&self, cookie: &Cookie<'_>, client_ip: IpAddr, now: u32) -> CookieStatus {
        let Some((head, hash)) = cookie.server.split_first_chunk::<8>() else {
            return CookieStatus::Invalid;
        };
        let [version, _, _, _, s0, s1, s2, s3] = *head;
        if version != VERSION || cookie.server.len() != SERVER_COOKIE_LEN {
            return CookieStatus::Invalid;
        }
        let expected = self.hash(&cookie.client, head, client_ip);
        if !crate::tsig::constant_time_eq(&expected, hash) {
            return CookieStatus::Invalid;
        }
        let stamp = u32::from_be_bytes([s0, s1, s2, s3]);
        let age = now.wrapping_sub(stamp);
        let ahead = stamp.wrapping_sub(now);
        if ahead != 0 && ahead <= FUTURE_SKEW {
            CookieStatus::Valid
        } else if age > LIFETIME {
            CookieStatus::Invalid
        } else if age >= RENEW_AFTER {
            CookieStatus::ValidRenew
        } else {
            CookieStatus::Valid
        }
    }

    /// The secret of rotation period `period` derived from `master`: SipHash-2-4 keyed by
    /// the master over a fixed label, the period number and the half wanted. Every server
    /// given the same master derives the same secret for the same period, so a cluster
    /// rotates in step without talking (RFC 9018 §5 asks servers of an anycast set to
    /// share the secret).
    pub fn derive(master: &[u8; 16], period: u64) -> ServerSecret {
        let half = |n: u8| {
            let mut h = SipHasher24::new_with_key(master);
            h.write(b"tern cookie secret");
            h.write(&period.to_be_bytes());
            h.write(&[n]);
            h.finish().to_le_bytes()
        };
        let mut key = [0u8; 16];
        let (first, second) = key.split_at_mut(8);
        first.copy_from_slice(&half(0));
        second.copy_from_slice(&half(1));
        ServerSecret { key }
    }

    fn hash(&self, client: &[u8; 8], head: &[u8; 8], client_ip: IpAddr) -> [u8; 8] {
        let mut h = SipHasher24::new_with_key(&self.key);
        h.write(client);
        h.write(head);
        match client_ip {
            IpAddr::V4(ip) => h.write(&ip.octets()),
            IpAddr::V6(ip) => h.write(&ip.octets()),
        }
        h.finish().to_le_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn secret(s: &str) -> ServerSecret {
        ServerSecret::new(hex(s).try_into().unwrap())
    }

    #[test]
    fn rfc7873_lengths() {
        for len in 0..=48 {
            let data = vec![7u8; len];
            let ok = len == 8 || (16..=40).contains(&len);
            assert_eq!(Cookie::parse(&data).is_ok(), ok, "length {len}");
        }
        let data = hex("2464c4abcf10c957");
        let c = Cookie::parse(&data).unwrap();
        assert_eq!(c.client, [0x24, 0x64, 0xc4, 0xab, 0xcf, 0x10, 0xc9, 0x57]);
        assert!(c.server.is_empty());
    }

    /// RFC 9018 Appendix A.1–A.4.
    #[test]
    fn rfc9018_vectors() {
        let s1 = secret("e5e973e5a6b2a43f48e7dc849e37bfcf");
        let ip1: IpAddr = "198.51.100.100".parse().unwrap();
        let c1: [u8; 8] = hex("2464c4abcf10c957").try_into().unwrap();
        assert_eq!(s1.make(&c1, ip1, 1559731985).to_vec(), hex("010000005cf79f111f8130c3eee29480"));
        assert_eq!(s1.make(&c1, ip1, 1559734385).to_vec(), hex("010000005cf7a871d4a564a1442aca77"));
        let ip3: IpAddr = "203.0.113.203".parse().unwrap();
        let c3: [u8; 8] = hex("fc93fc62807ddb86").try_into().unwrap();
        assert_eq!(s1.make(&c3, ip3, 1559734700).to_vec(), hex("010000005cf7a9acf73a7810aca2381e"));
        let s4 = secret("445536bcd2513298075a5d379663c962");
        let ip4: IpAddr = "2001:db8:220:1:59de:d0f4:8769:82b8".parse().unwrap();
        let c4: [u8; 8] = hex("22681ab97d52c298").try_into().unwrap();
        assert_eq!(s4.make(&c4, ip4, 1559741961).to_vec(), hex("010000005cf7c609a6bb79d16625507a"));
    }

    #[test]
    fn rfc9018_checks() {
        let s1 = secret("e5e973e5a6b2a43f48e7dc849e37bfcf");
        let ip3: IpAddr = "203.0.113.203".parse().unwrap();
        // A.3: a cookie with reserved bytes set by another implementation still verifies.
        let data = hex("fc93fc62807ddb8601abcdef5cf78f71a314227b6679ebf5");
        let cookie = Cookie::parse(&data).unwrap();
        assert_eq!(s1.check(&cookie, ip3, 0x5cf7_8f71), CookieStatus::Valid);
        let other_ip: IpAddr = "203.0.113.204".parse().unwrap();
        assert_eq!(s1.check(&cookie, other_ip, 0x5cf7_8f71), CookieStatus::Invalid);
        // A.4: the old secret's cookie, checked with the new secret, is not ours.
        let old = secret("dd3bdf9344b678b185a6f5cb60fca715");
        let new = secret("445536bcd2513298075a5d379663c962");
        let ip4: IpAddr = "2001:db8:220:1:59de:d0f4:8769:82b8".parse().unwrap();
        let data = hex("22681ab97d52c298010000005cf7c57926556bd0934c72f8");
        let cookie = Cookie::parse(&data).unwrap();
        assert_eq!(old.check(&cookie, ip4, 0x5cf7_c579), CookieStatus::Valid);
        assert_eq!(new.check(&cookie, ip4, 0x5cf7_c579), CookieStatus::Invalid);
    }

    #[test]
    fn derived_secrets_differ_by_period_and_master() {
        let master = [7u8; 16];
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let stamp = |s: &ServerSecret| s.make(&[1; 8], ip, 1000);
        let a = ServerSecret::derive(&master, 5);
        assert_eq!(stamp(&a), stamp(&ServerSecret::derive(&master, 5)), "deterministic");
        assert_ne!(stamp(&a), stamp(&ServerSecret::derive(&master, 6)));
        assert_ne!(stamp(&a), stamp(&ServerSecret::derive(&[8; 16], 5)));
        assert_ne!(stamp(&a), stamp(&ServerSecret::new(master)));
    }

    #[test]
    fn timestamp_window() {
        let s = ServerSecret::new([9; 16]);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let client = [1u8; 8];
        let status = |stamp: u32, now: u32| {
            let server = s.make(&client, ip, stamp);
            let mut data = client.to_vec();
            data.extend_from_slice(&server);
            s.check(&Cookie::parse(&data).unwrap(), ip, now)
        };
        let now = 1_559_731_985u32;
        assert_eq!(status(now, now), CookieStatus::Valid);
        assert_eq!(status(now - 1799, now), CookieStatus::Valid);
        assert_eq!(status(now - 1800, now), CookieStatus::ValidRenew);
        assert_eq!(status(now - 3600, now), CookieStatus::ValidRenew);
        assert_eq!(status(now - 3601, now), CookieStatus::Invalid);
        assert_eq!(status(now + 300, now), CookieStatus::Valid);
        assert_eq!(status(now + 301, now), CookieStatus::Invalid);
        // Across the 2^32 wrap: stamped just before, checked just after.
        assert_eq!(status(u32::MAX - 99, 1000), CookieStatus::Valid);
        assert_eq!(status(u32::MAX - 2599, 1000), CookieStatus::ValidRenew);
        // Wrong length or version.
        let mut data = client.to_vec();
        data.extend_from_slice(&[2u8; 16]);
        assert_eq!(s.check(&Cookie::parse(&data).unwrap(), ip, now), CookieStatus::Invalid);
    }
}
