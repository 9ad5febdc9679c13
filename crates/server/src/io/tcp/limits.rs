//! Connection caps and the registry of open connections: all clients together, and per
//! client (an IPv4 address, or an IPv6 /64).
//!
//! The registry is touched under a mutex only when a connection opens, closes or is
//! evicted (never per query). Each connection publishes what it is doing in an atomic
//! `Activity` of its own, which the registry reads only when it must pick a victim.
//!
//! When every slot is taken (RFC 7766 §10: connection management against resource
//! exhaustion), a newcomer does not simply get refused: one connection is evicted to make
//! room — an idle one (no query in progress; the longest open first), else the slowest
//! one (the one waiting longest for its client, to finish a message or take an answer).
//! A connection that is answering right now is never chosen; if all are, the newcomer is
//! refused. The victim's slot passes to the newcomer at once and the victim is told
//! through its oneshot channel; it closes at its next await. A client at its own cap is
//! refused: it can only take slots from itself.
//!
//! A [`Permit`] gives its slot back when dropped (unless its connection was evicted).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::oneshot;

/// Registry slots examined per eviction, starting where the last search stopped: the
/// whole registry at the default cap, a bounded cost at very large ones.
const SCAN_LIMIT: usize = 4096;

/// [`Activity`] value: no query in progress (nothing buffered, nothing to write).
const IDLE: u64 = 0;
/// [`Activity`] value: a query is being answered, or its answer written without waiting.
const ACTIVE: u64 = u64::MAX;

/// What one connection is doing, published for eviction with relaxed stores: [`IDLE`],
/// [`ACTIVE`], or the microsecond (counted from the registry's start, plus one) since
/// which it has been waiting for its client — to finish a message, or to take an answer.
#[derive(Debug)]
struct Activity(AtomicU64);

/// The caps, the open connections and the eviction count.
#[derive(Debug)]
pub struct ConnectionLimits {
    /// The caps (a reload may change them: [`ConnectionLimits::set_caps`]).
    max_total: AtomicUsize,
    max_per_client: AtomicUsize,
    /// Origin of the microsecond times in [`Activity`].
    epoch: Instant,
    open: Mutex<Open>,
    evicted: AtomicU64,
}

#[derive(Debug, Default)]
struct Open {
    /// Registered connections (the `Some` slots).
    total: usize,
    per_client: HashMap<IpAddr, usize>,
    slots: Vec<Option<Entry>>,
    free: Vec<usize>,
    /// Where the next eviction search starts.
    cursor: usize,
    /// Connections admitted so far: the next one's [`Entry::opened`].
    admitted: u64,
}

/// One registered connection.
#[derive(Debug)]
struct Entry {
    activity: Arc<Activity>,
    /// The client key (see [`client_key`]).
    client: IpAddr,
    /// Its place in the order of admission.
    opened: u64,
    evict: oneshot::Sender<()>,
}

/// One admitted connection's slot, its published activity and its eviction notice.
#[derive(Debug)]
pub struct Permit {
    limits: Arc<ConnectionLimits>,
    index: usize,
    activity: Arc<Activity>,
    /// Fires (or closes) when the connection is evicted; `None` once seen.
    evicted: Option<oneshot::Receiver<()>>,
}

/// The key a client is counted under: its IPv4 address, or its IPv6 /64 (a single site
/// commonly holds a whole /64, so per-address counting would not cap it).
fn client_key(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V4(_) => client,
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
    }
}

impl ConnectionLimits {
    /// Caps of `max_total` connections and `max_per_client` per client (0: none).
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<ConnectionLimits> {
        Arc::new(ConnectionLimits {
            max_total: AtomicUsize::new(max_total),
            max_per_client: AtomicUsize::new(max_per_client),
            epoch: Instant::now(),
            open: Mutex::default(),
            evicted: AtomicU64::new(0),
        })
    }

    /// New caps (a reload): connections admitted from now on are held to them; those
    /// open over a lower cap stay until they close or are evicted for a newcomer.
    pub fn set_caps(&self, max_total: usize, max_per_client: usize) {
        self.max_total.store(max_total, Relaxed);
        self.max_per_client.store(max_per_client, Relaxed);
    }

