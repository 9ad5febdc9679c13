//! How the control plane talks to other servers: the SOA query of a refresh, zone
//! transfers in, NOTIFY out, and updates forwarded to a primary. The calls block (with
//! timeouts on every step) and run on the control plane's blocking threads; the server
//! makes them over its sockets ([`Network`]), tests over an in-memory primary.
//!
//! A remote reached over TLS (RFC 9103) carries a [`Tls`]: the server's settings for
//! it, opaque here, so that this crate knows no TLS library.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tern_wire::tsig::Key;
use tern_wire::{Dname, Name, Rcode};
use tern_zone::transfer::{Outside, Received};
use tern_zone::RecordData;

/// The network, as the control plane uses it (see the module comment). Each call
/// blocks, within the timeouts and limits it is given.
pub trait Network: Send + Sync + std::fmt::Debug + 'static {
    /// The serial `peer` serves for `zone` (an SOA query over UDP, retried within
    /// `timeout`; over TLS when `peer` has it).
    fn soa_serial(
        &self,
        peer: Peer<'_>,
        zone: &Dname,
        timeout: Duration,
    ) -> Result<u32, ClientError>;

    /// A transfer of `zone` from `peer`: IXFR from `soa` when given (RFC 1995), else
    /// AXFR, within `limits`.
    fn transfer(
        &self,
        peer: Peer<'_>,
        zone: &Dname,
        soa: Option<&RecordData>,
        limits: Limits,
    ) -> Result<TransferIn, ClientError>;

    /// A NOTIFY of `zone` at `soa` to `peer` (RFC 1996), answered within `timeout`.
    fn notify(
        &self,
        peer: Peer<'_>,
        zone: &Dname,
        soa: &RecordData,
        timeout: Duration,
    ) -> Result<(), ClientError>;

    /// The addresses the system's resolver gives for `host` (a name server outside its
    /// zone, to NOTIFY).
    fn addresses(&self, host: &Name) -> std::io::Result<Vec<std::net::IpAddr>>;

    /// `message` (an UPDATE, as received) sent to `peer` over TCP (or TLS); its answer.
    fn forward(
        &self,
        peer: Peer<'_>,
        message: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, ClientError>;

    /// The RDATA of the `rtype` RRset of `owner` that `peer` answers (empty for NXDOMAIN
    /// and NODATA): the parent's DS, for a KSK rollover. Not every network has it.
    fn rrset(
        &self,
        peer: Peer<'_>,
        owner: &Dname,
        rtype: tern_wire::Rtype,
        timeout: Duration,
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        let _ = (peer, owner, rtype, timeout);
        Err(ClientError::Broken("this network cannot query".into()))
    }
}

/// Why talking to a remote failed.
#[derive(Debug)]
pub enum ClientError {
    /// The network: cannot connect, send or receive, or a timeout.
    Io(std::io::Error),
    /// The remote answered with an error code.
    Rcode(Rcode),
    /// The answer's TSIG was missing, wrong or reported an error.
    Tsig(String),
    /// The answer was malformed or did not fit the question.
    Broken(String),
    /// The transfer passed `max-zone-size`.
    TooLarge(u64),
    /// The transfer took longer than `max-time-in`.
    TooLong(Duration),
    /// The primary sent nothing for `idle-timeout-in`.
    Idle(Duration),
    /// The TLS connection failed: the handshake, the remote's certificate, ALPN.
    Tls(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "{e}"),
            ClientError::Rcode(rcode) => write!(f, "answered {rcode}"),
            ClientError::Tsig(why) => write!(f, "TSIG: {why}"),
            ClientError::Broken(why) => write!(f, "broken answer: {why}"),
            ClientError::TooLarge(limit) => {
                write!(f, "zone larger than max-zone-size ({limit} bytes)")
            }
            ClientError::TooLong(limit) => write!(
                f,
                "the transfer took longer than `[transfer] max-time-in` ({}): cut off",
                seconds(*limit)
            ),
            ClientError::Idle(limit) => write!(
                f,
                "the primary sent nothing for `[transfer] idle-timeout-in` ({}): cut off",
                seconds(*limit)
            ),
            ClientError::Tls(why) => write!(f, "TLS: {why}"),
        }
    }
}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                ClientError::Broken("no answer within the timeout ([transfer] timeout)".into())
            }
            _ => ClientError::Io(e),
        }
    }
}

impl std::error::Error for ClientError {}

/// A duration as the configuration writes it (`1500ms`, `3s`).
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// One remote address and its key.
#[derive(Debug, Clone, Copy)]
pub struct Peer<'k> {
    /// Where to send.
    pub addr: SocketAddr,
    /// The key to sign with, if any.
    pub key: Option<&'k Key>,
    /// The local address to send from (the remote's `via`); `None`: the kernel chooses.
    pub source: Option<std::net::IpAddr>,
    /// Reach it over TLS: SOA queries, transfers and forwarded updates (NOTIFY stays
    /// on UDP: RFC 9103 changes only transfers); `None`: UDP and TCP.
    pub tls: Option<&'k Tls>,
}

/// How a remote is reached over TLS, as the server's configuration says; see the
/// module comment.
#[derive(Clone)]
pub struct Tls {
    /// What authenticates the remote, in words (for logs): `key pin`, `name
    /// ns1.example`, `opportunistic`.
    pub auth: Arc<str>,
    /// The settings as the server's configuration gives them; only the [`Network`]
    /// reads them.
    pub settings: Arc<dyn Any + Send + Sync>,
    /// What the [`Network`] made of `settings` at its first connection (its TLS
    /// library's configuration, with the files it names read), kept for the next ones,
    /// which then resume its TLS sessions. A new configuration starts afresh.
    pub prepared: Arc<OnceLock<Arc<dyn Any + Send + Sync>>>,
}

impl Tls {
    /// `settings`, not prepared yet.
    pub fn new(auth: Arc<str>, settings: Arc<dyn Any + Send + Sync>) -> Tls {
        Tls { auth, settings, prepared: Arc::new(OnceLock::new()) }
    }
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tls({})", self.auth)
    }
}

/// How long to wait, and how much to take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// To connect, and for each answer.
    pub timeout: Duration,
    /// Most bytes a transfer may bring.
    pub max_size: u64,
    /// Longest a transfer in may take, from connecting to its last message.
    pub max_time: Duration,
    /// Longest a transfer in may go without a byte from the primary.
    pub idle: Duration,
}

/// What a transfer in brought, and how much it was.
#[derive(Debug)]
pub struct TransferIn {
    /// The zone or the changes.
    pub received: Received,
    /// Messages, records and bytes read.
    pub messages: u64,
    /// Records read.
    pub records: u64,
    /// Bytes read (without length prefixes).
    pub bytes: u64,
    /// Records outside the zone, ignored.
    pub outside: Outside,
}
