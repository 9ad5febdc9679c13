//! A signing secondary's copy of its primary's version across restarts. Such a zone
//! serves its own signed version under its own serial; its refreshes compare serials
//! with, and ask IXFR from, the primary's unsigned version ([`Writer::upstream`]). That
//! version is kept beside the zone's kept copy as `<file>.upstream` (written whole,
//! atomically, after each transfer is committed, off the path to publishing), and read
//! back at a start, so that the first refresh after a restart asks IXFR from the
//! primary's serial it held (RFC 1995) instead of transferring the whole zone again.
//!
//! The copy ends in a seal line: its serial, its record count and the SHA-256 of every
//! byte before the line. A copy that is missing, cut short, altered or unreadable is not
//! used (the log says why): the next refresh transfers the whole zone (AXFR), as after
//! a first start. The copy is never served: what a refresh brings is always compared
//! with the served version, which it corrects if the two differ
//! ([`crate::signer`]'s whole-version step), so a copy older than the served version
//! (a crash before it was written) costs only a larger IXFR.
//!
//! A secondary that is not signed keeps no such copy: one left from an earlier
//! configuration is removed at its start (it would be stale the day signing comes
//! back).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aws_lc_rs::digest::{Context, SHA256};
use tern_wire::Name;
use tern_zone::ZoneContents;
use tracing::{error, info, warn};

use crate::error::Error;
use crate::plan::ZoneSource;
use crate::writer::Writer;

/// How the seal line starts.
const SEAL: &str = "; sealed by ternd:";

/// Bytes at the end of the file searched for the seal line (it takes under 150).
const TAIL: u64 = 512;

/// The comment on the copy's first line.
const NOTE: &str = "kept by ternd (the primary's unsigned version of a zone signed here)";

/// Where the primary's version of a signing secondary whose kept copy is `zone_file`
/// is kept.
pub fn path(zone_file: &Path) -> PathBuf {
    let mut name = zone_file.as_os_str().to_owned();
    name.push(".upstream");
    PathBuf::from(name)
}

/// Writes `zone` to `path`, sealed, atomically (blocking).
pub fn write(path: &Path, zone: &ZoneContents) -> std::io::Result<()> {
    crate::storage::replace(path, |out| {
        let mut hashed = Hashing { out: &mut *out, context: Context::new(&SHA256) };
        crate::storage::write_records(&mut hashed, zone, NOTE)?;
        let hash = hex(hashed.context.finish().as_ref());
        let (serial, records) = (zone.serial(), zone.record_count());
        writeln!(out, "{SEAL} serial {serial} records {records} sha256 {hash}")
    })
}

/// Reads the copy at `path` back (blocking): an error says why it cannot be used.
pub fn read(path: &Path, origin: &Name) -> Result<ZoneContents, Error> {
    let seal = check_seal(path)?;
    let zone = tern_zone::load_file(path, origin, &Default::default(), &mut |_| {})?.contents;
    if (zone.serial(), zone.record_count() as u64) != (seal.serial, seal.records) {
        return Err(torn("its records are not the ones its seal counts"));
    }
    Ok(zone)
}

/// What a seal line says.
#[derive(Debug, PartialEq, Eq)]
struct Seal {
    serial: u32,
    records: u64,
}

/// The file's seal, checked against the SHA-256 of every byte before it.
fn check_seal(path: &Path) -> Result<Seal, Error> {
    let io = |doing: &str, e: std::io::Error| torn(&format!("{doing}: {e}"));
    let meta = std::fs::symlink_metadata(path).map_err(|e| io("missing", e))?;
    if !meta.is_file() {
        return Err(torn("not a regular file"));
    }
    let mut file = File::open(path).map_err(|e| io("unreadable", e))?;
    let start = meta.len().saturating_sub(TAIL);
    let mut tail = Vec::new();
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_to_end(&mut tail))
        .and_then(|_| file.rewind())
        .map_err(|e| io("unreadable", e))?;
    let body = tail
        .strip_suffix(b"\n")
        .ok_or_else(|| torn("it does not end in a whole line (cut short?)"))?;
    let at = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = std::str::from_utf8(body.get(at..).unwrap_or_default()).unwrap_or_default();
    let (seal, hash) = parse_seal(line).ok_or_else(|| torn("no seal at its end (cut short?)"))?;
    let mut context = Context::new(&SHA256);
    let mut sealed = file.take(start + at as u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = sealed.read(&mut buf).map_err(|e| io("unreadable", e))?;
        let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else { break };
        context.update(chunk);
    }
    if hex(context.finish().as_ref()) != hash {
        return Err(torn("its content is not what its seal says (altered?)"));
    }
    Ok(seal)
}

