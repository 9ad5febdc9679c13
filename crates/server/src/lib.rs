//! The Tern daemon as a library: configuration, the UDP and TCP data planes, and the
//! process lifecycle around them.
//!
//! The I/O layer knows nothing of DNS answers: per query it calls a [`Handler`], the seam
//! where the query engine plugs in. Zone data is loaded and changed by the control plane
//! ([`tern_control`]): one writer task per zone.
//! The `ternd` binary (`src/main.rs`) wires these together; tests start the same server
//! in-process with [`io::server::start`].

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod check_config;
pub mod check_zone;
pub mod cli;
pub mod client;
pub mod config;
pub mod counters;
pub mod ctl;
pub mod demo;
pub mod dns;
pub mod error;
pub mod handler;
pub mod http;
pub mod io;
pub mod lifecycle;
pub mod logging;
pub mod manpage;
pub mod privileges;
pub use tern_control::priority;
pub mod random;
pub mod rrl;
pub mod signals;
pub mod stats;
pub mod tls;
pub mod version;

pub use config::Config;
pub use dns::EngineHandler;
pub use error::{Error, Result};
pub use handler::{Handler, MessageStream, RequestContext, Transport};
pub use io::server::{Listeners, RunningServer};
pub use lifecycle::ReloadReport;
