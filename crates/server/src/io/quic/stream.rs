//! One DoQ stream: one query in, its answer (or every message of a transfer) out, on the
//! same client-initiated bidirectional stream (RFC 9250 §4.2).
//!
//! The query is its two-byte length and the message, and the client ends its side of
//! the stream after it (STREAM FIN). It must arrive in full within the I/O timeout of the
//! stream's start, however its bytes trickle in, or the stream is reset. A message ID
//! other than 0 (§4.2.1), an edns-tcp-keepalive option (§5.5.2), bytes past the message,
//! or a FIN before its end are protocol errors that close the connection (§4.3.3). What
//! arrived in 0-RTT and is not a plain query waits for the handshake ([`super::early`]).
//!
//! A stream is first served where it is accepted, in the connection's task, without
//! waiting ([`serve_now`]): usually the query came whole with the stream's first frame
//! and its answer fits the stream's window, so most streams are answered there, and the
//! answers of the streams a packet opened leave together. Only a stream that must wait
//! (a query still arriving, the handshake, a full window, a transfer) becomes a task of
//! its own ([`Rest`]). A query and its stream's end are taken in one read of the stream
//! (one lock of quinn's connection), and the stream is ended by dropping its sending
//! half, which finishes it: a stream costs four locked calls (accept, read, write, end).
//!
//! The handler answers into a per-thread buffer behind room for the length prefix; the
//! framed answer is then copied once into the `Bytes` that quinn sends from.

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use quinn::{RecvStream, SendStream};
use tokio::time::timeout;

use super::query::acceptable;
use super::{early, Link, DOQ_REQUEST_CANCELLED};
use crate::handler::{Handler, MessageStream, RequestContext};
use crate::io::streams::{send_framed, with_handler_scratch, BatchSink, MAX_MESSAGE};
use crate::stats::QuicStats;

/// The most bytes a stream's query may take: a length prefix and a 65535-byte message.
pub const MAX_FRAME: usize = 2 + MAX_MESSAGE;

/// Chunks taken from a stream in one read. A query usually arrives as one chunk with the
/// stream's end: with room for two, one locked read of the connection takes both (quinn
/// notes the end, and the next read returns it without the lock).
const CHUNKS_PER_READ: usize = 2;

thread_local! {
    /// Per-thread answer buffer: the length prefix, then the handler's answer.
    static ANSWER: RefCell<Box<[u8]>> = RefCell::new(vec![0; MAX_FRAME].into_boxed_slice());
}

/// Why a query could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// The client reset the stream or the connection went away.
    Gone,
    /// The stream's bytes are not one length-prefixed message followed by its FIN.
    Malformed,
}

/// What the handler made of a query.
enum Reply {
    /// One answer, framed.
    Answer(Bytes),
    /// A stream of messages (a zone transfer, an update's late answer).
    Stream(Box<dyn MessageStream>),
    /// Nothing to send: the query is dropped.
    Nothing,
}

/// What is left to do of a stream that could not be served at once: a task's work.
pub type Rest = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// Serves a stream of the connection `link` as far as it can without waiting; what is
/// left, if anything, is returned to be run as a task.
pub fn serve_now<H: Handler>(
    send: SendStream,
    mut recv: RecvStream,
    link: &Arc<Link<H>>,
) -> Option<Rest> {
    let stats = &link.shared.stats.quic;
    stats.add_stream();
    let mut reading = Reading::default();
    let query = match read_now(&mut recv, &mut reading) {
        None => return Some(Box::pin(serve(send, recv, reading, Arc::clone(link)))),
        Some(Ok(query)) => query,
        Some(Err(Unread::Gone)) => return None,
        Some(Err(Unread::Malformed)) => {
            link.protocol_error();
            return None;
        }
    };
    if !acceptable(&query) {
        link.protocol_error();
        return None;
    }
    // Anything but a plain query waits for the handshake: replayed 0-RTT data is never
    // processed, and the client's certificate is known by then.
    if !early::replayable(&query) && !link.is_confirmed() {
        let link = Arc::clone(link);
        return Some(Box::pin(async move {
            if link.confirmed(&link.shared.stats.quic).await {
                respond(send, query, &link).await;
            }
        }));
    }
    match answer(&*link.shared.handler, &query, link.ctx()) {
        Reply::Answer(framed) => write_now(send, framed, link),
        reply => {
            let link = Arc::clone(link);
            Some(Box::pin(async move { send_reply(send, reply, &link).await }))
        }
    }
}

