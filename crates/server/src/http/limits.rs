//! The HTTP server's connection caps: all clients together (`[http] max-connections`)
//! and per client (`max-connections-per-client`; a client is an IPv4 address or an IPv6
//! /64, as for DNS over TCP). A connection over either cap is closed as soon as it is
//! accepted, so it holds no descriptor: one client opening connections in a loop cannot
//! take the process's file descriptors from DNS over TCP, nor keep `/metrics` and the
//! API from other clients.
//!
//! Unlike DNS over TCP ([`crate::io::tcp::limits`]) nothing is evicted: HTTP clients are
//! few (scrapers and scripts), and a connection that sends nothing is closed by the
//! header timeout anyway. The counts are kept under a mutex taken when a connection
//! opens and closes, never per request. A reload changes the caps ([`ConnectionLimits::set_caps`]):
//! connections open over a lowered cap are kept, and new ones refused until below it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The caps and the connections open.
#[derive(Debug)]
pub struct ConnectionLimits {
    max_total: AtomicUsize,
    max_per_client: AtomicUsize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_client: HashMap<IpAddr, usize>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its client has `max-connections-per-client` open.
    Client,
    /// `max-connections` are open.
    Total,
}

impl Refusal {
    /// The reason, for the log.
    pub fn why(self) -> &'static str {
        match self {
            Refusal::Client => "the client has max-connections-per-client open",
            Refusal::Total => "max-connections are open",
        }
    }
}

/// An admitted connection's place; given back when dropped.
#[derive(Debug)]
pub struct Permit {
    limits: Arc<ConnectionLimits>,
    client: IpAddr,
}

/// The key a client is counted under: its IPv4 address, or its IPv6 /64 (one site
/// commonly holds a whole /64).
fn client_key(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V4(_) => client,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    }
}

impl ConnectionLimits {
    /// Caps of `max_total` connections, `max_per_client` from each client.
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<ConnectionLimits> {
        Arc::new(ConnectionLimits {
            max_total: AtomicUsize::new(max_total),
            max_per_client: AtomicUsize::new(max_per_client),
            open: Mutex::default(),
        })
    }

    /// Changes the caps (a reload): they hold for the connections accepted from now on.
    pub fn set_caps(&self, max_total: usize, max_per_client: usize) {
        self.max_total.store(max_total, Ordering::Relaxed);
        self.max_per_client.store(max_per_client, Ordering::Relaxed);
    }

    /// Takes a place for a connection from `client`, or says which cap it is over.
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Result<Permit, Refusal> {
        let client = client_key(client);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let per_client = self.max_per_client.load(Ordering::Relaxed);
        if open.per_client.get(&client).copied().unwrap_or(0) >= per_client {
            return Err(Refusal::Client);
        }
        if open.total >= self.max_total.load(Ordering::Relaxed) {
            return Err(Refusal::Total);
        }
        open.total += 1;
        *open.per_client.entry(client).or_insert(0) += 1;
        Ok(Permit { limits: Arc::clone(self), client })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).total
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(count) = open.per_client.get_mut(&self.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.per_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_client_and_in_all() {
        let limits = ConnectionLimits::new(3, 2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let a1 = limits.admit(a).unwrap();
        let _a2 = limits.admit(a).unwrap();
        assert_eq!(limits.admit(a).unwrap_err(), Refusal::Client);
        let _b1 = limits.admit(b).unwrap();
        assert_eq!(limits.admit(b).unwrap_err(), Refusal::Total);
        drop(a1);
        assert_eq!(limits.open(), 2);
        let b2 = limits.admit(b).unwrap();
        assert_eq!(
            limits.admit(b).unwrap_err(),
            Refusal::Client,
            "a place given back is taken again"
        );
        limits.set_caps(4, 1);
        assert_eq!(limits.admit(b).unwrap_err(), Refusal::Client, "open over a lowered cap");
        drop(b2);
        let other = |n: u8| IpAddr::from([192, 0, 2, n]);
        let _c = limits.admit(other(3)).unwrap();
        let _d = limits.admit(other(4)).unwrap_or_else(|_| panic!("a raised cap admits more"));
        assert_eq!(limits.admit(other(5)).unwrap_err(), Refusal::Total);
    }

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_ipv4_its_address() {
        let limits = ConnectionLimits::new(100, 1);
        let _first = limits.admit("2001:db8:1:2::3".parse().unwrap()).unwrap();
        assert!(limits.admit("2001:db8:1:2::4".parse().unwrap()).is_err(), "same /64");
        assert!(limits.admit("2001:db8:1:3::1".parse().unwrap()).is_ok(), "another /64");
        let _v4 = limits.admit("192.0.2.9".parse().unwrap()).unwrap();
        assert!(limits.admit("::ffff:192.0.2.9".parse().unwrap()).is_err(), "mapped");
        assert!(limits.admit("::ffff:192.0.2.10".parse().unwrap()).is_ok());
    }
}
