//! A secondary zone: transferred from its primaries, refreshed as its SOA timers say
//! (RFC 1034 §4.3.5, RFC 1996), kept on disk so that a restart serves it at once.
//!
//! * Refresh: the primaries (and their addresses) in order; an SOA query first, then —
//!   when the serial is newer — IXFR from our serial (AXFR when we have nothing, or when
//!   the IXFR fails or its changes do not apply; not when it was cut off for taking
//!   longer than `max-time-in`: the whole zone from the same primary would take longer
//!   still). A refresh runs on a task of its own ([`refresh`](crate::refresh)); its
//!   outcome comes back to the writer, which alone takes it (here).
//! * What arrives is checked before it replaces anything: every record, the zone's
//!   semantic checks, and a serial that rises (RFC 1982). A bad transfer leaves the
//!   served version alone and is retried after the SOA's retry interval, doubled with
//!   each failure in a row up to the SOA's refresh interval (less up to a quarter at
//!   random, so that the members of a catalog failing together do not retry together).
//!   Records outside the zone are ignored and logged.
//! * Without a successful refresh for the SOA's expire time, the zone stops being
//!   served (SERVFAIL) until a refresh succeeds.
//! * After each change the zone file and the timers are written (atomically), off the
//!   path to publishing; a signing secondary also writes its primary's version
//!   ([`upstream`](crate::signed_zone::upstream)), read back at a start so that its
//!   first refresh asks IXFR from the primary's serial.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_wire::{Name, Rcode};
use tern_zone::records::serial_gt;
use tern_zone::transfer::Received;
use tern_zone::{Changeset, History, RecordData, ZoneContents};
use tracing::{error, info, warn};

use crate::commit::{Change, Notify};
use crate::counters::control::{control, Direction};
use crate::error::{Error, PrimaryFailed};
use crate::event::{Fetched, LoadOutcome, TransferLog};
use crate::peer::{ClientError, Limits, Network, Peer, TransferIn};
use crate::plan::{Remote, TimerBounds, ZoneSource};
use crate::state::Schedule;
use crate::storage::{self, Timers};
use crate::writer::Writer;

impl Writer {
    /// The first load of a secondary serves what it kept on disk (unless it expired
    /// meanwhile) and refreshes when its timers say; later loads only take the plan.
    pub async fn start_secondary(&mut self) -> LoadOutcome {
        self.refresh_again_if_primaries_changed();
        if self.schedule.refresh_at.is_some() {
            let records = self.current.as_ref().map_or(0, |z| z.record_count() as u64);
            return LoadOutcome::Unchanged { records };
        }
        self.schedule.refresh_at = Some(self.now());
        let (journaled, _) = self.open_journal().await; // a secondary's serial is its primary's
        let ZoneSource::File(path) = self.plan.source.clone() else { return LoadOutcome::Waiting };
        let timers = Timers::load(&storage::timers_path(&path));
        if !path.exists() {
            return LoadOutcome::Waiting;
        }
        let (name, limits) = (self.plan.name.clone(), self.plan.history);
        let loaded = tokio::task::spawn_blocking(move || -> Result<_, Error> {
            let zone =
                tern_zone::load_file(&path, &name, &Default::default(), &mut |_| {})?.contents;
            let chain = crate::change::chain_from(&journaled, zone.serial());
            let zone = apply_all(&zone, chain).map_err(|why| Error::Apply {
                what: "the journal's changes do not apply to the kept copy",
                why,
            })?;
            Ok((zone, crate::journaled::history_of(chain, limits)))
        })
        .await;
        let (zone, history) = match loaded {
            Ok(Ok(loaded)) => loaded,
            Ok(Err(e)) => return self.kept_copy_failed(&e),
            Err(e) => return self.kept_copy_failed(&Error::Task(e)),
        };
        if !history.is_empty() {
            info!(zone = %self.plan.name, replayed = history.len(), serial = zone.serial(), "journal replayed onto the kept copy");
        }
        let outcome = self.serve_kept(zone, history, timers).await;
        self.load_upstream().await;
        outcome
    }

    fn kept_copy_failed(&mut self, why: &Error) -> LoadOutcome {
        error!(zone = %self.plan.name, "the kept copy cannot be loaded, transferring anew: {why}");
        LoadOutcome::Waiting
    }

