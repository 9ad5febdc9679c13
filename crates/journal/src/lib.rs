//! A zone's journal: every change is appended and synced to disk before it is published
//! or acknowledged, so a crash never loses one that anyone was told of; at start-up the
//! journal is replayed onto the zone's last snapshot.
//!
//! * [`format`](mod@format): the bytes — a header and one checksummed frame per changeset (the
//!   format is documented there, and its reader is fuzzed: `fuzz/fuzz_targets/journal.rs`).
//! * [`Journal`]: one file per zone. [`Journal::append`] writes a batch of changesets in
//!   one write and one `fdatasync` (group commit: a batch is acknowledged together),
//!   into zeros written ahead of it: the file's size and block map then stay, and the
//!   sync has neither to write (on ext4 half the CPU and a third of the time of a sync
//!   that grows the file; ext4 without a journal still writes the inode its mtime
//!   dirtied);
//!   [`Journal::open`] reads the intact frames and cuts a torn tail, saying what it
//!   dropped; [`Journal::rewrite_since`] replaces it atomically by the changes a
//!   snapshot of the zone still needs (compaction), keeping the ones appended after the
//!   compaction was decided at a [`Mark`]. The file appended to stays open until
//!   [`Journal::release`]: a zone's writer keeps it while updates stream in (an open
//!   and a close per commit were 1–2% of its CPU) and lets it go when idle, so a
//!   server with 100,000 zones does not hold 100,000 descriptors.
//! * [`lock_dir`]: one process at a time in a storage directory (a `flock` held for the
//!   process's life), so that two servers never append to one journal.
//!
//! An append-only file was chosen over an embedded database by measurement: see
//! docs/design.md ("The journal").
//!
//! Nothing here knows sockets or zones beyond their changesets.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod files;
pub mod format;

use std::borrow::Borrow;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use tern_zone::Changeset;

/// Everything that can go wrong with a journal.
#[derive(Debug)]
pub enum Error {
    /// A file operation failed.
    Io {
        /// The journal file.
        path: PathBuf,
        /// What was being done.
        doing: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a journal this code can read, or a changeset cannot be written.
    Format(String),
    /// Another process holds the storage directory (its lock file is locked).
    Busy(PathBuf),
    /// The journal refuses changes: it could not be read, and was set aside (see
    /// [`Journal::refusing`]).
    Refused(String),
    /// A compaction decided at a [`Mark`] taken before a whole rewrite: not carried out
    /// (the rewrite made it moot).
    StaleMark,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { path, doing, source } => write!(f, "{}: {doing}: {source}", path.display()),
            Error::Format(why) => f.write_str(why),
            Error::Busy(path) => {
                write!(f, "{}: in use by another process (it holds {LOCK_FILE})", path.display())
            }
            Error::Refused(why) => f.write_str(why),
            Error::StaleMark => {
                f.write_str("a compaction decided before the journal was rewritten")
            }
        }
    }
}

impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An open journal (see the crate documentation).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// Bytes of the header and frames.
    len: u64,
    /// Bytes of the file: `len`, then zeros written ahead (see [`format`](mod@format)).
    size: u64,
    frames: u64,
    /// Everything appended since it was opened (never reset by a rewrite).
    appended: Mark,
    /// Bytes it held right after its last rewrite (or when opened).
    rewritten_len: u64,
    /// The file, open for writing since an append, until [`Journal::release`] (or a
    /// rewrite, which puts another file at the path).
    file: Option<File>,
    /// Why every change is refused, for a journal that could not be used
    /// ([`Journal::refusing`]).
    refusing: Option<String>,
}

/// A point in what was appended to a journal since it was opened ([`Journal::mark`]):
/// a compaction decided at this point keeps what is appended after it
/// ([`Journal::rewrite_since`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    bytes: u64,
    frames: u64,
    /// Whole rewrites before it ([`Journal::rewrite`]): a mark taken before one no longer
    /// says which of the file's frames were appended after it.
    rewrites: u64,
}

