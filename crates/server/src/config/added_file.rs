//! The file of zones added at run time ([`ADDED_ZONES`](super::ADDED_ZONES)) as an
//! append-only log, so that adding or removing one zone writes that zone, not the file.
//!
//! The file is TOML: one `[[zone]]` array in the order the changes were made. A zone
//! added is its table; a zone removed is a table holding only its `name` and
//! `removed = true`, which takes away the table of that name before it. Each change
//! (one `zone-add` or `zone-remove`, however many zones) ends with a mark line,
//! `#@ ` and the CRC-32 of the bytes since the mark before (TOML reads it as a
//! comment), and is synced before the command is acknowledged ([`append`]).
//!
//! * A crash while a change is appended leaves a tail without its mark, or with a mark
//!   that does not match: that change was never acknowledged, and it is ignored (and
//!   logged) when the file is read, and cut off before the next change is appended.
//! * A mark that does not match with whole changes after it is damage, not a torn
//!   append: the file is refused, saying where, rather than dropping acknowledged zones.
//! * A file without marks (written whole, atomically, before this form) is read as one
//!   change; the first change after it rewrites it atomically with a mark.
//! * Once the removed outweigh the zones kept, the file is rewritten atomically with the
//!   zones kept only ([`rewrite`]): the cost of a change stays the change's, amortised.

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use tern_control::storage;
use tern_wire::Name;

/// What a mark line starts with.
const MARK: &str = "#@ ";

/// The first lines of a file written in this form.
pub const HEADER: &str = "# Zones added at run time (`ternctl zone-add`, `POST /api/v1/zones`).\n\
     # Kept by ternd: each change ends with a `#@` line (its CRC-32). Do not edit while ternd runs.\n";

/// What is known of the file (see the module comment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddedLog {
    /// Bytes of the file that are whole changes.
    pub committed: u64,
    /// The file's length as last seen: more than `committed` after a torn append
    /// (`u64::MAX` after a failed write: unknown).
    pub len: u64,
    /// True when the file's changes end with marks (false: absent, empty, or written
    /// whole before this form).
    pub marked: bool,
    /// `[[zone]]` tables in the committed part: zones added and removal records.
    pub tables: usize,
}

/// What follows the committed part of a file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Nothing: every byte is committed.
    Clean,
    /// A change whose append did not finish, from this byte on: ignored.
    Torn(usize),
    /// A mark that does not match at this byte, with marks after it: damage.
    Damaged(usize),
}

/// The length of `text`'s committed part, whether it has marks, and what follows it.
/// Without any mark the whole text is committed (the form before marks).
pub fn committed(text: &str) -> (usize, bool, Tail) {
    let (mut start, mut at, mut marked) = (0, 0, false);
    for line in text.split_inclusive('\n') {
        let line_start = at;
        at += line.len();
        let Some(rest) = line.strip_prefix(MARK) else { continue };
        marked = true;
        let sum = text.get(start..line_start).map(checksum);
        match rest.strip_suffix('\n') == sum.as_deref() {
            true => start = at,
            false if has_mark(text.get(at..).unwrap_or_default()) => {
                return (start, true, Tail::Damaged(line_start));
            }
            false => return (start, true, Tail::Torn(start)),
        }
    }
    match (marked, start == text.len()) {
        (false, _) => (text.len(), false, Tail::Clean),
        (true, true) => (start, true, Tail::Clean),
        (true, false) => (start, true, Tail::Torn(start)),
    }
}

fn has_mark(text: &str) -> bool {
    text.starts_with(MARK) || text.contains(&format!("\n{MARK}"))
}

/// The CRC-32 of `text` as a mark writes it.
fn checksum(text: &str) -> String {
    format!("{:08x}", crc32fast::hash(text.as_bytes()))
}

/// `body` (whole lines) followed by its mark.
fn marked(body: &str) -> String {
    format!("{body}{MARK}{}\n", checksum(body))
}

/// The table that removes `zone` (see the module comment).
pub fn removal(zone: &Name) -> String {
    let name = toml::Value::String(zone.to_string());
    format!("[[zone]]\nname = {name}\nremoved = true\n")
}

/// True when a table of the file is a removal record ([`removal`]).
pub fn is_removal(keys: impl Iterator<Item = impl AsRef<str>>) -> bool {
    keys.into_iter().any(|k| k.as_ref() == "removed")
}

/// Appends one change, `body` (whole `[[zone]]` tables, `tables` of them), with its
/// mark, and syncs it; `log` follows. A file without marks is rewritten whole with it,
/// atomically; a torn tail is cut off first.
pub fn append(path: &Path, log: &mut AddedLog, body: &str, tables: usize) -> std::io::Result<()> {
    if !log.marked {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let added = tables + log.tables;
        return write_whole(path, log, &with_change(&text, false, body), added);
    }
    let result = append_marked(path, log.committed, &marked(body));
    match result {
        Ok(end) => {
            (log.committed, log.len) = (end, end);
            log.tables += tables;
        }
        Err(_) => log.len = u64::MAX,
    }
    result.map(drop)
}