/// Serves a stream whose query is still arriving (`reading` holds what has).
async fn serve<H: Handler>(
    mut send: SendStream,
    mut recv: RecvStream,
    mut reading: Reading,
    link: Arc<Link<H>>,
) {
    let stats = &link.shared.stats.quic;
    let io_timeout = link.shared.settings.io_timeout;
    let query = match timeout(io_timeout, read_query(&mut recv, &mut reading)).await {
        Ok(Ok(query)) => query,
        Ok(Err(Unread::Gone)) => return,
        Ok(Err(Unread::Malformed)) => return link.protocol_error(),
        Err(_elapsed) => {
            stats.add_stream_reset();
            let _ = recv.stop(DOQ_REQUEST_CANCELLED);
            let _ = send.reset(DOQ_REQUEST_CANCELLED);
            return;
        }
    };
    if !acceptable(&query) {
        return link.protocol_error();
    }
    if !early::replayable(&query) && !link.confirmed(stats).await {
        return;
    }
    respond(send, query, &link).await;
}

/// Answers `query` on `send`, waiting as needed.
async fn respond<H: Handler>(send: SendStream, query: Bytes, link: &Link<H>) {
    let reply = answer(&*link.shared.handler, &query, link.ctx());
    send_reply(send, reply, link).await;
}

/// Sends what the handler made of a query, waiting as needed.
async fn send_reply<H: Handler>(mut send: SendStream, reply: Reply, link: &Link<H>) {
    let io_timeout = link.shared.settings.io_timeout;
    match reply {
        Reply::Answer(framed) => match timeout(io_timeout, send.write_chunk(framed)).await {
            Ok(Ok(())) => drop(send.finish()),
            _ => drop(send.reset(DOQ_REQUEST_CANCELLED)),
        },
        Reply::Stream(messages) => {
            let mut sink = StreamSink { send: &mut send, timeout: io_timeout };
            match send_framed(messages, &mut sink).await {
                true => drop(send.finish()),
                false => drop(send.reset(DOQ_REQUEST_CANCELLED)),
            }
        }
        Reply::Nothing => drop(send.reset(DOQ_REQUEST_CANCELLED)),
    }
}

/// Writes `framed` and ends the stream if the stream's window takes it at once; else
/// returns the rest of the work.
fn write_now<H: Handler>(mut send: SendStream, framed: Bytes, link: &Arc<Link<H>>) -> Option<Rest> {
    let mut chunks = [framed];
    let mut cx = Context::from_waker(Waker::noop());
    // Cancel-safe: when it is pending, nothing was written.
    let written = pin!(send.write_chunks(&mut chunks)).poll(&mut cx);
    match written {
        // Dropped, `send` ends the stream (quinn's `SendStream` finishes on drop): one
        // locked call fewer than `finish` and then the drop.
        Poll::Ready(Ok(_)) if chunks[0].is_empty() => drop(send),
        Poll::Ready(Err(_)) => drop(send.reset(DOQ_REQUEST_CANCELLED)),
        // Pending, or written in part: the rest waits for room.
        _ => {
            let [rest] = chunks;
            let link = Arc::clone(link);
            return Some(Box::pin(
                async move { send_reply(send, Reply::Answer(rest), &link).await },
            ));
        }
    }
    None
}

/// What has arrived of a query: usually one chunk, kept as it is; else the chunks joined.
#[derive(Debug, Default)]
pub struct Reading {
    first: Option<Bytes>,
    joined: BytesMut,
}

