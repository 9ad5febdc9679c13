//! What the parser hands to its consumer: one [`Record`] at a time, borrowed from the
//! parser's buffers (no per-record allocation), and [`RecordBuf`], an owned copy.

use std::fmt;
use std::path::Path;

use tern_wire::{Class, Dname, Name, Rtype};

/// Where a record came from: the file and the line its entry starts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location<'a> {
    /// The file, as named by the caller or by the `$INCLUDE` that read it.
    pub file: &'a Path,
    /// The file's number in this parse: 0 for the zone file, then 1, 2, … for each
    /// `$INCLUDE` in the order they are read. Cheaper to compare than `file`.
    pub file_number: u32,
    /// Line of the record's first token (1-based).
    pub line: u32,
}

/// One resource record, as read from a zone file. Valid only during the sink call.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The owner name, absolute, in the spelling of the file.
    pub owner: &'a Dname,
    /// The class (always the zone's class: the parser refuses others).
    pub class: Class,
    /// The type.
    pub rtype: Rtype,
    /// The TTL in seconds, at most 2^31-1 (RFC 2181 §8).
    pub ttl: u32,
    /// RDATA in uncompressed wire form, names absolute.
    pub rdata: &'a [u8],
    /// The file and line the record came from, for messages.
    pub location: Location<'a>,
}

impl Record<'_> {
    /// An owned copy (for tests, tools and anything that keeps records).
    pub fn to_buf(&self) -> RecordBuf {
        RecordBuf {
            owner: self.owner.to_name(),
            class: self.class,
            rtype: self.rtype,
            ttl: self.ttl,
            rdata: self.rdata.to_vec(),
        }
    }
}

impl fmt::Display for Record<'_> {
    /// The record on one line in presentation format (see [`super::write_record`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        super::print::write_record(self, &mut line);
        f.write_str(line.trim_end_matches('\n'))
    }
}

/// An owned resource record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordBuf {
    /// The owner name.
    pub owner: Name,
    /// The class.
    pub class: Class,
    /// The type.
    pub rtype: Rtype,
    /// The TTL in seconds.
    pub ttl: u32,
    /// RDATA in uncompressed wire form.
    pub rdata: Vec<u8>,
}

impl RecordBuf {
    /// A borrowed view, located at `location`.
    pub fn as_record<'a>(&'a self, location: Location<'a>) -> Record<'a> {
        Record {
            owner: &self.owner,
            class: self.class,
            rtype: self.rtype,
            ttl: self.ttl,
            rdata: &self.rdata,
            location,
        }
    }
}

impl fmt::Display for RecordBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_record(Location { file: Path::new(""), file_number: 0, line: 0 }).fmt(f)
    }
}
