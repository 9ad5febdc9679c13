//! A secondary's refreshes as tasks of their own, so that its writer keeps taking events
//! while a transfer is under way: a reload (or any load, command or update) is never
//! queued behind a primary that sends a record now and then.
//!
//! * A refresh waits for a transfer slot (`[transfer] max-incoming`; consumed catalogs
//!   have slots of their own, so that a catalog is never refreshed after its members),
//!   runs the SOA query and the transfer on a blocking thread, and hands its outcome back
//!   to the writer as [`Event::Refreshed`]. The writer alone takes it and publishes
//!   ([`secondary`](crate::secondary)); an outcome from before the zone was frozen, made
//!   a primary, or given another version meanwhile is dropped, and the zone refreshed
//!   again.
//! * One refresh at a time per zone. A NOTIFY during one (RFC 1996 §4.7: the primary
//!   changed, perhaps after our SOA query) asks for one more when it is over, however
//!   many come; NOTIFYs start a refresh at most once a [`NOTIFY_REFRESH_GAP`], so that
//!   a flood of them (spoofed from the primary's address) is not reflected at the
//!   primary as as many SOA queries; their log line is written at most once a
//!   [`NOTIFY_LOG_GAP`] and when a refresh starts, with the count of those merged.
//! * A NOTIFY before the zone's first load (one can wake its writer before a start's
//!   paced load comes) waits for that load, which refreshes once it is done.
//! * An operator's `zone-refresh` (or `zone-reload`) joins the refresh under way;
//!   `zone-retransfer` joins a whole transfer under way, or is done after the refresh
//!   under way. Either is answered once its refresh is over.
//! * A load with other primaries lets the refresh under way go on (it ends within
//!   `max-time-in`) and refreshes again from the new primaries once it is over.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_ctl::proto::ZoneOp;
use tern_zone::ZoneContents;
use tracing::info;

use crate::error::Error;
use crate::event::{Event, Fetch, Notified, Outcome, ZoneCommand};
use crate::plan::{CatalogRole, Remote, Role};
use crate::secondary::Job;
use crate::state::{Refreshing, Waiter};
use crate::writer::Writer;

/// Least time between the starts of two refreshes that NOTIFYs ask for.
pub const NOTIFY_REFRESH_GAP: Duration = Duration::from_secs(1);
/// Least time between two "NOTIFY received" lines of a zone (but for the line of a
/// refresh that NOTIFYs started).
pub const NOTIFY_LOG_GAP: Duration = Duration::from_secs(10);

impl Writer {
    /// A NOTIFY from a primary (with those merged into it): refresh now, or as soon as
    /// allowed (see the module comment); a frozen zone only logs it. Before the zone's
    /// first load (a NOTIFY can wake its writer before the paced load of a start comes),
    /// the refresh waits for the load: started now, it would transfer the whole zone,
    /// with neither the kept copy nor a signing secondary's primary version read yet, and
    /// its outcome would be dropped once the load publishes the kept copy.
    pub fn notified(&mut self, notified: Notified) {
        if !matches!(self.plan.role, Role::Secondary(_)) {
            return;
        }
        let notices = self.notices.get_or_insert_with(Box::default);
        notices.unlogged = notices.unlogged.saturating_add(1 + u64::from(notified.merged));
        notices.last = Some((notified.from, notified.serial));
        if notices.logged_at.is_none_or(|at| at.elapsed() >= NOTIFY_LOG_GAP) {
            self.log_notices();
        }
        if self.frozen {
            return;
        }
        if self.first_load_pending() {
            if let Some(notices) = self.notices.as_mut() {
                notices.before_load = true;
            }
        } else {
            self.refresh_soon();
        }
    }

    /// True while the zone has not been loaded once: no version, no refresh under way
    /// and no refresh time, which a secondary's load always sets
    /// ([`start_secondary`](Self::start_secondary)).
    fn first_load_pending(&self) -> bool {
        self.current.is_none() && self.refreshing.is_none() && self.schedule.refresh_at.is_none()
    }

    /// After a secondary's load: the refresh that NOTIFYs asked for before it.
    pub(crate) fn refresh_if_notified_before(&mut self) {
        if self.notices.as_mut().is_some_and(|n| std::mem::take(&mut n.before_load)) {
            self.refresh_soon();
        }
    }