impl Reading {
    /// Takes the stream's next chunk (`None`: its end). Returns the query, without its
    /// length prefix, once the stream has ended, or that it is malformed.
    fn take(&mut self, chunk: Option<Bytes>) -> Option<Result<Bytes, Unread>> {
        let Some(chunk) = chunk else { return Some(self.finish()) };
        match self.first.take() {
            None if self.joined.is_empty() => self.first = Some(chunk),
            earlier => {
                self.joined.extend_from_slice(&earlier.unwrap_or_default());
                self.joined.extend_from_slice(&chunk);
            }
        }
        let frame = self.first.as_deref().unwrap_or(&self.joined);
        (frame.len() > MAX_FRAME || excess(frame)).then_some(Err(Unread::Malformed))
    }

    /// Takes what one read of the stream gave: `Some(n)` chunks of `chunks`, or `None`
    /// for its end. Returns the query once the stream has ended, or that it is
    /// malformed.
    fn take_read(
        &mut self,
        chunks: &mut [Bytes; CHUNKS_PER_READ],
        read: Option<usize>,
    ) -> Option<Result<Bytes, Unread>> {
        let Some(n) = read else { return self.take(None) };
        for chunk in chunks.iter_mut().take(n) {
            if let Some(done) = self.take(Some(std::mem::take(chunk))) {
                return Some(done);
            }
        }
        None
    }

    /// The query, once the stream has ended.
    fn finish(&mut self) -> Result<Bytes, Unread> {
        let frame = self.first.take().unwrap_or_else(|| std::mem::take(&mut self.joined).freeze());
        let len = message_len(&frame).ok_or(Unread::Malformed)?;
        match frame.len() == 2 + len {
            true => Ok(frame.slice(2..)),
            false => Err(Unread::Malformed),
        }
    }
}

/// Reads what has arrived of the stream without waiting: the query once the stream has
/// ended (or why not), `None` while more is to come.
fn read_now(recv: &mut RecvStream, reading: &mut Reading) -> Option<Result<Bytes, Unread>> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut chunks: [Bytes; CHUNKS_PER_READ] = Default::default();
    loop {
        // Cancel-safe: when it is pending, nothing was read.
        let polled = pin!(recv.read_chunks(&mut chunks)).poll(&mut cx);
        let read = match polled {
            Poll::Pending => return None,
            Poll::Ready(Err(_)) => return Some(Err(Unread::Gone)),
            Poll::Ready(Ok(read)) => read,
        };
        if let Some(done) = reading.take_read(&mut chunks, read) {
            return Some(done);
        }
    }
}

/// Reads the stream to its end: the query, without its length prefix.
async fn read_query(recv: &mut RecvStream, reading: &mut Reading) -> Result<Bytes, Unread> {
    let mut chunks: [Bytes; CHUNKS_PER_READ] = Default::default();
    loop {
        let read = recv.read_chunks(&mut chunks).await.map_err(|_| Unread::Gone)?;
        if let Some(done) = reading.take_read(&mut chunks, read) {
            return done;
        }
    }
}

/// The length the prefix of `frame` announces, once it has arrived.
fn message_len(frame: &[u8]) -> Option<usize> {
    let &[hi, lo, ..] = frame else { return None };
    Some(usize::from(u16::from_be_bytes([hi, lo])))
}

/// Whether more bytes have arrived than the prefix announced: a second query.
fn excess(frame: &[u8]) -> bool {
    message_len(frame).is_some_and(|len| frame.len() > 2 + len)
}

/// Answers `query` with this thread's handler scratch and answer buffer.
fn answer<H: Handler>(handler: &H, query: &[u8], ctx: &RequestContext) -> Reply {
    with_handler_scratch(handler, |state| {
        let mut batch = handler.begin_batch(state);
        ANSWER.with_borrow_mut(|out| {
            let Some(body) = out.get_mut(2..) else { return Reply::Nothing };
            match handler.handle(&mut batch, query, ctx, body) {
                Some(len) => framed(out, len).map_or(Reply::Nothing, Reply::Answer),
                None => handler.take_stream(&mut batch).map_or(Reply::Nothing, Reply::Stream),
            }
        })
    })
}

