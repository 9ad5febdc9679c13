//! Tern's control plane: everything that changes what is served, on its own runtime and
//! threads, never on the data plane's.
//!
//! One writer per zone ([`writer`]) owns the zone's slot, its current version, its
//! history, its timers and its NOTIFY state; its task runs while the zone has something
//! to do, and an idle writer rests without one ([`dormant`]), its deadlines in one timer
//! queue for all zones ([`timer_queue`]). Everything that changes a zone reaches it as
//! an [`Event`] and is handled in order: a (re)load, a NOTIFY from a primary, a timer, an
//! operator's command, a batch of dynamic updates. Every change to a zone, whatever its
//! source, passes through one function, [`Writer::commit`](writer::Writer::commit):
//! sign (a step of its own, a no-op until online signing), journal and sync, history,
//! publish (checked against the version it started from), then NOTIFY; the caller
//! acknowledges once it returns.
//!
//! * [`plane`]: [`Control`], its runtime and options, the zones' writers as others see
//!   them ([`Zones`]), and the loads of an apply ([`Loading`]).
//! * [`writer`] (what a writer holds, and publishing), [`run`] (its event loop),
//!   [`event`] (what it is told and says), [`state`] (what it keeps between events),
//!   [`shared`] (what all writers share), [`inbox`], [`registry`] (the writers by name),
//!   [`dormant`] (an idle writer at rest, and its wake), [`timer_queue`] (the deadlines
//!   of the writers at rest).
//!   [`commit`]: the one commit function.
//! * [`primary`] (zone files, reload differences), [`secondary`] and [`refresh`]
//!   (transfers in, timers, NOTIFY), [`dynamic`] (UPDATE), [`commands`] (operators'
//!   commands and transactions), [`catalog`] (RFC 9432), [`notify`] (NOTIFY out).
//! * [`journaled`] (a zone's journal in its writer), [`listing`] (the journals the start
//!   found, read once), [`storage`] (files a zone keeps),
//!   [`tidy`] (the memory housekeeping after transfers),
//!   [`backup`] (`zone-backup` and `zone-restore`), [`keystore`] (a zone's DNSSEC keys
//!   and their state, BIND key import, DNSKEY and DS export).
//! * [`plan`]: what the server tells the control plane about each zone;
//!   [`query_stats`]: which zones have their queries counted.
//! * [`clock`]: the time, passed in; [`peer`]: other servers, reached through the
//!   server's [`peer::Network`].
//! * [`updates`]: dynamic updates on their way from the data plane to a zone's writer
//!   and back; [`refusals`]: the rate-limited log of refused requests.
//! * [`counters`]: the control plane's counters, and what every set of counters shares.
//! * [`progress`]: log lines for long zone loads. [`error`]: the one error type.
//! * [`priority`]: the control plane's threads yield the CPU to the data plane's.
//!
//! Nothing here opens a socket: the server implements the traits through which the
//! control plane reaches the network ([`peer::Network`], [`updates::Datagrams`]).

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod backup;
mod blocking;
pub mod catalog;
pub mod change;
pub mod clock;
pub mod commands;
pub mod commit;
pub mod counters;
pub mod database;
pub mod database_follow;
pub mod database_kept;
pub mod database_load;
pub mod dormant;
pub mod dynamic;
pub mod error;
pub mod event;
pub mod inbox;
pub mod journaled;
pub mod keystore;
pub mod listing;
pub mod notify;
pub mod peer;
pub mod plan;
pub mod plane;
pub mod primary;
pub mod priority;
pub mod progress;
pub mod query_stats;
pub mod refresh;
pub mod refusals;
pub mod registry;
pub mod run;
pub mod script;
pub mod secondary;
pub mod shared;
pub mod signed_zone;
pub mod signer;
pub mod state;
pub mod storage;
pub mod tidy;
pub mod timer_queue;
pub mod updates;
pub mod writer;

#[cfg(test)]
mod testing;

pub use error::{Error, Result};
pub use event::{Event, LoadOutcome, NoticeFrom, Notified, WriterInbox};
pub use plane::{Control, Loading, Options, ReloadReport, Zones};
pub use shared::{CatalogSink, Members, Shared};
