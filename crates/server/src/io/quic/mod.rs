//! DNS over QUIC (RFC 9250) with quinn: the UDP sockets, the QUIC and TLS settings, and
//! the accept loop of each endpoint, on the runtime the TCP connections use.
//!
//! A connection attempt is first judged without any handshake work ([`admission`]): a
//! Retry when many handshakes are in progress and the client's address is not
//! validated yet, a refusal at the connection caps (shared with nothing else: the TCP
//! and TLS clients keep theirs). An admitted connection is served by [`conn`], each of
//! its streams, one query each, by [`stream`]; [`query`] says what a query must be,
//! [`early`] what may be answered from 0-RTT data. Zone transfers and updates are
//! answered on the query's stream, as on TCP.
//!
//! On stop, each endpoint stops taking connections, each connection answers the
//! streams it has and closes with `DOQ_NO_ERROR`, and the endpoint waits until the
//! closes are sent.

pub mod admission;
pub mod conn;
pub mod early;
pub mod query;
pub mod stream;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::QuicServerConfig;
use quinn::rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache};
use quinn::{Endpoint, EndpointConfig, IdleTimeout, Incoming, TransportConfig, VarInt};
use socket2::{Domain, Protocol, Socket, Type};
use tokio::sync::{mpsc, watch};

use crate::config::{Config, QuicConfig, TlsConfig};
use crate::error::{Error, Result};
use crate::handler::Handler;
use crate::io::tcp::ConnectionLimits;
use crate::stats::{HandshakeFailure, Stats};
use crate::tls::{self, ClientCa};
use admission::{client_ip, verdict, Handshakes, Verdict};
pub use conn::Link;

/// No error: the connection or stream is closed normally (RFC 9250 §4.3).
pub const DOQ_NO_ERROR: VarInt = VarInt::from_u32(0);
/// The peer broke the DoQ protocol (RFC 9250 §4.3.3).
pub const DOQ_PROTOCOL_ERROR: VarInt = VarInt::from_u32(2);
/// A transaction is cancelled (RFC 9250 §4.3.2): its query did not arrive in time, or
/// it has no answer.
pub const DOQ_REQUEST_CANCELLED: VarInt = VarInt::from_u32(3);
/// The server closes the connection to make room (RFC 9250 §4.3).
pub const DOQ_EXCESSIVE_LOAD: VarInt = VarInt::from_u32(4);
/// Any other reason to close (RFC 9250 §4.3): here, a handshake too slow.
pub const DOQ_UNSPECIFIED_ERROR: VarInt = VarInt::from_u32(5);

/// Bytes a client may have sent and not yet had read on one stream: the largest query
/// and its length prefix.
const STREAM_WINDOW: u32 = stream::MAX_FRAME as u32;
/// Bytes a client may have sent and not yet had read on one connection, all its streams
/// together: room for thousands of queries at once, and a bound on what a connection
/// makes the server buffer however many streams it opens.
const CONNECTION_WINDOW: u32 = 256 * 1024;
/// Sessions kept for resumption and 0-RTT (a few hundred bytes each).
pub const SESSIONS: usize = 8192;
/// Connection attempts quinn keeps waiting for the accept loop.
const MAX_INCOMING: usize = 4096;

/// The settings every connection follows.
#[derive(Debug, Clone, Copy)]
pub struct QuicSettings {
    /// A connection without a stream open for this long is closed.
    pub idle_timeout: Duration,
    /// A query must arrive in full within this time of its stream's start; a batch of a
    /// transfer must be taken by the client within it.
    pub io_timeout: Duration,
    /// A handshake must complete within this time.
    pub handshake_timeout: Duration,
    /// Handshakes in progress from which on new clients must pass a Retry.
    pub retry_above: usize,
}

impl QuicSettings {
    /// The settings `[quic]`, `[tls]` and `[tcp]` give.
    pub fn of(config: &Config) -> QuicSettings {
        QuicSettings {
            idle_timeout: config.quic.idle_timeout,
            io_timeout: config.tcp.io_timeout,
            handshake_timeout: config.tls.handshake_timeout,
            retry_above: usize::try_from(config.quic.retry_above).unwrap_or(usize::MAX),
        }
    }
}

/// What every connection shares with the server.
#[derive(Debug)]
pub struct Shared<H> {
    /// The query handler.
    pub handler: Arc<H>,
    /// Timeouts and the Retry threshold.
    pub settings: QuicSettings,
    /// Counters.
    pub stats: Arc<Stats>,
    /// The connection caps and the connections open.
    pub limits: Arc<ConnectionLimits>,
    /// Handshakes in progress.
    pub handshakes: Arc<Handshakes>,
    /// The client CA (`[tls] client-ca`) client certificates are checked against (a
    /// reload may change it).
    pub client_ca: Arc<arc_swap::ArcSwapOption<ClientCa>>,
}

/// Binds a UDP socket for DoQ to `addr` (IPv6-only on IPv6 addresses).
pub fn bind(addr: SocketAddr) -> Result<std::net::UdpSocket> {
    let fail = |source| Error::Bind { addr, source };
    let socket =
        Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP)).map_err(fail)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true).map_err(fail)?;
    }
    socket.bind(&addr.into()).map_err(fail)?;
    socket.set_nonblocking(true).map_err(fail)?;
    Ok(socket.into())
}