/// The file's text once `body` is appended to `committed` (its committed text, with
/// marks or not), as [`append`] writes it.
pub fn with_change(committed: &str, marks: bool, body: &str) -> String {
    if marks {
        return format!("{committed}{}", marked(body));
    }
    let mut text = match committed.is_empty() {
        true => HEADER.to_owned(),
        false => committed.to_owned(),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(body);
    marked(&text)
}

/// Writes `change` at `at` (cutting off what follows), synced: the file's new end.
fn append_marked(path: &Path, at: u64, change: &str) -> std::io::Result<u64> {
    let mut file = OpenOptions::new().write(true).open(path)?;
    if file.metadata()?.len() != at {
        file.set_len(at)?;
    }
    file.seek(SeekFrom::Start(at))?;
    file.write_all(change.as_bytes())?;
    file.sync_data()?;
    Ok(at + change.len() as u64)
}

/// Replaces the file, atomically, with `body` (`tables` tables) as one change.
pub fn rewrite(path: &Path, log: &mut AddedLog, body: &str, tables: usize) -> std::io::Result<()> {
    write_whole(path, log, &marked(&format!("{HEADER}{body}")), tables)
}

fn write_whole(path: &Path, log: &mut AddedLog, text: &str, tables: usize) -> std::io::Result<()> {
    storage::replace(path, |out| out.write_all(text.as_bytes()))?;
    let len = text.len() as u64;
    *log = AddedLog { committed: len, len, marked: true, tables };
    Ok(())
}

/// The committed text of the file (empty when it does not exist).
pub fn read_committed(path: &Path) -> std::io::Result<String> {
    let mut text = match std::fs::read(path) {
        // Lossy: a torn tail need not be UTF-8.
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(e),
    };
    let (end, _, _) = committed(&text);
    text.truncate(end);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "[[zone]]\nname = \"a.example.\"\n";
    const B: &str = "[[zone]]\nname = \"b.example.\"\n";

    #[test]
    fn changes_are_appended_with_marks_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("added.toml");
        let mut log = AddedLog::default();
        append(&path, &mut log, A, 1).unwrap();
        append(&path, &mut log, B, 1).unwrap();
        append(&path, &mut log, &removal(&"a.example.".parse().unwrap()), 1).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(HEADER), "{text}");
        assert_eq!(text.matches(MARK).count(), 3, "{text}");
        assert_eq!(committed(&text), (text.len(), true, Tail::Clean));
        assert_eq!((log.committed, log.tables), (text.len() as u64, 3));
        let last = text.lines().last().unwrap();
        assert!(last.starts_with(MARK) && last.len() == 11, "{last}");
        assert!(text.contains(&format!("removed = true\n{last}\n")), "{text}");
    }

    /// A crash at any byte of an append leaves the changes before it whole, and the
    /// torn one ignored; the next append cuts it off, so every change after is read.
    #[test]
    fn a_torn_append_is_ignored_and_cut_off_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("added.toml");
        let mut log = AddedLog::default();
        append(&path, &mut log, A, 1).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        let change = marked(B);
        for cut in 0..change.len() {
            let torn = format!("{before}{}", &change[..cut]);
            let expected = if cut == 0 { Tail::Clean } else { Tail::Torn(before.len()) };
            assert_eq!(committed(&torn), (before.len(), true, expected), "cut at {cut}");
        }
        // Garbage a crash may leave (zeros past the end) is torn too.
        let zeros = format!("{before}{}", "\0".repeat(100));
        assert_eq!(committed(&zeros).2, Tail::Torn(before.len()));
        std::fs::write(&path, format!("{before}{}", &change[..change.len() - 3])).unwrap();
        let mut log =
            AddedLog { committed: before.len() as u64, len: u64::MAX, marked: true, tables: 1 };
        append(&path, &mut log, B, 1).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{before}{change}"));
        assert_eq!(committed(&text), (text.len(), true, Tail::Clean));
    }

    #[test]
    fn a_bad_mark_with_changes_after_it_is_damage() {
        let text = format!("{}{}{}", marked(A), marked(B), marked(A));
        let second = marked(A).len();
        let damaged = text.replacen("b.example", "c.example", 1);
        assert_eq!(committed(&damaged), (second, true, Tail::Damaged(second + B.len())));
    }

    #[test]
    fn a_file_without_marks_is_read_whole_and_rewritten_once_with_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("added.toml");
        std::fs::write(&path, A.trim_end()).unwrap();
        assert_eq!(committed(A), (A.len(), false, Tail::Clean));
        let mut log = AddedLog { committed: 30, len: 30, marked: false, tables: 1 };
        append(&path, &mut log, B, 1).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, marked(&format!("{A}{B}")));
        assert_eq!((log.marked, log.tables), (true, 2));
        assert_eq!(read_committed(&path).unwrap(), text);
    }
}
