//! Connection caps: all clients together, and per client address.
//!
//! Counting happens when a connection opens and closes (never per query), under a
//! mutex held for a hash-map update. A [`Permit`] gives its slot back when dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// The caps and the current counts.
#[derive(Debug)]
pub struct ConnectionLimits {
    max_total: usize,
    max_per_client: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_client: HashMap<IpAddr, usize>,
}

/// One admitted connection's slot.
#[derive(Debug)]
pub struct Permit {
    limits: Arc<ConnectionLimits>,
    client: IpAddr,
}

impl ConnectionLimits {
    /// Caps of `max_total` connections and `max_per_client` per address (0: none).
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<ConnectionLimits> {
        Arc::new(ConnectionLimits { max_total, max_per_client, open: Mutex::default() })
    }

    /// Takes a slot for a connection from `client`, or `None` when a cap is reached.
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Permit> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.max_total {
            return None;
        }
        let count = open.per_client.get(&client).copied().unwrap_or(0);
        if self.max_per_client != 0 && count >= self.max_per_client {
            return None;
        }
        open.per_client.insert(client, count + 1);
        open.total += 1;
        Some(Permit { limits: Arc::clone(self), client })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).total
    }

    fn release(&self, client: IpAddr) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(count) = open.per_client.get_mut(&client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.per_client.remove(&client);
            }
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.limits.release(self.client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_total_and_per_client() {
        let limits = ConnectionLimits::new(3, 2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let a1 = limits.admit(a).unwrap();
        let _a2 = limits.admit(a).unwrap();
        assert!(limits.admit(a).is_none(), "per-client cap");
        let _b1 = limits.admit(b).unwrap();
        assert!(limits.admit(b).is_none(), "total cap");
        drop(a1);
        assert_eq!(limits.open(), 2);
        assert!(limits.admit(a).is_some(), "slot given back");
    }

    #[test]
    fn zero_means_no_per_client_cap() {
        let limits = ConnectionLimits::new(100, 0);
        let a: IpAddr = "::1".parse().unwrap();
        let permits: Vec<_> = (0..100).map(|_| limits.admit(a).unwrap()).collect();
        assert!(limits.admit(a).is_none());
        drop(permits);
        assert_eq!(limits.open(), 0);
        assert!(limits.open.lock().unwrap().per_client.is_empty());
    }
}