/// `serial S records N sha256 H` after [`SEAL`]: the seal and `H`.
fn parse_seal(line: &str) -> Option<(Seal, &str)> {
    let words: Vec<&str> = line.strip_prefix(SEAL)?.split_whitespace().collect();
    match words.as_slice() {
        ["serial", serial, "records", records, "sha256", hash] => {
            Some((Seal { serial: serial.parse().ok()?, records: records.parse().ok()? }, hash))
        }
        _ => None,
    }
}

fn torn(why: &str) -> Error {
    Error::LoadFailed(format!("the primary's version kept on disk cannot be used: {why}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut text, b| {
        use std::fmt::Write as _;
        let _ = write!(text, "{b:02x}");
        text
    })
}

/// A writer that hashes what it writes.
struct Hashing<'a, W: Write> {
    out: &'a mut W,
    context: Context,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.context.update(buf.get(..n).unwrap_or_default());
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Writer {
    /// Where this zone keeps its primary's version: beside its kept copy.
    fn upstream_path(&self) -> Option<PathBuf> {
        let ZoneSource::File(file) = &self.plan.source else { return None };
        Some(path(file))
    }

    /// At a start, once the kept copy is taken: a signing secondary reads its primary's
    /// version back (or says why not: the next refresh is then a whole transfer); one
    /// that is not signed removes a copy left from an earlier configuration.
    pub(crate) async fn load_upstream(&mut self) {
        let Some(path) = self.upstream_path() else { return };
        let name = self.plan.name.clone();
        if self.plan.signing.is_none() {
            if std::fs::remove_file(&path).is_ok() {
                info!(zone = %name, file = %path.display(), "not signed here any more: the primary's version kept for signing was removed");
            }
            return;
        }
        let read = tokio::task::spawn_blocking(move || read(&path, &name)).await;
        match read.unwrap_or_else(|e| Err(Error::Task(e))) {
            Ok(zone) => {
                info!(zone = %self.plan.name, serial = zone.serial(), "the primary's version read back: the next refresh asks IXFR from its serial");
                self.upstream = Some(Arc::new(zone));
            }
            Err(why) => {
                warn!(zone = %self.plan.name, "the next refresh transfers the whole zone (AXFR): {why}");
            }
        }
    }

    /// Writes a signing secondary's `zone` from its primary beside its kept copy (after
    /// the zone's earlier disk writes, before the ones that follow).
    pub(crate) fn keep_upstream(&mut self, zone: &Arc<ZoneContents>) {
        let Some(path) = self.upstream_path() else { return };
        let (zone, name) = (Arc::clone(zone), self.plan.name.clone());
        self.store(move || {
            if let Err(e) = write(&path, &zone) {
                error!(zone = %name, file = %path.display(), "cannot keep the primary's version on disk (a restart transfers the whole zone): {e}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::load;

    const TEXT: &str = "$ORIGIN example.\n$TTL 60\n@ SOA ns h 5 60 60 600 60\n@ NS ns\n\
                        ns A 192.0.2.1\nwww TXT \"a b\"\n";

    fn origin() -> Name {
        "example.".parse().unwrap()
    }

    /// Written, then read back: the same records and serial.
    #[test]
    fn a_sealed_copy_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(&dir.path().join("example.zone"));
        assert!(file.ends_with("example.zone.upstream"));
        let zone = load("example.", TEXT);
        write(&file, &zone).unwrap();
        let back = read(&file, &origin()).unwrap();
        assert_eq!((back.serial(), back.record_count()), (5, zone.record_count()));
        let diff = zone.diff(&back).unwrap();
        assert!(diff.added.is_empty() && diff.removed.is_empty());
    }

    /// A copy missing, cut short (at any byte), altered by one byte, or with a seal
    /// that counts other records, is refused, saying why.
    #[test]
    fn a_copy_missing_cut_short_or_altered_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(&dir.path().join("example.zone"));
        let why = |file: &Path| read(file, &origin()).unwrap_err().to_string();
        assert!(why(&file).contains("missing"), "{}", why(&file));
        write(&file, &load("example.", TEXT)).unwrap();
        let whole = std::fs::read(&file).unwrap();
        for cut in 0..whole.len() {
            std::fs::write(&file, &whole[..cut]).unwrap();
            assert!(read(&file, &origin()).is_err(), "cut at {cut} of {}", whole.len());
        }
        let mut altered = whole.clone();
        let at = whole.windows(3).position(|w| w == b"a b").unwrap();
        altered[at] = b'c';
        std::fs::write(&file, &altered).unwrap();
        assert!(why(&file).contains("altered"), "{}", why(&file));
        let text = String::from_utf8(whole).unwrap();
        let recounted = text.replace(" records 4 ", " records 3 ");
        assert_ne!(recounted, text);
        std::fs::write(&file, recounted).unwrap();
        assert!(why(&file).contains("not the ones its seal counts"), "{}", why(&file));
    }
}
