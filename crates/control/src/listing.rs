//! The journals in the storage directory as the start found them, read once, so that
//! the first load of each zone does not look for its journal and its set-aside copy
//! one path at a time: at a start with a million zones and no journals, those two
//! failed lookups a zone were a fifth of the kernel's time.
//!
//! The listing holds a hash of each name in the directory that a journal or a
//! set-aside journal could have (`…journal`, `…journal.damaged`). A name not in it was
//! not there when the directory was read; a name in it, or a hash shared by chance,
//! only means the file is looked for as without a listing. So the listing can only be
//! wrong one way — saying a file is absent that appeared after the read — and it is
//! kept no longer than that cannot happen: a zone's journal is written by its own
//! writer only, after its first load, so a zone's first load may trust the listing as
//! long as no other writer of that zone came and went. The control plane takes the
//! listing before the start's first loads and drops it when they are done, or at the
//! first change of the zone set after the start ([`StartListing`]).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use tern_journal::ASIDE_SUFFIX;

/// What a zone's first load knows of its journal before opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Nothing: the journal is looked for.
    Unknown,
    /// No journal is there; a set-aside one is looked for.
    NoJournal,
    /// Neither a journal nor a set-aside one is there.
    Nothing,
}

/// The names of journals and set-aside journals in one directory (see the module
/// comment).
#[derive(Debug)]
pub struct Listing {
    dir: PathBuf,
    /// Hashes of the names, sorted.
    names: Vec<u64>,
}

impl Listing {
    /// Reads `dir` (`None` when it cannot be read to the end: then nothing is trusted).
    pub fn read(dir: &Path) -> Option<Listing> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).ok()? {
            let name = entry.ok()?.file_name();
            let bytes = name.as_bytes();
            let kept = bytes.strip_suffix(ASIDE_SUFFIX.as_bytes()).unwrap_or(bytes);
            if kept.ends_with(b"journal") {
                names.push(hash(&[bytes]));
            }
        }
        names.sort_unstable();
        Some(Listing { dir: dir.to_path_buf(), names })
    }

    /// What the listing says of the journal at `journal` and of its set-aside copy
    /// (`tern_journal::aside_path(journal, 0)`; `Unknown` for a journal in another
    /// directory). Nothing is allocated: the set-aside name is hashed in two parts.
    pub fn found(&self, journal: &Path) -> Found {
        if journal.parent() != Some(self.dir.as_path()) {
            return Found::Unknown;
        }
        let Some(name) = journal.file_name().map(OsStrExt::as_bytes) else {
            return Found::Unknown;
        };
        let holds = |hash: u64| self.names.binary_search(&hash).is_ok();
        match (holds(hash(&[name])), holds(hash(&[name, ASIDE_SUFFIX.as_bytes()]))) {
            (false, false) => Found::Nothing,
            (false, true) => Found::NoJournal,
            (true, _) => Found::Unknown,
        }
    }
}

/// A 64-bit FNV-1a hash of `parts` one after the other (the same for a name in one
/// part or in two): names are told apart by it only to save a lookup, so a hash
/// shared by chance costs a lookup, never a wrong answer.
fn hash(parts: &[&[u8]]) -> u64 {
    let bytes = parts.iter().flat_map(|part| part.iter());
    bytes.fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The listing of the start, while it may be trusted (see the module comment).
#[derive(Debug, Default)]
pub struct StartListing(ArcSwapOption<Listing>);

impl StartListing {
    /// Takes a listing of `dir` (nothing when it cannot be read).
    pub fn take(&self, dir: &Path) {
        self.0.store(Listing::read(dir).map(Arc::new));
    }

    /// Lets the listing go: from now on, journals are looked for.
    pub fn drop_listing(&self) {
        self.0.store(None);
    }

    /// What the listing says of `journal`, if one is kept.
    pub fn found(&self, journal: &Path) -> Found {
        let listing = self.0.load();
        let Some(listing) = listing.as_deref() else { return Found::Unknown };
        listing.found(journal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_journal_is_looked_for_and_an_unlisted_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("a.journal"), b"").unwrap();
        std::fs::write(at("b.journal.damaged"), b"").unwrap();
        std::fs::write(at("c.zone"), b"").unwrap();
        let listing = StartListing::default();
        assert_eq!(listing.found(&at("a.journal")), Found::Unknown, "nothing taken yet");
        listing.take(dir.path());
        assert_eq!(listing.found(&at("a.journal")), Found::Unknown);
        assert_eq!(listing.found(&at("b.journal")), Found::NoJournal, "its set-aside copy is");
        assert_eq!(listing.found(&at("c.journal")), Found::Nothing);
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(listing.found(&elsewhere.path().join("c.journal")), Found::Unknown);
        std::fs::write(at("c.journal"), b"").unwrap();
        assert_eq!(listing.found(&at("c.journal")), Found::Nothing, "as it was when read");
        listing.drop_listing();
        assert_eq!(listing.found(&at("c.journal")), Found::Unknown);
    }

    #[test]
    fn an_unreadable_directory_gives_no_listing() {
        let listing = StartListing::default();
        listing.take(Path::new("/nonexistent/storage"));
        assert_eq!(listing.found(Path::new("/nonexistent/storage/a.journal")), Found::Unknown);
    }
}