/// The answer of `len` bytes in `out` (after two bytes of room) behind its length.
fn framed(out: &mut [u8], len: usize) -> Option<Bytes> {
    let prefix = u16::try_from(len).ok()?.to_be_bytes();
    out.get_mut(..2)?.copy_from_slice(&prefix);
    Some(Bytes::copy_from_slice(out.get(..2 + len)?))
}

/// A QUIC stream written with a timeout per batch.
struct StreamSink<'a> {
    send: &'a mut SendStream,
    timeout: std::time::Duration,
}

impl BatchSink for StreamSink<'_> {
    async fn write_batch(&mut self, batch: Vec<u8>) -> bool {
        let written = timeout(self.timeout, self.send.write_chunk(Bytes::from(batch)));
        matches!(written.await, Ok(Ok(())))
    }
}

/// Counts a transaction held until the handshake, and, if it is dropped before the
/// handshake completes (a replay, or a client that gave up), that it was never served.
#[derive(Debug)]
pub struct Held<'a> {
    stats: &'a QuicStats,
    served: bool,
}

impl<'a> Held<'a> {
    /// Counts the transaction held.
    pub fn new(stats: &'a QuicStats) -> Held<'a> {
        stats.add_early_held();
        Held { stats, served: false }
    }

    /// The handshake completed: it is served.
    pub fn release(mut self) {
        self.served = true;
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if !self.served {
            self.stats.add_early_dropped();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_of_a_query() {
        assert_eq!(message_len(&[0]), None);
        assert_eq!(message_len(&[1, 2, 9]), Some(0x102));
        assert!(!excess(&[0, 2, 7, 7]));
        assert!(excess(&[0, 2, 7, 7, 0]), "a byte of a second query");
        assert!(!excess(&[0, 3, 7, 7]), "still arriving");
    }

    #[test]
    fn a_read_of_data_and_end_gives_the_query() {
        let mut chunks: [Bytes; CHUNKS_PER_READ] =
            [Bytes::from_static(b"\x00\x02ab"), Bytes::new()];
        let mut reading = Reading::default();
        assert!(reading.take_read(&mut chunks, Some(1)).is_none(), "the end is still to come");
        let query = reading.take_read(&mut chunks, None).unwrap().unwrap();
        assert_eq!(&query[..], b"ab");
    }

    #[test]
    fn chunks_of_one_read_are_joined() {
        let mut chunks: [Bytes; CHUNKS_PER_READ] =
            [Bytes::from_static(b"\x00\x03a"), Bytes::from_static(b"bc")];
        let mut reading = Reading::default();
        assert!(reading.take_read(&mut chunks, Some(2)).is_none());
        assert!(chunks.iter().all(Bytes::is_empty), "the chunks are taken");
        assert_eq!(&reading.take_read(&mut chunks, None).unwrap().unwrap()[..], b"abc");
    }

    #[test]
    fn a_second_query_in_one_read_is_malformed() {
        let mut chunks: [Bytes; CHUNKS_PER_READ] =
            [Bytes::from_static(b"\x00\x01a"), Bytes::from_static(b"\x00")];
        let mut reading = Reading::default();
        assert!(matches!(reading.take_read(&mut chunks, Some(2)), Some(Err(Unread::Malformed))));
        let mut short: [Bytes; CHUNKS_PER_READ] = [Bytes::from_static(b"\x00\x05a"), Bytes::new()];
        let mut reading = Reading::default();
        assert!(reading.take_read(&mut short, Some(1)).is_none());
        assert!(
            matches!(reading.take_read(&mut short, None), Some(Err(Unread::Malformed))),
            "ends early"
        );
    }

    #[test]
    fn answers_go_behind_their_length() {
        let mut out = [0u8; 8];
        out[2..5].copy_from_slice(b"abc");
        assert_eq!(&framed(&mut out, 3).unwrap()[..], b"\x00\x03abc");
        assert!(framed(&mut out, 7).is_none(), "longer than the buffer");
    }

    #[test]
    fn a_held_transaction_not_served_is_counted_dropped() {
        let stats = QuicStats::default();
        Held::new(&stats).release();
        drop(Held::new(&stats));
        let snapshot = stats.snapshot();
        assert_eq!((snapshot.early_held, snapshot.early_dropped), (2, 1));
    }
}
