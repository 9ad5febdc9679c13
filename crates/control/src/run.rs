//! A zone's writer at work: it takes [`Event`]s in order and wakes for its timers
//! ([`Writer::run`]), and hands each to the module that deals with it — a load to
//! [`primary`](crate::primary) or [`secondary`](crate::secondary), a NOTIFY and a
//! refresh's outcome to [`refresh`](crate::refresh), updates to
//! [`dynamic`](crate::dynamic), an operator's command to
//! [`commands`](crate::commands). Nothing it awaits depends on a remote: a secondary's
//! transfers run on tasks of their own and come back as events, so that a load is never
//! queued behind one.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tern_ctl::proto::ZoneStatus;
use tracing::info;

use crate::counters::control::{control, LoadResult};
use crate::dormant::{refused, show_role, REST_AFTER};
use crate::event::{Event, LoadOutcome};
use crate::inbox::{Next, Receiver};
use crate::plan::{Role, ZonePlan};
use crate::registry::Entry;
use crate::state::Schedule;
use crate::updates::UpdateTask;
use crate::writer::Writer;

/// Where a deadline too far off for the clock is put (about 30 years, as tokio does).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

impl Writer {
    /// Takes events and updates until stopped; updates waiting together are committed
    /// together. With its `entry`, it rests once idle ([`crate::dormant`]): its task
    /// then ends, and is started again from what it kept when something is sent to it.
    #[allow(clippy::manual_async_fn)] // on purpose: see the first comment
    pub fn run(
        mut self,
        inbox: Receiver<Event, UpdateTask>,
        entry: Option<Arc<Entry>>,
    ) -> impl Future<Output = ()> + Send {
        // An async block, not an `async fn`: the writer is kept once in the task, not
        // also as the function's argument (about 300 bytes a zone). What each event
        // does is awaited boxed: the task then stays small while it waits.
        async move {
            self.inbox = Some(inbox.inbox());
            if self.journal_closed {
                Box::pin(self.reopen_journal()).await;
            }
            loop {
                if inbox.is_empty() {
                    self.release_journal();
                }
                self.show_status();
                Box::pin(self.report_catalog()).await;
                let resting = entry.is_some() && self.restful();
                // `rest` checks that it may.
                if let (true, Some(entry)) = (std::mem::take(&mut self.rest_now), &entry) {
                    if self.rest(entry, &inbox) {
                        return;
                    }
                }
                // A timer is allocated only when there is one to wait for: most primaries
                // have none, and rest.
                let wait = match resting {
                    true => Some(REST_AFTER),
                    false => self
                        .next_wake()
                        .map(|at| Duration::from_secs(at.saturating_sub(self.now()))),
                };
                let sleep = async {
                    match wait {
                        Some(wait) => Box::pin(tokio::time::sleep(wait)).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    next = inbox.next(crate::dynamic::BATCH) => match next {
                        Next::Event(Event::Stop) => break,
                        Next::Event(event) => Box::pin(self.event(event)).await,
                        Next::Updates(batch) => {
                            let batch = Box::pin(self.paced(batch, &inbox)).await;
                            Box::pin(self.updates(batch)).await
                        }
                    },
                    () = sleep => match (resting, &entry) {
                        (true, Some(entry)) => {
                            if self.rest(entry, &inbox) {
                                return;
                            }
                        }
                        _ => Box::pin(self.on_time()).await,
                    },
                }
            }
            for task in self.notifying.drain(..) {
                task.abort();
            }
            self.stop_refresh();
        }
    }

    /// Carries out one event (not [`Event::Stop`]).
    pub(crate) async fn event(&mut self, event: Event) {
        match event {
            Event::Load { plan, done } => {
                let shared = Arc::clone(&self.shared);
                let _turn = shared.loads.acquire().await;
                let first = self.current.is_none();
                let outcome = Box::pin(self.load(plan)).await;
                self.rest_now = first;
                if let Some(done) = done {
                    done.send(outcome);
                }
            }
            Event::Notify(notified) => self.notified(*notified),
            Event::Refreshed(fetch) => Box::pin(self.refreshed(*fetch)).await,
            Event::Command { command, reply } => match self.refresh_asked(&command) {
                Some(full) => self.refresh_with(full, Some(reply)),
                None => {
                    let outcome = Box::pin(self.command(*command)).await;
                    let _ = reply.send(outcome);
                }
            },
            Event::TimerDue => Box::pin(self.on_time()).await,
            Event::Stop => {}
        }
    }

    /// Rests in `entry` if it still may and nothing came in `inbox` meanwhile
    /// ([`crate::dormant`]), its next deadline registered in the timer queue
    /// ([`crate::registry`]): true if it rests (its task then ends).
    fn rest(&mut self, entry: &Entry, inbox: &Receiver<Event, UpdateTask>) -> bool {
        if !self.tasks_done() || !self.restful() {
            return false;
        }
        let (timers, slot) = (Arc::clone(&self.shared.timers), Arc::downgrade(&self.slot));
        let (now, instant) = (self.now(), tokio::time::Instant::now());
        let due = self.next_wake().map(|at| {
            let wait = Duration::from_secs(at.saturating_sub(now));
            instant.checked_add(wait).unwrap_or(instant + FAR_FUTURE) // as tokio's own sleep
        });
        let generation = due.map_or(0, |_| timers.generation());
        if !entry.rest(inbox, || self.take_dormant(generation)) {
            return false;
        }
        if let Some(at) = due {
            // After the rest: a wake before this push only leaves it stale.
            timers.push(at, (slot, generation));
        }
        true
    }

    /// When something is due: a refresh or expiry, or writing the zone file. A frozen
    /// zone waits only for its expiry.
    pub(crate) fn next_wake(&self) -> Option<u64> {
        let expiry = self.schedule.expire_at.filter(|_| !self.schedule.expired);
        if self.frozen {
            return expiry;
        }
        // While a refresh is under way its outcome wakes the writer, not the timer.
        let schedule = if self.refreshing.is_some() { expiry } else { self.schedule.next_wake() };
        [schedule, self.flush_at, self.sign_wake()].into_iter().flatten().min()
    }

    /// Refreshes what `zone-status` shows (never waiting for the journal's lock).
    pub(crate) fn show_status(&self) {
        let zone = self.current.as_ref();
        let journal_bytes = self.journal.as_ref().and_then(|j| j.try_lock().ok().map(|j| j.len()));
        let Ok(mut status) = self.status.lock() else { return };
        let kept_journal = status.journal_bytes;
        *status = ZoneStatus {
            zone: self.plan.name.to_string(),
            serial: zone.map(|z| z.serial()),
            records: zone.map_or(0, |z| z.record_count() as u64),
            loaded_at: self.loaded_at,
            journal_bytes: journal_bytes.or(kept_journal),
            unflushed: self.file_base.is_some(),
            frozen: self.frozen,
            transaction: self.txn.is_some(),
            last_error: self
                .last_error
                .clone()
                .or_else(|| refused(self.journal.as_ref(), self.loaded_at)),
            ..ZoneStatus::default()
        };
        show_role(&self.plan, &self.schedule, &mut status);
    }

    /// Whatever is due: a secondary's refresh or expiry, a primary's zone file, the
    /// signer's work.
    pub(crate) async fn on_time(&mut self) {
        if self.flush_at.is_some_and(|at| at <= self.now()) {
            self.flush_and_compact().await;
        }
        if self.schedule.next_wake().is_some_and(|at| at <= self.now()) {
            self.on_refresh_time();
        }
        if self.sign_wake().is_some_and(|at| at <= self.now()) {
            Box::pin(self.sign_due()).await;
        }
    }

    /// Takes the plan and loads (primary) or starts (secondary). A zone that became a
    /// primary drops the timers it had as a secondary.
    /// Counted in the load counters.
    async fn load(&mut self, plan: Arc<ZonePlan>) -> LoadOutcome {
        if plan.catalog != self.plan.catalog {
            self.catalog_reported = None; // read again under the new settings
        }
        self.plan = plan;
        if self.frozen && self.current.is_some() {
            info!(zone = %self.plan.name, "not reloaded: the zone is frozen");
            let records = self.current.as_ref().map_or(0, |z| z.record_count() as u64);
            return LoadOutcome::Unchanged { records };
        }
        let started = std::time::Instant::now();
        // A key store that cannot be used leaves the zone as it is served (or, at the
        // start, as its file has it, signed): changes are refused until it can.
        let unsigned = Box::pin(self.open_signer()).await.err();
        let outcome = match self.plan.role {
            Role::Primary => {
                self.schedule = Schedule::default();
                self.load_primary().await
            }
            Role::Secondary(_) => {
                let outcome = self.start_secondary().await;
                self.refresh_if_notified_before();
                outcome
            }
        };
        if let Some(why) = unsigned {
            self.last_error = Some((self.now(), format!("not signed: {why}")));
        }
        let result = match outcome {
            LoadOutcome::Loaded { .. } => Some(LoadResult::Loaded),
            LoadOutcome::Unchanged { .. } => Some(LoadResult::Unchanged),
            LoadOutcome::Failed(_) => Some(LoadResult::Failed),
            LoadOutcome::Waiting => None,
        };
        if let Some(result) = result {
            control().load(result, started.elapsed());
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ZoneSource;
    use crate::shared::Shared;
    use tern_zone::ZoneSlot;

    /// A secondary that becomes a primary on reload keeps no refresh timer (it would
    /// wake its writer at once, again and again).
    #[tokio::test]
    async fn a_secondary_turned_primary_drops_its_timers() {
        let storage = tempfile::tempdir().unwrap();
        let primary = "127.0.0.1:9".parse().unwrap();
        let secondary = crate::testing::secondary("example.com.", storage.path(), primary);
        let shared = Shared::for_tests(Some(storage.path().to_owned()));
        let slot = Arc::new(ZoneSlot::new(&secondary.name));
        let mut writer = Writer::new(Arc::clone(&secondary), Arc::clone(&slot), shared);
        assert_eq!(writer.load(secondary).await, LoadOutcome::Waiting);
        assert!(writer.schedule.next_wake().is_some(), "a secondary refreshes");
        let mut primary = (*writer.plan).clone();
        primary.source = ZoneSource::Embedded(crate::testing::ZONE_TEXT);
        primary.role = Role::Primary;
        let outcome = writer.load(Arc::new(primary)).await;
        assert!(matches!(outcome, LoadOutcome::Loaded { .. }), "{outcome:?}");
        assert_eq!(writer.schedule.next_wake(), None);
        assert!(slot.contents_full().is_some());
    }
}
