//! Helpers shared by the integration tests: data paths and parsing into owned records.

#![allow(dead_code)] // each test crate uses a different part

use std::path::{Path, PathBuf};

use tern_wire::Name;
use tern_zone::parser::{parse_bytes, parse_file, Options, RecordBuf, Report};
use tern_zone::Error;

/// A file under `tests/data/`.
pub fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(path)
}

pub fn name(text: &str) -> Name {
    text.parse().unwrap()
}

/// Parses a file into owned records.
pub fn records_of_file(
    path: &Path,
    origin: &str,
    options: &Options,
) -> Result<(Vec<RecordBuf>, Report), Error> {
    let mut records = Vec::new();
    let report = parse_file(path, &name(origin), options, &mut |r| {
        records.push(r.to_buf());
        Ok(())
    })?;
    Ok((records, report))
}

/// Parses in-memory text into owned records.
pub fn records_of_text(
    text: &[u8],
    origin: &str,
    options: &Options,
) -> Result<(Vec<RecordBuf>, Report), Error> {
    let mut records = Vec::new();
    let report = parse_bytes(text, Path::new("text"), &name(origin), options, &mut |r| {
        records.push(r.to_buf());
        Ok(())
    })?;
    Ok((records, report))
}

/// Records printed one per line, in order.
pub fn lines(records: &[RecordBuf]) -> Vec<String> {
    records.iter().map(ToString::to_string).collect()
}
