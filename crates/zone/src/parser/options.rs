//! How a zone file is read: the zone's class, error handling, and the limits that keep
//! untrusted input bounded.

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
        }
    }
}

impl Options {
    /// Options for zone text from an untrusted source: no `$INCLUDE`.
    pub fn untrusted() -> Options {
        Options { allow_include: false, ..Options::default() }
    }
}