    /// Serves the kept copy (committed as a whole version, with the history the journal
    /// kept) unless its timers say it expired.
    async fn serve_kept(
        &mut self,
        mut zone: ZoneContents,
        history: History,
        timers: Option<Timers>,
    ) -> LoadOutcome {
        let (serial, records) = (zone.serial(), zone.record_count() as u64);
        let timers = timers.filter(|t| t.serial == serial);
        match timers {
            Some(t) if t.expire_at <= self.now() => {
                warn!(zone = %self.plan.name, serial, "the kept copy expired while the server was down: not served until refreshed");
                zone.set_history(Arc::new(history));
                self.current = Some(Arc::new(zone)); // the base of the next IXFR, not served
                self.schedule.expired = true;
                return LoadOutcome::Waiting;
            }
            Some(t) => {
                self.schedule = Schedule {
                    refresh_at: Some(t.next_refresh),
                    expire_at: Some(t.expire_at),
                    last_refresh: t.last_refresh,
                    ..self.schedule
                };
            }
            None => {} // no timers: serve it, and refresh at once
        }
        let change = Change::Whole { zone, history, journal: Vec::new() };
        if let Err(why) = self.commit(change, Notify::No).await {
            return LoadOutcome::Failed(why.to_string());
        }
        info!(zone = %self.plan.name, serial, records, refresh_in = self.schedule.refresh_at.unwrap_or(0).saturating_sub(self.now()), "zone loaded from the kept copy");
        LoadOutcome::Loaded { serial, records }
    }

    /// The zone expired: stop serving it (SERVFAIL) until a refresh succeeds.
    pub(super) fn expire(&mut self) {
        error!(zone = %self.plan.name, "zone expired: no successful refresh within the SOA expire time; answering SERVFAIL until refreshed");
        if self.slot.replace(self.current.as_ref(), None) {
            self.schedule.expired = true;
        }
    }

    /// Takes what a refresh brought (see the module comment).
    pub(crate) async fn take_fetched(&mut self, fetched: Result<Fetched, Error>) {
        match fetched {
            Ok(Fetched::UpToDate { serial }) => self.confirmed(serial),
            Ok(Fetched::Zone { zone, changes, log }) => self.take(*zone, changes, log).await,
            Err(why) => self.refresh_failed(&why),
        }
    }

    /// What a refresh starts from: the served version, or a signing secondary's version
    /// from its primary (its serials are the primary's, not ours).
    pub(crate) fn refresh_base(&self) -> Option<Arc<ZoneContents>> {
        match self.plan.signing {
            Some(_) => self.upstream.clone(),
            None => self.current.clone(),
        }
    }

    /// The primary has what we have: the timers start again.
    fn confirmed(&mut self, serial: u32) {
        let ours = self.refresh_base().map(|z| z.serial());
        if self.schedule.expired && ours == Some(serial) && self.serve_again() {
            info!(zone = %self.plan.name, serial, "zone served again: the primary confirmed our serial");
        }
        self.succeeded();
        self.store_timers();
    }

    /// Commits a new version ([`crate::commit`]: journaled when incremental, published,
    /// our own secondaries told), then keeps it on disk.
    async fn take(&mut self, zone: ZoneContents, changes: Vec<Changeset>, log: TransferLog) {
        let mut incremental = !changes.is_empty();
        let serial = zone.serial();
        let (records, elapsed_ms) =
            (zone.record_count(), u64::try_from(log.elapsed.as_millis()).unwrap_or(u64::MAX));
        // A signing secondary keeps the primary's version, and commits the difference
        // from what it serves (signed by the commit's sign step, under its own serial).
        let upstream = self.plan.signing.as_ref().map(|_| Arc::new(zone.clone()));
        let change = match (incremental, &upstream) {
            (_, Some(_)) => {
                incremental = self.current.is_some();
                Change::Whole { zone, history: History::default(), journal: Vec::new() }
            }
            (true, None) => {
                Change::Built { zone, changes: changes.into_iter().map(Arc::new).collect() }
            }
            (false, None) => {
                Change::Whole { zone, history: History::default(), journal: Vec::new() }
            }
        };
        let zone = match self.commit(change, Notify::Yes).await {
            Ok(zone) => zone,
            Err(why) => return self.refresh_failed(&why),
        };
        if let Some(upstream) = upstream {
            self.keep_upstream(&upstream);
            self.upstream = Some(upstream);
        }
        let from = log.from.map_or_else(|| "-".to_owned(), |s| s.to_string());
        info!(zone = %self.plan.name, peer = %log.peer, kind = log.kind, transport = log.transport, from, serial, records, transferred = log.records, bytes = log.bytes, messages = log.messages, elapsed_ms, "transfer in done");
        control().transfer_done(Direction::In, log.bytes, log.elapsed);
        self.succeeded();
        if incremental {
            // The journal holds the change; the zone file is written when it is compacted.
            self.store_timers();
            if self.compaction_due() {
                self.store_zone(Arc::clone(&zone), false);
                self.rewrite_journal(&zone);
            }
        } else {
            self.store_zone(Arc::clone(&zone), true);
            self.rewrite_journal(&zone); // once the file holds it, the journal starts afresh
        }
    }

