//! One DoQ connection: its handshake, its streams ([`super::stream`]: served in the
//! connection's task, or in a task of their own when they must wait), and how it ends.
//!
//! The connection is taken at once in 0.5-RTT mode, so that queries a returning client
//! sends in 0-RTT are answered with the server's first flight; what must not be served
//! from 0-RTT waits for the handshake to complete ([`Link::confirmed`]). A handshake not
//! complete within `[tls] handshake-timeout` ends the connection. A connection closes
//! with `DOQ_NO_ERROR` once it has had no stream open for the idle timeout, with
//! `DOQ_EXCESSIVE_LOAD` when it is evicted to make room for another, and on stop once
//! the streams it had have been answered (RFC 9250 §4.3, §5.5).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use quinn::{Connecting, ConnectionError, RecvStream, SendStream, ZeroRttAccepted};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::{sleep_until, timeout, timeout_at, Instant};

use super::admission::Handshake;
use super::stream::{self, Held};
use super::{Shared, DOQ_EXCESSIVE_LOAD, DOQ_NO_ERROR, DOQ_PROTOCOL_ERROR, DOQ_UNSPECIFIED_ERROR};
use crate::handler::{Handler, RequestContext, TlsClient, Transport};
use crate::io::streams::MAX_MESSAGE;
use crate::io::tcp::limits::Permit;
use crate::stats::{HandshakeFailure, QuicStats};
use crate::tls::ClientCa;
use rustls_pki_types::CertificateDer;

/// Streams taken one after the other before the connection waits on its other events.
const ACCEPT_BURST: usize = 64;

/// What every stream of a connection shares.
#[derive(Debug)]
pub struct Link<H> {
    /// The server's side.
    pub shared: Arc<Shared<H>>,
    /// The connection.
    pub conn: quinn::Connection,
    /// What the handler is told about each query before the handshake completes.
    ctx: RequestContext,
    /// And from then on: with the pin of the client's certificate, if it presented one.
    ctx_confirmed: std::sync::OnceLock<RequestContext>,
    /// Turns true when the handshake is complete.
    confirmed: watch::Receiver<bool>,
}

impl<H> Link<H> {
    /// Closes the connection with `DOQ_PROTOCOL_ERROR` (RFC 9250 §4.3.3).
    pub fn protocol_error(&self) {
        if self.conn.close_reason().is_none() {
            self.shared.stats.quic.add_protocol_error();
            self.conn.close(DOQ_PROTOCOL_ERROR, b"");
        }
    }

    /// Whether the handshake is complete.
    pub fn is_confirmed(&self) -> bool {
        *self.confirmed.borrow()
    }

    /// What the handler is told about a query: once the handshake is complete, with the
    /// client's certificate (`cert-key` and `client-cert` rules match it).
    pub fn ctx(&self) -> &RequestContext {
        self.ctx_confirmed.get().unwrap_or(&self.ctx)
    }

    /// Waits until the handshake is complete (RFC 9001 §4.1.1): true then, false when
    /// it fails or does not complete in time. A transaction waiting here is counted
    /// held, and dropped if it never is served (RFC 9250 §4.5).
    pub async fn confirmed(&self, stats: &QuicStats) -> bool {
        if *self.confirmed.borrow() {
            return true;
        }
        let held = Held::new(stats);
        let mut confirmed = self.confirmed.clone();
        let limit = self.shared.settings.handshake_timeout;
        let done = matches!(timeout(limit, confirmed.wait_for(|done| *done)).await, Ok(Ok(_)));
        if done {
            held.release();
        }
        done
    }
}

/// Serves the connection `connecting` until it ends. `local` is the endpoint's address;
/// `handshake` and `permit` are released when it ends, `_alive` too.
pub async fn serve<H: Handler>(
    connecting: Connecting,
    (handshake, permit): (Handshake, Permit),
    local: SocketAddr,
    shared: Arc<Shared<H>>,
    stopping: watch::Receiver<bool>,
    _alive: mpsc::Sender<()>,
) {
    let _open = Open(Arc::clone(&shared));
    let Ok((conn, established)) = connecting.into_0rtt() else {
        // Not reached: a server may always send 0.5-RTT data.
        shared.stats.quic.add_failed(HandshakeFailure::Other);
        return;
    };
    let ctx = RequestContext {
        transport: Transport::Quic,
        client: conn.remote_address(),
        local: SocketAddr::new(conn.local_ip().unwrap_or(local.ip()), local.port()),
        max_response: MAX_MESSAGE,
        keepalive: None,
        // Encrypted: answers are padded (RFC 8467) and `tls = true` rules match. The
        // client's certificate is known once the handshake completes (`ctx_confirmed`).
        tls: Some(TlsClient::default()),
    };
    let (confirm, confirmed) = watch::channel(false);
    let ctx_confirmed = std::sync::OnceLock::new();
    let link = Arc::new(Link { shared, conn, ctx, ctx_confirmed, confirmed });
    let mut connection = Connection {
        link,
        confirm,
        permit,
        handshake: Some(handshake),
        streams: JoinSet::new(),
        idle_since: Instant::now(),
    };
    connection.run(established, stopping).await;
}

/// Counts the connection open while it lasts.
struct Open<H>(Arc<Shared<H>>);

impl<H> Drop for Open<H> {
    fn drop(&mut self) {
        self.0.stats.quic.closed();
    }
}

