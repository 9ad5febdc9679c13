//! What a secondary keeps on disk so that a restart serves at once: the received zone as
//! a zone file, and its timers (when it was last refreshed, when to refresh next, when it
//! expires).
//!
//! Files are replaced atomically: written to a temporary file beside the target, synced,
//! renamed over it, and the directory synced — a crash leaves the old file or the new
//! one, never half of one.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tern_wire::{rdata, Dname, Rtype};
use tern_zone::ZoneContents;

/// Writes `write`'s output to `path` atomically (see the module comment).
pub fn replace(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&temp)?);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Writes `zone` as a zone file: `$ORIGIN`, then one record per line with absolute
/// names (SOA first), readable by Tern, Knot DNS, NSD and BIND.
pub fn write_zone(path: &Path, zone: &ZoneContents, note: &str) -> std::io::Result<()> {
    replace(path, |out| write_records(out, zone, note))
}

/// Writes `zone` to `out` as [`write_zone`] does (a comment line with `note`, then the
/// records), for a file replaced by [`replace`].
pub fn write_records(out: &mut impl Write, zone: &ZoneContents, note: &str) -> std::io::Result<()> {
    writeln!(out, "; {} serial {} {note}", zone.origin(), zone.serial())?;
    let mut line = String::new();
    let mut failed = None;
    zone.for_each_record(|owner, rtype, ttl, data| {
        if failed.is_some() {
            return;
        }
        line.clear();
        record_line(owner, rtype, ttl, data, &mut line);
        if let Err(e) = out.write_all(line.as_bytes()) {
            failed = Some(e);
        }
    });
    failed.map_or(Ok(()), Err)
}

/// One record in presentation format, ending in a newline.
pub fn record_line(owner: &Dname, rtype: Rtype, ttl: u32, data: &[u8], line: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(line, "{owner} {ttl} IN {rtype} ");
    rdata::write_text(rtype, data, line);
    line.push('\n');
}

/// A secondary's timers, in seconds since the epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timers {
    /// The serial kept.
    pub serial: u32,
    /// The last successful refresh (the primary answered).
    pub last_refresh: u64,
    /// When to check the primary next.
    pub next_refresh: u64,
    /// When the zone stops being served unless refreshed before.
    pub expire_at: u64,
}

impl Timers {
    /// Writes them beside the zone file (`<file>.timers`), atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        replace(path, |out| {
            writeln!(out, "# ternd: refresh timers of a secondary zone (seconds since the epoch)")?;
            writeln!(out, "serial {}", self.serial)?;
            writeln!(out, "last-refresh {}", self.last_refresh)?;
            writeln!(out, "next-refresh {}", self.next_refresh)?;
            writeln!(out, "expire-at {}", self.expire_at)
        })
    }

    /// Reads them back; `None` when the file is missing or unreadable (refresh at once).
    pub fn load(path: &Path) -> Option<Timers> {
        let text = fs::read_to_string(path).ok()?;
        let mut timers = Timers::default();
        let mut seen = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (key, value) = line.split_once(' ')?;
            match key {
                "serial" => timers.serial = value.parse().ok()?,
                "last-refresh" => timers.last_refresh = value.parse().ok()?,
                "next-refresh" => timers.next_refresh = value.parse().ok()?,
                "expire-at" => timers.expire_at = value.parse().ok()?,
                _ => continue,
            }
            seen += 1;
        }
        (seen == 4).then_some(timers)
    }
}

/// Where a zone file's timers are kept.
pub fn timers_path(zone_file: &Path) -> PathBuf {
    let mut name = zone_file.as_os_str().to_owned();
    name.push(".timers");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::Name;

    #[test]
    fn zone_files_round_trip_and_replace_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let origin: Name = "example.".parse().unwrap();
        let text = b"@ 300 SOA ns h 5 60 60 600 60\n@ 300 NS ns\nns 300 A 192.0.2.1\nt 60 TXT \"a b\" \"c\\\"d\"\n";
        let zone = tern_zone::load_bytes(text, Path::new("z"), &origin, &Default::default())
            .unwrap()
            .contents;
        let path = dir.path().join("sub/example.zone");
        write_zone(&path, &zone, "kept").unwrap();
        let back = tern_zone::load_file(&path, &origin, &Default::default(), &mut |_| {})
            .unwrap()
            .contents;
        assert_eq!(back.serial(), 5);
        assert!(
            zone.diff(&back).unwrap().removed.is_empty()
                && zone.diff(&back).unwrap().added.is_empty()
        );
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left");
    }

    #[test]
    fn timers_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = timers_path(&dir.path().join("example.zone"));
        let timers = Timers { serial: 7, last_refresh: 100, next_refresh: 200, expire_at: 300 };
        timers.save(&path).unwrap();
        assert_eq!(Timers::load(&path), Some(timers));
        fs::write(&path, "serial x\n").unwrap();
        assert_eq!(Timers::load(&path), None);
    }
}