/// What opening a journal found.
#[derive(Debug)]
pub struct Opened {
    /// The journal, ready to append to.
    pub journal: Journal,
    /// Its changesets, oldest first.
    pub changes: Vec<Changeset>,
    /// The damaged tail that was cut off (a write a crash interrupted), if any.
    pub dropped: Option<String>,
    /// Damage that was not a torn tail, if any: the journal now holds the intact
    /// changesets before it, and the file as it was is kept aside.
    pub damaged: Option<Damaged>,
}

/// Corruption found by [`Journal::open`] in the middle of a journal (a flipped bit, a
/// bad block): what was done about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged {
    /// Where and what.
    pub why: String,
    /// The file as it was, kept under another name ([`aside_path`]).
    pub aside: PathBuf,
    /// Intact changesets found after the damage, left out (the change before them is
    /// lost, so they do not apply).
    pub later: usize,
    /// The highest serial (RFC 1982) of every changeset read, intact part and later
    /// ones: a serial that was served, which the zone must rise above.
    pub highest_serial: Option<u32>,
}

impl Journal {
    /// Opens the journal at `path`; when there is none, the file is made at the first
    /// append (a server loading 100,000 zones does not make 100,000 empty files). A torn
    /// tail is cut off (and the file synced), the intact changesets returned. Damage
    /// that is not a torn tail is never cut away: the file is kept aside as it was
    /// ([`aside_path`], a hard link), the journal rewritten with the intact changesets
    /// before the damage, and [`Opened::damaged`] says so. A file that is not a
    /// journal, or cannot be read, is an error (see [`set_aside`]). The caller holds its
    /// storage directory's lock ([`lock_dir`]).
    pub fn open(path: &Path) -> Result<Opened> {
        let io = |doing| move |source| Error::Io { path: path.to_owned(), doing, source };
        if !path.exists() {
            return Ok(Journal::open_absent(path));
        }
        let mut file =
            OpenOptions::new().read(true).write(true).open(path).map_err(io("opening"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io("reading"))?;
        let decoded = format::decode(&bytes)
            .map_err(|why| Error::Format(format!("{}: {why}", path.display())))?;
        let len = decoded.valid_len as u64;
        let frames = decoded.changes.len() as u64;
        if decoded.damage.is_some() && !decoded.torn {
            drop(file);
            return Journal::recover(path, &bytes, decoded);
        }
        let mut size = bytes.len() as u64;
        if decoded.damage.is_some() {
            size = len;
            file.set_len(len).map_err(io("cutting the damaged tail"))?;
            file.sync_all().map_err(io("syncing"))?;
        }
        let dropped = decoded.damage.map(|why| {
            format!(
                "{} bytes after the last intact changeset dropped ({why})",
                bytes.len() as u64 - len
            )
        });
        let journal = Journal { size, ..Journal::at(path, len, frames) };
        Ok(Opened { journal, changes: decoded.changes, dropped, damaged: None })
    }

    /// [`open`](Self::open) of a journal damaged in the middle: the file kept aside,
    /// the intact part before the damage written in its place.
    fn recover(path: &Path, bytes: &[u8], decoded: format::Decoded) -> Result<Opened> {
        let aside = keep_aside(path)?;
        let valid = bytes.get(..decoded.valid_len).unwrap_or_default();
        let len = Journal::create_with(path, valid)?;
        let highest_serial = highest_serial(decoded.changes.iter().chain(&decoded.later));
        let damaged = Damaged {
            why: decoded.damage.unwrap_or_default(),
            aside,
            later: decoded.later.len(),
            highest_serial,
        };
        let journal = Journal::at(path, len, decoded.changes.len() as u64);
        Ok(Opened { journal, changes: decoded.changes, dropped: None, damaged: Some(damaged) })
    }

    /// A journal that refuses every change with `why` (its append and rewrites fail):
    /// for a zone whose journal could not be read, so that no change is acknowledged
    /// that a restart would not find. Nothing is written at `path`.
    pub fn refusing(path: &Path, why: String) -> Journal {
        Journal { refusing: Some(why), ..Journal::at(path, 0, 0) }
    }

    /// Why it refuses changes, for a journal made by [`Journal::refusing`].
    pub fn refused(&self) -> Option<&str> {
        self.refusing.as_deref()
    }

    /// [`Journal::open`] of a journal its caller just found absent (no file at `path`):
    /// an empty one, created at its first append, without looking for the file again.
    pub fn open_absent(path: &Path) -> Opened {
        let journal = Journal::at(path, 0, 0);
        Opened { journal, changes: Vec::new(), dropped: None, damaged: None }
    }

    fn at(path: &Path, len: u64, frames: u64) -> Journal {
        let appended = Mark::default();
        Journal {
            path: path.to_owned(),
            len,
            size: len,
            frames,
            appended,
            rewritten_len: len,
            file: None,
            refusing: None,
        }
    }

    /// Creates (or replaces) the journal at `path` with `bytes` (a header and frames),
    /// atomically: temporary file, sync, rename, sync the directory. Returns its length.
    fn create_with(path: &Path, bytes: &[u8]) -> Result<u64> {
        let io = |doing| move |source| Error::Io { path: path.to_owned(), doing, source };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io("creating its directory"))?;
        let mut temp = path.as_os_str().to_owned();
        temp.push(".new");
        let temp = PathBuf::from(temp);
        let mut file = File::create(&temp).map_err(io("creating"))?;
        file.write_all(bytes).map_err(io("writing"))?;
        file.sync_all().map_err(io("syncing"))?;
        std::fs::rename(&temp, path).map_err(io("renaming into place"))?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(io("syncing the directory"))?;
        Ok(bytes.len() as u64)
    }

