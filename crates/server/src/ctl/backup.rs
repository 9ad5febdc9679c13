//! Where `ternctl zone-backup` writes and `zone-restore` reads: a directory inside
//! `[server] backup-dir`, whatever the request names — a name from the control socket
//! becomes a directory the server writes into, so it is held inside, `..` refused and
//! symbolic links resolved before the check.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// The directory `given` names in `base` (relative names are taken in it, absolute
/// ones must be in it); none: a new one named by `now` (UTC, `YYYYMMDDHHMMSS`).
pub fn resolve(base: &Path, given: Option<&str>, now: u64) -> Result<PathBuf> {
    let Some(given) = given else {
        let now = u32::try_from(now).unwrap_or(u32::MAX);
        return Ok(base.join(tern_wire::rdata::date_text(now)));
    };
    let path = Path::new(given);
    if path.components().any(|c| matches!(c, Component::ParentDir)) || given.is_empty() {
        let why = format!("name a directory in {} without `..`", base.display());
        return Err(Error::BackupDir { dir: given.to_owned(), why });
    }
    let target = base.join(path);
    if !target.starts_with(base) {
        let why = format!("backups are kept in {} (backup-dir)", base.display());
        return Err(Error::BackupDir { dir: given.to_owned(), why });
    }
    inside(base, &target).map(|()| target)
}

/// Whether the part of `target` that exists leads into `base`, links resolved (a
/// `base` not made yet has nothing in it that could lead out).
fn inside(base: &Path, target: &Path) -> Result<()> {
    let Ok(real_base) = base.canonicalize() else { return Ok(()) };
    let mut at = target;
    while at.symlink_metadata().is_err() {
        match at.parent() {
            Some(parent) => at = parent,
            None => return Ok(()),
        }
    }
    match at.canonicalize() {
        Ok(real) if real.starts_with(&real_base) => Ok(()),
        Ok(real) => Err(Error::BackupDir {
            dir: at.display().to_string(),
            why: format!("leads to {}, outside backup-dir", real.display()),
        }),
        Err(source) => Err(Error::File { path: at.to_owned(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backup_directory_is_held_inside_backup_dir() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("backup");
        std::fs::create_dir(&base).unwrap();
        assert_eq!(resolve(&base, Some("monday"), 0).unwrap(), base.join("monday"));
        let inner = base.join("a/b");
        assert_eq!(resolve(&base, inner.to_str(), 0).unwrap(), inner);
        assert_eq!(resolve(&base, None, 1_764_403_200).unwrap(), base.join("20251129080000"));
        assert!(resolve(&base, Some("../out"), 0)
            .unwrap_err()
            .to_string()
            .contains("without `..`"));
        assert!(resolve(&base, Some("/etc"), 0).unwrap_err().to_string().contains("backup-dir"));
        std::os::unix::fs::symlink(dir.path(), base.join("link")).unwrap();
        let why = resolve(&base, Some("link/x"), 0).unwrap_err().to_string();
        assert!(why.contains("outside backup-dir"), "{why}");
    }
}
