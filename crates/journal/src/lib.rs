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
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { path, doing, source } => write!(f, "{}: {doing}: {source}", path.display()),
            Error::Format(why) => f.write_str(why),
            Error::Busy(path) => {
                write!(f, "{}: in use by another process (it holds {LOCK_FILE})", path.display())
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
    /// The file, open for writing since an append, until [`Journal::release`] (or a
    /// rewrite, which puts another file at the path).
    file: Option<File>,
}

/// A point in what was appended to a journal since it was opened ([`Journal::mark`]):
/// a compaction decided at this point keeps what is appended after it
/// ([`Journal::rewrite_since`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    bytes: u64,
    frames: u64,
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
}

impl Journal {
    /// Opens the journal at `path`; when there is none, the file is made at the first
    /// append (a server loading 100,000 zones does not make 100,000 empty files). A
    /// damaged tail is cut off (and the file synced), the intact changesets returned. The
    /// caller holds its storage directory's lock ([`lock_dir`]).
    pub fn open(path: &Path) -> Result<Opened> {
        let io = |doing| move |source| Error::Io { path: path.to_owned(), doing, source };
        if !path.exists() {
            let journal = Journal::at(path, 0, 0);
            return Ok(Opened { journal, changes: Vec::new(), dropped: None });
        }
        let mut file =
            OpenOptions::new().read(true).write(true).open(path).map_err(io("opening"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io("reading"))?;
        let decoded = format::decode(&bytes)
            .map_err(|why| Error::Format(format!("{}: {why}", path.display())))?;
        let len = decoded.valid_len as u64;
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
        let frames = decoded.changes.len() as u64;
        let journal = Journal { size, ..Journal::at(path, len, frames) };
        Ok(Opened { journal, changes: decoded.changes, dropped })
    }

    fn at(path: &Path, len: u64, frames: u64) -> Journal {
        let appended = Mark::default();
        Journal { path: path.to_owned(), len, size: len, frames, appended, file: None }
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
        self.rewrite_since(changes, self.appended)
    }

    /// Replaces the journal (atomically) by one holding `changes`, then what was appended
    /// after `mark`, as it was. A compaction is decided at one point and carried out
    /// later, off the path to publishing: the changes appended meanwhile must stay.
    pub fn rewrite_since(&mut self, changes: &[Changeset], mark: Mark) -> Result<()> {
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
        self.frames = changes.len() as u64 + (self.appended.frames - mark.frames);
        Ok(())
    }

    /// The frames appended after `mark`, as bytes: the file's last ones.
    fn appended_since(&self, mark: Mark) -> Result<Vec<u8>> {
        let since = Mark {
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
        journal.rewrite(&[]).unwrap();
        let refused = journal.rewrite_since(&[], at_start).unwrap_err();
        assert!(refused.to_string().contains("did not give"), "{refused}");
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