    /// Restarts the timers after a successful refresh: refresh and expire from the SOA.
    fn succeeded(&mut self) {
        let t = self.now();
        let soa = self.current.as_ref().and_then(|z| z.soa_numbers());
        let bounds = self.plan.timers;
        let refresh = soa.map_or(3600, |s| u64::from(s.refresh));
        self.schedule.refresh_at = Some(t + clamp(refresh, bounds.refresh));
        self.schedule.expire_at =
            soa.map(|s| t + u64::from(s.expire).max(clamp(refresh, bounds.refresh)));
        self.schedule.last_refresh = t;
        self.schedule.failures = 0;
        self.last_error = None;
    }

    /// A failed refresh: retry after the SOA's retry interval, or `retry-min` when there
    /// is no SOA yet, growing with the failures in a row ([`retry_after`]).
    /// Counted as a failed transfer in.
    fn refresh_failed(&mut self, why: &Error) {
        control().transfer_failed(Direction::In);
        self.schedule.failures = self.schedule.failures.saturating_add(1);
        let soa = self.current.as_ref().and_then(|z| z.soa_numbers());
        let intervals = soa.map(|soa| (u64::from(soa.retry), u64::from(soa.refresh)));
        let mut random = [0u8; 4];
        let _ = aws_lc_rs::rand::fill(&mut random); // without randomness, no jitter
        let retry = retry_after(
            self.schedule.failures,
            intervals,
            self.plan.timers,
            u32::from_ne_bytes(random),
        );
        self.schedule.refresh_at = Some(self.now() + retry);
        let kept = if self.current.is_some() {
            "the served version is kept"
        } else {
            "nothing served yet"
        };
        warn!(zone = %self.plan.name, retry_in = retry, "refresh failed ({kept}): {why}");
        self.last_error = Some((self.now(), format!("refresh failed: {why}")));
        self.store_timers();
    }

    /// Writes the zone file and the timers after it.
    pub(crate) fn store_zone(&mut self, zone: Arc<ZoneContents>, large: bool) {
        let ZoneSource::File(path) = self.plan.source.clone() else { return };
        let (timers, name) = (self.timers(), self.plan.name.clone());
        self.store(move || {
            if let Err(e) =
                storage::write_zone(&path, &zone, "kept by ternd (received by zone transfer)")
            {
                error!(zone = %name, file = %path.display(), "cannot keep the zone on disk: {e}");
                return;
            }
            if let Err(e) = timers.save(&storage::timers_path(&path)) {
                error!(zone = %name, "cannot keep the zone's timers on disk: {e}");
            }
            if large {
                crate::tidy::after_transfer(u64::try_from(zone.record_count()).unwrap_or(u64::MAX));
            }
        });
    }

    /// Writes the zone file and the timers now, and waits until they are written
    /// (`zone-flush`).
    pub async fn store_now(&mut self) -> Result<String, Error> {
        let zone = self.current.clone().ok_or(Error::NothingServed)?;
        if !matches!(self.plan.source, ZoneSource::File(_)) {
            return Err(Error::NoFile);
        }
        self.store_zone(Arc::clone(&zone), true);
        self.rewrite_journal(&zone);
        if let Some(writing) = self.storing.take() {
            let _ = writing.await;
        }
        Ok(format!("zone file written (serial {})", zone.serial()))
    }

    /// Writes the timers alone.
    fn store_timers(&mut self) {
        let ZoneSource::File(path) = self.plan.source.clone() else { return };
        if self.current.is_none() {
            return;
        }
        let (timers, name) = (self.timers(), self.plan.name.clone());
        self.store(move || {
            if let Err(e) = timers.save(&storage::timers_path(&path)) {
                error!(zone = %name, "cannot keep the zone's timers on disk: {e}");
            }
        });
    }

