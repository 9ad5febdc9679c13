//! Opening the files a parse reads — the zone file and each `$INCLUDE` — so that only
//! regular files are read, within [`Options::max_file_size`](super::Options).
//!
//! A FIFO, a device (`/dev/zero`, `/dev/stdin`) or a directory is refused: a FIFO can
//! block the open and a device can give bytes forever. The file is opened without
//! blocking (`O_NONBLOCK`, which changes nothing for a regular file) and its type and size
//! are taken from the open file itself, so a name swapped after a check cannot slip
//! another kind of file in. A regular file's size can still be wrong (files under
//! `/proc` say 0) or change while it is read, so the reader also counts what it reads
//! (the `chunks` module).

use std::fs::{File, FileType, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why a file is not read.
#[derive(Debug)]
pub(super) enum Refused {
    /// It cannot be opened or examined.
    Io(std::io::Error),
    /// It is not a regular file; says what it is.
    NotRegular(&'static str),
    /// It is larger than the limit: its size and the limit.
    TooBig(u64, u64),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::NotRegular(what) => write!(f, "not a regular file ({what})"),
            Refused::TooBig(size, limit) => {
                write!(f, "{size} bytes, over the limit of {limit} (max_file_size)")
            }
        }
    }
}

/// Which file a file is, whatever name reached it: its device and inode. A parse
/// refuses an `$INCLUDE` of a file it is already reading by it (no path is resolved).
pub(super) type FileId = (u64, u64);

/// A regular file opened for reading.
#[derive(Debug)]
pub(super) struct Regular {
    pub file: File,
    /// Its size when opened.
    pub size: u64,
    pub id: FileId,
    /// When it was last modified, as the open file says (`None` where that is not kept).
    pub modified: Option<std::time::SystemTime>,
}

/// Opens `path` for reading if it is a regular file of at most `max_size` bytes.
pub(super) fn open_regular(path: &Path, max_size: u64) -> Result<Regular, Refused> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(Refused::Io)?;
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(kind(meta.file_type())));
    }
    if meta.len() > max_size {
        return Err(Refused::TooBig(meta.len(), max_size));
    }
    let modified = meta.modified().ok();
    Ok(Regular { file, size: meta.len(), id: (meta.dev(), meta.ino()), modified })
}

/// What a file that is not regular is, for the message.
fn kind(file_type: FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_regular_files_opened() {
        let refused = |p: &str| open_regular(Path::new(p), u64::MAX).unwrap_err().to_string();
        assert_eq!(refused("/dev/zero"), "not a regular file (a character device)");
        assert_eq!(refused("/"), "not a regular file (a directory)");
        assert!(refused("/nonexistent/z").contains("No such file"));
        let this = concat!(env!("CARGO_MANIFEST_DIR"), "/src/parser/file.rs");
        let size = open_regular(Path::new(this), u64::MAX).unwrap().size;
        assert!(size > 1000);
        let e = open_regular(Path::new(this), 1000).unwrap_err().to_string();
        assert_eq!(e, format!("{size} bytes, over the limit of 1000 (max_file_size)"));
    }
}
