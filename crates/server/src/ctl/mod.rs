//! The server's end of the control socket: `ternctl` (and scripts) steer a running
//! `ternd` through a Unix socket, `[control] socket` in the configuration.
//!
//! The messages (`tern_ctl::proto`: one JSON line each way), the client and `ternctl`
//! itself live in the `tern-ctl` crate, which does not link the daemon. Here:
//! * [`listen`]: the server's end, on the control plane's runtime: peer credentials
//!   checked, the request read (bounded, with a timeout), carried out, answered.
//!   Zone commands go to the zone's writer as events ([`tern_control::commands`]);
//!   what changes the configuration (stop, reload, zones added and removed) goes to the
//!   main thread, which owns the configuration ([`MainRequest`]).

pub mod backup;
pub mod listen;

use tern_ctl::proto::Reply;
use tokio::sync::oneshot;

use tern_control::catalog::Listed;

/// What the control socket asks of the main thread.
#[derive(Debug)]
pub enum MainRequest {
    /// Stop, as SIGTERM.
    Stop {
        /// Told once the stop has begun.
        reply: oneshot::Sender<Reply>,
    },
    /// Reload the configuration, as SIGHUP; answered once the loads are done.
    Reload {
        /// Told the outcome.
        reply: oneshot::Sender<Reply>,
    },
    /// Add zones (their tables, as in the configuration file) and keep them.
    ZoneAdd {
        /// The tables.
        tables: Vec<String>,
        /// Told the outcome.
        reply: oneshot::Sender<Reply>,
    },
    /// The zone files of a `ZoneAdd` checked off the main thread: the add goes on when
    /// none failed, and adds nothing otherwise.
    ZoneAddChecked {
        /// The tables.
        tables: Vec<String>,
        /// Where the main thread kept the add as it prepared it.
        ticket: u64,
        /// The zones whose file did not load, and why.
        failures: Vec<String>,
        /// Told the outcome.
        reply: oneshot::Sender<Reply>,
    },
    /// Delete what storage keeps of zones no longer served.
    ZonePurge {
        /// The zones' names.
        zones: Vec<String>,
        /// Told the outcome.
        reply: oneshot::Sender<Reply>,
    },
    /// Reopen the log file, as SIGUSR1.
    LogReopen {
        /// Told the outcome.
        reply: oneshot::Sender<Reply>,
    },
    /// A consumed catalog's members, as its writer read them (RFC 9432).
    Catalog {
        /// The catalog.
        catalog: tern_wire::Name,
        /// Its members by name.
        members: std::collections::BTreeMap<tern_wire::Name, Listed>,
    },
    /// Remove zones added at run time.
    ZoneRemove {
        /// The zones' names.
        zones: Vec<String>,
        /// Told the outcome.
        reply: oneshot::Sender<Reply>,
    },
}