    /// Runs `write` on a blocking thread once the previous write is done: one write to
    /// the zone's files at a time, in order, off the path to publishing.
    pub(super) fn store(&mut self, write: impl FnOnce() + Send + 'static) {
        let previous = self.storing.take();
        self.storing = Some(tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let _ = tokio::task::spawn_blocking(write).await;
        }));
    }

    fn timers(&self) -> Timers {
        Timers {
            serial: self.current.as_ref().map_or(0, |z| z.serial()),
            last_refresh: self.schedule.last_refresh,
            next_refresh: self.schedule.refresh_at.unwrap_or(0),
            expire_at: self.schedule.expire_at.unwrap_or(0),
        }
    }
}

fn clamp(seconds: u64, (min, max): (Duration, Duration)) -> u64 {
    seconds.clamp(min.as_secs(), max.as_secs().max(min.as_secs()))
}

/// Failures in a row after which the retry interval stops doubling (without an SOA:
/// `retry-min` × 1024, 34 minutes by default).
const MAX_DOUBLINGS: u32 = 10;

/// Seconds before retrying after `failures` failed refreshes in a row: the SOA's retry
/// interval (RFC 1034 §4.3.5), or `retry-min` when there is no SOA yet, doubled with each
/// failure after the first, up to the SOA's refresh interval (a failing zone is checked
/// no less often than a working one) or `retry-min` doubled [`MAX_DOUBLINGS`] times,
/// within `retry-min` and `retry-max`; then less up to a quarter, as `random` says, so
/// that zones failing together (a catalog's members, when their primary is down) spread
/// their retries instead of coming back together.
fn retry_after(failures: u32, soa: Option<(u64, u64)>, bounds: TimerBounds, random: u32) -> u64 {
    let floor = bounds.retry.0.as_secs().max(1);
    let (base, cap) = match soa {
        Some((retry, refresh)) => {
            (clamp(retry, bounds.retry), clamp(refresh.max(retry), bounds.retry))
        }
        None => (clamp(floor, bounds.retry), clamp(floor << MAX_DOUBLINGS, bounds.retry)),
    };
    let doublings = failures.saturating_sub(1).min(MAX_DOUBLINGS);
    let grown = base.saturating_mul(1 << doublings).min(cap.max(base));
    let jitter = grown / 4 * u64::from(random) / u64::from(u32::MAX);
    grown.saturating_sub(jitter).max(floor)
}

/// A refresh, run on a blocking thread.
#[derive(Debug)]
pub(crate) struct Job {
    /// The network.
    pub network: Arc<dyn Network>,
    /// The zone.
    pub zone: Name,
    /// Its primaries, in order.
    pub primaries: Vec<Remote>,
    /// What is served (`None`: transfer the whole zone).
    pub current: Option<Arc<ZoneContents>>,
    /// Time and size limits.
    pub limits: Limits,
}

impl Job {
    /// Tries each primary address in order; the first that answers decides.
    pub fn run(self) -> Result<Fetched, Error> {
        let mut failed = Vec::new();
        for remote in &self.primaries {
            for &addr in &remote.addrs {
                match self.from(remote.peer(addr)) {
                    Ok(fetched) => return Ok(fetched),
                    Err(error) => {
                        failed.push(PrimaryFailed { remote: remote.id.clone(), addr, error })
                    }
                }
            }
        }
        Err(Error::Primaries(failed))
    }

    /// Refreshes from one primary address.
    fn from(&self, peer: Peer<'_>) -> Result<Fetched, Error> {
        let theirs = match self.network.soa_serial(peer, &self.zone, self.limits.timeout) {
            Ok(serial) => Some(serial),
            // Some primaries refuse queries for zones they only transfer (Knot DNS, for
            // catalog zones): the IXFR then says whether there is anything newer.
            Err(ClientError::Rcode(Rcode::REFUSED)) => None,
            Err(e) => return Err(e.into()),
        };
        let ours = self.current.as_ref().map(|z| z.serial());
        if let (Some(ours), Some(theirs)) = (ours, theirs) {
            if !serial_gt(theirs, ours) {
                if theirs != ours {
                    warn!(zone = %self.zone, peer = %peer.addr, theirs, ours, "the primary's serial is lower than ours: kept ours");
                }
                return Ok(Fetched::UpToDate { serial: ours });
            }
        }
        let soa = self.current.as_ref().and_then(|z| z.soa_record());
        match self.transfer(peer, soa.as_ref()) {
            Err(cut @ Error::Remote(ClientError::TooLong(_))) => Err(cut),
            Err(why) if soa.is_some() => {
                warn!(zone = %self.zone, peer = %peer.addr, "IXFR failed, trying AXFR: {why}");
                self.transfer(peer, None)
            }
            other => other,
        }
    }