    /// Appends `changes` (plain or shared, as a zone's history holds them) in one write
    /// and syncs them (`fdatasync`): when this returns `Ok`, they survive a crash. On
    /// error the journal is cut back to what it held.
    pub fn append<C: Borrow<Changeset>>(&mut self, changes: &[C]) -> Result<()> {
        if let Some(why) = &self.refusing {
            return Err(Error::Refused(why.clone()));
        }
        let mut bytes = Vec::new();
        for change in changes {
            format::encode(change.borrow(), &mut bytes).map_err(|why| Error::Format(why.into()))?;
        }
        if self.len == 0 {
            // No file yet: made whole, atomically.
            self.file = None;
            self.len = Journal::create_with(&self.path, &[&format::header()[..], &bytes].concat())?;
            self.size = self.len;
            self.count_appended(bytes.len() as u64, changes.len() as u64);
            return Ok(());
        }
        let file = match self.file.take() {
            Some(file) => file,
            None => OpenOptions::new()
                .write(true)
                .open(&self.path)
                .map_err(|e| self.io("opening", e))?,
        };
        // At the end of what was written and synced, into zeros written ahead.
        let need = self.len + bytes.len() as u64 + SPARE_MIN;
        let ahead = if need > self.size { self.write_ahead(&file, need) } else { Ok(()) };
        let written = ahead.and_then(|()| file.write_all_at(&bytes, self.len));
        if let Err(e) = written.and_then(|()| file.sync_data()) {
            let _ = file.set_len(self.len);
            self.size = self.len;
            return Err(self.io("appending", e));
        }
        self.file = Some(file);
        self.len += bytes.len() as u64;
        self.count_appended(bytes.len() as u64, changes.len() as u64);
        Ok(())
    }

    fn io(&self, doing: &'static str, source: std::io::Error) -> Error {
        Error::Io { path: self.path.clone(), doing, source }
    }

