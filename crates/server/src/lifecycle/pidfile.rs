//! The PID file: written after the sockets are bound and the process has detached,
//! refused when it names another live `ternd`, removed on a clean exit.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A written PID file; removed when dropped (best effort: after the privilege drop the
/// directory may no longer be writable).
#[derive(Debug)]
pub struct PidFile {
    path: PathBuf,
}

impl PidFile {
    /// Writes this process's id to `path`, unless the file names another running process.
    pub fn create(path: &Path) -> Result<PidFile> {
        let fail = |source| Error::File { path: path.to_owned(), source };
        if let Some(pid) = fs::read_to_string(path).ok().and_then(|t| t.trim().parse::<i32>().ok())
        {
            if pid != std::process::id() as i32 && is_running(pid) {
                let busy = std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!(
                        "process {pid} is running (another ternd?); stop it or remove the file"
                    ),
                );
                return Err(fail(busy));
            }
        }
        let mut file = fs::File::create(path).map_err(fail)?;
        writeln!(file, "{}", std::process::id()).map_err(fail)?;
        Ok(PidFile { path: path.to_owned() })
    }
}

/// Whether a process with id `pid` exists (signal 0 checks without sending).
fn is_running(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_refuses_a_live_process_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ternd.pid");
        let pid = PidFile::create(&path).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), format!("{}\n", std::process::id()));
        drop(pid);
        assert!(!path.exists());

        fs::write(&path, "1\n").unwrap(); // init is always running
        let err = PidFile::create(&path).unwrap_err().to_string();
        assert!(err.contains("process 1 is running"), "{err}");

        fs::write(&path, "999999999\n").unwrap(); // a stale file is taken over
        assert!(PidFile::create(&path).is_ok());
    }
}
