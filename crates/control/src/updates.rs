//! Dynamic updates on their way from the data plane to a zone's writer and back.
//!
//! The engine accepts an UPDATE (RFC 2136) that some access rule allows and hands it
//! over as an [`UpdateRequest`]; the data plane wraps it in an [`UpdateTask`] with the
//! way back to the client ([`Reply`]) and queues it for the control plane, without
//! waiting. The zone's writer applies it, makes it durable, and only then answers:
//! over UDP from the server's sockets ([`Datagrams`], which the server implements; a
//! batch's answers gathered in [`Answers`] and sent together), over TCP through a
//! channel ([`Reply::tcp`]) the connection waits on, on a blocking thread.
//!
//! A task dropped without an answer (its zone removed, the server stopping, a queue
//! full) answers SERVFAIL on its way out, so no client is left waiting for nothing.
//! Every answer is counted by its rcode ([`crate::counters::control`]).

use std::net::SocketAddr;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_engine::UpdateRequest;
use tern_wire::Rcode;
use tracing::debug;

use crate::clock::unix_now;
use crate::counters::control::control;

/// Longest a TCP connection waits for its update's answer. A writer busy loading a
/// big zone may take seconds; past this the client is better off retrying.
pub const TCP_WAIT: Duration = Duration::from_secs(60);

/// Where the data plane puts accepted updates: the control plane's writers (the
/// writers' registry). Called on a query worker, so it must not block.
pub trait UpdateSink: Send + Sync + std::fmt::Debug {
    /// Takes `task`; one it cannot take is dropped, which answers SERVFAIL.
    fn submit(&self, task: UpdateTask);
}

/// An accepted update and where its answer goes.
#[derive(Debug)]
pub struct UpdateTask {
    /// `None` once answered.
    request: Option<Box<UpdateRequest>>,
    reply: Reply,
    /// When the data plane took it (for the log).
    pub received: Instant,
}

/// The way back to the client.
#[derive(Debug)]
pub enum Reply {
    /// A datagram from `local` (where the request was sent) to `client`.
    Udp {
        /// The sockets to send from.
        replier: Arc<dyn Datagrams>,
        /// The client's address.
        client: SocketAddr,
        /// The address the request was sent to.
        local: SocketAddr,
    },
    /// The connection's stream, waiting for one message.
    Tcp(std_mpsc::SyncSender<Vec<u8>>),
}

impl UpdateTask {
    /// A task for `request`, answered through `reply`.
    pub fn new(request: Box<UpdateRequest>, reply: Reply) -> UpdateTask {
        UpdateTask { request: Some(request), reply, received: Instant::now() }
    }

    /// The client's address over UDP (`None` over TCP).
    pub fn udp_client(&self) -> Option<SocketAddr> {
        match &self.reply {
            Reply::Udp { client, .. } => Some(*client),
            Reply::Tcp(_) => None,
        }
    }

    /// The request (until answered).
    pub fn request(&self) -> Option<&UpdateRequest> {
        self.request.as_deref()
    }

    /// Answers with `rcode` (RFC 2136 §3.8: signed when the request was).
    pub fn answer(mut self, rcode: Rcode) {
        self.answer_with(rcode);
    }

    /// Sends `message` as it is: a primary's answer to a forwarded update, which
    /// carries the client's ID and, when signed, the primary's signature for the
    /// client's key.
    pub fn relay(mut self, message: Vec<u8>) {
        self.request = None;
        let rcode = message.get(3).map_or(Rcode::SERVFAIL, |flags| Rcode(u16::from(flags & 0x0F)));
        control().update(rcode);
        self.reply.send(message);
    }

    /// Answers with `rcode` as [`UpdateTask::answer`] does, but an answer over UDP
    /// waits in `answers` to leave with the others of its batch.
    pub fn answer_into(mut self, rcode: Rcode, answers: &mut Answers) {
        self.write_answer(rcode, |reply, message| match reply {
            Reply::Udp { replier, client, local } => {
                let start = answers.bytes.len();
                answers.bytes.extend_from_slice(message);
                let (replier, client, local) = (Arc::clone(replier), *client, *local);
                let bytes = start..answers.bytes.len();
                answers.udp.push(Queued { replier, client, local, bytes });
            }
            Reply::Tcp(_) => reply.send(message.to_vec()),
        });
    }