struct Connection<H> {
    link: Arc<Link<H>>,
    confirm: watch::Sender<bool>,
    permit: Permit,
    /// The handshake, while it is in progress.
    handshake: Option<Handshake>,
    /// A task per open stream.
    streams: JoinSet<()>,
    /// Since when no stream has been open.
    idle_since: Instant,
}

impl<H: Handler> Connection<H> {
    /// Accepts streams until the connection ends.
    async fn run(&mut self, established: ZeroRttAccepted, mut stopping: watch::Receiver<bool>) {
        let settings = self.link.shared.settings;
        let handshake_deadline = Instant::now() + settings.handshake_timeout;
        tokio::pin!(established);
        loop {
            let idle = self.streams.is_empty() && self.handshake.is_none();
            let idle_deadline = self.idle_since + settings.idle_timeout;
            let conn = &self.link.conn;
            tokio::select! {
                accepted = conn.accept_bi() => match accepted {
                    Ok((send, recv)) => {
                        self.open_stream(send, recv);
                        self.open_ready_streams();
                    }
                    Err(e) => return self.handshake_failed(classify(&e)),
                },
                _ = &mut established, if self.handshake.is_some() => {
                    match self.link.conn.close_reason() {
                        Some(e) => return self.handshake_failed(classify(&e)),
                        None => self.handshake_done(),
                    }
                }
                () = sleep_until(handshake_deadline), if self.handshake.is_some() => {
                    self.link.conn.close(DOQ_UNSPECIFIED_ERROR, b"handshake timeout");
                    return self.handshake_failed(HandshakeFailure::Timeout);
                }
                Some(_) = self.streams.join_next(), if !self.streams.is_empty() => {
                    self.stream_ended()
                }
                () = sleep_until(idle_deadline), if idle => {
                    return self.link.conn.close(DOQ_NO_ERROR, b"");
                }
                () = self.permit.evicted() => {
                    self.link.shared.stats.quic.add_evicted();
                    return self.link.conn.close(DOQ_EXCESSIVE_LOAD, b"");
                }
                _ = stopping.changed() => return self.drain(settings.io_timeout).await,
            }
        }
    }

    /// Takes the streams already opened (up to [`ACCEPT_BURST`]) one after the other: a
    /// packet often opens many, and going back to wait on every event of the connection
    /// between them would cost more than serving them.
    fn open_ready_streams(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..ACCEPT_BURST {
            // Cancel-safe: when it is pending, no stream was taken.
            let polled = pin!(self.link.conn.accept_bi()).poll(&mut cx);
            match polled {
                Poll::Ready(Ok((send, recv))) => self.open_stream(send, recv),
                // An error is seen again by the loop's own accept.
                _ => return,
            }
        }
    }

    /// Serves a new stream here if it can be without waiting, else in a task of its own.
    fn open_stream(&mut self, send: SendStream, recv: RecvStream) {
        match stream::serve_now(send, recv, &self.link) {
            Some(rest) => {
                self.permit.active();
                self.streams.spawn(rest);
            }
            None => self.stream_ended(),
        }
    }

    fn stream_ended(&mut self) {
        if self.streams.is_empty() {
            self.idle_since = Instant::now();
            if self.handshake.is_none() {
                self.permit.idle();
            }
        }
    }

    fn handshake_done(&mut self) {
        self.handshake = None;
        self.link.shared.stats.quic.add_handshake();
        let identity = identity(&self.link.conn, self.link.shared.client_ca.load().as_deref());
        let ctx = RequestContext { tls: Some(identity), ..self.link.ctx };
        let _ = self.link.ctx_confirmed.set(ctx);
        let _ = self.confirm.send(true);
        self.stream_ended();
    }

    /// Counts the failure when the handshake was still in progress (else the connection
    /// just ended).
    fn handshake_failed(&mut self, why: HandshakeFailure) {
        if self.handshake.take().is_some() {
            self.link.shared.stats.quic.add_failed(why);
        }
    }

    /// The server is stopping: lets the open streams be answered (up to `limit`), then
    /// closes with `DOQ_NO_ERROR`. Streams opened meanwhile are not taken.
    async fn drain(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while let Ok(Some(_)) = timeout_at(deadline, self.streams.join_next()).await {}
        self.link.conn.close(DOQ_NO_ERROR, b"");
    }
}

/// Why a connection ended during its handshake.
fn classify(e: &ConnectionError) -> HandshakeFailure {
    // TLS alerts are carried as QUIC's CRYPTO_ERROR codes, 0x100 + alert (RFC 9001 §4.8).
    let tls = |code: u64| (0x100..=0x1ff).contains(&code);
    match e {
        ConnectionError::TimedOut => HandshakeFailure::Timeout,
        ConnectionError::TransportError(t) if tls(u64::from(t.code)) => HandshakeFailure::Tls,
        ConnectionError::ConnectionClosed(c) if tls(u64::from(c.error_code)) => {
            HandshakeFailure::Tls
        }
        _ => HandshakeFailure::Other,
    }
}

/// What the handshake told of the client: the pin of the certificate it presented (if
/// it presented one), and whether that certificate chains to the client CA.
fn identity(conn: &quinn::Connection, client_ca: Option<&ClientCa>) -> TlsClient {
    let chain = conn
        .peer_identity()
        .and_then(|any| any.downcast::<Vec<CertificateDer<'static>>>().ok())
        .map(|chain| *chain)
        .unwrap_or_default();
    crate::tls::client_identity(&chain, client_ca)
}
