//! Zones for Tern: zone files in, immutable query-ready snapshots out.
//!
//! * [`parser`] reads zone files (RFC 1035 §5) and streams records.
//! * [`builder`] turns a stream of records into a [`ZoneContents`] snapshot, running the
//!   [`adjust`] pass and the semantic [`check`]s; [`load`] joins the two for a file.
//! * [`contents`] is the snapshot and its one-lookup query API; [`node`] the node layout.
//! * [`changeset`] applies changes copy-on-write, [`diff`] finds the change between two
//!   versions and [`history`] keeps recent changes for IXFR; [`transfer`] reads a
//!   received AXFR/IXFR; [`db`] holds the served zones, and
//!   [`pins`] a reader's hold on them for a batch of queries.
//! * [`hash`], [`index`] and [`cow`] are the copy-on-write name table underneath;
//!   [`nsec3`] holds the NSEC3 chain.
//!
//! Nothing here touches sockets.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod adjust;
pub mod blob;
pub mod builder;
pub mod changeset;
pub mod check;
pub mod contents;
pub mod cow;
pub mod db;
pub mod diff;
pub mod error;
pub mod hash;
pub mod history;
pub mod index;
pub mod load;
pub mod memory;
pub mod negative_soa;
pub mod node;
pub mod nsec3;
pub mod parser;
pub mod pins;
pub mod records;
pub mod report;
pub mod transfer;

pub use builder::ZoneBuilder;
pub use changeset::{Changeset, ChangesetError, RecordData};
pub use contents::{Denial, Lookup, ZoneContents, APEX};
pub use db::{ContentsGuard, ZoneDb, ZoneSet, ZoneSlot};
pub use error::{Error, Position, Result};
pub use history::{History, HistoryLimits};
pub use load::{load_bytes, load_file, Loaded, Progress};
pub use negative_soa::NegativeSoa;
pub use node::{has_targets, Flags, Node, NodeId, Rrset, NO_NODE, NSEC3_COVERS};
pub use parser::{parse_bytes, parse_file, Options, Record, RecordBuf};
pub use pins::{Pin, Pins};
pub use report::{Issue, Report, Severity};

#[cfg(test)]
mod changeset_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod testutil;
