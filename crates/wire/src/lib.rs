//! The DNS wire library of Tern: names, record types, typed RDATA, presentation format,
//! messages, EDNS(0) and TSIG.
//!
//! Nothing here does I/O or knows about zones; the zone store, the query engine and the
//! server build on these pieces. Every parser is bounds-checked and reports where the
//! input went wrong: a byte offset for wire data, a line and column for text.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod ascii;
pub mod base64;
pub mod bytes;
pub mod edns;
pub mod error;
pub mod message;
pub mod name;
pub mod rdata;
pub mod text;
pub mod tsig;
pub mod types;

pub use error::{Error, Result};
pub use name::{Dname, LookupKey, Name, NameBuf, NameBuilder};
pub use types::{Class, Opcode, Rcode, Rtype};