/// The quinn server configuration: `[tls]`'s certificate with ALPN `doq`, the
/// transport limits of `[quic]`, and, with `[tls] session-tickets`, resumption with
/// 0-RTT accepted (RFC 9001 §4.6.1: `max_early_data_size` 0xffffffff).
///
/// rustls accepts early data only with tickets that name a session kept by the server
/// (each one usable once for 0-RTT), not with the self-contained tickets DoT uses: DoQ
/// keeps [`SESSIONS`] sessions in memory.
pub fn server_config(
    tls: &TlsConfig,
    quic: &QuicConfig,
    client_certs: bool,
) -> Result<(quinn::ServerConfig, Option<ClientCa>)> {
    let Some(files) = tls.server_tls() else {
        return Err(Error::Tls("[tls]: `certificate` and `key` are needed for DoQ".into()));
    };
    let stateless = tls::ServerTls { session_tickets: false, ..files };
    let served = tls::server_config(&stateless, tls::ALPN_DOQ, client_certs)?;
    let (mut crypto, client_ca) = (served.config, served.client_ca);
    if tls.session_tickets {
        crypto.session_storage = ServerSessionMemoryCache::new(SESSIONS);
        crypto.max_early_data_size = u32::MAX;
    } else {
        crypto.session_storage = Arc::new(NoServerSessionStorage {});
        crypto.send_tls13_tickets = 0;
    }
    let crypto = QuicServerConfig::try_from(crypto)
        .map_err(|e| Error::Tls(format!("[tls] cannot be used for DNS over QUIC: {e}")))?;
    let mut server = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    server.transport_config(Arc::new(transport(quic)?));
    server.max_incoming(MAX_INCOMING);
    Ok((server, client_ca))
}

/// Streams and windows (RFC 9000 §4), no unidirectional streams (RFC 9250 §4.2), the
/// idle timeout, streams sent in order.
fn transport(quic: &QuicConfig) -> Result<TransportConfig> {
    let idle = IdleTimeout::try_from(quic.idle_timeout).map_err(|_| {
        Error::Config(format!("[quic] idle-timeout {:?} is too long", quic.idle_timeout))
    })?;
    let streams = u32::try_from(quic.max_streams_per_connection).unwrap_or(u32::MAX);
    let mut transport = TransportConfig::default();
    transport
        .max_concurrent_bidi_streams(VarInt::from_u32(streams))
        .max_concurrent_uni_streams(VarInt::from_u32(0))
        .max_idle_timeout(Some(idle))
        .stream_receive_window(VarInt::from_u32(STREAM_WINDOW))
        .receive_window(VarInt::from_u32(CONNECTION_WINDOW))
        // Answers go out in the order they were written: sharing packets out between
        // streams (for long parallel transfers) costs a heap of streams per packet.
        .send_fairness(false);
    Ok(transport)
}

/// A quinn endpoint serving `socket` with `server`; called within the runtime.
pub fn endpoint(socket: std::net::UdpSocket, server: quinn::ServerConfig) -> Result<Endpoint> {
    let runtime = Arc::new(quinn::TokioRuntime);
    Endpoint::new(EndpointConfig::default(), Some(server), socket, runtime)
        .map_err(|source| Error::Os { doing: "starting a QUIC endpoint", source })
}

/// Takes connections on `endpoint` until `stopping` turns true, then waits for them to
/// close. Every task it starts holds a clone of `alive`, so the server knows when all
/// have ended.
pub async fn accept_loop<H: Handler>(
    endpoint: Endpoint,
    shared: Arc<Shared<H>>,
    mut stopping: watch::Receiver<bool>,
    alive: mpsc::Sender<()>,
) {
    let Ok(local) = endpoint.local_addr() else { return };
    loop {
        let incoming = tokio::select! {
            incoming = endpoint.accept() => incoming,
            _ = stopping.changed() => break,
        };
        let Some(incoming) = incoming else { break };
        admit(incoming, local, &shared, (&stopping, &alive));
    }
    // New attempts are refused from now on; each connection closes once answered.
    endpoint.set_server_config(None);
    endpoint.wait_idle().await;
}

/// Decides on one connection attempt ([`admission`]) and starts serving it if admitted.
fn admit<H: Handler>(
    incoming: Incoming,
    local: SocketAddr,
    shared: &Arc<Shared<H>>,
    (stopping, alive): (&watch::Receiver<bool>, &mpsc::Sender<()>),
) {
    let stats = &shared.stats.quic;
    let (validated, in_progress) =
        (incoming.remote_address_validated(), shared.handshakes.in_progress());
    if verdict(validated, in_progress, shared.settings.retry_above) == Verdict::Retry {
        match incoming.retry() {
            Ok(()) => stats.add_retry(),
            Err(e) => e.into_incoming().refuse(), // not reached: unvalidated ones may retry
        }
        return;
    }
    let Some(permit) = shared.limits.admit(client_ip(incoming.remote_address())) else {
        stats.add_refused();
        return incoming.refuse();
    };
    let Ok(connecting) = incoming.accept() else {
        return stats.add_failed(HandshakeFailure::Other);
    };
    stats.add_accepted();
    let handshake = shared.handshakes.start();
    let task = conn::serve(
        connecting,
        (handshake, permit),
        local,
        Arc::clone(shared),
        stopping.clone(),
        alive.clone(),
    );
    tokio::spawn(task);
}
