//! What every zone's writer shares: the zone set, the transfer and load slots, the
//! limits for talking to remotes, the storage directory, the network, the clock, the
//! timer queue of the writers at rest, and where consumed catalogs are reported.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use arc_swap::ArcSwap;
use tern_wire::Name;
use tern_zone::{ZoneDb, ZoneSlot};
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use crate::clock::Clock;
use crate::error::Result;
use crate::event::Listed;
use crate::listing::StartListing;
use crate::peer::{Limits, Network};
use crate::timer_queue::TimerQueue;

/// What every writer shares.
#[derive(Debug)]
pub struct Shared {
    /// The served zones.
    pub db: Arc<ZoneDb>,
    /// Transfers in at once (`[transfer] max-incoming`).
    pub incoming: Arc<Semaphore>,
    /// Transfers in of consumed catalogs at once (as many again): a catalog never waits
    /// for a turn behind its members, which may be thousands, failing or slow.
    pub catalogs: Arc<Semaphore>,
    /// Loads at once (two a CPU): when 100,000 zones are added, the others wait
    /// for a turn in their (small) idle state rather than all at once on as many
    /// threads, each holding its load's buffers.
    pub loads: Semaphore,
    /// Timeouts and sizes for talking to remotes.
    pub limits: ArcSwap<Limits>,
    /// Where zones' journals are kept; `None` for built-in configurations (quick mode,
    /// the demo), which keep nothing.
    pub storage: Option<PathBuf>,
    /// Told what consumed catalogs list (`None` in tests).
    pub catalogs_listed: Option<CatalogSink>,
    /// The network: primaries and secondaries.
    pub network: Arc<dyn Network>,
    /// The time.
    pub clock: Arc<dyn Clock>,
    /// The deadlines of the writers at rest ([`crate::timer_queue`]).
    pub timers: Arc<ZoneTimers>,
    /// The journals in `storage` as the start found them, while the start's first loads
    /// run ([`crate::listing`]).
    pub listing: Arc<StartListing>,
}

/// The timer queue of the writers at rest ([`crate::timer_queue`]): each deadline's
/// zone, by its slot, and the generation its writer registered it under.
pub type ZoneTimers = TimerQueue<(Weak<ZoneSlot>, u64)>;

/// Makes `slots`, which held `from` permits, hold `to`: more are added at once; fewer
/// are taken away as the transfers that hold them end (a task on `runtime` waits for
/// them), so a lower limit never cuts a running transfer short.
pub fn resize_slots(slots: &Arc<Semaphore>, from: usize, to: usize, runtime: &Handle) {
    if to > from {
        slots.add_permits(to - from);
    } else if to < from {
        let (slots, fewer) = (Arc::clone(slots), u32::try_from(from - to).unwrap_or(u32::MAX));
        runtime.spawn(async move {
            if let Ok(permits) = slots.acquire_many_owned(fewer).await {
                permits.forget();
            }
        });
    }
}

/// Where a consumed catalog's writer reports what the catalog lists (RFC 9432), or why
/// it could not be read: the server, which serves the members.
#[derive(Clone)]
pub struct CatalogSink(pub Arc<dyn Fn(Name, Result<Members>) + Send + Sync>);

/// A consumed catalog's members, by name.
pub type Members = BTreeMap<Name, Listed>;

impl std::fmt::Debug for CatalogSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CatalogSink")
    }
}

impl Shared {
    /// What writers share in unit tests: one transfer and one load at a time, 100 ms
    /// timeouts, journals under `storage` (none without).
    #[cfg(test)]
    pub fn for_tests(storage: Option<PathBuf>) -> Arc<Shared> {
        Shared::with(
            storage,
            Arc::new(crate::testing::NoNetwork),
            Arc::new(crate::clock::SystemClock),
        )
    }

    /// What writers share in tests: one transfer and one load at a time, 100 ms
    /// timeouts, journals under `storage` (none without), `network` and `clock` given.
    #[cfg(test)]
    pub fn with(
        storage: Option<PathBuf>,
        network: Arc<dyn Network>,
        clock: Arc<dyn Clock>,
    ) -> Arc<Shared> {
        let timeout = std::time::Duration::from_millis(100);
        let limits = Limits { timeout, max_size: 1 << 20, max_time: timeout * 10, idle: timeout };
        Arc::new(Shared {
            db: Arc::new(ZoneDb::new()),
            incoming: Arc::new(Semaphore::new(1)),
            catalogs: Arc::new(Semaphore::new(1)),
            loads: Semaphore::new(1),
            limits: ArcSwap::from_pointee(limits),
            storage,
            catalogs_listed: None,
            network,
            clock,
            timers: Arc::default(),
            listing: Arc::default(),
        })
    }

    /// Sets `[transfer] max-incoming` (a reload): the transfers in at once, and as
    /// many again for consumed catalogs ([`resize_slots`]).
    pub fn resize_incoming(&self, from: usize, to: usize, runtime: &Handle) {
        resize_slots(&self.incoming, from, to, runtime);
        resize_slots(&self.catalogs, from, to, runtime);
    }

    /// Now, by the control plane's clock.
    pub fn now(&self) -> u64 {
        self.clock.now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_grow_at_once_and_shrink_as_their_holders_end() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let slots = Arc::new(Semaphore::new(2));
        resize_slots(&slots, 2, 4, runtime.handle());
        assert_eq!(slots.available_permits(), 4);
        let held = Arc::clone(&slots).try_acquire_many_owned(4).unwrap();
        resize_slots(&slots, 4, 1, runtime.handle());
        runtime.block_on(tokio::task::yield_now());
        assert_eq!(slots.available_permits(), 0, "the running ones keep theirs");
        drop(held);
        runtime.block_on(async {
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
        });
        assert_eq!(slots.available_permits(), 1, "one slot left once they ended");
    }
}
