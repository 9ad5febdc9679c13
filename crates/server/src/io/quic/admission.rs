//! What becomes of a new connection attempt, before any handshake work is spent on it:
//! asked to prove its address with a Retry packet (RFC 9000 §8.1), refused at a
//! connection cap, or accepted.
//!
//! A handshake costs the server a key exchange and a signature; an attempt costs the
//! client one datagram, from any address it likes. So once [`Handshakes`] in progress
//! reach the `retry-above` threshold, an attempt whose address is not validated yet gets
//! a Retry, which costs the server an HMAC and no state; only a client that receives it
//! at its address comes back with the token. Caps are applied to validated addresses
//! under a flood, so a spoofed flood cannot use up a real client's share.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Handshakes in progress now.
#[derive(Debug, Default)]
pub struct Handshakes(AtomicUsize);

/// One handshake in progress; the count goes down when it is dropped.
#[derive(Debug)]
pub struct Handshake(Arc<Handshakes>);

impl Handshakes {
    /// Counts a handshake starting.
    pub fn start(self: &Arc<Self>) -> Handshake {
        self.0.fetch_add(1, Relaxed);
        Handshake(Arc::clone(self))
    }

    /// Handshakes in progress.
    pub fn in_progress(&self) -> usize {
        self.0.load(Relaxed)
    }
}

impl Drop for Handshake {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Relaxed);
    }
}

/// What to do with a connection attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Answer with a Retry packet: the client must show it owns its address.
    Retry,
    /// Go on to the connection caps.
    Admit,
}

/// The verdict on an attempt whose address is `validated` or not, with `in_progress`
/// handshakes running and Retry required from `retry_above` of them on (0: always).
pub fn verdict(validated: bool, in_progress: usize, retry_above: usize) -> Verdict {
    if !validated && in_progress >= retry_above {
        Verdict::Retry
    } else {
        Verdict::Admit
    }
}

/// The address a client is known by in logs and caps.
pub fn client_ip(addr: std::net::SocketAddr) -> IpAddr {
    match addr.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_from_the_threshold_on_for_unvalidated_addresses_only() {
        assert_eq!(verdict(false, 0, 0), Verdict::Retry, "0: always");
        assert_eq!(verdict(false, 9, 10), Verdict::Admit);
        assert_eq!(verdict(false, 10, 10), Verdict::Retry);
        assert_eq!(verdict(true, 1000, 10), Verdict::Admit, "came back with a token");
    }

    #[test]
    fn handshakes_are_counted_while_they_last() {
        let handshakes = Arc::new(Handshakes::default());
        let first = handshakes.start();
        let second = handshakes.start();
        assert_eq!(handshakes.in_progress(), 2);
        drop(first);
        assert_eq!(handshakes.in_progress(), 1);
        drop(second);
        assert_eq!(handshakes.in_progress(), 0);
    }

    #[test]
    fn mapped_ipv4_clients_count_as_ipv4() {
        let mapped = "[::ffff:192.0.2.1]:5000".parse().unwrap();
        assert_eq!(client_ip(mapped), "192.0.2.1".parse::<IpAddr>().unwrap());
        let v6 = "[2001:db8::1]:5000".parse().unwrap();
        assert_eq!(client_ip(v6), "2001:db8::1".parse::<IpAddr>().unwrap());
    }
}
