//! One stream connection (RFC 7766), plain TCP or TLS (RFC 7858 §3.3: DoT follows RFC
//! 7766 too): read length-prefixed queries, answer every complete query of a read at
//! once, write the answers in one batch.
//!
//! Timeouts: with nothing buffered the connection may stay idle for the idle timeout
//! (RFC 7766 §6.2.3, advertised per RFC 7828). Once the first byte of a query has
//! arrived, the whole query must be in within the I/O timeout of it, however its bytes
//! trickle in (half-open and slow senders, "slowloris"); the client must take each batch
//! of answers within the I/O timeout too (slow readers). A connection is closed after its
//! query cap. None of this touches any other connection.
//!
//! Each connection publishes through its [`Permit`] whether it is idle, answering, or
//! waiting for its client (since when), with a relaxed store per read and per write;
//! when all slots are taken the registry evicts an idle or the slowest connection
//! ([`super::limits`]), which then closes at once.

use std::cell::RefCell;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::time::{timeout, timeout_at, Instant};

use super::framing::FrameBuffer;
use super::limits::Permit;
use crate::handler::{Handler, MessageStream, RequestContext, TlsClient, Transport};
use crate::io::streams::{send_framed, with_handler_scratch, TimedWriter, MAX_MESSAGE};
use crate::stats::{ConnCounters, Stats};

/// Answers are written once this many bytes are pending, before more queries are
/// answered, so a client pipelining small queries with large answers cannot make the
/// server hold more than about this much per connection.
const WRITE_AT: usize = 256 * 1024;

thread_local! {
    /// Per-thread answer buffer: the handler writes here, the answer is then copied
    /// behind its length prefix. One per runtime thread instead of one per connection.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; MAX_MESSAGE].into_boxed_slice());
}

/// The bytes of a connection: a TCP socket, or TLS over one.
pub trait ByteStream: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Writes what the socket takes at once, without waiting; the bytes written (0 when
    /// it takes none, or when that cannot be known without waiting).
    fn write_now(&mut self, _buf: &[u8]) -> usize {
        0
    }

    /// Reads what the kernel already holds, without waiting (the server is stopping);
    /// the bytes read.
    fn read_now(&mut self, _buf: &mut [u8]) -> usize {
        0
    }

    /// The address the connection was accepted on.
    fn local_addr(&self) -> Option<SocketAddr>;
}

impl ByteStream for TcpStream {
    fn write_now(&mut self, buf: &[u8]) -> usize {
        // Not ready, or an error, which the waiting write then reports.
        self.try_write(buf).unwrap_or(0)
    }

    fn read_now(&mut self, buf: &mut [u8]) -> usize {
        // A direct non-blocking read: tokio's `try_read` would trust its readiness
        // cache and miss bytes that arrived since the last poll.
        (&*socket2::SockRef::from(&*self)).read(buf).unwrap_or(0)
    }

    fn local_addr(&self) -> Option<SocketAddr> {
        TcpStream::local_addr(self).ok()
    }
}

/// TLS: records are written whole by the waiting write (and its flush), and bytes the
/// kernel holds may not make a whole record, so neither shortcut is taken.
impl ByteStream for tokio_rustls::server::TlsStream<TcpStream> {
    fn local_addr(&self) -> Option<SocketAddr> {
        self.get_ref().0.local_addr().ok()
    }
}

/// Settings shared by all connections.
#[derive(Debug, Clone, Copy)]
pub struct TcpSettings {
    /// Idle timeout (also advertised as keepalive).
    pub idle_timeout: Duration,
    /// Deadline for a query to arrive in full, counted from its first byte; and timeout
    /// for a batch of answers to be taken by the client.
    pub io_timeout: Duration,
    /// Queries answered before closing (0: no cap).
    pub max_queries: u64,
}

/// What a connection shares with the server.
#[derive(Debug)]
pub struct Shared<H> {
    /// TCP or TLS: what the handler is told and which counters move.
    pub transport: Transport,
    /// The query handler.
    pub handler: Arc<H>,
    /// Timeouts and caps, as a reload leaves them; each connection takes those in
    /// force when it is accepted.
    pub settings: Arc<ArcSwap<TcpSettings>>,
    /// Counters.
    pub stats: Arc<Stats>,
}

