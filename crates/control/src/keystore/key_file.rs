//! Private key files: one unencrypted PKCS#8 DER file per key (`key<id>.pkcs8`),
//! created with mode 0600 (never through a wider mode), synced with its directory
//! before the state names it; read back only when it is a regular file that neither
//! group nor others may read or write.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The largest key file read (an RSA-4096 PKCS#8 key is about 2.4 KB).
pub const MAX_SIZE: u64 = 16 * 1024;

/// The file of key `id` in `dir`.
pub fn path(dir: &Path, id: u32) -> PathBuf {
    dir.join(format!("key{id}.pkcs8"))
}

fn error(file: &Path, why: impl Into<String>) -> Error {
    Error::KeyStore { file: file.to_owned(), line: None, why: why.into() }
}

/// Creates `dir` and its missing parents with mode 0700 (an existing directory is left
/// as it is).
pub fn create_dir(dir: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| error(dir, format!("cannot create the key directory: {e}")))
}

/// Writes `der` as a new file `file` (mode 0600; an existing file is an error, never
/// overwritten), synced with its directory.
pub fn write_new(file: &Path, der: &[u8]) -> Result<()> {
    let why = |e: std::io::Error| error(file, format!("cannot write the key: {e}"));
    let mut out =
        OpenOptions::new().write(true).create_new(true).mode(0o600).open(file).map_err(why)?;
    let written = out.write_all(der).and_then(|()| out.sync_all());
    if let Err(e) = written {
        let _ = fs::remove_file(file);
        return Err(why(e));
    }
    sync_dir(file)
}

/// Syncs the directory holding `file`, so that a file created or removed there stays so.
pub fn sync_dir(file: &Path) -> Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| error(dir, format!("cannot sync the key directory: {e}")))
}

/// Reads key file `file`: refused when missing, not a regular file (a symbolic link
/// too), readable or writable by group or others, unreadable, or larger than
/// [`MAX_SIZE`].
pub fn read(file: &Path) -> Result<Vec<u8>> {
    let meta = fs::symlink_metadata(file).map_err(|e| error(file, format!("missing: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(error(file, "not a regular file"));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(error(
            file,
            format!(
                "mode {mode:03o}: a private key must not be open to group or others (chmod 600)"
            ),
        ));
    }
    if meta.len() > MAX_SIZE {
        return Err(error(file, format!("{} bytes: too large for a key", meta.len())));
    }
    let mut der = Vec::new();
    File::open(file)
        .and_then(|f| f.take(MAX_SIZE + 1).read_to_end(&mut der))
        .map_err(|e| error(file, format!("unreadable: {e}")))?;
    Ok(der)
}
