//! DNS messages on the wire (RFC 1035 §4.1): the header, a reader that decompresses
//! names safely, and a writer that compresses them in linear time.
//!
//! * [`MessageReader`] walks a received message without allocating (see [`reader`]).
//! * [`MessageWriter`] builds a message in a caller's buffer (see [`writer`]), using a
//!   reusable [`CompressionTable`] (see [`compress`]).
//! * [`read_name`] decodes one possibly compressed name (see [`decompress`]).
//!
//! EDNS(0) lives in [`crate::edns`], TSIG in [`crate::tsig`]; both build on these types.

mod anchor;
pub mod compress;
pub mod decompress;
pub mod header;
pub mod prepared;
pub mod reader;
pub mod scratch;
pub mod writer;

#[cfg(test)]
mod tests;

pub use compress::CompressionTable;
pub use decompress::{read_name, read_name_in, MAX_RDATA_LEN};
pub use header::{Flags, Header, Section, HEADER_LEN};
pub use prepared::PreparedRrset;
pub use reader::{MessageReader, Question, Record, RecordIn};
pub use scratch::{with_buffer, with_table};
pub use writer::{Compression, Mark, MessageWriter, Owner, RrsetHead, MAX_MESSAGE_LEN};
