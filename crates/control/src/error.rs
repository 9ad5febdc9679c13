//! The control plane's errors: one enum, each variant a kind of failure an operator
//! (or the log) is told about, with what it concerns. Commands answer with their
//! `Display` text; nothing here is a bare string passed along.

use tern_wire::{Name, Rcode};

use crate::peer::ClientError;

/// Everything that can go wrong in the control plane.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The zone is not served here (no writer).
    #[error("{0} is not served here")]
    NotServed(Name),
    /// The zone has no data yet (a secondary waiting for its first transfer, a load
    /// that failed).
    #[error("nothing is served yet")]
    NothingServed,
    /// The zone's writer stopped (the zone was removed, or the server is stopping).
    #[error("the zone's writer stopped")]
    WriterStopped,
    /// Frozen by an operator (`zone-freeze`).
    #[error("the zone is frozen (zone-thaw it first)")]
    Frozen,
    /// Asked of a secondary what only a primary does.
    #[error("a secondary's data comes from its primary: change it there")]
    Secondary,
    /// Asked of a primary what only a secondary does.
    #[error("not a secondary: its data comes from its zone file")]
    NotSecondary,
    /// A transaction step without an open transaction.
    #[error("no transaction is open (zone-begin first)")]
    NoTransaction,
    /// A second transaction.
    #[error("a transaction is already open (zone-commit or zone-abort it)")]
    TransactionOpen,
    /// A transaction's work on its blocking thread failed (it is closed).
    #[error("the transaction failed and is closed: {0}")]
    TransactionLost(String),
    /// Only sets and unsets are applied at once.
    #[error("only sets and unsets can be applied at once")]
    NotAnEdit,
    /// An owner name that does not read, or lies outside the zone.
    #[error("{text}: {why}")]
    Owner {
        /// The name as given.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// The zone is built by a script: its data changes with the script only.
    #[error("the zone is built by its script: change the script, then reload")]
    Scripted,
    /// A zone's script (`[[zone]] script`) failed, broke a bound, or emitted a record
    /// that does not read.
    #[error("{}{}: {why}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Script {
        /// The script.
        file: std::path::PathBuf,
        /// Its line, when known.
        line: Option<usize>,
        /// What went wrong.
        why: String,
    },
    /// The zone is read from a database: its data changes there only.
    #[error("the zone is read from its database: change its rows there")]
    FromDatabase,
    /// A zone's database (`[[zone]] database`) could not be read, or its rows do not
    /// make a zone.
    #[error("database {database}: {why}")]
    Database {
        /// The database's id.
        database: String,
        /// What went wrong.
        why: String,
    },
    /// A record type that does not read.
    #[error("{0}: not a record type")]
    Type(String),
    /// Record data that does not read.
    #[error("{rtype} {text}: {why}")]
    Record {
        /// Its type.
        rtype: tern_wire::Rtype,
        /// The data as given.
        text: String,
        /// What is wrong with it.
        why: tern_wire::Error,
    },
    /// A change the update rules refuse (RFC 2136 §3.4).
    #[error("{rcode}: {reason}")]
    Refused {
        /// The RCODE an UPDATE would get.
        rcode: Rcode,
        /// Why.
        reason: String,
    },
    /// Nothing to NOTIFY: no targets configured.
    #[error("no NOTIFY targets are configured (`notify`, `notify-ns`)")]
    NoNotifyTargets,
    /// A zone file whose data changed while its serial stayed the served one.
    #[error("the zone file's data changed but its serial {0} did not rise: not loaded, the served version stays (raise the serial: secondaries would keep the old data)")]
    SerialNotRaised(u32),
    /// A backup could not be written or read (`zone-backup`, `zone-restore`).
    #[error("{0}")]
    Backup(String),
    /// The zone has no file to write.
    #[error("the zone has no file to write")]
    NoFile,
    /// The zone file was not written (the log says why).
    #[error("the zone file was not written: {0}")]
    NotWritten(String),
    /// The zone (or a catalog produced here) does not load.
    #[error("{0}")]
    Load(#[from] tern_zone::Error),
    /// A load that failed, as its outcome says.
    #[error("{0}")]
    LoadFailed(String),
    /// The zone or a change lacks its SOA.
    #[error("{0} has no SOA")]
    NoSoa(&'static str),
    /// Changes that do not apply to the version they were meant for.
    #[error("{what}: {why}")]
    Apply {
        /// Which changes, to what.
        what: &'static str,
        /// The zone's error.
        why: tern_zone::Error,
    },
    /// A journal that refuses changes, or a journal write that failed: the change is
    /// neither published nor acknowledged.
    #[error("not journaled: {0}")]
    Journal(#[from] tern_journal::Error),
    /// A version that replaced the one a change started from (a bug: one writer alone
    /// publishes a zone).
    #[error("not published: the zone changed under its writer")]
    Raced,
    /// A primary that could not be reached or answered wrongly.
    #[error("{0}")]
    Remote(#[from] ClientError),
    /// Every primary failed: each address with its error.
    #[error("{}", display_all(.0))]
    Primaries(Vec<PrimaryFailed>),
    /// A transfer that brought a serial not newer than ours (RFC 1982).
    #[error("the transfer brought serial {got}, not newer than ours ({ours}): refused")]
    NotNewer {
        /// The serial transferred.
        got: u32,
        /// Ours.
        ours: u32,
    },
    /// A refresh that brought nothing.
    #[error("nothing transferred")]
    NothingTransferred,
    /// The refresh an operator waited for failed (as logged, and as `zone-status`
    /// shows).
    #[error("{0}")]
    RefreshFailed(String),
    /// A refresh's outcome not taken (the zone changed meanwhile).
    #[error("not taken: {0}")]
    NotTaken(&'static str),
    /// A consumed catalog that is not one (RFC 9432 §4.1).
    #[error("{0} is not a version 2 catalog (RFC 9432 §4.1): its members are not read")]
    NotACatalog(Name),
    /// The control plane is stopping.
    #[error("the control plane is stopping")]
    Stopping,
    /// A blocking task panicked or was cancelled.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
    /// A change to a zone signed here that cannot be signed now (its key store cannot be
    /// used): refused, the served version kept.
    #[error("not signed, so not taken: {0}")]
    Unsignable(String),
    /// The zone is not signed by this server (no `dnssec-policy`).
    #[error("the zone is not signed by this server (no `dnssec-policy`)")]
    NotSigned,
    /// A key store's file that is missing, unreadable, foreign, corrupt or readable by
    /// others, or a key file from outside (BIND's) that does not read: which file, the
    /// line when it is about one, and why.
    #[error("{}: {why}", at_line(file, *line))]
    KeyStore {
        /// The file.
        file: std::path::PathBuf,
        /// Its line (from 1), when the fault is on one.
        line: Option<usize>,
        /// What is wrong.
        why: String,
    },
    /// A key that could not be made, loaded or used (the signer's error).
    #[error("{0}")]
    Sign(#[from] tern_sign::Error),
    /// An operating system call failed.
    #[error("{doing}: {source}")]
    Os {
        /// What was being done.
        doing: &'static str,
        /// The error.
        source: std::io::Error,
    },
}

/// A primary's address that failed a refresh, and why.
#[derive(Debug)]
pub struct PrimaryFailed {
    /// The remote's id in the configuration.
    pub remote: String,
    /// The address tried.
    pub addr: std::net::SocketAddr,
    /// Why.
    pub error: Error,
}

fn at_line(file: &std::path::Path, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{}:{line}", file.display()),
        None => file.display().to_string(),
    }
}

fn display_all(failed: &[PrimaryFailed]) -> String {
    let each: Vec<String> =
        failed.iter().map(|f| format!("{} ({}): {}", f.remote, f.addr, f.error)).collect();
    each.join("; ")
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
