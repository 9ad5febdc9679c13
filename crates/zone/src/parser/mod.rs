//! The zone-file parser (RFC 1035 §5, with `$TTL` from RFC 2308 §4 and BIND's
//! `$GENERATE`), streaming records to a sink.
//!
//! A file is read a chunk at a time into one buffer (the `chunks` module) and run through
//! [`tern_wire::text::Lexer`]; each record's RDATA goes straight into wire form with
//! [`tern_wire::rdata::parse_text`], in a buffer reused for every record, and the sink
//! receives a borrowed [`Record`]. Nothing is allocated per record, and memory does not
//! grow with the file.
//!
//! What a file may contain, and how the parser decides what RFC 1035 leaves open:
//!
//! * Entries end at a newline outside parentheses; `;` starts a comment; quoted strings,
//!   `\X` and `\DDD` escapes, `@` for the origin, relative names completed with the
//!   origin, `TYPEnnn`, `CLASSnnn` and the RFC 3597 `\# len hex` RDATA form.
//! * A token at the start of a line is the owner, even if it looks like a type or class.
//!   A line starting with a blank reuses the previous record's owner *in the same file*.
//! * TTL and class may come in either order. A stated class must be the zone's
//!   ([`Options::class`]). A TTL above 2^31-1 (up to 2^32-1) is taken as 0 with a warning
//!   (RFC 2181 §8, as BIND does).
//! * A record without a TTL takes the `$TTL` in force; without one, the last TTL stated in
//!   the file (RFC 1035 §5.1: "the last explicitly stated values"); without that,
//!   [`Options::default_ttl`] (3600, as Knot DNS and NSD), with a warning. BIND would use
//!   the SOA MINIMUM for the SOA and reject other records.
//! * `$ORIGIN name` (relative to the current origin), `$TTL ttl`, `$INCLUDE file
//!   [origin]` (paths and scoping are described in the `include` module) and
//!   `$GENERATE` (the `generate` module).
//! * Errors read `file:line:column: what was expected, found what`, plus the `$INCLUDE`
//!   chain. [`Options::collect_errors`] keeps reading after an error (skipping the rest of
//!   the bad entry) and returns them all, up to [`Options::max_errors`].
//!
//! Checks that need the whole zone (records outside the zone, CNAME beside other data,
//! a missing SOA) belong to the zone store, which is the sink.
//!
//! [`write_record`] prints records back, one per line with absolute names.
//! [`find_origin`] tells a zone's origin from its file (its SOA's owner, else its first
//! `$ORIGIN`) for a caller that was not given it.

mod chunks;
mod directive;
mod driver;
mod entry;
mod file;
mod generate;
mod include;
mod options;
mod origin;
mod print;
mod record;
mod report;
mod template;

use std::path::Path;

use tern_wire::Dname;

use crate::error::Error;
use driver::{Frame, Parser};

pub use options::Options;
pub use origin::{find_origin, find_origin_in};
pub use print::write_record;
pub use record::{Location, Record, RecordBuf};
pub use report::{Report, Warning};

/// Reads the zone file at `path` with `origin` as the initial `$ORIGIN`, handing each
/// record to `sink`. Only a regular file is read (the same for `$INCLUDE`s), within the
/// limits of `options`. A sink error stops the parse (or is collected) like a syntax error,
/// as [`Error::Rejected`] at the record's position.
pub fn parse_file(
    path: &Path,
    origin: &Dname,
    options: &Options,
    sink: &mut dyn FnMut(&Record<'_>) -> Result<(), Error>,
) -> Result<Report, Error> {
    parse_opened(ZoneFile::open(path, options)?, origin, options, sink)
}

/// A zone file opened for [`parse_opened`]: a regular file within
/// [`Options::max_file_size`], whose size and time are those of the file opened, so that
/// a caller keeping them as the file's version never pairs one file's version with
/// another's contents, and looks the path up once.
#[derive(Debug)]
pub struct ZoneFile {
    path: std::path::PathBuf,
    opened: file::Regular,
}

impl ZoneFile {
    /// Opens the zone file at `path` (refused as [`parse_file`] refuses it).
    pub fn open(path: &Path, options: &Options) -> Result<ZoneFile, Error> {
        let opened = file::open_regular(path, options.max_file_size).map_err(|refused| {
            Error::Io { path: path.to_path_buf(), message: refused.to_string() }
        })?;
        Ok(ZoneFile { path: path.to_path_buf(), opened })
    }

    /// Its size when opened, in bytes.
    pub fn size(&self) -> u64 {
        self.opened.size
    }

    /// When it was last modified, as the opened file says.
    pub fn modified(&self) -> Option<std::time::SystemTime> {
        self.opened.modified
    }
}

/// [`parse_file`] of a file opened already.
pub fn parse_opened(
    zone_file: ZoneFile,
    origin: &Dname,
    options: &Options,
    sink: &mut dyn FnMut(&Record<'_>) -> Result<(), Error>,
) -> Result<Report, Error> {
    let ZoneFile { path, opened } = zone_file;
    let top = Frame { path, id: Some(opened.id), include_line: 0, number: 0 };
    Parser::new(options, sink, top).run_file(opened.file, Some(opened.size), origin, chunks::CHUNK)
}

/// [`parse_file`] over any reader (`source` names it in messages), through a buffer of
/// `chunk` bytes to start with: tests use tiny chunks to put every entry across a chunk
/// boundary.
pub fn parse_reader(
    reader: impl std::io::Read,
    source: &Path,
    origin: &Dname,
    options: &Options,
    chunk: usize,
    sink: &mut dyn FnMut(&Record<'_>) -> Result<(), Error>,
) -> Result<Report, Error> {
    let top = Frame { path: source.to_path_buf(), id: None, include_line: 0, number: 0 };
    Parser::new(options, sink, top).run_file(reader, None, origin, chunk)
}

/// Reads zone text held in memory. `source` names it in messages and is the base of
/// relative `$INCLUDE` paths.
pub fn parse_bytes(
    text: &[u8],
    source: &Path,
    origin: &Dname,
    options: &Options,
    sink: &mut dyn FnMut(&Record<'_>) -> Result<(), Error>,
) -> Result<Report, Error> {
    let top = Frame { path: source.to_path_buf(), id: None, include_line: 0, number: 0 };
    Parser::new(options, sink, top).run(text, origin)
}

#[cfg(test)]
mod tests;
