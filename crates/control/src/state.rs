//! What a zone's writer keeps between events beside its zone: a secondary's timers
//! ([`Schedule`]) and refresh under way ([`Refreshing`], [`Notices`]), what a primary's
//! file was ([`SourceVersion`]), the last batch of updates ([`LastCommit`]) and the
//! journal ([`SharedJournal`]). Below the writer, which holds them, and the modules
//! that change them.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use tern_journal::Journal;
use tern_zone::ZoneContents;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::event::Outcome;
use crate::plan::{Remote, ZoneSource};
use crate::updates::UpdateTask;

/// When a secondary does what next (seconds since the epoch).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Check the primary then (`None`: not a secondary, or not started).
    pub refresh_at: Option<u64>,
    /// Stop serving then unless refreshed before (`None`: no data to expire).
    pub expire_at: Option<u64>,
    /// The last successful refresh.
    pub last_refresh: u64,
    /// The zone expired and is not served.
    pub expired: bool,
    /// Refreshes that failed in a row (for the retry interval without an SOA).
    pub failures: u32,
}

impl Schedule {
    /// The next time something is due.
    pub fn next_wake(&self) -> Option<u64> {
        let expire = self.expire_at.filter(|_| !self.expired);
        match (self.refresh_at, expire) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What a zone file was when loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceVersion {
    /// A file's size and modification time.
    File { len: u64, modified: Option<SystemTime> },
    /// Text built into the binary.
    Embedded,
    /// A produced catalog, by a hash of its members.
    Catalog(u64),
}

/// The file's version (`None` when it cannot be read: load, and fail with the reason).
pub fn version(source: &ZoneSource) -> Option<SourceVersion> {
    match source {
        ZoneSource::File(path) => {
            let meta = std::fs::metadata(path).ok()?;
            Some(SourceVersion::File { len: meta.len(), modified: meta.modified().ok() })
        }
        ZoneSource::Script(script) => {
            let meta = std::fs::metadata(&script.path).ok()?;
            Some(SourceVersion::File { len: meta.len(), modified: meta.modified().ok() })
        }
        ZoneSource::Embedded(_) => Some(SourceVersion::Embedded),
        // Read again at every load: a notification or an operator asked for it.
        ZoneSource::Database(_) => None,
        ZoneSource::Catalog(members) => {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            members.hash(&mut hasher);
            Some(SourceVersion::Catalog(hasher.finish()))
        }
    }
}

/// Someone waiting for a refresh's outcome (an operator's command).
pub(crate) type Waiter = oneshot::Sender<Outcome>;

/// A refresh under way.
#[derive(Debug)]
pub struct Refreshing {
    /// The task (aborted when the writer stops; its blocking part then ends on its own).
    pub(crate) task: JoinHandle<()>,
    /// A whole transfer, whatever the serials.
    pub(crate) full: bool,
    /// The version it started from.
    pub(crate) base: Option<Arc<ZoneContents>>,
    /// The primaries it asks.
    pub(crate) primaries: Vec<Remote>,
    /// Told its outcome.
    pub(crate) waiters: Vec<Waiter>,
    /// Another refresh once it is over (`Some(full)`).
    pub(crate) again: Option<bool>,
    /// Told the outcome of that one.
    pub(crate) next_waiters: Vec<Waiter>,
}

/// The NOTIFYs of a secondary, for the pace of the refreshes and log lines they cause.
#[derive(Debug, Default)]
pub struct Notices {
    /// When the last refresh started.
    pub(crate) refresh_started: Option<Instant>,
    /// When the last "NOTIFY received" line was written.
    pub(crate) logged_at: Option<Instant>,
    /// NOTIFYs received since.
    pub(crate) unlogged: u64,
    /// The last of them: its sender and the serial it announced.
    pub(crate) last: Option<(SocketAddr, Option<u32>)>,
    /// One came before the zone's first load (see `Writer::notified`): the load
    /// refreshes once it is done.
    pub(crate) before_load: bool,
}

/// When the last batch of updates was committed, and who sent it (see [`crate::dynamic::COMMIT_GAP`]).
#[derive(Debug, Clone, Copy)]
pub struct LastCommit {
    /// When it began.
    pub began: Instant,
    /// When it was done, before its clients were answered.
    pub ended: Instant,
    /// Who sent it.
    pub senders: Senders,
    /// It was part of a stream (see [`crate::writer::Writer::streaming`]).
    pub stream: bool,
}

/// Who sent a batch of updates (see [`crate::dynamic::COMMIT_GAP`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Senders {
    /// One update, from this UDP client (`None`: over TCP).
    One(Option<SocketAddr>),
    /// Several updates.
    Several,
}

impl Senders {
    pub(crate) fn of(batch: &[UpdateTask]) -> Senders {
        match batch {
            [one] => Senders::One(one.udp_client()),
            _ => Senders::Several,
        }
    }
}

/// A journal shared between the writer and its disk writes.
pub type SharedJournal = Arc<Mutex<Journal>>;