    /// One transfer (IXFR from `soa`, or AXFR) and the new version it gives.
    fn transfer(&self, peer: Peer<'_>, soa: Option<&RecordData>) -> Result<Fetched, Error> {
        let started = Instant::now();
        let got: TransferIn = self.network.transfer(peer, &self.zone, soa, self.limits)?;
        let from = soa.and_then(RecordData::soa_serial);
        let mut log = TransferLog {
            peer: peer.addr,
            kind: "AXFR",
            transport: if peer.tls.is_some() { "tls" } else { "tcp" },
            from,
            messages: got.messages,
            records: got.records,
            bytes: got.bytes,
            elapsed: Duration::ZERO,
        };
        let (zone, changes) = match got.received {
            Received::UpToDate { serial } => return Ok(Fetched::UpToDate { serial }),
            Received::Full(zone, _report) => {
                log.kind = if soa.is_some() { "IXFR (whole zone)" } else { "AXFR" };
                self.check_rises(zone.serial())?;
                (*zone, Vec::new())
            }
            Received::Changes(changes) => {
                log.kind = "IXFR";
                (self.apply(&changes)?, changes)
            }
        };
        log.elapsed = started.elapsed();
        if got.outside.count > 0 {
            let first = got.outside.first.as_deref().unwrap_or("-");
            warn!(zone = %self.zone, peer = %peer.addr, kind = log.kind, ignored = got.outside.count, first, "records outside the zone in the transfer: ignored");
        }
        Ok(Fetched::Zone { zone: Box::new(zone), changes, log })
    }

    /// A new version must have a higher serial than ours (RFC 1982).
    fn check_rises(&self, serial: u32) -> Result<(), Error> {
        match self.current.as_ref().map(|z| z.serial()) {
            Some(ours) if !serial_gt(serial, ours) => Err(Error::NotNewer { got: serial, ours }),
            _ => Ok(()),
        }
    }

    /// Applies IXFR changesets in order, each kept in the history.
    fn apply(&self, changes: &[Changeset]) -> Result<ZoneContents, Error> {
        let current = self.current.as_ref().ok_or(Error::NothingServed)?;
        let zone = apply_all(current, changes)
            .map_err(|why| Error::Apply { what: "the changes do not apply", why })?;
        self.check_rises(zone.serial())?;
        Ok(zone)
    }
}

/// `changes` applied in order to a copy of `zone` (the history is the commit's).
fn apply_all(zone: &ZoneContents, changes: &[Changeset]) -> Result<ZoneContents, tern_zone::Error> {
    let mut zone: ZoneContents = zone.clone();
    for change in changes {
        zone.apply_in_place(change)?; // an error drops the half-changed copy
    }
    Ok(zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: TimerBounds = TimerBounds {
        refresh: (Duration::from_secs(2), Duration::from_secs(86_400)),
        retry: (Duration::from_secs(2), Duration::from_secs(86_400)),
    };

    /// Issue 49: 100,000 failing catalog members retried at `retry-min` hit their
    /// primary hundreds of times a second, all together. Retries double up to a cap,
    /// and spread over the last quarter of the interval.
    #[test]
    fn retries_double_up_to_a_cap_and_spread() {
        let none: Vec<u64> = (1..=13).map(|n| retry_after(n, None, BOUNDS, 0)).collect();
        assert_eq!(none[..4], [2, 4, 8, 16]);
        assert_eq!(none[10..], [2048, 2048, 2048], "{none:?}");
        let soa = Some((600, 3600));
        let with: Vec<u64> = (1..=5).map(|n| retry_after(n, soa, BOUNDS, 0)).collect();
        assert_eq!(with, [600, 1200, 2400, 3600, 3600], "capped by the refresh interval");
        assert_eq!(retry_after(1, Some((0, 0)), BOUNDS, 0), 2, "within retry-min");
        let tight =
            TimerBounds { retry: (Duration::from_secs(5), Duration::from_secs(60)), ..BOUNDS };
        assert_eq!(retry_after(20, None, tight, 0), 60, "within retry-max");
        assert_eq!(retry_after(3, soa, BOUNDS, u32::MAX), 1800, "a quarter less at most");
        let spread: std::collections::HashSet<u64> =
            (0..64u32).map(|i| retry_after(3, soa, BOUNDS, i << 26)).collect();
        assert!(spread.len() > 32, "{spread:?}");
        assert!(spread.iter().all(|s| (1800..=2400).contains(s)));
        assert_eq!(retry_after(1, None, BOUNDS, u32::MAX), 2, "never below retry-min");
    }
}
