//! How a zone file is read: the zone's class, error handling, and the limits that keep
//! untrusted input bounded. Only regular files are read (see the `file` module), so
//! `$INCLUDE /dev/zero` or a FIFO is refused; the limits below bound the rest. Each is
//! generous for real zones and named in the error that reports it, with the file and line.

use tern_wire::Class;

/// Options for [`super::parse_file`] and [`super::parse_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The zone's class; a record of another class is an error. Default IN.
    pub class: Class,
    /// The TTL of a record that states none when neither `$TTL` nor an earlier record
    /// gave one (a warning is issued). Default 3600, as Knot DNS's `default-ttl` and NSD.
    pub default_ttl: u32,
    /// Keep reading after an error and return every error found (up to `max_errors`),
    /// instead of stopping at the first. Default false.
    pub collect_errors: bool,
    /// When collecting, stop after this many errors; also the most warnings kept.
    /// Default 1000.
    pub max_errors: usize,
    /// Whether `$INCLUDE` may read files. Turn it off for zone data from transfers and
    /// other untrusted sources. Default true.
    pub allow_include: bool,
    /// How many files deep `$INCLUDE` may nest (the zone file itself is depth 0).
    /// Default 16.
    pub max_include_depth: usize,
    /// The most records `$GENERATE` may create in one parse, over all its directives.
    /// Default 65536 (a whole /16 of reverse records).
    pub max_generated_records: u64,
    /// The largest file read, in bytes: the zone file, and each `$INCLUDE`d file on its
    /// own. A larger file is refused before it is read; one that grows past the limit
    /// while it is read (or a reader, for [`super::parse_reader`]) stops the parse there.
    /// Default 64 GiB.
    pub max_file_size: u64,
    /// The longest line of a file, in bytes, its newline not counted; the lines of an
    /// entry continued in parentheses count as one line (RFC 1035 §5.1: line ends are not
    /// recognised inside them). It bounds the buffer a file is read through: a longer
    /// line stops the parse. Text given whole to [`super::parse_bytes`] is already in
    /// memory and is not checked. Default 1 MiB: a record's RDATA is at most 65,535
    /// bytes, 262,140 characters even written entirely as `\DDD` escapes.
    pub max_line_length: usize,
    /// The most records one parse hands to its sink, over all files and `$GENERATE`s:
    /// the next one stops the parse. Default 1,000,000,000.
    pub max_records: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            class: Class::IN,
            default_ttl: 3600,
            collect_errors: false,
            max_errors: 1000,
            allow_include: true,
            max_include_depth: 16,
            max_generated_records: 65_536,
            max_file_size: 64 << 30,
            max_line_length: 1 << 20,
            max_records: 1_000_000_000,
        }
    }
}

impl Options {
    /// Options for zone text from an untrusted source: no `$INCLUDE`.
    pub fn untrusted() -> Options {
        Options { allow_include: false, ..Options::default() }
    }
}
