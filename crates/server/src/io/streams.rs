//! What the stream transports (TCP, TLS, QUIC) share: the per-thread handler scratch, and
//! sending a stream of messages (a zone transfer, a late answer) produced on a blocking
//! thread a few batches ahead of the one being written.

use std::any::Any;
use std::cell::RefCell;
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::timeout;

use crate::handler::{Handler, MessageStream};

/// The largest DNS message on a stream transport.
pub const MAX_MESSAGE: usize = 65535;
/// Batches of a stream produced ahead of the one being written.
const STREAM_AHEAD: usize = 4;
/// Bytes of a stream's messages handed over and written at once.
const STREAM_WRITE: usize = 256 * 1024;

thread_local! {
    /// Per-thread handler scratch (see [`with_handler_scratch`]).
    static HANDLER_SCRATCH: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's scratch for `handler`'s type, made on first use: every
/// read of every connection on the thread lends it to its batch, instead of making and
/// wiping one (7 KiB for the engine) per read, and no connection keeps one of its own.
pub fn with_handler_scratch<H: Handler, R>(handler: &H, f: impl FnOnce(&mut H::Scratch) -> R) -> R {
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

/// Where [`send_framed`] writes each batch of length-prefixed messages.
pub trait BatchSink {
    /// Writes one batch; false when it could not (the stream is then abandoned).
    fn write_batch(&mut self, batch: Vec<u8>) -> impl std::future::Future<Output = bool> + Send;
}

/// A byte stream written with a timeout per batch (TCP, TLS).
#[derive(Debug)]
pub struct TimedWriter<'a, W> {
    /// The stream.
    pub stream: &'a mut W,
    /// How long one batch may take to be written.
    pub timeout: Duration,
}

impl<W: AsyncWrite + Unpin + Send> BatchSink for TimedWriter<'_, W> {
    /// Writes and flushes the batch: TLS may hold the end of a record back until then.
    async fn write_batch(&mut self, batch: Vec<u8>) -> bool {
        let written = async {
            self.stream.write_all(&batch).await?;
            self.stream.flush().await
        };
        matches!(timeout(self.timeout, written).await, Ok(Ok(())))
    }
}

/// Sends a stream of messages, each behind its two-byte length (RFC 1035 §4.2.2, RFC
/// 9250 §4.2): produced on a blocking thread a few batches ahead, so producing never
/// holds up the connections being served, and written batch by batch to `sink`. The
/// stream is told at the end whether every message went out; so is the caller.
pub async fn send_framed(messages: Box<dyn MessageStream>, sink: &mut impl BatchSink) -> bool {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(STREAM_AHEAD);
    let producer = tokio::task::spawn_blocking(move || produce(messages, &tx));
    let mut complete = true;
    while let Some(framed) = rx.recv().await {
        if !sink.write_batch(framed).await {
            complete = false;
            break;
        }
    }
    drop(rx);
    match producer.await {
        Ok(messages) => messages.finished(complete),
        Err(_) => complete = false,
    }
    complete
}

/// Frames the messages of `messages` into batches of about [`STREAM_WRITE`] bytes and
/// hands them to `tx`, until the stream ends or nobody takes them; gives it back.
fn produce(
    mut messages: Box<dyn MessageStream>,
    tx: &mpsc::Sender<Vec<u8>>,
) -> Box<dyn MessageStream> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let mut framed = Vec::with_capacity(STREAM_WRITE);
    while let Some(len) = messages.next_message(&mut buf) {
        let (Some(body), Ok(prefix)) = (buf.get(..len), u16::try_from(len)) else { break };
        framed.extend_from_slice(&prefix.to_be_bytes());
        framed.extend_from_slice(body);
        // Messages go in batches: one hand-over and one write per batch.
        if framed.len() >= STREAM_WRITE {
            let batch = std::mem::replace(&mut framed, Vec::with_capacity(STREAM_WRITE));
            if tx.blocking_send(batch).is_err() {
                return messages;
            }
        }
    }
    if !framed.is_empty() {
        let _ = tx.blocking_send(framed);
    }
    messages
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::handler::RequestContext;

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

    /// `count` messages of `size` bytes each (filled with their number); says at the
    /// end whether it was sent in full.
    struct Numbered {
        sent: usize,
        count: usize,
        size: usize,
        outcome: Arc<Mutex<Option<bool>>>,
    }

    impl MessageStream for Numbered {
        fn next_message(&mut self, out: &mut [u8]) -> Option<usize> {
            if self.sent == self.count {
                return None;
            }
            self.sent += 1;
            out.get_mut(..self.size)?.fill(self.sent as u8);
            Some(self.size)
        }

        fn finished(self: Box<Self>, complete: bool) {
            *self.outcome.lock().unwrap() = Some(complete);
        }
    }

    /// Takes up to `room` batches, then refuses.
    struct Collect {
        bytes: Vec<u8>,
        batches: usize,
        room: usize,
    }

    impl BatchSink for Collect {
        async fn write_batch(&mut self, batch: Vec<u8>) -> bool {
            if self.batches == self.room {
                return false;
            }
            self.batches += 1;
            self.bytes.extend_from_slice(&batch);
            true
        }
    }

    fn send(count: usize, room: usize) -> (Collect, bool, Option<bool>) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let outcome = Arc::new(Mutex::new(None));
        let messages =
            Box::new(Numbered { sent: 0, count, size: 60_000, outcome: Arc::clone(&outcome) });
        let mut sink = Collect { bytes: Vec::new(), batches: 0, room };
        let complete = runtime.block_on(send_framed(messages, &mut sink));
        let told = *outcome.lock().unwrap();
        (sink, complete, told)
    }

    #[test]
    fn messages_go_framed_in_batches_and_the_stream_is_told_the_outcome() {
        let (sink, complete, told) = send(10, usize::MAX);
        assert!(complete);
        assert_eq!(told, Some(true));
        assert_eq!(sink.bytes.len(), 10 * 60_002);
        assert_eq!(sink.batches, 2, "5 messages (300 kB) a batch: 256 KiB or more");
        for (n, message) in sink.bytes.chunks(60_002).enumerate() {
            assert_eq!(message[..2], 60_000u16.to_be_bytes());
            assert!(message[2..].iter().all(|&b| usize::from(b) == n + 1));
        }
        let (sink, complete, told) = send(10, 1);
        assert!(!complete);
        assert_eq!(told, Some(false));
        assert_eq!(sink.batches, 1);
    }
}
