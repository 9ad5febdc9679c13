//! Tern's control protocol and its client: what `ternctl` (and scripts) ask a running
//! `ternd` over its control socket, and how the answers are shown.
//!
//! * [`proto`]: the requests and replies, one JSON line each way, shared by both ends
//!   (`ternd` serves them, see its `ctl` module).
//! * [`client`]: the client's end: connect, send one request, read one reply.
//! * [`cli`]: `ternctl`'s command line, turned into requests; [`render`] its output.
//!
//! This crate does not link the daemon: no async runtime, no server code, so `ternctl`
//! stays small and quick to build.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod cli;
pub mod client;
pub mod manual;
pub mod proto;
pub mod render;

/// `ternctl --version` and `ternd --version`: the version, the commit and the day it
/// was built from (found by this crate's `build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("TERN_COMMIT"),
    ", built ",
    env!("TERN_BUILD_DATE"),
    ")"
);

/// The day this build was made (`YYYY-MM-DD`), for manual pages.
pub const BUILD_DATE: &str = env!("TERN_BUILD_DATE");