    /// Writes zeros from the file's end to past `need` (synced): at least doubles the
    /// file, by at most [`AHEAD_MAX`] more than needed, in whole blocks.
    fn write_ahead(&mut self, file: &File, need: u64) -> std::io::Result<()> {
        static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
        let target = need.max(self.len.saturating_mul(2).min(need + AHEAD_MAX));
        let target = target.div_ceil(AHEAD_BLOCK) * AHEAD_BLOCK;
        let mut at = self.size;
        while at < target {
            let step = (target - at).min(ZEROS.len() as u64) as usize;
            file.write_all_at(ZEROS.get(..step).unwrap_or_default(), at)?;
            at += step as u64;
        }
        file.sync_data()?;
        self.size = target;
        Ok(())
    }

    /// Closes the file kept open since the last append (the next one opens it again).
    pub fn release(&mut self) {
        self.file = None;
    }

    /// True while the file is kept open (see [`Journal::release`]).
    #[cfg(test)]
    fn holds_file(&self) -> bool {
        self.file.is_some()
    }

    fn count_appended(&mut self, bytes: u64, frames: u64) {
        self.frames += frames;
        self.appended.bytes += bytes;
        self.appended.frames += frames;
    }

    /// Where the journal stands now: what is appended from here on is kept by a
    /// [`Journal::rewrite_since`] given this mark.
    pub fn mark(&self) -> Mark {
        self.appended
    }

    /// Empties the journal (atomically), once a snapshot of the zone holds every change
    /// it had.
    pub fn reset(&mut self) -> Result<()> {
        self.rewrite(&[])
    }

    /// Replaces the journal (atomically) by one holding only `changes`: compaction, when
    /// older changes are no longer needed (the snapshot holds them and the IXFR history
    /// no longer reaches them).
    pub fn rewrite(&mut self, changes: &[Changeset]) -> Result<()> {
        self.rewrite_since(changes, self.appended)?;
        self.appended.rewrites += 1; // marks taken before no longer say what follows them
        Ok(())
    }

    /// Replaces the journal (atomically) by one holding `changes`, then what was appended
    /// after `mark`, as it was. A compaction is decided at one point and carried out
    /// later, off the path to publishing: the changes appended meanwhile must stay.
    pub fn rewrite_since(&mut self, changes: &[Changeset], mark: Mark) -> Result<()> {
        if let Some(why) = &self.refusing {
            return Err(Error::Refused(why.clone()));
        }
        if mark.rewrites != self.appended.rewrites {
            return Err(Error::StaleMark);
        }
        let tail = self.appended_since(mark)?;
        if changes.is_empty() && tail.is_empty() && self.len == 0 {
            return Ok(()); // no file, and none needed
        }
        let mut bytes = format::header().to_vec();
        for change in changes {
            format::encode(change, &mut bytes).map_err(|why| Error::Format(why.into()))?;
        }
        bytes.extend_from_slice(&tail);
        self.file = None;
        self.len = Journal::create_with(&self.path, &bytes)?;
        self.size = self.len;
        self.rewritten_len = self.len;
        self.frames = changes.len() as u64 + (self.appended.frames - mark.frames);
        Ok(())
    }

    /// The frames appended after `mark`, as bytes: the file's last ones.
    fn appended_since(&self, mark: Mark) -> Result<Vec<u8>> {
        let since = Mark {
            rewrites: mark.rewrites,
            bytes: self.appended.bytes.checked_sub(mark.bytes).unwrap_or(u64::MAX),
            frames: self.appended.frames.checked_sub(mark.frames).unwrap_or(u64::MAX),
        };
        if since.frames > self.frames || since.bytes > self.len {
            return Err(Error::Format(format!(
                "{}: a mark this journal did not give ({} frames after it, {} held)",
                self.path.display(),
                since.frames,
                self.frames
            )));
        }
        if since.bytes == 0 {
            return Ok(Vec::new());
        }
        let io = |doing| move |source| Error::Io { path: self.path.clone(), doing, source };
        let file = File::open(&self.path).map_err(io("opening"))?;
        let mut tail = vec![0; usize::try_from(since.bytes).unwrap_or(usize::MAX)];
        file.read_exact_at(&mut tail, self.len - since.bytes).map_err(io("reading"))?;
        Ok(tail)
    }

