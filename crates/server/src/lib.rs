//! The Tern daemon as a library: configuration, the UDP and TCP data planes, and the
//! process lifecycle around them.
//!
//! The I/O layer knows nothing of DNS answers: per query it calls a [`Handler`], the seam
//! where the query engine plugs in. Zone data is (re)loaded through the [`Reload`] hook.
//! The `ternd` binary (`src/main.rs`) wires these together.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod config;
pub mod error;

pub use error::{Error, Result};
pub mod handler;
pub mod stats;
pub mod udp;

pub use handler::{Handler, RequestContext, Transport};
pub mod tcp;
pub mod refuse;
pub mod server;
