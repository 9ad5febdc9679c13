//! Loading a zone file into a snapshot: the parser streams records straight into the
//! builder, so no record is held twice. Each record brings its file and line, so that
//! the builder's findings say where, as the parser's errors do.

use std::path::Path;
use std::time::Instant;

use tern_wire::Dname;

use crate::builder::ZoneBuilder;
use crate::contents::ZoneContents;
use crate::error::Error;
use crate::parser::{self, Options};
use crate::report::Report;

/// Records between two progress calls.
pub const PROGRESS_EVERY: u64 = 1_000_000;

/// A loaded zone with what loading found.
#[derive(Debug)]
pub struct Loaded {
    /// The snapshot, ready to publish.
    pub contents: ZoneContents,
    /// Semantic findings (warnings only: errors refuse the zone).
    pub report: Report,
    /// Zone-file findings (warnings only: errors refuse the zone).
    pub parse: parser::Report,
    /// Seconds spent parsing and building.
    pub elapsed: f64,
}

/// Loading progress, for logs of big zones.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Records read so far.
    pub records: u64,
    /// Seconds since the load started.
    pub elapsed: f64,
}

/// Loads the zone `origin` from the file at `path`. `progress` is called every
/// `PROGRESS_EVERY` (1,000,000) records.
pub fn load_file(
    path: &Path,
    origin: &Dname,
    options: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Loaded, Error> {
    load_opened(parser::ZoneFile::open(path, options)?, origin, options, progress)
}

/// [`load_file`] of a file opened already ([`ZoneFile::open`](parser::ZoneFile::open)).
pub fn load_opened(
    file: parser::ZoneFile,
    origin: &Dname,
    options: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<Loaded, Error> {
    let started = Instant::now();
    let mut builder = ZoneBuilder::sized(origin, file.size());
    let mut count = 0u64;
    let parse = parser::parse_opened(file, origin, options, &mut |record| {
        builder.add_record(record);
        count += 1;
        if count % PROGRESS_EVERY == 0 {
            progress(Progress { records: count, elapsed: started.elapsed().as_secs_f64() });
        }
        Ok(())
    })?;
    let (contents, report) = builder.finish()?;
    Ok(Loaded { contents, report, parse, elapsed: started.elapsed().as_secs_f64() })
}

/// Loads a zone from text in memory (`source` names it in messages).
pub fn load_bytes(
    text: &[u8],
    source: &Path,
    origin: &Dname,
    options: &Options,
) -> Result<Loaded, Error> {
    let started = Instant::now();
    let mut builder = ZoneBuilder::sized(origin, text.len() as u64);
    let parse = parser::parse_bytes(text, source, origin, options, &mut |record| {
        builder.add_record(record);
        Ok(())
    })?;
    let (contents, report) = builder.finish()?;
    Ok(Loaded { contents, report, parse, elapsed: started.elapsed().as_secs_f64() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    #[test]
    fn loads_text_and_reports_both_layers() {
        let origin: Name = "example.".parse().unwrap();
        let text =
            b"$TTL 300\n@ SOA ns hm 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\nx.other. A 192.0.2.2\n";
        let loaded = load_bytes(text, Path::new("mem.zone"), &origin, &Options::default()).unwrap();
        assert_eq!(loaded.contents.record_count(), 3);
        assert_eq!(loaded.report.warnings().count(), 1, "out-of-zone record");
        assert_eq!(loaded.parse.records, 4);
    }

    #[test]
    fn findings_of_the_zone_checks_name_file_and_line() {
        let origin: Name = "example.".parse().unwrap();
        let text = b"$TTL 300\n@ SOA ns hm 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\n\
                     x CNAME ns\nx A 192.0.2.2\nns A 192.0.2.1\nx.other. A 192.0.2.3\n";
        let e = load_bytes(text, Path::new("z.zone"), &origin, &Options::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "zone has 1 error(s): z.zone:5: error: x.example. CNAME exists beside A data"
        );
        let Error::Semantic(report) = e else { panic!("{e}") };
        let warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "z.zone:8: warning: x.other. A is outside the zone: ignored",
                "z.zone:7: warning: ns.example. A duplicate record ignored",
            ]
        );
        // A missing SOA is placed at the apex's first record; with no apex record at all,
        // at the file.
        let no_soa = b"$TTL 60\n\nwww A 192.0.2.1\n@ NS ns.other.\n";
        let e = load_bytes(no_soa, Path::new("z"), &origin, &Options::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "zone has 1 error(s): z:4: error: example. SOA missing at the zone apex"
        );
        let nothing = b"$TTL 60\nwww A 192.0.2.1\n";
        let e = load_bytes(nothing, Path::new("z"), &origin, &Options::default()).unwrap_err();
        assert!(e.to_string().contains("z: error: example. SOA missing at the zone apex"), "{e}");
        // Different TTLs: at the first record whose TTL differs.
        let ttls =
            b"@ 60 SOA ns hm 1 2 3 4 5\n@ 60 NS ns.other.\na 60 A 192.0.2.1\na 30 A 192.0.2.2\n";
        let loaded = load_bytes(ttls, Path::new("t"), &origin, &Options::default()).unwrap();
        let w: Vec<String> = loaded.report.warnings().map(ToString::to_string).collect();
        assert_eq!(
            w,
            ["t:4: warning: a.example. A records have different TTLs: using the lowest, 30"]
        );
    }

    #[test]
    fn syntax_and_semantic_errors_refuse_the_zone() {
        let origin: Name = "example.".parse().unwrap();
        let bad_syntax = b"@ SOA ns hm 1 2 3 4 5\n@ NS ns\nns A 192.0.2.300\n";
        let e = load_bytes(bad_syntax, Path::new("z"), &origin, &Options::default()).unwrap_err();
        assert!(e.to_string().starts_with("z:3:"), "{e}");
        let no_ns = b"$TTL 60\n@ SOA ns hm 1 2 3 4 5\n";
        let e = load_bytes(no_ns, Path::new("z"), &origin, &Options::default()).unwrap_err();
        assert!(matches!(e, Error::Semantic(_)), "{e}");
        assert!(e.to_string().contains("NS missing at the zone apex"), "{e}");
    }
}
