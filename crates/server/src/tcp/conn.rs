//! One TCP connection (RFC 7766): read length-prefixed queries, answer every complete
//! query of a read at once, write the answers in one batch.
//!
//! Timeouts: with nothing buffered the connection may stay idle for the idle timeout
//! (RFC 7766 §6.2.3, advertised per RFC 7828); once part of a query has arrived the rest
//! must come within the I/O timeout (half-open and slow senders), and the client must
//! take each batch of answers within the I/O timeout too (slow readers). A connection is
//! closed after its query cap. None of this touches any other connection.

use std::any::Any;
use std::cell::RefCell;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::time::timeout;

use super::framing::FrameBuffer;
use super::limits::Permit;
use crate::handler::{Handler, RequestContext, Transport};
use crate::stats::Stats;

/// The largest DNS message on TCP.
const MAX_MESSAGE: usize = 65535;
/// Answers are written once this many bytes are pending, before more queries are
/// answered, so a client pipelining small queries with large answers cannot make the
/// server hold more than about this much per connection.
const WRITE_AT: usize = 256 * 1024;

thread_local! {
    /// Per-thread answer buffer: the handler writes here, the answer is then copied
    /// behind its length prefix. One per runtime thread instead of one per connection.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; MAX_MESSAGE].into_boxed_slice());

    /// Per-thread handler scratch (see [`with_handler_scratch`]).
    static HANDLER_SCRATCH: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's scratch for `handler`'s type, made on first use: every
/// read of every connection on the thread lends it to its batch, instead of making and
/// wiping one (7 KiB for the engine) per read, and no connection keeps one of its own.
fn with_handler_scratch<H: Handler, R>(handler: &H, f: impl FnOnce(&mut H::Scratch) -> R) -> R {
    HANDLER_SCRATCH.with(|cell| {
        let mut kept = cell.borrow_mut();
        if !kept.as_ref().is_some_and(|k| k.is::<H::Scratch>()) {
            *kept = Some(Box::new(handler.new_scratch()));
        }
        match kept.as_mut().and_then(|k| k.downcast_mut::<H::Scratch>()) {
            Some(scratch) => f(scratch),
            None => f(&mut handler.new_scratch()), // not reached: it was just made
        }
    })
}

/// Settings shared by all connections.
#[derive(Debug, Clone, Copy)]
pub struct TcpSettings {
    /// Idle timeout (also advertised as keepalive).
    pub idle_timeout: Duration,
    /// Timeout for a started query to arrive in full, and for a batch of answers to be
    /// taken by the client.
    pub io_timeout: Duration,
    /// Queries answered before closing (0: no cap).
    pub max_queries: u64,
}

/// What a connection shares with the server.
#[derive(Debug)]
pub struct Shared<H> {
    /// The query handler.
    pub handler: Arc<H>,
    /// Timeouts and caps.
    pub settings: TcpSettings,
    /// Counters.
    pub stats: Arc<Stats>,
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
}

/// Why reading stopped.
enum Stop {
    /// The client closed, an error occurred, or a timeout passed: just close.
    Close,
    /// The server is stopping: answer what has already arrived, then close.
    Drain,
}

/// Serves one accepted connection from `client` until it ends (`local` is the address
/// it was accepted on, when the listener knows it); `_permit` and `_alive` are released
/// when it does.
pub async fn serve<H: Handler>(
    stream: TcpStream,
    (client, local): (SocketAddr, Option<SocketAddr>),
    shared: Arc<Shared<H>>,
    mut stopping: watch::Receiver<bool>,
    _permit: Permit,
    _alive: mpsc::Sender<()>,
) {
    let local = local.or_else(|| stream.local_addr().ok()).unwrap_or(client);
    let ctx = RequestContext {
        transport: Transport::Tcp,
        client,
        local,
        max_response: MAX_MESSAGE,
        keepalive: Some(shared.settings.idle_timeout),
    };
    let mut conn = Connection {
        stream,
        ctx,
        shared,
        frames: FrameBuffer::default(),
        out: Vec::new(),
        answered: 0,
    };
    let ended_by_read = loop {
        let stop = if conn.frames.has_message() { None } else { conn.read(&mut stopping).await };
        if let Some(Stop::Drain) = stop {
            conn.read_queued();
        }
        let progress = conn.answer_buffered();
        if !conn.write().await || progress == Progress::CapReached {
            break false;
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

struct Connection<H> {
    stream: TcpStream,
    ctx: RequestContext,
    shared: Arc<Shared<H>>,
    frames: FrameBuffer,
    out: Vec<u8>,
    answered: u64,
}

impl<H: Handler> Connection<H> {
    /// Reads once; `None` when bytes arrived, else why to stop.
    async fn read(&mut self, stopping: &mut watch::Receiver<bool>) -> Option<Stop> {
        if *stopping.borrow() {
            return Some(Stop::Drain);
        }
        let settings = self.shared.settings;
        let limit =
            if self.frames.is_empty() { settings.idle_timeout } else { settings.io_timeout };
        let spare = self.frames.spare();
        tokio::select! {
            read = timeout(limit, self.stream.read(spare)) => match read {
                Ok(Ok(n)) if n > 0 => {
                    self.frames.filled(n);
                    None
                }
                Ok(_) => Some(Stop::Close),
                Err(_elapsed) => {
                    self.shared.stats.add_tcp_closed_idle();
                    Some(Stop::Close)
                }
            },
            _ = stopping.changed() => Some(Stop::Drain),
        }
    }

    /// Takes what the kernel already holds for this connection without waiting, and
    /// answers it (the server is stopping: nothing more will be read).
    fn read_queued(&mut self) {
        for _ in 0..64 {
            if self.frames.has_message() {
                return;
            }
            // A direct non-blocking read: tokio's `try_read` would trust its readiness
            // cache and miss bytes that arrived since the last poll.
            match (&*socket2::SockRef::from(&self.stream)).read(self.frames.spare()) {
                Ok(n) if n > 0 => self.frames.filled(n),
                _ => return,
            }
        }
    }

    /// Answers the complete queries in the buffer into `out`, until none is left, the
    /// pending answers reach [`WRITE_AT`] bytes, or the query cap is reached.
    fn answer_buffered(&mut self) -> Progress {
        let max = self.shared.settings.max_queries;
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
                    continue;
                };
                if let (Some(answer), Ok(prefix)) = (out.get(..len), u16::try_from(len)) {
                    self.out.extend_from_slice(&prefix.to_be_bytes());
                    self.out.extend_from_slice(answer);
                }
            })
        });
        self.shared.stats.add_tcp_queries(self.answered - before);
        progress
    }

    /// Writes the pending answers; false when the client did not take them in time or
    /// the connection failed.
    async fn write(&mut self) -> bool {
        if self.out.is_empty() {
            return true;
        }
        let written =
            timeout(self.shared.settings.io_timeout, self.stream.write_all(&self.out)).await;
        self.out.clear();
        match written {
            Ok(Ok(())) => true,
            Ok(Err(_)) => false,
            Err(_elapsed) => {
                self.shared.stats.add_tcp_closed_slow();
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Numbers the scratches it makes; a batch is the scratch it was lent.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Handler for Counting {
        type Scratch = usize;
        type Batch<'s> = &'s mut usize;

        fn new_scratch(&self) -> usize {
            self.0.fetch_add(1, Ordering::Relaxed) + 1
        }

        fn begin_batch<'s>(&self, scratch: &'s mut usize) -> &'s mut usize {
            scratch
        }

        fn handle(
            &self,
            _: &mut &mut usize,
            _: &[u8],
            _: &RequestContext,
            _: &mut [u8],
        ) -> Option<usize> {
            None
        }
    }

    /// Another handler type on the same thread, with a scratch of another type.
    struct Other;

    impl Handler for Other {
        type Scratch = String;
        type Batch<'s> = ();

        fn new_scratch(&self) -> String {
            String::from("other")
        }

        fn begin_batch(&self, _: &mut String) {}

        fn handle(&self, _: &mut (), _: &[u8], _: &RequestContext, _: &mut [u8]) -> Option<usize> {
            None
        }
    }

    #[test]
    fn a_thread_makes_one_scratch_and_lends_it_to_every_read() {
        let handler = Counting::default();
        let first = with_handler_scratch(&handler, |s| *s);
        let again = with_handler_scratch(&handler, |s| *handler.begin_batch(s));
        assert_eq!((first, again), (1, 1), "the same scratch, made once");
        assert_eq!(handler.0.load(Ordering::Relaxed), 1);
        // Another thread makes its own.
        std::thread::scope(|t| {
            t.spawn(|| assert_eq!(with_handler_scratch(&handler, |s| *s), 2));
        });
        // A handler of another type replaces it with a scratch of its own type.
        assert_eq!(with_handler_scratch(&Other, |s| s.clone()), "other");
        assert_eq!(with_handler_scratch(&handler, |s| *s), 3);
    }
}
