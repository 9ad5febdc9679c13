//! Zones for Tern: the zone-file parser, and (as they land) the zone contents, the adjust
//! pass and the zone database.
//!
//! Nothing here touches sockets; the server loads zones through this crate and serves
//! the snapshots it builds.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod error;
pub mod parser;

pub use error::{Error, Position, Result};
pub use parser::{parse_bytes, parse_file, Options, Record, RecordBuf, Report};