    /// Takes a slot for a connection from `client`, evicting another connection when all
    /// are taken; `None` when the client is at its cap or no connection can be evicted.
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Permit> {
        let client = client_key(client);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.per_client.get(&client).copied().unwrap_or(0);
        let (max_total, max_per_client) =
            (self.max_total.load(Relaxed), self.max_per_client.load(Relaxed));
        if max_per_client != 0 && count >= max_per_client {
            return None;
        }
        if open.total >= max_total {
            let victim = open.pick_victim()?;
            open.remove(victim)?.evict.send(()).ok();
            self.evicted.fetch_add(1, Relaxed);
        }
        // Waiting for its first query since now (even if it is already buffered: a
        // newcomer must not look idle before its first read).
        let activity = Arc::new(Activity(AtomicU64::new(self.micros(Instant::now()))));
        let (evict, evicted) = oneshot::channel();
        open.admitted += 1;
        let opened = open.admitted;
        let entry = Entry { activity: Arc::clone(&activity), client, opened, evict };
        let index = open.insert(entry);
        Some(Permit { limits: Arc::clone(self), index, activity, evicted: Some(evicted) })
    }

    /// Connections open now (evicted ones no longer count).
    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).total
    }

    /// Connections evicted so far to make room for newcomers.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Relaxed)
    }

    /// `at` in [`Activity`] microseconds: at least 1, below [`ACTIVE`].
    fn micros(&self, at: Instant) -> u64 {
        let us = at.saturating_duration_since(self.epoch).as_micros();
        u64::try_from(us).unwrap_or(ACTIVE - 1).saturating_add(1).min(ACTIVE - 1)
    }

    fn release(&self, index: usize, activity: &Arc<Activity>) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let ours = open
            .slots
            .get(index)
            .and_then(Option::as_ref)
            .is_some_and(|entry| Arc::ptr_eq(&entry.activity, activity));
        // Otherwise it was evicted, and the slot may already hold another connection.
        if ours {
            open.remove(index);
        }
    }
}

impl Open {
    /// The connection to evict: the idle one open longest, else the one waiting longest
    /// for its client; never one that is answering now.
    fn pick_victim(&mut self) -> Option<usize> {
        let len = self.slots.len();
        if len == 0 {
            return None;
        }
        let start = self.cursor % len;
        let scanned = len.min(SCAN_LIMIT);
        self.cursor = start + scanned;
        let mut best: Option<((bool, u64), usize)> = None;
        for index in (start..start + scanned).map(|i| i % len) {
            let Some(Some(entry)) = self.slots.get(index) else { continue };
            let rank = match entry.activity.0.load(Relaxed) {
                IDLE => (false, entry.opened),
                ACTIVE => continue,
                since => (true, since),
            };
            if best.is_none_or(|(b, _)| rank < b) {
                best = Some((rank, index));
            }
        }
        best.map(|(_, index)| index)
    }

    fn insert(&mut self, entry: Entry) -> usize {
        *self.per_client.entry(entry.client).or_insert(0) += 1;
        self.total += 1;
        match self.free.pop() {
            Some(index) if index < self.slots.len() => {
                if let Some(slot) = self.slots.get_mut(index) {
                    *slot = Some(entry);
                }
                index
            }
            _ => {
                self.slots.push(Some(entry));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, index: usize) -> Option<Entry> {
        let entry = self.slots.get_mut(index)?.take()?;
        self.free.push(index);
        self.total = self.total.saturating_sub(1);
        if let Some(count) = self.per_client.get_mut(&entry.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_client.remove(&entry.client);
            }
        }
        Some(entry)
    }
}

impl Permit {
    /// Publishes that the connection has no query in progress.
    pub fn idle(&self) {
        self.activity.0.store(IDLE, Relaxed);
    }

    /// Publishes that the connection is answering (not to be evicted).
    pub fn active(&self) {
        self.activity.0.store(ACTIVE, Relaxed);
    }

    /// Publishes that the connection has been waiting for its client since `since`.
    pub fn waiting_since(&self, since: Instant) {
        self.activity.0.store(self.limits.micros(since), Relaxed);
    }

