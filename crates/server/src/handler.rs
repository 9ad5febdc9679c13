//! The seam between the I/O layer and DNS: the [`Handler`] trait and what it is told
//! about each query.
//!
//! UDP and TCP workers call nothing else per query. A handler turns the bytes of one
//! query into the bytes of one answer (or none), in a buffer the worker owns; it must not
//! allocate, lock, block or log, because it runs on the data plane.

use std::net::SocketAddr;
use std::time::Duration;

pub use tern_engine::TlsClient;

/// The transport a query arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A UDP datagram: answers larger than the client's EDNS buffer are truncated (TC).
    Udp,
    /// A TCP connection (RFC 7766): answers may use up to 65535 bytes.
    Tcp,
    /// DNS over TLS (RFC 7858): as TCP, and answers are padded (RFC 8467).
    Tls,
    /// DNS over QUIC (RFC 9250): one query per stream, as TCP otherwise, padded.
    Quic,
}

impl Transport {
    /// True on a stream transport (TCP, TLS, QUIC): answers up to 65535 bytes, zone
    /// transfers allowed, updates answered on the same stream.
    pub fn is_stream(self) -> bool {
        !matches!(self, Transport::Udp)
    }

    /// True when encrypted (TLS, QUIC).
    pub fn is_encrypted(self) -> bool {
        matches!(self, Transport::Tls | Transport::Quic)
    }
}

/// What the I/O layer knows about one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestContext {
    /// UDP or TCP.
    pub transport: Transport,
    /// The client's address and port.
    pub client: SocketAddr,
    /// The address and port the query was sent to (the answer leaves from there).
    pub local: SocketAddr,
    /// The largest answer the transport allows: the configured UDP payload maximum, or
    /// 65535 on TCP. The handler further limits UDP answers to the client's EDNS buffer
    /// size (RFC 6891 §6.2.5), or to 512 bytes without EDNS (RFC 1035 §4.2.1).
    pub max_response: usize,
    /// On TCP, the idle timeout to advertise in an EDNS TCP keepalive option when the
    /// query carried one (RFC 7828 §3.3.2); `None` on UDP.
    pub keepalive: Option<Duration>,
    /// On TLS and QUIC, what the handshake told of the client (its certificate's key
    /// pin, whether it chained to the client CA); `None` on plain transports.
    pub tls: Option<TlsClient>,
}

impl RequestContext {
    /// The keepalive timeout in the option's unit of 100 ms, saturated at 65535.
    pub fn keepalive_units(&self) -> Option<u16> {
        self.keepalive.map(|t| u16::try_from(t.as_millis() / 100).unwrap_or(u16::MAX))
    }
}