    /// Writes one line for the NOTIFYs not logged yet.
    fn log_notices(&mut self) {
        let ours = self.current.as_ref().map(|z| z.serial());
        let Some(notices) = self.notices.as_deref_mut() else { return };
        let Some((from, serial)) = notices.last.take() else { return };
        let merged = notices.unlogged.saturating_sub(1);
        notices.unlogged = 0;
        notices.logged_at = Some(Instant::now());
        let text = |n: Option<u32>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
        let what = if self.frozen {
            "NOTIFY received: ignored, the zone is frozen"
        } else {
            "NOTIFY received"
        };
        info!(zone = %self.plan.name, from = %from, serial = text(serial), ours = text(ours), merged, "{what}");
    }

    /// A refresh for NOTIFYs: at once, unless one is under way (then once more after
    /// it) or started less than [`NOTIFY_REFRESH_GAP`] ago (then by the timer, that long
    /// after).
    fn refresh_soon(&mut self) {
        if !matches!(self.plan.role, Role::Secondary(_)) {
            return; // a primary now: no timer
        }
        if let Some(running) = self.refreshing.as_deref_mut() {
            running.again.get_or_insert(false);
            return;
        }
        let started = self.notices.as_ref().and_then(|n| n.refresh_started);
        if started.is_some_and(|at| at.elapsed() < NOTIFY_REFRESH_GAP) {
            let soon = self.now() + NOTIFY_REFRESH_GAP.as_secs().max(1);
            self.schedule.refresh_at =
                Some(self.schedule.refresh_at.map_or(soon, |at| at.min(soon)));
            return;
        }
        self.start_refresh(false, Vec::new());
    }

    /// A timer is due: expire, or refresh (unless a refresh is under way, or the zone
    /// is frozen).
    pub fn on_refresh_time(&mut self) {
        let t = self.now();
        if self.schedule.expire_at.is_some_and(|at| at <= t) && !self.schedule.expired {
            self.expire();
        }
        let due = self.schedule.refresh_at.is_some_and(|at| at <= t);
        if due && self.refreshing.is_none() && !self.frozen {
            self.start_refresh(false, Vec::new());
        }
    }

    /// Refreshes now unless a refresh is under way.
    pub fn refresh(&mut self) {
        self.refresh_with(false, None);
    }

    /// A refresh an operator asked for, a whole transfer when `full`; `reply` is told
    /// how it went once it is over (see the module comment).
    pub fn refresh_with(&mut self, full: bool, reply: Option<Waiter>) {
        match self.refreshing.as_deref_mut() {
            Some(running) if running.full || !full => running.waiters.extend(reply),
            Some(running) => {
                running.again = Some(true);
                running.next_waiters.extend(reply);
            }
            None => self.start_refresh(full, reply.into_iter().collect()),
        }
    }

    /// The refresh `command` asks of this zone (`Some(full)`), when it is a secondary
    /// that is not frozen: such a command is answered when its refresh is over.
    pub fn refresh_asked(&self, command: &ZoneCommand) -> Option<bool> {
        if self.frozen || !matches!(self.plan.role, Role::Secondary(_)) {
            return None;
        }
        match command {
            ZoneCommand::Op(ZoneOp::Refresh | ZoneOp::Reload) => Some(false),
            ZoneCommand::Op(ZoneOp::Retransfer) => Some(true),
            _ => None,
        }
    }

    /// Starts a refresh on a task of its own; `waiters` are told its outcome.
    fn start_refresh(&mut self, full: bool, waiters: Vec<Waiter>) {
        let (Role::Secondary(primaries), Some(inbox)) = (&self.plan.role, self.inbox.clone())
        else {
            return answer(waiters, Err(Error::NotSecondary));
        };
        let primaries = primaries.clone();
        let job = Job {
            network: Arc::clone(&self.shared.network),
            zone: self.plan.name.clone(),
            primaries: primaries.clone(),
            current: if full { None } else { self.refresh_base() },
            limits: **self.shared.limits.load(),
        };
        let catalog = matches!(self.plan.catalog, CatalogRole::Consumer { .. });
        let slots = Arc::clone(if catalog { &self.shared.catalogs } else { &self.shared.incoming });
        let task = tokio::spawn(async move {
            let fetched = match slots.acquire_owned().await {
                // The slot goes with the blocking part, which cannot be cut short.
                Ok(slot) => tokio::task::spawn_blocking(move || {
                    let fetched = job.run();
                    drop(slot);
                    fetched
                })
                .await
                .unwrap_or_else(|e| Err(Error::Task(e))),
                Err(_) => Err(Error::Stopping),
            };
            let _ = inbox.send(Event::Refreshed(Box::new(Fetch(fetched))));
        });
        let notices = self.notices.get_or_insert_with(Box::default);
        notices.refresh_started = Some(Instant::now());
        if notices.unlogged > 0 {
            self.log_notices();
        }
        self.refreshing = Some(Box::new(Refreshing {
            task,
            full,
            base: self.current.clone(),
            primaries,
            waiters,
            again: None,
            next_waiters: Vec::new(),
        }));
    }