    /// Bytes of the header and the changesets (the file may be longer: zeros written
    /// ahead).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Bytes it held right after its last rewrite (or when opened): a compaction that
    /// cannot make it smaller than this waits until it has grown well beyond it.
    pub fn rewritten_len(&self) -> u64 {
        self.rewritten_len
    }

    /// True when it holds no changeset.
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// Changesets held.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Zeros written ahead are whole blocks of this many bytes.
const AHEAD_BLOCK: u64 = 4096;

/// Zeros are written ahead at most this far past what an append needs.
const AHEAD_MAX: u64 = 4 << 20;

/// An append leaves at least this many zeros after it, or writes more ahead: a shorter
/// run of zeros would read as a torn frame header.
const SPARE_MIN: u64 = 8;

/// What the name of a damaged journal kept aside ends in (see [`aside_path`]).
pub const ASIDE_SUFFIX: &str = ".damaged";

/// Where a damaged journal at `path` is kept aside: `<journal>.damaged`, then
/// `<journal>.damaged.1`, `.2`, … for the `n`th (one is never overwritten).
pub fn aside_path(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    match n {
        0 => name.push(ASIDE_SUFFIX),
        n => name.push(format!("{ASIDE_SUFFIX}.{n}")),
    }
    PathBuf::from(name)
}

/// A journal set aside earlier beside `path` ([`aside_path`] `0`), if there is one. While
/// one is there and no journal is, the zone's journaled changes are not known: its
/// server refuses changes to a primary zone until an operator has checked it.
pub fn set_aside_before(path: &Path) -> Option<PathBuf> {
    (!path.exists()).then(|| set_aside_beside(path)).flatten()
}

/// [`set_aside_before`] for a `path` its caller just found absent: only the set-aside
/// journal is looked for (a start with a million zones looks for each file once).
pub fn set_aside_beside(path: &Path) -> Option<PathBuf> {
    let aside = aside_path(path, 0);
    std::fs::symlink_metadata(&aside).is_ok().then_some(aside)
}

/// Most names tried for one set-aside journal.
const ASIDE_TRIES: u32 = 1000;

/// Moves what is at `path` (a file that is not a journal, a directory, anything) to the
/// first free [`aside_path`], never replacing one (`renameat2` with
/// `RENAME_NOREPLACE`). Returns where it went.
pub fn set_aside(path: &Path) -> Result<PathBuf> {
    aside_with(path, |aside| {
        use std::os::unix::ffi::OsStrExt;
        let from = std::ffi::CString::new(path.as_os_str().as_bytes());
        let to = std::ffi::CString::new(aside.as_os_str().as_bytes());
        let (Ok(from), Ok(to)) = (from, to) else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        // SAFETY: two NUL-terminated paths that live across the call; no other memory.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        match rc {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    })
}

/// Keeps the file at `path` as it is under the first free [`aside_path`] too (a hard
/// link, which never replaces one), so that `path` can be rewritten.
fn keep_aside(path: &Path) -> Result<PathBuf> {
    aside_with(path, |aside| std::fs::hard_link(path, aside))
}

/// Tries `put` on each [`aside_path`] in turn while they exist; syncs the directory.
fn aside_with(path: &Path, put: impl Fn(&Path) -> std::io::Result<()>) -> Result<PathBuf> {
    let io = |doing| move |source| Error::Io { path: path.to_owned(), doing, source };
    for n in 0..ASIDE_TRIES {
        let aside = aside_path(path, n);
        match put(&aside) {
            Ok(()) => {
                let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
                let dir = dir.unwrap_or(Path::new("."));
                File::open(dir).and_then(|d| d.sync_all()).map_err(io("syncing the directory"))?;
                return Ok(aside);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io("setting it aside")(e)),
        }
    }
    Err(Error::Format(format!(
        "{}: {ASIDE_TRIES} damaged journals are kept aside already: remove them",
        path.display()
    )))
}

/// The highest serial (RFC 1982 order) that `changes` lead from or to.
fn highest_serial<'c>(changes: impl Iterator<Item = &'c Changeset>) -> Option<u32> {
    changes.flat_map(|c| [c.from_serial(), c.to_serial()]).flatten().reduce(|a, b| {
        if tern_zone::records::serial_gt(b, a) {
            b
        } else {
            a
        }
    })
}

/// The lock file of a storage directory.
pub const LOCK_FILE: &str = "ternd.lock";

/// Takes `dir`'s lock (an exclusive `flock` on `dir/ternd.lock`, created with the
/// directory when missing): keep the file as long as the journals in `dir` are used; it
/// is released when dropped or when the process ends, however it ends. Fails with
/// [`Error::Busy`] while another process holds it.
pub fn lock_dir(dir: &Path) -> Result<File> {
    let at = dir.join(LOCK_FILE);
    let io = |doing| {
        let at = at.clone();
        move |source| Error::Io { path: at, doing, source }
    };
    std::fs::create_dir_all(dir).map_err(io("creating its directory"))?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&at)
        .map_err(io("opening"))?;
    // SAFETY: flock on a descriptor this function owns; no memory is passed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(file);
    }
    let e = std::io::Error::last_os_error();
    match e.kind() {
        std::io::ErrorKind::WouldBlock => Err(Error::Busy(dir.to_owned())),
        _ => Err(io("locking")(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_wire::{rdata, Rtype};
    use tern_zone::RecordData;

    fn soa(serial: u32) -> RecordData {
        let text = format!("ns.example. h.example. {serial} 60 60 600 60");
        let rdata = rdata::parse_str(Rtype::SOA, &text, None).unwrap();
        RecordData { owner: "example.".parse().unwrap(), rtype: Rtype::SOA, ttl: 60, rdata }
    }

    fn change(from: u32) -> Changeset {
        Changeset::between(soa(from), soa(from + 1))
    }

    #[test]
    fn appended_changes_are_there_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zones/example.journal");
        let mut opened = Journal::open(&path).unwrap();
        assert!(opened.changes.is_empty() && opened.journal.is_empty());
        opened.journal.append(&[change(1), change(2)]).unwrap();
        opened.journal.append(&[change(3)]).unwrap();
        assert_eq!(opened.journal.frames(), 3);
        drop(opened);
        let again = Journal::open(&path).unwrap();
        assert_eq!(again.changes, vec![change(1), change(2), change(3)]);
        assert!(again.dropped.is_none());
    }

    #[test]
    fn a_torn_tail_is_cut_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("example.journal");
        let mut opened = Journal::open(&path).unwrap();
        opened.journal.append(&[change(1)]).unwrap();
        let whole = opened.journal.len();
        opened.journal.append(&[change(2)]).unwrap();
        let end = opened.journal.len() as usize;
        drop(opened);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..end - 3]).unwrap();
        let again = Journal::open(&path).unwrap();
        assert_eq!(again.changes, vec![change(1)]);
        assert!(again.dropped.unwrap().contains("dropped"));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), whole, "the tail is cut");
        let mut journal = again.journal;
        journal.append(&[change(2)]).unwrap();
        assert_eq!(read(&path), vec![change(1), change(2)]);
        journal.rewrite(&[change(2)]).unwrap();
        assert_eq!(journal.frames(), 1);
        journal.append(&[change(3)]).unwrap();
        assert_eq!(read(&path), vec![change(2), change(3)]);
        journal.reset().unwrap();
        assert!(read(&path).is_empty());
    }

    /// A flipped bit in the first of several changesets: nothing is cut away. The file
    /// is kept aside as it was, the journal holds what is intact before the damage,
    /// and the serials of the changesets after it are told.
    #[test]
    fn corruption_keeps_the_file_aside_and_tells_the_highest_serial() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("example.journal");
        let mut opened = Journal::open(&path).unwrap();
        for serial in 16..19 {
            opened.journal.append(&[change(serial)]).unwrap();
        }
        drop(opened);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[format::HEADER_LEN + 40] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        for round in 0..2 {
            if round == 1 {
                std::fs::write(&path, &bytes).unwrap(); // damaged again: a second aside
            }
            let again = Journal::open(&path).unwrap();
            assert!(again.changes.is_empty() && again.dropped.is_none());
            let damaged = again.damaged.unwrap();
            assert_eq!((damaged.later, damaged.highest_serial), (2, Some(19)));
            assert_eq!(damaged.aside, aside_path(&path, round));
            assert_eq!(std::fs::read(&damaged.aside).unwrap(), bytes, "kept as it was");
        }
        let mut reopened = Journal::open(&path).unwrap();
        assert!(reopened.changes.is_empty() && reopened.damaged.is_none());
        reopened.journal.append(&[change(20)]).unwrap();
        assert_eq!(read(&path), vec![change(20)]);
        assert_eq!(set_aside_before(&path), None, "a journal is there");
    }

    /// What cannot be read at all is moved aside whatever it is (never replacing an
    /// earlier one); a refusing journal writes nothing.
    #[test]
    fn unreadable_journals_are_set_aside_and_refuse_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("example.journal");
        std::fs::write(&path, b"").unwrap();
        assert!(Journal::open(&path).is_err(), "empty");
        assert_eq!(set_aside(&path).unwrap(), aside_path(&path, 0));
        assert_eq!(set_aside_before(&path), Some(aside_path(&path, 0)));
        std::fs::create_dir(&path).unwrap();
        assert!(Journal::open(&path).is_err(), "a directory");
        assert_eq!(set_aside(&path).unwrap(), aside_path(&path, 1));
        assert!(aside_path(&path, 1).is_dir() && !path.exists());
        let mut refusing = Journal::refusing(&path, "damaged".into());
        assert!(matches!(refusing.append(&[change(1)]), Err(Error::Refused(_))));
        assert!(matches!(refusing.reset(), Err(Error::Refused(_))));
        assert!(!path.exists(), "nothing written");
        assert_eq!(refusing.refused(), Some("damaged"));
    }

    /// A compaction decided before some appends and carried out after them keeps them
    /// (the writer decides at a version and the rewrite runs later, off its path), also
    /// when a second compaction was decided before the first ran.
    #[test]
    fn a_compaction_keeps_what_was_appended_after_its_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("example.journal");
        let mut journal = Journal::open(&path).unwrap().journal;
        let at_start = journal.mark();
        journal.append(&[change(1), change(2)]).unwrap();
        let first = journal.mark(); // history to serial 3: [2→3]
        journal.append(&[change(3)]).unwrap();
        let second = journal.mark(); // history to serial 4: [3→4]
        journal.append(&[change(4), change(5)]).unwrap();
        journal.rewrite_since(&[change(2)], first).unwrap();
        assert_eq!(read(&path), vec![change(2), change(3), change(4), change(5)]);
        assert_eq!(journal.frames(), 4);
        journal.rewrite_since(&[change(3)], second).unwrap();
        assert_eq!(read(&path), vec![change(3), change(4), change(5)]);
        journal.append(&[change(6)]).unwrap();
        assert_eq!(read(&path), vec![change(3), change(4), change(5), change(6)]);
        assert_eq!(journal.frames(), 4);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(journal.len() as usize, format::decode(&bytes).unwrap().valid_len);
        let again = Journal::open(&path).unwrap();
        assert_eq!(again.changes, vec![change(3), change(4), change(5), change(6)]);
        // A mark from before what the file still holds is refused, the file untouched.
        let mut journal = again.journal;
        journal.append(&[change(7)]).unwrap();
        let refused = journal.rewrite_since(&[], Mark { frames: 9, ..at_start }).unwrap_err();
        assert!(refused.to_string().contains("did not give"), "{refused}");
        // A mark taken before a whole rewrite: the compaction it decided is moot.
        let before = journal.mark();
        journal.append(&[change(8)]).unwrap();
        journal.rewrite(&[change(1)]).unwrap();
        journal.append(&[change(9)]).unwrap();
        assert!(matches!(journal.rewrite_since(&[], before), Err(Error::StaleMark)));
        assert_eq!(read(&path), vec![change(1), change(9)], "untouched by the stale one");
    }

    /// The file appended to stays open until released, and a rewrite lets go of the
    /// replaced one: later appends reach the file at the path.
    #[test]
    fn the_file_is_kept_between_appends_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("example.journal");
        let mut journal = Journal::open(&path).unwrap().journal;
        journal.append(&[change(1)]).unwrap();
        assert!(!journal.holds_file(), "the first append makes the file whole");
        journal.append(&[change(2)]).unwrap();
        assert!(journal.holds_file());
        journal.append(&[change(3)]).unwrap();
        journal.release();
        assert!(!journal.holds_file());
        journal.append(&[change(4)]).unwrap();
        assert_eq!(read(&path), vec![change(1), change(2), change(3), change(4)]);
        journal.rewrite(&[change(4)]).unwrap();
        assert!(!journal.holds_file());
        journal.append(&[change(5)]).unwrap();
        assert_eq!(read(&path), vec![change(4), change(5)]);
    }

    /// Appends after the first go into zeros written ahead, whole blocks that at least
    /// double the file: most leave its size alone. Reopened, the zeros are neither
    /// changes nor damage, and appends go on where the changes end.
    #[test]
    fn appends_overwrite_zeros_written_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("example.journal");
        let size = || std::fs::metadata(&path).unwrap().len();
        let mut journal = Journal::open(&path).unwrap().journal;
        journal.append(&[change(1)]).unwrap();
        assert_eq!(size(), journal.len(), "the first append makes the file whole");
        let mut grew = 0;
        for serial in 2..40 {
            let before = size();
            journal.append(&[change(serial)]).unwrap();
            assert!(size() >= journal.len() + SPARE_MIN && size() % AHEAD_BLOCK == 0);
            grew += usize::from(size() != before);
        }
        assert!(grew <= 3, "the file grew at {grew} of 38 appends");
        drop(journal);
        let again = Journal::open(&path).unwrap();
        assert!(again.dropped.is_none(), "{:?}", again.dropped);
        assert_eq!(again.changes, (1..40).map(change).collect::<Vec<_>>());
        let mut journal = again.journal;
        journal.append(&[change(40)]).unwrap();
        assert_eq!(read(&path), (1..41).map(change).collect::<Vec<_>>());
        journal.rewrite(&[change(40)]).unwrap();
        assert_eq!(size(), journal.len(), "a rewrite writes no zeros ahead");
    }

    /// What the file holds, read without opening the journal.
    fn read(path: &Path) -> Vec<Changeset> {
        format::decode(&std::fs::read(path).unwrap()).unwrap().changes
    }

    /// A second process on the same storage directory is refused while the first holds
    /// it; then it may take it. No journal keeps a descriptor open before appending.
    #[test]
    fn one_process_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_dir(dir.path()).unwrap();
        let refused = lock_dir(dir.path()).unwrap_err();
        assert!(matches!(refused, Error::Busy(_)), "{refused}");
        assert!(refused.to_string().contains("in use by another process"));
        drop(first);
        assert!(lock_dir(dir.path()).is_ok());
        let before = std::fs::read_dir("/proc/self/fd").unwrap().count();
        let journals: Vec<Journal> = (0..100)
            .map(|i| Journal::open(&dir.path().join(format!("{i}.journal"))).unwrap().journal)
            .collect();
        // (Other tests of this process open files meanwhile: not 100 of them.)
        let after = std::fs::read_dir("/proc/self/fd").unwrap().count();
        assert!(after < before + 50, "{before} descriptors before, {after} after");
        drop(journals);
    }
}
