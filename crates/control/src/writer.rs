//! One zone's writer: what it holds (its plan, slot, served version and state) and the
//! few things that touch the served version itself — publishing (only the commit
//! function publishes a change, [`crate::commit`]), serving it again after an expiry,
//! NOTIFY out, and letting go of a replaced version off the query workers. Its event
//! loop is [`crate::run`]; what a primary and a secondary do, in the modules above; how
//! an idle writer rests without a task, in [`crate::dormant`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tern_ctl::proto::ZoneStatus;
use tern_engine::Edit;
use tern_zone::{ZoneContents, ZoneSlot};
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

use crate::event::WriterInbox;
use crate::notify;
use crate::plan::ZonePlan;
use crate::shared::Shared;
use crate::state::{LastCommit, Notices, Refreshing, Schedule, SharedJournal, SourceVersion};

/// A zone's writer (see the module comment).
#[derive(Debug)]
pub struct Writer {
    /// The zone's plan, as last applied.
    pub plan: Arc<ZonePlan>,
    /// The slot the data plane reads.
    pub slot: Arc<ZoneSlot>,
    /// What all writers share.
    pub shared: Arc<Shared>,
    /// The version last published (kept by a secondary even once expired, as the base
    /// of the next IXFR).
    pub current: Option<Arc<ZoneContents>>,
    /// A primary's source as last loaded (size and modification time).
    pub source: Option<SourceVersion>,
    /// A secondary's timers.
    pub schedule: Schedule,
    /// NOTIFYs being sent for the current version.
    pub notifying: Vec<JoinHandle<()>>,
    /// The zone file being written (a secondary keeps what it received).
    pub storing: Option<JoinHandle<()>>,
    /// The zone's journal, once opened (`None` before the first load, or when it
    /// cannot be used).
    pub journal: Option<SharedJournal>,
    /// A primary's version that its zone file holds, while dynamic updates made the
    /// served version differ from it (`None`: the file holds what is served).
    pub file_base: Option<Arc<ZoneContents>>,
    /// When to write the zone file with the updates (seconds since the epoch).
    pub flush_at: Option<u64>,
    /// Frozen by an operator (see [`commands`](crate::commands)).
    pub frozen: bool,
    /// Its empty journal was let go of while it rested: opened again before its next
    /// event ([`crate::dormant`]).
    pub journal_closed: bool,
    /// An operator's open transaction.
    pub txn: Option<Edit>,
    /// The last error and when, until something succeeds.
    pub last_error: Option<(u64, String)>,
    /// When the served version was published.
    pub loaded_at: Option<u64>,
    /// What `zone-status` shows, refreshed after every event.
    pub status: Arc<Mutex<ZoneStatus>>,
    /// A consumed catalog's serial whose members were last reported.
    pub catalog_reported: Option<u32>,
    /// When the last batch of updates was committed, and who sent it (see
    /// `dynamic::COMMIT_GAP`).
    pub last_commit: Option<LastCommit>,
    /// A secondary's refresh under way.
    pub refreshing: Option<Box<Refreshing>>,
    /// A secondary's NOTIFYs (kept once one came or a refresh started).
    pub notices: Option<Box<Notices>>,
    /// The writer's own inbox, where its refreshes hand back their outcome (set when it
    /// runs).
    pub inbox: Option<Arc<WriterInbox>>,
    /// The zone's signer, when this server signs it ([`crate::signer`]).
    pub signer: Option<Box<crate::signer::Signer>>,
    /// A signing secondary's version from its primary, unsigned, as last transferred:
    /// what its refreshes compare serials with and ask IXFR from (kept on disk:
    /// [`crate::signed_zone::upstream`]).
    pub upstream: Option<Arc<ZoneContents>>,
    /// Its first load is done: it rests as soon as it is idle, not [`REST_AFTER`] later
    /// (a start with many zones then has few writers running at once).
    ///
    /// [`REST_AFTER`]: crate::dormant::REST_AFTER
    pub rest_now: bool,
}

impl Writer {
    /// A writer for an empty slot.
    pub fn new(plan: Arc<ZonePlan>, slot: Arc<ZoneSlot>, shared: Arc<Shared>) -> Writer {
        let status = Arc::new(Mutex::new(ZoneStatus::default()));
        Writer::with_status(plan, slot, shared, status)
    }

    /// A writer for an empty slot that shows its status in `status`.
    pub fn with_status(
        plan: Arc<ZonePlan>,
        slot: Arc<ZoneSlot>,
        shared: Arc<Shared>,
        status: Arc<Mutex<ZoneStatus>>,
    ) -> Writer {
        Writer {
            plan,
            slot,
            shared,
            current: None,
            source: None,
            schedule: Schedule::default(),
            notifying: Vec::new(),
            storing: None,
            journal: None,
            file_base: None,
            flush_at: None,
            frozen: false,
            journal_closed: false,
            txn: None,
            last_error: None,
            loaded_at: None,
            status,
            catalog_reported: None,
            last_commit: None,
            refreshing: None,
            notices: None,
            inbox: None,
            signer: None,
            upstream: None,
            rest_now: false,
        }
    }

    /// Publishes `zone` in place of the version this writer last published (nothing,
    /// while expired); false (and an error logged) if something else replaced it
    /// meanwhile, which would be a bug. Only [`commit`](crate::commit) publishes a new
    /// version; [`serve_again`](Self::serve_again) the same one after an expiry.
    pub(crate) fn publish(&mut self, zone: Arc<ZoneContents>) -> bool {
        let served = if self.schedule.expired { None } else { self.current.as_ref() };
        if !self.slot.replace(served, Some(Arc::clone(&zone))) {
            error!(zone = %self.plan.name, "the zone changed under its writer: not published");
            return false;
        }
        if let Some(old) = self.current.replace(zone) {
            retire(old);
        }
        self.schedule.expired = false;
        self.loaded_at = Some(self.now());
        self.last_error = None;
        true
    }