impl<H> Shared<H> {
    /// The counters of this kind of connection.
    pub(crate) fn counters(&self) -> &ConnCounters {
        match self.transport {
            Transport::Tls => self.stats.tls(),
            _ => self.stats.tcp(),
        }
    }
}

/// How far answering the buffered queries went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Progress {
    /// Every complete query is answered.
    Done,
    /// Enough answers are pending to write them first.
    WriteFirst,
    /// The connection's query cap is reached.
    CapReached,
    /// A query is answered with a stream of messages: write what is pending, then it.
    Stream,
}

/// Why reading stopped.
enum Stop {
    /// The client closed, an error occurred, or a timeout passed: just close.
    Close,
    /// The server is stopping: answer what has already arrived, then close.
    Drain,
    /// The connection was evicted to make room for another: close at once.
    Evicted,
}

/// Serves one accepted connection from `client` until it ends (`local` is the address
/// it was accepted on, when the listener knows it; `tls` what the handshake told of a
/// TLS client); `permit` and `_alive` are released when it does.
pub async fn serve<H: Handler, S: ByteStream>(
    stream: S,
    (client, local, tls): (SocketAddr, Option<SocketAddr>, Option<TlsClient>),
    shared: Arc<Shared<H>>,
    mut stopping: watch::Receiver<bool>,
    permit: Permit,
    _alive: mpsc::Sender<()>,
) {
    let local = local.or_else(|| ByteStream::local_addr(&stream)).unwrap_or(client);
    let settings = **shared.settings.load();
    let ctx = RequestContext {
        transport: shared.transport,
        client,
        local,
        max_response: MAX_MESSAGE,
        keepalive: Some(settings.idle_timeout),
        tls,
    };
    let mut conn = Connection {
        stream,
        ctx,
        shared,
        settings,
        permit,
        frames: FrameBuffer::default(),
        started: None,
        out: Vec::new(),
        answered: 0,
        stream_out: None,
    };
    let ended_by_read = loop {
        let stop = if conn.frames.has_message() { None } else { conn.read(&mut stopping).await };
        match stop {
            // Nothing is pending (reads happen only then): dropping the stream closes it.
            Some(Stop::Evicted) => return,
            Some(Stop::Drain) => conn.read_queued(),
            _ => {}
        }
        let progress = conn.answer_buffered();
        if !conn.write().await || progress == Progress::CapReached {
            break false;
        }
        if let Some(messages) = conn.stream_out.take() {
            if !conn.send_stream(messages).await {
                break false;
            }
        }
        if stop.is_some() && progress == Progress::Done {
            break matches!(stop, Some(Stop::Close));
        }
    };
    // The client closed, reset or went idle: dropping the stream closes it (with a FIN),
    // a `shutdown` first would only cost a system call. Otherwise the FIN goes out first.
    if !ended_by_read {
        let _ = conn.stream.shutdown().await;
    }
}

struct Connection<H, S> {
    stream: S,
    ctx: RequestContext,
    shared: Arc<Shared<H>>,
    /// The settings in force when it was accepted.
    settings: TcpSettings,
    permit: Permit,
    frames: FrameBuffer,
    /// When the partial message in `frames` began to arrive (`None`: nothing buffered).
    started: Option<Instant>,
    out: Vec<u8>,
    answered: u64,
    /// A stream of messages to send after the pending answers (a zone transfer).
    stream_out: Option<Box<dyn MessageStream>>,
}

impl<H: Handler, S: ByteStream> Connection<H, S> {
    /// Reads once; `None` when bytes arrived, else why to stop. Called only when no
    /// complete message is buffered.
    async fn read(&mut self, stopping: &mut watch::Receiver<bool>) -> Option<Stop> {
        if *stopping.borrow() {
            return Some(Stop::Drain);
        }
        let deadline = self.read_deadline();
        let was_empty = self.frames.is_empty();
        let spare = self.frames.spare();
        tokio::select! {
            read = timeout_at(deadline, self.stream.read(spare)) => match read {
                Ok(Ok(n)) if n > 0 => {
                    self.frames.filled(n);
                    self.permit.active();
                    // A message completed, or none was under way: a partial message left
                    // after the complete ones began in this read.
                    if was_empty || self.frames.has_message() {
                        self.started = Some(Instant::now());
                    }
                    None
                }
                Ok(_) => Some(Stop::Close),
                Err(_elapsed) => {
                    self.shared.counters().add_closed_idle();
                    Some(Stop::Close)
                }
            },
            _ = stopping.changed() => Some(Stop::Drain),
            () = self.permit.evicted() => Some(Stop::Evicted),
        }
    }

