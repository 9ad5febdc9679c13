//! Server counters, shared by all workers and updated once per batch or connection
//! event (never per query on UDP), with relaxed atomics.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters since start.
#[derive(Debug, Default)]
pub struct Stats {
    udp_received: AtomicU64,
    udp_sent: AtomicU64,
    udp_errors: AtomicU64,
    xdp_received: AtomicU64,
    xdp_sent: AtomicU64,
    tcp: ConnCounters,
    tls: ConnCounters,
    tls_handshakes: TlsCounters,
    /// DNS over QUIC.
    pub(crate) quic: QuicStats,
    /// Raised by each UDP worker now and then (at least every `udp::WAKE` when idle):
    /// that it still moves, for systemd's watchdog.
    heartbeat: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// UDP datagrams received.
    pub udp_received: u64,
    /// UDP answers the kernel accepted.
    pub udp_sent: u64,
    /// Failed `recvmmsg` calls other than timeouts.
    pub udp_errors: u64,
    /// UDP queries received on the AF_XDP path.
    pub xdp_received: u64,
    /// Answers put on the AF_XDP path's TX rings.
    pub xdp_sent: u64,
    /// TCP connections accepted and served.
    pub tcp_accepted: u64,
    /// TCP connections closed at once because a connection limit was reached.
    pub tcp_refused: u64,
    /// Queries read on TCP connections.
    pub tcp_queries: u64,
    /// TCP connections closed for being idle, or for a query not arriving in time.
    pub tcp_closed_idle: u64,
    /// TCP connections closed because the client did not take its answers in time.
    pub tcp_closed_slow: u64,
    /// TLS connections whose handshake succeeded (and were served).
    pub tls_accepted: u64,
    /// TLS connections closed at once because a connection limit was reached.
    pub tls_refused: u64,
    /// Queries read on TLS connections.
    pub tls_queries: u64,
    /// TLS connections closed for being idle, or for a query not arriving in time.
    pub tls_closed_idle: u64,
    /// TLS connections closed because the client did not take its answers in time.
    pub tls_closed_slow: u64,
    /// TLS handshakes that resumed a session (tickets).
    pub tls_resumed: u64,
    /// TLS handshakes that did not end within `handshake-timeout`.
    pub tls_handshake_timeouts: u64,
    /// TLS handshakes that failed (a protocol error, no common version or ALPN, a
    /// client certificate refused, the client closing).
    pub tls_handshake_failures: u64,
    /// DNS over QUIC.
    pub quic: QuicSnapshot,
}

/// The counters of one kind of connection (TCP, TLS), each moved once per connection
/// event or per batch of queries.
#[derive(Debug, Default)]
pub(crate) struct ConnCounters {
    accepted: AtomicU64,
    refused: AtomicU64,
    queries: AtomicU64,
    closed_idle: AtomicU64,
    closed_slow: AtomicU64,
}