    /// A refresh is over: its outcome is taken (unless it cannot be: see
    /// `stale`), its waiters told, and the next refresh asked for started.
    pub async fn refreshed(&mut self, fetch: Fetch) {
        let Some(running) = self.refreshing.take() else { return };
        let Refreshing { base, waiters, again, next_waiters, .. } = *running;
        if let Some(why) = self.stale(base.as_ref()) {
            info!(zone = %self.plan.name, "what the refresh brought is not taken: {why}");
            if matches!(self.plan.role, Role::Secondary(_)) {
                self.schedule.refresh_at = Some(self.now());
            }
            answer(waiters, Err(Error::NotTaken(why)));
        } else {
            self.take_fetched(fetch.0).await;
            answer(waiters, self.refresh_outcome());
        }
        match again {
            _ if self.frozen => answer(next_waiters, Err(Error::Frozen)),
            Some(full) if full || !next_waiters.is_empty() => {
                self.start_refresh(full, next_waiters)
            }
            Some(_) => self.refresh_soon(),
            None => {}
        }
    }

    /// Why a refresh's outcome cannot be taken: the zone changed since it started.
    fn stale(&self, base: Option<&Arc<ZoneContents>>) -> Option<&'static str> {
        if self.frozen {
            return Some("the zone was frozen meanwhile");
        }
        if !matches!(self.plan.role, Role::Secondary(_)) {
            return Some("the zone is not a secondary any more");
        }
        let same = match (base, self.current.as_ref()) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        (!same).then_some("another version was published meanwhile")
    }

    /// How the last refresh went, for an operator.
    fn refresh_outcome(&self) -> Outcome {
        match (&self.last_error, self.current.as_ref()) {
            (Some((_, why)), _) => Err(Error::RefreshFailed(why.clone())),
            (None, Some(zone)) => Ok(format!("serial {}", zone.serial())),
            (None, None) => Err(Error::NothingTransferred),
        }
    }

    /// A load whose plan names other primaries than the refresh under way asks: once it
    /// is over, the zone is refreshed again, from the new ones.
    pub fn refresh_again_if_primaries_changed(&mut self) {
        let (Some(running), Role::Secondary(primaries)) =
            (self.refreshing.as_deref_mut(), &self.plan.role)
        else {
            return;
        };
        if !same_primaries(&running.primaries, primaries) {
            running.again.get_or_insert(running.full);
            info!(zone = %self.plan.name, "the primaries changed: the refresh under way goes on, then the new ones are asked");
        }
    }

    /// Stops the refresh under way, if any (the writer is stopping).
    pub fn stop_refresh(&mut self) {
        if let Some(running) = self.refreshing.take() {
            running.task.abort();
        }
    }
}

/// Tells each of `waiters` `outcome` (an error as its text: several may wait for one).
fn answer(waiters: Vec<Waiter>, outcome: Outcome) {
    for waiter in waiters {
        let each = match &outcome {
            Ok(done) => Ok(done.clone()),
            Err(why) => Err(Error::RefreshFailed(why.to_string())),
        };
        let _ = waiter.send(each);
    }
}