    /// When the next read gives up, published with what the connection is doing. With
    /// nothing buffered: the idle timeout from now (RFC 7766 §6.2.3). With part of a
    /// message: the I/O timeout from its first byte, whatever arrived since, so a client
    /// trickling bytes cannot hold the connection longer.
    fn read_deadline(&mut self) -> Instant {
        let settings = self.settings;
        if self.frames.is_empty() {
            self.started = None;
            self.permit.idle();
            return Instant::now() + settings.idle_timeout;
        }
        let started = *self.started.get_or_insert_with(Instant::now);
        self.permit.waiting_since(started.into_std());
        started + settings.io_timeout
    }

    /// Takes what the kernel already holds for this connection without waiting, and
    /// answers it (the server is stopping: nothing more will be read).
    fn read_queued(&mut self) {
        for _ in 0..64 {
            if self.frames.has_message() {
                return;
            }
            match self.stream.read_now(self.frames.spare()) {
                0 => return,
                n => self.frames.filled(n),
            }
        }
    }

    /// Answers the complete queries in the buffer into `out`, until none is left, the
    /// pending answers reach [`WRITE_AT`] bytes, or the query cap is reached.
    fn answer_buffered(&mut self) -> Progress {
        let max = self.settings.max_queries;
        let handler = &*self.shared.handler;
        let before = self.answered;
        let progress = with_handler_scratch(handler, |state| {
            let mut batch = handler.begin_batch(state);
            SCRATCH.with_borrow_mut(|out| loop {
                if max != 0 && self.answered >= max {
                    return Progress::CapReached;
                }
                if self.out.len() >= WRITE_AT {
                    return Progress::WriteFirst;
                }
                let Some(query) = self.frames.next_message() else { return Progress::Done };
                self.answered += 1;
                let Some(len) = handler.handle(&mut batch, query, &self.ctx, &mut out[..]) else {
                    if let Some(messages) = handler.take_stream(&mut batch) {
                        self.stream_out = Some(messages);
                        return Progress::Stream;
                    }
                    continue;
                };
                if let (Some(answer), Ok(prefix)) = (out.get(..len), u16::try_from(len)) {
                    self.out.extend_from_slice(&prefix.to_be_bytes());
                    self.out.extend_from_slice(answer);
                }
            })
        });
        self.shared.counters().add_queries(self.answered - before);
        progress
    }

    /// Writes the pending answers; false when the client did not take them in time, the
    /// connection failed, or it was evicted meanwhile.
    async fn write(&mut self) -> bool {
        if self.out.is_empty() {
            return true;
        }
        let written = self.stream.write_now(&self.out);
        let done = written >= self.out.len() || self.write_rest(written).await;
        self.out.clear();
        done
    }

    /// Sends a stream of messages (a zone transfer): produced on a blocking thread a few
    /// messages ahead, each written within the I/O timeout. False when the client did
    /// not take them, so the connection is closed.
    async fn send_stream(&mut self, messages: Box<dyn MessageStream>) -> bool {
        let io_timeout = self.settings.io_timeout;
        send_framed(messages, &mut TimedWriter { stream: &mut self.stream, timeout: io_timeout })
            .await
    }

    /// Writes `out` from `from` on, for a client that did not take the batch at once:
    /// published as waiting for the client, at most the I/O timeout.
    async fn write_rest(&mut self, from: usize) -> bool {
        let now = Instant::now();
        self.permit.waiting_since(self.started.map_or(now, |s| s.min(now)).into_std());
        let rest = self.out.get(from..).unwrap_or_default();
        let written = tokio::select! {
            written = timeout(self.settings.io_timeout, write_flushed(&mut self.stream, rest)) => written,
            () = self.permit.evicted() => return false,
        };
        match written {
            Ok(Ok(())) => {
                self.permit.active();
                true
            }
            Ok(Err(_)) => false,
            Err(_elapsed) => {
                self.shared.counters().add_closed_slow();
                false
            }
        }
    }
}