impl ConnCounters {
    pub(crate) fn add_accepted(&self) {
        self.accepted.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_refused(&self) {
        self.refused.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_queries(&self, count: u64) {
        self.queries.fetch_add(count, Relaxed);
    }

    pub(crate) fn add_closed_idle(&self) {
        self.closed_idle.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_closed_slow(&self) {
        self.closed_slow.fetch_add(1, Relaxed);
    }
}

/// How TLS handshakes ended, but for those that succeeded without resumption (counted
/// by [`ConnCounters`]'s accepted).
#[derive(Debug, Default)]
pub(crate) struct TlsCounters {
    resumed: AtomicU64,
    timeouts: AtomicU64,
    failures: AtomicU64,
}

impl TlsCounters {
    pub(crate) fn add_resumed(&self) {
        self.resumed.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_timeout(&self) {
        self.timeouts.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_failure(&self) {
        self.failures.fetch_add(1, Relaxed);
    }
}

impl Stats {
    pub(crate) fn add_udp(&self, received: usize, sent: usize) {
        self.udp_received.fetch_add(received as u64, Relaxed);
        self.udp_sent.fetch_add(sent as u64, Relaxed);
    }

    pub(crate) fn add_xdp(&self, received: usize, sent: usize) {
        self.xdp_received.fetch_add(received as u64, Relaxed);
        self.xdp_sent.fetch_add(sent as u64, Relaxed);
    }

    pub(crate) fn add_udp_error(&self) {
        self.udp_errors.fetch_add(1, Relaxed);
    }

    /// The counters of TCP connections.
    pub(crate) fn tcp(&self) -> &ConnCounters {
        &self.tcp
    }

    /// The counters of TLS connections.
    pub(crate) fn tls(&self) -> &ConnCounters {
        &self.tls
    }

    /// The counters of TLS handshakes.
    pub(crate) fn tls_handshakes(&self) -> &TlsCounters {
        &self.tls_handshakes
    }

    /// A UDP worker is alive (called when it flushes its tally).
    pub(crate) fn beat(&self) {
        self.heartbeat.fetch_add(1, Relaxed);
    }

    /// How often the UDP workers said they are alive.
    pub fn heartbeat(&self) -> u64 {
        self.heartbeat.load(Relaxed)
    }

    /// Reads all counters.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            udp_received: self.udp_received.load(Relaxed),
            udp_sent: self.udp_sent.load(Relaxed),
            udp_errors: self.udp_errors.load(Relaxed),
            xdp_received: self.xdp_received.load(Relaxed),
            xdp_sent: self.xdp_sent.load(Relaxed),
            tcp_accepted: self.tcp.accepted.load(Relaxed),
            tcp_refused: self.tcp.refused.load(Relaxed),
            tcp_queries: self.tcp.queries.load(Relaxed),
            tcp_closed_idle: self.tcp.closed_idle.load(Relaxed),
            tcp_closed_slow: self.tcp.closed_slow.load(Relaxed),
            tls_accepted: self.tls.accepted.load(Relaxed),
            tls_refused: self.tls.refused.load(Relaxed),
            tls_queries: self.tls.queries.load(Relaxed),
            tls_closed_idle: self.tls.closed_idle.load(Relaxed),
            tls_closed_slow: self.tls.closed_slow.load(Relaxed),
            tls_resumed: self.tls_handshakes.resumed.load(Relaxed),
            tls_handshake_timeouts: self.tls_handshakes.timeouts.load(Relaxed),
            tls_handshake_failures: self.tls_handshakes.failures.load(Relaxed),
            quic: self.quic.snapshot(),
        }
    }
}

/// Which path a worker's [`Tally`] counts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataPath {
    /// The UDP sockets.
    Udp,
    /// The AF_XDP sockets.
    Xdp,
}

/// Counts kept by one worker and added to the shared [`Stats`] now and then, so that
/// workers do not contend on one cache line per batch.
#[derive(Debug)]
pub(crate) struct Tally {
    path: DataPath,
    pub(crate) received: usize,
    pub(crate) sent: usize,
    pub(crate) batches: usize,
}

impl Tally {
    /// Batches between two flushes under load (an idle worker flushes at each wake).
    pub(crate) const FLUSH_EVERY: usize = 64;

    /// An empty tally for `path`.
    pub(crate) fn new(path: DataPath) -> Tally {
        Tally { path, received: 0, sent: 0, batches: 0 }
    }

    /// Adds the counts to `stats` and starts again.
    pub(crate) fn flush(&mut self, stats: &Stats) {
        if self.batches > 0 {
            match self.path {
                DataPath::Udp => stats.add_udp(self.received, self.sent),
                DataPath::Xdp => stats.add_xdp(self.received, self.sent),
            }
            *self = Tally::new(self.path);
        }
    }
}

/// Why a QUIC handshake failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeFailure {
    /// Not complete within `[tls] handshake-timeout` (or QUIC's idle timeout).
    Timeout,
    /// A TLS alert: no common ALPN, version or cipher suite, a bad certificate…
    Tls,
    /// Anything else: the client went away, or broke the QUIC protocol.
    Other,
}

/// The DNS over QUIC counters: connection events and per stream, relaxed atomics.
#[derive(Debug, Default)]
pub struct QuicStats {
    accepted: AtomicU64,
    handshakes: AtomicU64,
    refused: AtomicU64,
    retries: AtomicU64,
    evicted: AtomicU64,
    failed: [AtomicU64; 3],
    streams: AtomicU64,
    streams_reset: AtomicU64,
    protocol_errors: AtomicU64,
    early_held: AtomicU64,
    early_dropped: AtomicU64,
    open: AtomicU64,
}

/// A copy of the DNS over QUIC counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuicSnapshot {
    /// Connections whose handshake was started.
    pub accepted: u64,
    /// Handshakes completed.
    pub handshakes: u64,
    /// Connections refused at a connection cap.
    pub refused: u64,
    /// Retry packets sent (address validation, RFC 9000 §8.1).
    pub retries: u64,
    /// Connections closed to make room for new ones.
    pub evicted: u64,
    /// Handshakes failed: timed out, a TLS alert, anything else.
    pub failed: [u64; 3],
    /// Streams (queries) accepted.
    pub streams: u64,
    /// Streams reset because their query did not arrive in time.
    pub streams_reset: u64,
    /// Connections closed with `DOQ_PROTOCOL_ERROR`.
    pub protocol_errors: u64,
    /// Transactions other than plain queries that came in 0-RTT and waited for the
    /// handshake (RFC 9250 §4.5).
    pub early_held: u64,
    /// Of those, the ones never processed: the handshake did not complete (a replay).
    pub early_dropped: u64,
    /// Connections open now.
    pub open: u64,
}

impl QuicStats {
    pub(crate) fn add_accepted(&self) {
        self.accepted.fetch_add(1, Relaxed);
        self.open.fetch_add(1, Relaxed);
    }

    /// An accepted connection ended.
    pub(crate) fn closed(&self) {
        self.open.fetch_sub(1, Relaxed);
    }

    pub(crate) fn add_handshake(&self) {
        self.handshakes.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_refused(&self) {
        self.refused.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_retry(&self) {
        self.retries.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_evicted(&self) {
        self.evicted.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_failed(&self, why: HandshakeFailure) {
        if let Some(count) = self.failed.get(why as usize) {
            count.fetch_add(1, Relaxed);
        }
    }

    pub(crate) fn add_stream(&self) {
        self.streams.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_stream_reset(&self) {
        self.streams_reset.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_protocol_error(&self) {
        self.protocol_errors.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_early_held(&self) {
        self.early_held.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_early_dropped(&self) {
        self.early_dropped.fetch_add(1, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> QuicSnapshot {
        QuicSnapshot {
            accepted: self.accepted.load(Relaxed),
            handshakes: self.handshakes.load(Relaxed),
            refused: self.refused.load(Relaxed),
            retries: self.retries.load(Relaxed),
            evicted: self.evicted.load(Relaxed),
            failed: self.failed.each_ref().map(|c| c.load(Relaxed)),
            streams: self.streams.load(Relaxed),
            streams_reset: self.streams_reset.load(Relaxed),
            protocol_errors: self.protocol_errors.load(Relaxed),
            early_held: self.early_held.load(Relaxed),
            early_dropped: self.early_dropped.load(Relaxed),
            open: self.open.load(Relaxed),
        }
    }
}
