//! The writers' vocabulary: what a zone's writer is told ([`Event`]) and what it says
//! back ([`LoadOutcome`], [`Outcome`]), an operator's commands ([`ZoneCommand`]), what a
//! refresh brings ([`Fetched`]) and what a consumed catalog lists ([`Listed`]). Below
//! everything that handles them, so that none of those modules depends on another for
//! its words.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tern_ctl::proto::{TxnStep, ZoneOp};
use tern_wire::{Name, Rtype};
use tern_zone::{Changeset, ZoneContents};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::inbox;
use crate::plan::ZonePlan;
use crate::updates::UpdateTask;

/// What a zone's writer is told. Kept small (larger parts boxed): every writer's task
/// has room for one, and a server may have 100,000 zones.
#[derive(Debug)]
pub enum Event {
    /// The configuration was (re)applied: take this plan and (re)load.
    Load {
        /// The zone's plan.
        plan: Arc<ZonePlan>,
        /// Where to report the outcome.
        done: Option<Box<LoadDone>>,
    },
    /// An allowed primary sent a NOTIFY (RFC 1996): refresh now. NOTIFYs that come
    /// while one waits are merged into it ([`inbox::Inbox::send_merged`]).
    Notify(Box<Notified>),
    /// A refresh the writer started is over (see [`refresh`](crate::refresh)): its
    /// outcome, which the writer alone publishes.
    Refreshed(Box<Fetch>),
    /// An operator's command (the control socket).
    Command {
        /// What to do.
        command: Box<ZoneCommand>,
        /// Where to say how it went.
        reply: oneshot::Sender<Outcome>,
    },
    /// A deadline the writer registered when it went to rest fell due
    /// ([`crate::timer_queue`]): it does what is due, as its own timer would have.
    TimerDue,
    /// The zone is no longer configured.
    Stop,
}

/// A NOTIFY from a primary, and how many more were merged into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notified {
    /// The serial it announced (the latest one's).
    pub serial: Option<u32>,
    /// Who sent it (the latest one).
    pub from: SocketAddr,
    /// NOTIFYs merged into this one.
    pub merged: u32,
}

/// Where a load's outcome goes, and the place among the loads started at once that it
/// holds until then (see [`crate::plane`]'s pacing).
#[derive(Debug)]
pub struct LoadDone {
    to: oneshot::Sender<LoadOutcome>,
    _turn: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl LoadDone {
    /// The outcome to `to`.
    pub fn to(to: oneshot::Sender<LoadOutcome>) -> Box<LoadDone> {
        Box::new(LoadDone { to, _turn: None })
    }

    /// The outcome to `to`, holding `turn` until sent.
    pub fn holding(
        to: oneshot::Sender<LoadOutcome>,
        turn: tokio::sync::OwnedSemaphorePermit,
    ) -> Box<LoadDone> {
        Box::new(LoadDone { to, _turn: Some(turn) })
    }

    /// Reports `outcome` (to no one if the receiver is gone) and gives the turn back.
    pub fn send(self, outcome: LoadOutcome) {
        let _ = self.to.send(outcome);
    }
}

/// How a zone's load went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// Served at this serial with this many records.
    Loaded {
        /// SOA serial.
        serial: u32,
        /// Records.
        records: u64,
    },
    /// Nothing changed since the last load.
    Unchanged {
        /// Records served.
        records: u64,
    },
    /// A secondary with no data yet: it is being transferred.
    Waiting,
    /// The load failed (the previous data, if any, is still served).
    Failed(String),
}

/// A writer's events and the updates waiting for it.
pub type WriterInbox = inbox::Inbox<Event, UpdateTask>;

/// What an operator asks of a zone.
#[derive(Debug, Clone)]
pub enum ZoneCommand {
    /// An operation (see [`ZoneOp`]).
    Op(ZoneOp),
    /// The records, optionally of one owner and type, in zone-file form.
    Read {
        /// Owner (already made absolute).
        owner: Option<Name>,
        /// Type.
        rtype: Option<Rtype>,
    },
    /// A transaction's step.
    Txn(TxnStep),
    /// Sets and unsets applied at once, as a transaction of their own (the HTTP API's
    /// RRset changes); an operator's open transaction is left alone.
    Apply(Vec<TxnStep>),
    /// Copy the served data and the journal into this directory ([`crate::backup`]).
    Backup(PathBuf),
    /// Serve the data a backup in this directory holds again ([`crate::backup`]).
    Restore(PathBuf),
    /// Import a BIND key into the zone's key store (`zone-key-import`).
    KeyImport(Box<crate::keystore::bind::BindFiles>),
    /// The DNSKEY and DS records of a key, or of the KSKs and CSKs (`zone-key-export`).
    KeyExport(Option<u32>),
}

/// A command's outcome: what was done, or why not.
pub type Outcome = Result<String>;

/// What a refresh brought, handed back to its writer.
#[derive(Debug)]
pub struct Fetch(pub Result<Fetched, Error>);

/// How a refresh ended.
#[derive(Debug)]
pub enum Fetched {
    /// The primary has nothing newer.
    UpToDate { serial: u32 },
    /// A new version, with its history, the changes that made it (IXFR; none for a
    /// whole zone), and what the transfer was.
    Zone { zone: Box<ZoneContents>, changes: Vec<Changeset>, log: TransferLog },
}

/// What one transfer in was, for its log line.
#[derive(Debug)]
pub struct TransferLog {
    pub(crate) peer: SocketAddr,
    pub(crate) kind: &'static str,
    /// `tcp`, or `tls` (RFC 9103).
    pub(crate) transport: &'static str,
    pub(crate) from: Option<u32>,
    pub(crate) messages: u64,
    pub(crate) records: u64,
    pub(crate) bytes: u64,
    pub(crate) elapsed: Duration,
}

/// A member as a consumed catalog lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The member zone.
    pub zone: Name,
    /// Its unique label.
    pub id: Vec<u8>,
    /// Its `group` property (the first TXT string, when several).
    pub group: Option<String>,
    /// Its `coo` property: the catalog it may move to.
    pub coo: Option<Name>,
}

/// A NOTIFY the data plane accepted, and who sent it.
pub type NoticeFrom = (tern_engine::Notice, SocketAddr);