    /// Serves the writer's version again after it expired (its primary confirmed its
    /// serial): the same version, no change.
    pub(crate) fn serve_again(&mut self) -> bool {
        let Some(zone) = self.current.clone().filter(|_| self.schedule.expired) else {
            return false;
        };
        if !self.slot.replace(None, Some(zone)) {
            error!(zone = %self.plan.name, "the zone changed under its writer: not served again");
            return false;
        }
        self.schedule.expired = false;
        true
    }

    /// Now, by the control plane's clock (seconds since the epoch).
    pub fn now(&self) -> u64 {
        self.shared.now()
    }

    /// True for a zone built by a script: its data changes with the script only, so
    /// updates and transactions are refused.
    pub fn is_scripted(&self) -> bool {
        matches!(self.plan.source, crate::plan::ZoneSource::Script(_))
    }

    /// Sends NOTIFY for the current version to the plan's targets, replacing any still
    /// being sent for an older one.
    pub fn notify_secondaries(&mut self) {
        for task in self.notifying.drain(..) {
            task.abort();
        }
        let Some(zone) = self.current.clone() else { return };
        let Some(soa) = zone.soa_record() else { return };
        let timeout = self.shared.limits.load().timeout;
        self.notifying = notify::send(&self.shared.network, &self.plan, &zone, &soa, timeout);
    }

    /// Logs what a load found and what is served now.
    pub fn log_served(&self, what: &str, elapsed: Duration) {
        if let Some(zone) = &self.current {
            let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
            info!(zone = %self.plan.name, serial = zone.serial(), records = zone.record_count(), elapsed_ms, "{what}");
        }
    }
}

/// Lets go of a replaced version so that it is freed here, in the control plane, and
/// never by a query worker:
/// * A query worker that was reading it when it was replaced may hold it a little
///   longer (its `arc_swap` guard is turned into a reference by the replacing store),
///   and a transfer out may hold it for its duration. Whoever lets go last frees it, so
///   until they have, a task holds it and looks again (1 ms, doubling up to 100 ms).
/// * When this is the last reference, a big zone (a reload builds a whole new one) is
///   freed on a thread of its own at the lowest priority: that takes tens of
///   milliseconds (60–75 ms for a 1M-delegation zone), which must delay neither the
///   NOTIFYs that follow a publish nor the SOA queries and IXFRs of the secondaries
///   they wake. A small one is freed at once (the trip to another thread would cost
///   more).
pub fn retire(old: Arc<ZoneContents>) {
    let large = old.record_count() > FREED_IN_PLACE;
    let_go(old, large);
}

/// [`retire`] for any shared value: `large` ones are freed on a thread at nice 19.
fn let_go<T: Send + Sync + 'static>(old: Arc<T>, large: bool) {
    let free = move |old: Arc<T>| {
        if large {
            free_apart(old);
        }
    };
    if Arc::strong_count(&old) == 1 {
        return free(old);
    }
    tokio::spawn(async move {
        let mut wait = Duration::from_millis(1);
        while Arc::strong_count(&old) > 1 {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(100));
        }
        free(old);
    });
}

/// Frees `old` on a new thread at the lowest priority (a pooled thread would keep that
/// priority for the transfers it runs next). If no thread starts, `old` is freed here.
fn free_apart<T: Send + Sync + 'static>(old: Arc<T>) {
    let started = std::thread::Builder::new().name("ternd-free".into()).spawn(move || {
        let _ = crate::priority::set_thread_nice(crate::priority::LOWEST_NICE);
        drop(old);
    });
    if let Err(e) = started {
        warn!("no thread to free a replaced zone version ({e}): freed by the control plane");
    }
}

/// Records of the largest zone [`retire`] frees where it is.
const FREED_IN_PLACE: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the thread that drops it, and that thread's nice value.
    struct Dropped(Arc<std::sync::Mutex<Option<(String, i32)>>>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            let name = std::thread::current().name().unwrap_or("?").to_owned();
            let nice = crate::priority::thread_nice().unwrap();
            *self.0.lock().unwrap() = Some((name, nice));
        }
    }

    /// A version a reader still holds when it is replaced is freed by the control plane
    /// once the reader lets go, not by the reader (a query worker); a large one on a
    /// thread at the lowest priority.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_version_still_read_is_freed_by_the_control_plane() {
        for large in [false, true] {
            let by = Arc::new(std::sync::Mutex::new(None));
            let version = Arc::new(Dropped(Arc::clone(&by)));
            let reader = Arc::clone(&version);
            let_go(version, large);
            std::thread::Builder::new()
                .name("query-worker".into())
                .spawn(move || drop(reader))
                .unwrap()
                .join()
                .unwrap();
            let freed = tokio::time::timeout(Duration::from_secs(5), async {
                while by.lock().unwrap().is_none() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
            .await;
            assert!(freed.is_ok(), "never freed (large: {large})");
            let (thread, nice) = by.lock().unwrap().clone().unwrap();
            assert_ne!(thread, "query-worker", "large: {large}");
            if large {
                assert_eq!((thread.as_str(), nice), ("ternd-free", crate::priority::LOWEST_NICE));
            }
        }
    }
}
