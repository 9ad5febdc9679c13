//! Where a script's records go: straight into the zone's builder, one record from the
//! arguments of each `zone.add` or `zone.a`, with the script's file and line as its
//! location (so the zone's findings say `script:line`). Nothing is formatted as text and
//! read again: the owner is read as a zone file reads a name (relative to the origin, `@`
//! for the apex), the data with the zone file's reader of the type's presentation format
//! (RFC 1035 §5.1), an address given as an integer is written as it is.
//!
//! The records are bounded: at most `max_bytes` (the script's `max-memory`) of owners and
//! data, counting [`RECORD_COST`] more for each record's place in the builder.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tern_wire::rdata;
use tern_wire::text::Lexer;
use tern_wire::{Class, Dname, Name, NameBuilder, Rtype};
use tern_zone::parser::{Location, Record, Report};
use tern_zone::records::MAX_TTL;
use tern_zone::{Loaded, ZoneBuilder};

use crate::error::Error;

/// How the error of data that does not read starts (the function's name follows).
pub(super) const NOT_READ: &str = "a record that does not read: ";

/// Bytes counted for each record besides its owner and data.
pub(super) const RECORD_COST: usize = 24;

/// The zone being built from a script's calls.
#[derive(Debug)]
pub(super) struct Sink {
    builder: ZoneBuilder,
    origin: Name,
    /// The script: every record's file.
    path: PathBuf,
    /// The current record's owner, built in place.
    owner: NameBuilder,
    /// The current record's data in wire form.
    rdata: Vec<u8>,
    /// Bytes of records so far, and the most allowed.
    bytes: usize,
    max_bytes: usize,
    records: u64,
    started: Instant,
}

impl Sink {
    /// An empty zone at `origin`, for the script at `path`, of at most `max_bytes`.
    pub fn new(origin: &Name, path: &Path, max_bytes: usize) -> Sink {
        Sink {
            builder: ZoneBuilder::new(origin),
            origin: origin.clone(),
            path: path.to_path_buf(),
            owner: NameBuilder::new(),
            rdata: Vec::with_capacity(512),
            bytes: 0,
            max_bytes,
            records: 0,
            started: Instant::now(),
        }
    }

    /// Adds a record whose data is in presentation format (`zone.add`), from script
    /// line `line`.
    pub fn add_text(
        &mut self,
        (owner, rtype, data): (&[u8], &[u8], &[u8]),
        ttl: u32,
        line: u32,
    ) -> Result<(), String> {
        let rtype = record_type(rtype)?;
        if !one_line(data) {
            let data = String::from_utf8_lossy(data);
            return Err(format!(
                "{data:?}: record data is one line, without parentheses outside quotes"
            ));
        }
        self.rdata.clear();
        let mut lexer = Lexer::for_fields(data);
        // One line (checked above) is one entry: the parser refuses anything after the data.
        let parsed = rdata::parse_text(rtype, &mut lexer, Some(&self.origin), &mut self.rdata);
        if let Err(e) = parsed {
            let data = String::from_utf8_lossy(data);
            return Err(format!("{NOT_READ}{rtype} {data:?}: {e}"));
        }
        self.push(owner, rtype, ttl, line)
    }

    /// Adds an A record (`zone.a`), from script line `line`.
    pub fn add_a(
        &mut self,
        owner: &[u8],
        address: [u8; 4],
        ttl: u32,
        line: u32,
    ) -> Result<(), String> {
        self.rdata.clear();
        self.rdata.extend_from_slice(&address);
        self.push(owner, Rtype::A, ttl, line)
    }

    /// Hands the record in `rdata` to the builder, after reading its owner and checking
    /// its TTL and the bound on bytes.
    fn push(&mut self, owner: &[u8], rtype: Rtype, ttl: u32, line: u32) -> Result<(), String> {
        if ttl > MAX_TTL {
            return Err(format!("TTL {ttl} is above {MAX_TTL} (RFC 2181 §8)"));
        }
        let Sink { builder, origin, path, owner: name, rdata, .. } = self;
        let owner = record_name(name, owner, origin)?;
        let bytes = self.bytes + owner.len() + rdata.len() + RECORD_COST;
        if bytes > self.max_bytes {
            return Err(format!("the records emitted pass {} bytes (max-memory)", self.max_bytes));
        }
        self.bytes = bytes;
        self.records += 1;
        let location = Location { file: path, file_number: 0, line };
        builder.add_record(&Record { owner, class: Class::IN, rtype, ttl, rdata, location });
        Ok(())
    }

    /// The zone the records make, or why they make none (the builder's findings, each
    /// at its script line).
    pub fn finish(self) -> Result<Loaded, Error> {
        let Sink { builder, path, records, started, .. } = self;
        let (contents, report) = builder.finish().map_err(|e| Error::Script {
            file: path,
            line: None,
            why: format!("the records do not make a zone: {e}"),
        })?;
        let parse = Report { records, ..Report::default() };
        Ok(Loaded { contents, report, parse, elapsed: started.elapsed().as_secs_f64() })
    }
}

/// The owner `text` read into `name`: relative to `origin` unless it ends in a dot, `@`
/// for the apex; refused when a zone file would not read it as one owner (a blank, a
/// leading `$` of a directive).
fn record_name<'a>(
    name: &'a mut NameBuilder,
    text: &[u8],
    origin: &Dname,
) -> Result<&'a Dname, String> {
    let refused = text.is_empty()
        || text.first() == Some(&b'$')
        || text.iter().any(|b| b.is_ascii_whitespace());
    if refused {
        return Err(format!("{:?} is not a record name", String::from_utf8_lossy(text)));
    }
    name.parse_text_in(text, Some(origin))
        .map_err(|why| format!("{:?} is not a record name: {why}", String::from_utf8_lossy(text)))
}

/// The type named by a mnemonic (`"A"`, `"MX"`, `"TYPE65534"`), never a meta-type.
fn record_type(text: &[u8]) -> Result<Rtype, String> {
    Rtype::from_mnemonic(text)
        .filter(|t| !t.is_meta())
        .ok_or_else(|| format!("{:?} is not a record type", String::from_utf8_lossy(text)))
}

/// True for data on one line whose parentheses (which would continue it on another line)
/// are all inside quoted strings.
pub(crate) fn one_line(data: impl AsRef<[u8]>) -> bool {
    let mut quoted = false;
    let mut escaped = false;
    for &c in data.as_ref() {
        match c {
            b'\n' | b'\r' => return false,
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => quoted = !quoted,
            b'(' | b')' if !quoted => return false,
            _ => {}
        }
    }
    true
}
