//! DNS over TLS (RFC 7858): the accept loop of the TLS listeners. Each accepted
//! connection is admitted under the TLS connection caps, its handshake bounded by
//! `handshake-timeout`, and then served exactly as a TCP connection is
//! ([`super::tcp::conn`]) with [`Transport::Tls`](crate::handler::Transport::Tls).
//!
//! Handshakes cost far more CPU than queries, so a client's handshakes are bounded the
//! way its connections are: while it shakes hands, a connection holds one of the
//! client's slots and counts as waiting for its client, so that when all slots are
//! taken the slowest handshake is the first evicted (see [`super::tcp::limits`]). A
//! client opening handshakes and never finishing them holds at most its own
//! `max-connections-per-client` slots, each for at most `handshake-timeout`.
//!
//! The rustls configuration is read from [`TlsServing`] per connection: a reload swaps
//! in one made from new certificate files, established connections keep theirs.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::server::ServerConfig;
use rustls::HandshakeKind;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::{timeout, Instant};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::tcp::conn;
use super::tcp::limits::Permit;
use super::tcp::{ConnectionLimits, Shared, ACCEPT_BACKOFF};
use crate::handler::{Handler, TlsClient};
use crate::tls::{ClientCa, Pin};

/// What new TLS connections take, swapped whole by a reload.
#[derive(Debug)]
pub struct TlsSettings {
    /// The rustls configuration (certificate, versions, ALPN, tickets).
    pub config: Arc<ServerConfig>,
    /// The client CA (`[tls] client-ca`), which client certificates are checked
    /// against after the handshake.
    pub client_ca: Option<ClientCa>,
    /// How long a handshake may take.
    pub handshake_timeout: Duration,
    /// When the certificate stops being valid (seconds since the epoch), if readable.
    pub expires: Option<i64>,
}

/// The TLS settings in force, shared by the accept loops and the reload.
pub type TlsServing = Arc<ArcSwap<TlsSettings>>;

/// Accepts TLS connections on `listener` until `stopping` turns true; each connection
/// task holds a clone of `alive`.
pub async fn accept_loop<H: Handler>(
    listener: TcpListener,
    shared: Arc<Shared<H>>,
    serving: TlsServing,
    limits: Arc<ConnectionLimits>,
    mut stopping: watch::Receiver<bool>,
    alive: mpsc::Sender<()>,
) {
    let local = listener.local_addr().ok().filter(|a| !a.ip().is_unspecified());
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopping.changed() => return,
        };
        let Ok((stream, client)) = accepted else {
            tokio::time::sleep(ACCEPT_BACKOFF).await;
            continue;
        };
        let Some(permit) = limits.admit(client.ip()) else {
            shared.counters().add_refused();
            continue;
        };
        let settings = serving.load_full();
        let task = handshake_then_serve(
            stream,
            (client, local),
            settings,
            Arc::clone(&shared),
            stopping.clone(),
            permit,
            alive.clone(),
        );
        tokio::spawn(task);
    }
}

/// Shakes hands with `client` (bounded by the timeout, eviction and the stop), then
/// serves the connection.
async fn handshake_then_serve<H: Handler>(
    stream: TcpStream,
    (client, local): (SocketAddr, Option<SocketAddr>),
    settings: Arc<TlsSettings>,
    shared: Arc<Shared<H>>,
    mut stopping: watch::Receiver<bool>,
    mut permit: Permit,
    alive: mpsc::Sender<()>,
) {
    permit.waiting_since(Instant::now().into_std());
    let acceptor = TlsAcceptor::from(Arc::clone(&settings.config));
    let handshakes = shared.stats.tls_handshakes();
    let shaken = tokio::select! {
        shaken = timeout(settings.handshake_timeout, acceptor.accept(stream)) => shaken,
        () = permit.evicted() => return,
        _ = stopping.changed() => return,
    };
    let tls = match shaken {
        Ok(Ok(tls)) => tls,
        Ok(Err(_)) => return handshakes.add_failure(),
        Err(_elapsed) => return handshakes.add_timeout(),
    };
    shared.counters().add_accepted();
    let session = tls.get_ref().1;
    if session.handshake_kind() == Some(HandshakeKind::Resumed) {
        handshakes.add_resumed();
    }
    let identity = identity(&tls, settings.client_ca.as_ref());
    if tracing::enabled!(tracing::Level::DEBUG) {
        let pin = identity.pin.map(|p| Pin(p).to_string());
        let resumed = session.handshake_kind() == Some(HandshakeKind::Resumed);
        let version = session.protocol_version().map(|v| format!("{v:?}"));
        tracing::debug!(%client, pin, verified = identity.verified, resumed, version, "TLS client");
    }
    permit.active();
    conn::serve(tls, (client, local, Some(identity)), shared, stopping, permit, alive).await;
}

/// What the handshake told of the client: the pin of the certificate it presented, and
/// whether that certificate chained to the client CA.
fn identity(tls: &TlsStream<TcpStream>, client_ca: Option<&ClientCa>) -> TlsClient {
    let chain = tls.get_ref().1.peer_certificates().unwrap_or_default();
    crate::tls::client_identity(chain, client_ca)
}
