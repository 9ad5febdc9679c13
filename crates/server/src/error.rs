//! The one error type of the server crate.
//!
//! Configuration errors carry the file, line and column and a hint; I/O errors say what
//! the server was doing (binding which address, writing which file). Errors of a single
//! query never surface here: the data plane drops or answers, it does not fail.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Everything that can stop the daemon from starting, a reload from applying, or a
/// control request from being carried out.
#[derive(Debug)]
pub enum Error {
    /// The configuration cannot be used; the message is already formatted as
    /// `file:line:column: what` followed by the offending line and a hint.
    Config(String),
    /// A socket could not be created, configured or bound.
    Bind { addr: SocketAddr, source: io::Error },
    /// A file could not be read or written (configuration, PID file, log file).
    File { path: PathBuf, source: io::Error },
    /// Privileges could not be dropped (unknown user or group, or a failing syscall).
    Privileges(String),
    /// Another operating-system call failed: what the server was doing, and the error.
    Os { doing: &'static str, source: io::Error },
    /// The start-up failed: zones failed to load (all of them, or any with
    /// `strict-start`).
    Start(String),
    /// The AF_XDP data plane cannot be set up (the socket path serves on).
    Xdp(String),
    /// A backup directory a control request names is refused (see `ctl::backup`).
    BackupDir { dir: String, why: String },
    /// The TLS certificate, key or settings cannot be used (the file and why).
    Tls(String),
}

/// The server crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps the current `errno` as an [`Error::Os`].
    pub(crate) fn last_os(doing: &'static str) -> Error {
        Error::Os { doing, source: io::Error::last_os_error() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(message) => f.write_str(message),
            Error::Bind { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            Error::File { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Privileges(message) => write!(f, "cannot drop privileges: {message}"),
            Error::Os { doing, source } => write!(f, "{doing}: {source}"),
            Error::Start(message) => write!(f, "not started: {message}"),
            Error::Xdp(message) => write!(f, "XDP cannot be used: {message}"),
            Error::BackupDir { dir, why } => write!(f, "{dir}: {why}"),
            Error::Tls(message) => write!(f, "TLS: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bind { source, .. } | Error::File { source, .. } | Error::Os { source, .. } => {
                Some(source)
            }
            Error::Config(_)
            | Error::Privileges(_)
            | Error::Start(_)
            | Error::Xdp(_)
            | Error::BackupDir { .. }
            | Error::Tls(_) => None,
        }
    }
}
