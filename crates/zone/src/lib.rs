//! Zones for Tern: zone files in, immutable query-ready snapshots out.
//!
//! * [`parser`] reads zone files (RFC 1035 §5) and streams records.
//! * [`ZoneBuilder`] (`builder`) turns a stream of records into a [`ZoneContents`]
//!   snapshot, running the adjust pass and the semantic checks; [`load_file`] joins the
//!   two for a file.
//! * [`ZoneContents`] (`contents`) is the snapshot and its one-lookup query API; [`Node`]
//!   the node layout.
//! * [`ZoneContents::apply`] applies a [`Changeset`] copy-on-write, [`ZoneContents::diff`]
//!   finds the change between two versions and [`History`] keeps recent changes for
//!   IXFR; [`transfer`] reads a received AXFR/IXFR; [`ZoneDb`] holds the served zones,
//!   and [`pins`] a reader's hold on them for a batch of queries.
//! * [`hash`] and the crate's copy-on-write name table are underneath; [`Nsec3Chain`]
//!   holds the NSEC3 chain; [`records`] tells facts about RDATA; [`memory`] hands a
//!   loaded zone's heap to huge pages; [`stats`] the ticket a zone counts its queries
//!   under.
//!
//! Only what other crates use is public: the modules above by name, the rest through
//! the items re-exported here. Nothing here touches sockets.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

mod adjust;
mod blob;
mod builder;
mod changeset;
mod check;
mod contents;
mod cow;
mod db;
mod diff;
pub mod error;
pub mod hash;
mod history;
mod index;
mod load;
pub mod memory;
mod name_map;
mod negative_soa;
mod node;
mod nsec3;
mod nsec3_order;
mod order;
pub mod parser;
pub mod pins;
pub mod records;
mod report;
pub mod stats;
pub mod transfer;

pub use builder::ZoneBuilder;
pub use changeset::{Changeset, ChangesetError, RecordData};
pub use contents::{Denial, Lookup, ZoneContents, APEX};
pub use db::{ContentsGuard, ZoneDb, ZoneSet, ZoneSlot};
pub use error::{Error, Position, Result};
pub use history::{History, HistoryLimits};
pub use index::prefetch_address;
pub use load::{load_bytes, load_file, load_opened, Loaded, Progress};
pub use name_map::{Keyed, NameMap};
pub use negative_soa::NegativeSoa;
pub use node::{has_targets, Flags, Node, NodeId, Rrset, NO_NODE, NSEC3_COVERS, REFS_UNCOUNTED};
pub use nsec3::{decode_hash_label, Nsec3Chain, Nsec3Hash, Nsec3Params, Nsec3Position};
pub use parser::{parse_bytes, parse_file, Options, Record, RecordBuf, ZoneFile};
pub use pins::{Pin, Pins};
pub use report::{Issue, Report, Severity};
pub use stats::StatsTicket;

#[cfg(test)]
mod changeset_signed_tests;
#[cfg(test)]
mod changeset_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod testutil;