    /// Completes when the connection has been evicted (at once if it already was); after
    /// that, never again.
    pub async fn evicted(&mut self) {
        match self.evicted.as_mut() {
            Some(notice) => {
                let _ = notice.await;
                self.evicted = None;
            }
            None => std::future::pending().await,
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.limits.release(self.index, &self.activity);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn is_evicted(permit: &mut Permit) -> bool {
        permit.evicted.as_mut().is_some_and(|notice| notice.try_recv().is_ok())
    }

    #[test]
    fn caps_total_and_per_client() {
        let limits = ConnectionLimits::new(3, 2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let a1 = limits.admit(a).unwrap();
        let a2 = limits.admit(a).unwrap();
        assert!(limits.admit(a).is_none(), "per-client cap");
        let b1 = limits.admit(b).unwrap();
        // Full: everyone answering, so nobody can be evicted.
        for permit in [&a1, &a2, &b1] {
            permit.active();
        }
        assert!(limits.admit(b).is_none(), "total cap, nothing evictable");
        drop(a1);
        assert_eq!(limits.open(), 2);
        assert!(limits.admit(a).is_some(), "slot given back");
        assert_eq!(limits.evicted(), 0);
    }

    #[test]
    fn zero_means_no_per_client_cap() {
        let limits = ConnectionLimits::new(100, 0);
        let a: IpAddr = "::1".parse().unwrap();
        let permits: Vec<_> = (0..100).map(|_| limits.admit(a).unwrap()).collect();
        permits.iter().for_each(Permit::active);
        assert!(limits.admit(a).is_none());
        drop(permits);
        assert_eq!(limits.open(), 0);
        assert!(limits.open.lock().unwrap().per_client.is_empty());
    }

    #[test]
    fn ipv6_clients_are_counted_per_64() {
        let limits = ConnectionLimits::new(100, 2);
        let _a = limits.admit("2001:db8:1:2::1".parse().unwrap()).unwrap();
        let _b = limits.admit("2001:db8:1:2:ffff::9".parse().unwrap()).unwrap();
        assert!(limits.admit("2001:db8:1:2::3".parse().unwrap()).is_none(), "same /64");
        assert!(limits.admit("2001:db8:1:3::1".parse().unwrap()).is_some(), "another /64");
    }

    /// A full registry evicts the idle connection open longest, else the one waiting
    /// longest for its client; never one answering; the victim is told, its slot and
    /// its client's count pass on at once, and dropping its permit later gives back
    /// nothing twice.
    #[test]
    fn full_registry_evicts_idle_then_slowest_never_active() {
        let limits = ConnectionLimits::new(4, 0);
        let ip = |n: u8| IpAddr::from([192, 0, 2, n]);
        let t0 = Instant::now();
        let mut p: Vec<Permit> = (1..=4).map(|n| limits.admit(ip(n)).unwrap()).collect();
        p[0].active();
        p[1].waiting_since(t0 + Duration::from_secs(5));
        p[2].waiting_since(t0 + Duration::from_secs(2)); // the slowest
        p[3].waiting_since(t0 + Duration::from_secs(9));
        let mut newcomer = limits.admit(ip(9)).expect("room made");
        assert!(is_evicted(&mut p[2]), "the one waiting longest");
        assert!(!(is_evicted(&mut p[1]) || is_evicted(&mut p[3]) || is_evicted(&mut p[0])));
        assert_eq!(limits.open(), 4);
        assert!(!limits.open.lock().unwrap().per_client.contains_key(&ip(3)));
        drop(p.remove(2));
        assert_eq!(limits.open(), 4, "an evicted permit gives nothing back");

        // Idle beats waiting, whatever the times; among idle ones, the one open longest.
        newcomer.idle();
        p[2].idle(); // the fourth admitted, before the newcomer
        let _second = limits.admit(ip(10)).expect("room made");
        assert!(is_evicted(&mut p[2]), "idle and open longer than the newcomer");
        assert!(!is_evicted(&mut newcomer));
        assert_eq!(limits.evicted(), 2);

        // Nobody evictable: refused.
        for permit in limits.open.lock().unwrap().slots.iter().flatten() {
            permit.activity.0.store(ACTIVE, Relaxed);
        }
        assert!(limits.admit(ip(11)).is_none());
        assert_eq!(limits.open(), 4);
    }

    #[test]
    fn eviction_notice_completes_the_future_once() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let limits = ConnectionLimits::new(1, 0);
        let mut first = limits.admit("192.0.2.1".parse().unwrap()).unwrap();
        let _second = limits.admit("192.0.2.2".parse().unwrap()).unwrap();
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(1), first.evicted()).await.unwrap();
            let again = tokio::time::timeout(Duration::from_millis(50), first.evicted()).await;
            assert!(again.is_err(), "seen once, then pending (never polled after completion)");
        });
    }
}