/// Answers queries. Implemented by the query engine; tests use small doubles.
///
/// The I/O layer calls [`begin_batch`](Handler::begin_batch) once per batch of queries
/// (one `recvmmsg` on UDP, one read on TCP) and [`handle`](Handler::handle) for each
/// query of the batch, so a handler can load its zone snapshot once per batch (for
/// example an `arc_swap` guard in its `Batch`). A batch lives for a few microseconds and
/// never across a blocking call; what it drops when it ends is released then.
///
/// What is worth keeping from batch to batch (tables, buffers) lives in the `Scratch`,
/// which a UDP worker makes once with [`new_scratch`](Handler::new_scratch) and lends to
/// each of its batches, and TCP keeps one per runtime thread: a batch then costs no
/// wipe of it.
pub trait Handler: Send + Sync + 'static {
    /// What a worker keeps across batches; `()` when nothing is. Whatever a batch left
    /// in it must be harmless to the next batch, which may be another connection's.
    type Scratch: 'static;

    /// State held for one batch, such as a snapshot guard, borrowing the worker's
    /// scratch; `()` when none is needed.
    type Batch<'s>;

    /// Makes a worker's scratch.
    fn new_scratch(&self) -> Self::Scratch;

    /// Makes an AF_XDP worker's scratch: its queries come as UDP, and are counted apart
    /// where the handler counts them.
    fn new_xdp_scratch(&self) -> Self::Scratch {
        self.new_scratch()
    }

    /// Starts a batch with the worker's scratch.
    fn begin_batch<'s>(&self, scratch: &'s mut Self::Scratch) -> Self::Batch<'s>;

    /// Answers `query` into `out` (which is at least `ctx.max_response` bytes long) and
    /// returns the answer's length, or `None` to send nothing (a dropped query).
    fn handle(
        &self,
        batch: &mut Self::Batch<'_>,
        query: &[u8],
        ctx: &RequestContext,
        out: &mut [u8],
    ) -> Option<usize>;

    /// How many queries ahead of the one being handled [`look_ahead`](Handler::look_ahead)
    /// is told about (0: never).
    const LOOK_AHEAD: usize = 0;

    /// Told about each query of a batch in order, [`LOOK_AHEAD`](Handler::LOOK_AHEAD)
    /// queries before it is [`handle`](Handler::handle)d: a handler may start loading what
    /// it will need (nothing is done by default). Only ever a hint: `handle` must not
    /// depend on it.
    fn look_ahead(&self, _batch: &mut Self::Batch<'_>, _query: &[u8]) {}

    /// Told instead of [`handle`](Handler::handle) about a query of the batch that is not
    /// answered (its addresses could not be read), so that what
    /// [`look_ahead`](Handler::look_ahead) prepared stays in step with the queries that
    /// follow (nothing is done by default).
    fn skip(&self, _batch: &mut Self::Batch<'_>) {}

    /// Told when a UDP worker woke without queries (at most every
    /// [`crate::io::udp::WAKE`] while idle), with its scratch: a handler may hand over
    /// what it tallied per worker (nothing is done by default).
    fn idle(&self, _scratch: &mut Self::Scratch) {}

    /// Asked on TCP after [`handle`](Handler::handle) returned `None`: a stream of
    /// messages to send in answer instead (a zone transfer), which the handler left in
    /// the batch. `None` by default.
    fn take_stream(&self, _batch: &mut Self::Batch<'_>) -> Option<Box<dyn MessageStream>> {
        None
    }
}

/// Messages sent one after another in answer to one TCP query (a zone transfer). The
/// TCP layer runs it on a thread of its own, so producing it never holds up the
/// connections being served, and writes what it produces with the I/O timeout per
/// message.
pub trait MessageStream: Send + 'static {
    /// Writes the next message into `out` (65535 bytes) and returns its length; `None`
    /// once the stream is complete.
    fn next_message(&mut self, out: &mut [u8]) -> Option<usize>;

    /// Told once, when the stream ends: `complete` when every message was sent.
    fn finished(self: Box<Self>, complete: bool);
}

/// The TCP side of an update's answer ([`tern_control::updates::Reply::tcp`]): one
/// message, once the zone's writer sent it (or nothing after
/// [`TCP_WAIT`](tern_control::updates::TCP_WAIT)).
#[derive(Debug)]
pub struct AnswerStream {
    answer: std::sync::mpsc::Receiver<Vec<u8>>,
    done: bool,
}

impl AnswerStream {
    /// A stream and the reply that feeds it.
    pub fn pair() -> (AnswerStream, tern_control::updates::Reply) {
        let (reply, answer) = tern_control::updates::Reply::tcp();
        (AnswerStream { answer, done: false }, reply)
    }
}

impl MessageStream for AnswerStream {
    fn next_message(&mut self, out: &mut [u8]) -> Option<usize> {
        if self.done {
            return None;
        }
        self.done = true;
        let message = self.answer.recv_timeout(tern_control::updates::TCP_WAIT).ok()?;
        let slot = out.get_mut(..message.len())?;
        slot.copy_from_slice(&message);
        Some(message.len())
    }

    fn finished(self: Box<Self>, _complete: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalive_units_of_100ms() {
        let mut ctx = RequestContext {
            transport: Transport::Tcp,
            client: SocketAddr::from(([127, 0, 0, 1], 1)),
            local: SocketAddr::from(([127, 0, 0, 1], 53)),
            max_response: 65535,
            keepalive: Some(Duration::from_millis(10_050)),
            tls: None,
        };
        assert_eq!(ctx.keepalive_units(), Some(100));
        ctx.keepalive = Some(Duration::from_secs(100_000));
        assert_eq!(ctx.keepalive_units(), Some(u16::MAX));
        ctx.keepalive = None;
        assert_eq!(ctx.keepalive_units(), None);
    }
}
