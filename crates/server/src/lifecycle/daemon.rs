//! `--daemon`: detach from the terminal, and let the starting command know whether the
//! server came up.
//!
//! The process forks twice (the grandchild is no session leader and cannot regain a
//! terminal) and starts a new session. A pipe ties the first parent to the daemon: the
//! daemon writes `R` once it serves (then what the operator must see: zones that failed
//! to load while others serve), or `E` and the error; the parent prints what follows the
//! letter on standard error and exits 0 or 1. So `ternd --daemon` fails visibly, like a
//! foreground start, and a zone that did not load is said on the terminal, not only in
//! the log.
//! Must run before any thread starts.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};

use crate::error::{Error, Result};

/// The daemon's end of the readiness pipe.
#[derive(Debug)]
pub struct Readiness(Option<File>);

impl Readiness {
    /// Tells the starting command that the server is up, and `warnings` (one per line,
    /// none when empty), which it prints.
    pub fn ready(&mut self, warnings: &[String]) {
        if let Some(mut pipe) = self.0.take() {
            let _ = write!(pipe, "R{}", warnings.join("\n"));
        }
    }

    /// Tells the starting command that the server failed to start, and why.
    pub fn failed(&mut self, why: &dyn std::fmt::Display) {
        if let Some(mut pipe) = self.0.take() {
            let _ = write!(pipe, "E{why}");
        }
    }
}

/// Detaches; returns in the daemon only (the starting process exits with the outcome).
pub fn daemonize() -> Result<Readiness> {
    let (read_end, write_end) = pipe()?;
    if fork()? {
        drop(write_end);
        wait_for_daemon(read_end);
    }
    drop(read_end);
    // SAFETY: setsid has no memory-safety preconditions.
    if unsafe { libc::setsid() } < 0 {
        return Err(Error::last_os("setsid"));
    }
    if fork()? {
        // SAFETY: the intermediate child exits without running destructors or atexit
        // handlers that belong to the daemon.
        unsafe { libc::_exit(0) };
    }
    let _ = std::env::set_current_dir("/");
    detach_stdio()?;
    Ok(Readiness(Some(File::from(write_end))))
}

/// Reads the daemon's verdict and exits the starting process accordingly.
fn wait_for_daemon(read_end: OwnedFd) -> ! {
    let mut verdict = String::new();
    let _ = File::from(read_end).read_to_string(&mut verdict);
    if let Some(warnings) = verdict.strip_prefix('R') {
        warnings.lines().for_each(|line| eprintln!("ternd: warning: {line}"));
        std::process::exit(0)
    }
    match verdict.strip_prefix('E') {
        Some(why) => eprintln!("ternd: {why}"),
        None => eprintln!("ternd: the daemon exited before it was ready (see its log)"),
    }
    std::process::exit(1)
}

/// Forks; true in the parent.
fn fork() -> Result<bool> {
    // SAFETY: called while the process has one thread, so the child is consistent.
    match unsafe { libc::fork() } {
        -1 => Err(Error::last_os("fork")),
        0 => Ok(false),
        _ => Ok(true),
    }
}

/// A close-on-exec pipe.
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::last_os("pipe"));
    }
    let [read_end, write_end] = fds;
    // SAFETY: pipe2 returned two fresh descriptors that nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(read_end), OwnedFd::from_raw_fd(write_end)) })
}

/// Points standard input, output and error at /dev/null.
fn detach_stdio() -> Result<()> {
    let null = File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|source| Error::File { path: "/dev/null".into(), source })?;
    for target in [libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: dup2 onto the standard descriptors; `null` stays open meanwhile.
        if unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), target) } < 0 {
            return Err(Error::last_os("redirecting standard streams"));
        }
    }
    Ok(())
}
