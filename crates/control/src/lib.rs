//! Tern's control plane: everything that changes what is served.
//!
//! * [`plan`]: what the server tells the control plane about each zone.
//! * [`clock`]: the time, passed in.
//! * [`updates`]: dynamic updates on their way from the data plane to a zone's writer
//!   and back; [`refusals`]: the rate-limited log of refused requests.
//! * [`counters`]: the control plane's counters, and what every set of counters shares.
//! * [`progress`]: log lines for long zone loads.
//! * [`peer`]: other servers, reached through the server's [`peer::Network`].
//!
//! Nothing here opens a socket: the server implements the traits through which the
//! control plane reaches the network ([`peer::Network`], [`updates::Datagrams`]).

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod clock;
pub mod counters;
pub mod error;
pub mod peer;
pub mod plan;
pub mod progress;
pub mod refusals;
pub mod updates;

pub use error::{Error, Result};