    fn answer_with(&mut self, rcode: Rcode) {
        self.write_answer(rcode, |reply, message| reply.send(message.to_vec()));
    }

    /// Writes the answer (once: the request is taken) and hands it to `deliver`.
    fn write_answer(&mut self, rcode: Rcode, deliver: impl FnOnce(&Reply, &[u8])) {
        let Some(request) = self.request.take() else { return };
        control().update(rcode);
        let reply = &self.reply;
        tern_wire::message::with_buffer(|out| {
            let len = request.answer(rcode, out, unix_now())?;
            deliver(reply, out.get(..len)?);
            Some(())
        });
    }
}

/// The server's UDP sockets, as the writers send answers to updates from them.
pub trait Datagrams: Send + Sync + std::fmt::Debug {
    /// Sends every datagram of `answers` (in one system call per socket where it can);
    /// returns how many were sent. One that cannot be sent is skipped, not retried.
    fn send_all(&self, answers: &[Datagram<'_>]) -> usize;
}

/// One answer to send over UDP: its bytes, the client, and the address its request
/// was sent to (which it leaves from).
#[derive(Debug, Clone, Copy)]
pub struct Datagram<'a> {
    /// The message.
    pub answer: &'a [u8],
    /// Where it goes.
    pub client: SocketAddr,
    /// Where it leaves from.
    pub local: SocketAddr,
}

/// Answers over UDP gathered from a batch, sent together by [`Answers::send`]: one
/// `sendmmsg` per socket instead of one `sendto` each ([`Datagrams::send_all`]).
#[derive(Debug, Default)]
pub struct Answers {
    /// The messages, one after another.
    bytes: Vec<u8>,
    udp: Vec<Queued>,
}

#[derive(Debug)]
struct Queued {
    replier: Arc<dyn Datagrams>,
    client: SocketAddr,
    local: SocketAddr,
    bytes: std::ops::Range<usize>,
}

/// True when `a` and `b` are one set of sockets (their data, not their vtables).
fn same(a: &Arc<dyn Datagrams>, b: &Arc<dyn Datagrams>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

impl Answers {
    /// Sends the answers gathered, grouped by the worker sockets they leave from.
    pub fn send(self) {
        let mut rest: Vec<&Queued> = self.udp.iter().collect();
        while let Some(&first) = rest.first() {
            let (mine, others): (Vec<&Queued>, Vec<&Queued>) =
                rest.into_iter().partition(|q| same(&q.replier, &first.replier));
            let datagrams: Vec<Datagram<'_>> = mine
                .iter()
                .map(|q| Datagram {
                    answer: self.bytes.get(q.bytes.clone()).unwrap_or_default(),
                    client: q.client,
                    local: q.local,
                })
                .collect();
            let sent = first.replier.send_all(&datagrams);
            if sent < datagrams.len() {
                debug!(unsent = datagrams.len() - sent, "answers to updates could not be sent");
            }
            rest = others;
        }
    }
}

/// Unanswered, a task answers SERVFAIL (see the module comment).
impl Drop for UpdateTask {
    fn drop(&mut self) {
        self.answer_with(Rcode::SERVFAIL);
    }
}

impl Reply {
    /// A reply over TCP, and where the connection reads its one message (the update's
    /// answer) from.
    pub fn tcp() -> (Reply, std_mpsc::Receiver<Vec<u8>>) {
        let (sender, answer) = std_mpsc::sync_channel(1);
        (Reply::Tcp(sender), answer)
    }

    fn send(&self, message: Vec<u8>) {
        match self {
            Reply::Udp { replier, client, local } => {
                let datagram = Datagram { answer: &message, client: *client, local: *local };
                if replier.send_all(&[datagram]) != 1 {
                    debug!(client = %client, "the answer to an update could not be sent");
                }
            }
            // The connection may be gone; then there is nobody to tell.
            Reply::Tcp(sender) => drop(sender.try_send(message)),
        }
    }
}
