//! The files a zone keeps in the storage directory, named from the zone's name by one
//! function, [`stem`], that cannot leave the directory and never gives two zones one
//! name. Catalog members, zones added at run time and configured zones are all named
//! this way, so a hostile catalog listing `/tmp/x/pwn.` or `<storage>/example.com.`
//! names files in storage, and only its own.
//!
//! A stem is the zone's name in lower case (DNS names compare without case, RFC 4343),
//! its labels joined by dots and ending in one, as `example.com.`: the files are
//! `example.com.journal`, `example.com.zone` (a secondary's kept copy), and the copy's
//! `example.com.zone.timers` — the names Tern used before this scheme, for every name
//! made of letters, digits, `-` and `_`. Any other byte of a label (`/`, `\`, `.`,
//! NUL, control bytes, spaces, non-ASCII, `%` itself) is written `%XX` in hexadecimal,
//! so a stem holds only `[a-z0-9_%.-]`: no `/`, never a leading dot, and decoding it
//! gives the name back. The root zone's stem is `@.` (`@` is never in another stem).
//! A stem longer than [`MAX_STEM`] (a long name with many escapes: a valid name may
//! take 4 × 255 bytes escaped) is cut, and ends in `~` and 32 hex digits of the SHA-256
//! of the name's lower-cased wire form (`~` is never in an uncut stem), so every valid
//! name still gets a file within the file system's 255-byte limit, with room for the
//! suffixes below and for a temporary file's.
//!
//! Knot DNS names its files from zone names in the same spirit (it writes `_` for `/`);
//! the escape here is reversible, so no two zones share a file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aws_lc_rs::digest;
use tern_wire::Dname;

/// The longest stem, in bytes. The longest file made from it, a set-aside journal
/// (`<stem>journal.damaged.N`, [`aside_path`](crate::aside_path)) or a temporary file (`.<stem>zone.timers.<pid>.tmp`),
/// stays well under 255 bytes.
pub const MAX_STEM: usize = 180;

/// Bytes of an over-long stem kept before its hash.
const CUT: usize = MAX_STEM - 1 - HASH_HEX - 1;

/// Hex digits of the hash that ends a cut stem (128 bits).
const HASH_HEX: usize = 32;

/// The stem of every file named after `zone` (see the module comment).
pub fn stem(zone: &Dname) -> String {
    if zone.is_root() {
        return "@.".to_owned();
    }
    let mut out = String::with_capacity(zone.as_wire().len() + 8);
    for label in zone.labels() {
        for &byte in label {
            let byte = byte.to_ascii_lowercase();
            match byte {
                b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => out.push(char::from(byte)),
                _ => {
                    let _ = write!(out, "%{byte:02x}");
                }
            }
        }
        out.push('.');
    }
    if out.len() <= MAX_STEM {
        return out;
    }
    let wire: Vec<u8> = zone.as_wire().iter().map(u8::to_ascii_lowercase).collect();
    let hash = digest::digest(&digest::SHA256, &wire);
    out.truncate(CUT); // ASCII: any cut is at a character boundary
    out.push('~');
    for byte in hash.as_ref().iter().take(HASH_HEX / 2) {
        let _ = write!(out, "{byte:02x}");
    }
    out.push('.');
    out
}

/// `zone`'s files in a storage directory (see the module comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneFiles {
    dir: PathBuf,
    stem: String,
}

impl ZoneFiles {
    /// The files of `zone` in `dir`.
    pub fn new(dir: &Path, zone: &Dname) -> ZoneFiles {
        ZoneFiles { dir: dir.to_owned(), stem: stem(zone) }
    }

    /// The zone's journal: `<stem>journal`.
    pub fn journal(&self) -> PathBuf {
        self.named("journal")
    }