/// Whether two lists of primaries name the same servers, addresses and keys, in order.
fn same_primaries(a: &[Remote], b: &[Remote]) -> bool {
    let key = |r: &Remote| r.key.as_ref().map(|k| (k.name().to_name(), k.algorithm()));
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| a.id == b.id && a.addrs == b.addrs && key(a) == key(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::Next;
    use crate::plan::ZoneSource;
    use crate::Shared;
    use std::net::SocketAddr;
    use tern_zone::ZoneSlot;

    /// A secondary of a primary that never answers (the discard port), running as far
    /// as its refreshes go: their outcome comes back through `receiver`.
    fn secondary(
        storage: &std::path::Path,
    ) -> (Writer, crate::inbox::Receiver<Event, crate::updates::UpdateTask>) {
        let primary = "127.0.0.1:9".parse().unwrap();
        let plan = crate::testing::secondary("example.com.", storage, primary);
        let shared = Shared::for_tests(Some(storage.to_owned()));
        let slot = Arc::new(ZoneSlot::new(&plan.name));
        let mut writer = Writer::new(plan, slot, shared);
        let (inbox, receiver) = crate::inbox::inbox(4);
        writer.inbox = Some(inbox);
        writer.schedule.refresh_at = Some(writer.now() + 3600); // as its load leaves it
        (writer, receiver)
    }

    async fn fetched(
        receiver: &crate::inbox::Receiver<Event, crate::updates::UpdateTask>,
    ) -> Fetch {
        let next = tokio::time::timeout(Duration::from_secs(5), receiver.next(1)).await;
        match next {
            Ok(Next::Event(Event::Refreshed(fetch))) => *fetch,
            other => panic!("not a refresh's outcome: {other:?}"),
        }
    }

    /// Issue 49: NOTIFYs during a refresh were each replayed after it. They ask for one
    /// more refresh, started no sooner than a second after the last.
    #[tokio::test]
    async fn notifies_during_a_refresh_ask_for_one_more_a_second_later() {
        let storage = tempfile::tempdir().unwrap();
        let (mut writer, receiver) = secondary(storage.path());
        let from: SocketAddr = "127.0.0.1:53".parse().unwrap();
        writer.notified(Notified { serial: Some(2), from, merged: 0 });
        assert!(writer.refreshing.is_some(), "the first NOTIFY starts a refresh");
        for _ in 0..100 {
            writer.notified(Notified { serial: Some(2), from, merged: 3 });
        }
        assert_eq!(writer.refreshing.as_ref().unwrap().again, Some(false));
        assert_eq!(writer.notices.as_ref().unwrap().unlogged, 400, "counted for the next line");
        let fetch = fetched(&receiver).await;
        writer.refreshed(fetch).await;
        let soon = writer.schedule.refresh_at.unwrap();
        assert!(writer.refreshing.is_none(), "not at once: less than a second after the last");
        assert!(soon <= writer.now() + 1 && writer.last_error.is_some(), "{soon}");
        assert_eq!(writer.next_wake(), Some(soon));
    }

    /// A NOTIFY that wakes a zone's writer before its first load (at a start, before the
    /// paced load comes) waits for the load: a refresh started then would transfer the
    /// whole zone, and be dropped once the load publishes the kept copy. The writer does
    /// not rest meanwhile, and the load's end starts the refresh.
    #[tokio::test]
    async fn a_notify_before_the_first_load_waits_for_it() {
        let storage = tempfile::tempdir().unwrap();
        let (mut writer, _receiver) = secondary(storage.path());
        writer.schedule = Default::default(); // not loaded yet
        let from: SocketAddr = "127.0.0.1:53".parse().unwrap();
        writer.notified(Notified { serial: Some(2), from, merged: 0 });
        assert!(writer.refreshing.is_none(), "no refresh before the load");
        assert!(writer.notices.as_ref().unwrap().before_load);
        assert!(!writer.restful(), "it waits for its load awake");
        // The load (no kept copy here: nothing to serve yet) sets the refresh time; its
        // end starts the refresh the NOTIFY asked for.
        assert!(matches!(writer.start_secondary().await, crate::event::LoadOutcome::Waiting));
        writer.refresh_if_notified_before();
        assert!(writer.refreshing.is_some(), "refreshed once loaded");
        assert!(!writer.notices.as_ref().unwrap().before_load);
        writer.notified(Notified { serial: Some(3), from, merged: 0 });
        assert_eq!(writer.refreshing.as_ref().unwrap().again, Some(false), "as usual since");
    }

    /// An outcome that comes back once the zone is a primary is dropped, and leaves it
    /// no timer (it would wake the writer again and again).
    #[tokio::test]
    async fn an_outcome_after_the_zone_became_a_primary_is_dropped() {
        let storage = tempfile::tempdir().unwrap();
        let (mut writer, receiver) = secondary(storage.path());
        let from: SocketAddr = "127.0.0.1:53".parse().unwrap();
        writer.notified(Notified { serial: None, from, merged: 0 });
        writer.notified(Notified { serial: None, from, merged: 0 });
        let mut primary = (*writer.plan).clone();
        primary.source = ZoneSource::Embedded(crate::testing::ZONE_TEXT);
        primary.role = Role::Primary;
        writer.plan = Arc::new(primary);
        writer.schedule = Default::default();
        let fetch = fetched(&receiver).await;
        writer.refreshed(fetch).await;
        assert!(writer.refreshing.is_none());
        assert_eq!(writer.next_wake(), None);
        assert_eq!(writer.last_error, None);
    }
}