/// Writes `bytes` and flushes: TLS may hold the end of a record back until then.
async fn write_flushed<S: ByteStream>(stream: &mut S, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(bytes).await?;
    stream.flush().await
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::io::tcp::ConnectionLimits;

    /// Answers nothing.
    struct Silent;

    impl Handler for Silent {
        type Scratch = ();
        type Batch<'s> = ();

        fn new_scratch(&self) {}

        fn begin_batch(&self, _: &mut ()) {}

        fn handle(&self, _: &mut (), _: &[u8], _: &RequestContext, _: &mut [u8]) -> Option<usize> {
            None
        }
    }

    /// Serves one connection from a client running `client` on a thread, with `settings`
    /// and a registry of `limits`; returns how long serving took, the stats and what the
    /// client returned.
    fn serve_one<T: Send + 'static>(
        settings: TcpSettings,
        limits: &Arc<ConnectionLimits>,
        during: impl FnOnce() + Send,
        client: impl FnOnce(std::net::TcpStream) -> T + Send + 'static,
    ) -> (Duration, Arc<Stats>, T) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let stats = Arc::new(Stats::default());
        let handler = Arc::new(Silent);
        let settings = Arc::new(ArcSwap::from_pointee(settings));
        let shared = Arc::new(Shared {
            transport: Transport::Tcp,
            handler,
            settings,
            stats: Arc::clone(&stats),
        });
        let (took, client) = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let client =
                std::thread::spawn(move || client(std::net::TcpStream::connect(addr).unwrap()));
            let (stream, from) = listener.accept().await.unwrap();
            let permit = limits.admit(from.ip()).unwrap();
            let (_stop, stopping) = watch::channel(false);
            let (alive, _alive) = mpsc::channel(1);
            let started = std::time::Instant::now();
            let task =
                tokio::spawn(serve(stream, (from, None, None), shared, stopping, permit, alive));
            tokio::task::yield_now().await;
            during();
            task.await.unwrap();
            (started.elapsed(), client)
        });
        (took, stats, client.join().unwrap())
    }

    /// Slowloris: every byte comes well within the I/O timeout of the last, but the
    /// query is cut off once the I/O timeout from its first byte has passed.
    #[test]
    fn a_trickled_query_is_cut_off_by_the_deadline_of_its_first_byte() {
        let settings = TcpSettings {
            idle_timeout: Duration::from_secs(30),
            io_timeout: Duration::from_millis(400),
            max_queries: 0,
        };
        let limits = ConnectionLimits::new(8, 0);
        // A 42-byte message, of which 32 bytes come one every 100 ms (3.2 s in all).
        let (took, stats, sent) = serve_one(
            settings,
            &limits,
            || {},
            |mut stream| {
                stream.set_nodelay(true).unwrap();
                let mut sent = 0;
                for byte in [0u8, 40].into_iter().chain(1..=30) {
                    if stream.write_all(&[byte]).is_err() {
                        break;
                    }
                    sent += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                sent
            },
        );
        assert!(
            took >= Duration::from_millis(350) && took < Duration::from_millis(1500),
            "{took:?}"
        );
        assert!(sent < 32, "the client was cut off mid-message ({sent} bytes sent)");
        assert_eq!(stats.snapshot().tcp_closed_idle, 1);
        assert_eq!(limits.open(), 0);
    }

    /// An idle connection evicted for a newcomer closes at once, long before its idle
    /// timeout.
    #[test]
    fn an_evicted_connection_closes_at_once() {
        let settings = TcpSettings {
            idle_timeout: Duration::from_secs(30),
            io_timeout: Duration::from_secs(2),
            max_queries: 0,
        };
        let limits = ConnectionLimits::new(1, 0);
        let mut newcomer = None;
        let (took, _, closed) = serve_one(
            settings,
            &limits,
            || newcomer = limits.admit("192.0.2.1".parse().unwrap()),
            |mut stream| {
                stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                matches!(std::io::Read::read(&mut stream, &mut [0u8; 1]), Ok(0) | Err(_))
            },
        );
        assert!(newcomer.is_some(), "room was made");
        assert!(took < Duration::from_secs(1), "{took:?}");
        assert!(closed);
        assert_eq!((limits.open(), limits.evicted()), (1, 1));
    }
}