    /// A secondary's kept copy when the zone names no `file`: `<stem>zone`.
    pub fn zone_copy(&self) -> PathBuf {
        self.named("zone")
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/<stem><suffix>`, its buffer no larger than it: a secondary keeps its
    /// copy's path for good (`Path::join` would leave up to twice the directory's
    /// length spare, 40 bytes of a zone).
    fn named(&self, suffix: &str) -> PathBuf {
        let len = self.dir.as_os_str().len() + 1 + self.stem.len() + suffix.len();
        let mut path = PathBuf::with_capacity(len);
        path.push(&self.dir);
        path.push(format!("{}{suffix}", self.stem));
        path
    }
}

/// Where the files of a zone were before [`stem`] named them (`<zone as written>` then
/// the suffix), when that differs from today's name and stayed in `dir`: names with
/// upper-case letters or escapes. A journal or kept copy found there is moved to
/// today's name once ([`ZoneFiles::adopt_legacy`]).
pub fn legacy(dir: &Path, zone: &Dname, suffix: &str) -> Option<PathBuf> {
    let name = format!("{zone}{suffix}");
    let plain = !name.contains('/') && !name.starts_with('.') && name != suffix;
    let path = dir.join(name);
    (plain && path.parent() == Some(dir)).then_some(path)
}

impl ZoneFiles {
    /// False when the zone's name as written is its stem (lower-case letters, digits,
    /// `-` and `_` only, not cut): then its files had today's names before too.
    fn may_have_legacy(&self, zone: &Dname) -> bool {
        let plain = |label: &[u8]| {
            label.iter().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_'))
        };
        !zone.labels().all(plain) || self.stem.contains('~')
    }

    /// Moves the journal, and with `copy` the kept copy and its timers, that an earlier
    /// version named after the zone as written (upper case kept, `\` escapes) to
    /// today's names, when today's do not exist. Returns what was moved, for the log.
    pub fn adopt_legacy(&self, zone: &Dname, copy: bool) -> Vec<(PathBuf, PathBuf)> {
        let mut moved = Vec::new();
        if !self.may_have_legacy(zone) {
            return moved; // the usual name: nothing formatted to find that out
        }
        let mut files = vec![("journal", self.journal())];
        if copy {
            files.push(("zone", self.zone_copy()));
            files.push(("zone.timers", self.named("zone.timers")));
        }
        for (suffix, now) in files {
            let Some(old) = legacy(&self.dir, zone, suffix) else { continue };
            if old == now || now.exists() || !old.is_file() {
                continue;
            }
            if std::fs::rename(&old, &now).is_ok() {
                moved.push((old, now));
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use tern_wire::Name;

    fn name(text: &str) -> Name {
        text.parse().unwrap()
    }

    #[test]
    fn plain_names_keep_the_names_tern_always_gave_them() {
        assert_eq!(stem(&name("example.com.")), "example.com.");
        assert_eq!(stem(&name("Example.COM.")), "example.com.", "one file whatever the case");
        assert_eq!(stem(&name("_dmarc.a-b.example.")), "_dmarc.a-b.example.");
        assert_eq!(stem(&name(".")), "@.");
        let files = ZoneFiles::new(Path::new("/s"), &name("example.com."));
        assert_eq!(files.journal(), Path::new("/s/example.com.journal"));
        assert_eq!(files.zone_copy(), Path::new("/s/example.com.zone"));
        let aside = crate::aside_path(&files.journal(), 2);
        assert_eq!(aside, Path::new("/s/example.com.journal.damaged.2"));
        let long = ZoneFiles::new(Path::new("/var/lib/tern/storage"), &name("example.com."));
        let copy = long.zone_copy();
        assert_eq!(copy, Path::new("/var/lib/tern/storage/example.com.zone"));
        assert_eq!(copy.capacity(), copy.as_os_str().len(), "kept for good: no spare room");
    }

    #[test]
    fn hostile_names_stay_in_the_directory() {
        for text in [
            "/tmp/x/pwn.",
            "\\/var\\/lib\\/tern\\/example.com.",
            "\\.\\..\\.\\..etc.",
            "a\\000b.",
            "\\.hidden.",
            "a\\010b\\013.",
            "%2f.",
            "a\\ b.\\\\.",
        ] {
            let zone = name(text);
            let s = stem(&zone);
            assert!(
                s.bytes()
                    .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'%' | b'.' | b'-')),
                "{text}: {s}"
            );
            assert!(!s.starts_with('.'), "{text}: {s}");
            let path = ZoneFiles::new(Path::new("/s"), &zone).journal();
            assert_eq!(path.parent(), Some(Path::new("/s")), "{text}: {}", path.display());
        }
        assert_ne!(stem(&name("a/b.")), stem(&name("a\\.b.")));
        assert_ne!(stem(&name("a%2fb.")), stem(&name("a/b.")), "% is escaped too");
    }

    #[test]
    fn a_valid_255_byte_name_gets_a_file_and_long_names_do_not_collide() {
        let label = "\\255".repeat(63);
        let longest = name(&format!("{label}.{label}.{label}.{}.", "\\255".repeat(61)));
        assert_eq!(longest.as_wire().len(), 255);
        let s = stem(&longest);
        assert_eq!(s.len(), MAX_STEM);
        assert!(s.contains('~'));
        let mut other = format!("{label}.{label}.{label}.{}.", "\\255".repeat(61));
        other.replace_range(other.len() - 5..other.len() - 1, "\\254");
        assert_ne!(stem(&name(&other)), s);
        let dir = tempfile::tempdir().unwrap();
        let files = ZoneFiles::new(dir.path(), &longest);
        std::fs::write(crate::aside_path(&files.journal(), 999), b"x").unwrap();
        let temp = dir.path().join(format!(".{}zone.timers.4294967295.tmp", s));
        std::fs::write(temp, b"x").unwrap();
    }

    #[test]
    fn many_names_many_stems() {
        let mut seen = HashSet::new();
        for a in 0u8..=255 {
            let text = format!("\\{a:03}x.example.");
            let zone = name(&text);
            let folded = zone.as_wire().to_ascii_lowercase();
            let s = stem(&zone);
            seen.insert((folded, s));
        }
        let stems: HashSet<&String> = seen.iter().map(|(_, s)| s).collect();
        assert_eq!(stems.len(), seen.len(), "one stem per name (case folded)");
    }

    #[test]
    fn files_named_before_are_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let zone = name("Example.COM.");
        std::fs::write(dir.path().join("Example.COM.journal"), b"j").unwrap();
        std::fs::write(dir.path().join("Example.COM.zone"), b"z").unwrap();
        let files = ZoneFiles::new(dir.path(), &zone);
        assert_eq!(files.adopt_legacy(&zone, false).len(), 1, "the journal alone");
        assert_eq!(files.adopt_legacy(&zone, true).len(), 1, "then the copy");
        assert_eq!(std::fs::read(files.journal()).unwrap(), b"j");
        assert_eq!(std::fs::read(files.zone_copy()).unwrap(), b"z");
        assert!(files.adopt_legacy(&zone, true).is_empty(), "once");
        assert_eq!(legacy(dir.path(), &name("/tmp/x."), "journal"), None, "never outside");
        // Names spelled as their stem had today's names before too: nothing is looked for.
        let plain = name("a-b_c.example.");
        assert!(!ZoneFiles::new(dir.path(), &plain).may_have_legacy(&plain));
        for other in ["A.example.", "a\\032b.example.", "a\\.b.example."] {
            let zone = name(other);
            assert!(ZoneFiles::new(dir.path(), &zone).may_have_legacy(&zone), "{other}");
        }
        let long = name(&format!("{}.{}.example.", "a".repeat(63), "b".repeat(63)));
        let cut = ZoneFiles::new(dir.path(), &long);
        assert_eq!(cut.may_have_legacy(&long), cut.stem.contains('~'));
    }
}
