//! The UDP data plane: worker threads, each owning one socket per listen address and one
//! reusable [`mmsg::Batch`].
//!
//! A worker receives a batch, asks the [`Handler`] for each answer (lending it the
//! worker's [`Handler::Scratch`], made once) and sends the answers in one call. It never
//! allocates, locks or logs per query. A worker with one socket blocks in `recvmmsg`;
//! with several it waits in `poll` first. Both wake at least every [`WAKE`] to look at
//! the stop flag. On stop, a worker answers the queries already queued in its sockets,
//! then exits.
//!
//! The socket layer is thin on purpose: another I/O path (AF_XDP) can sit beside it and
//! drive the same handler.

pub mod addr;
pub mod mmsg;
pub mod reply;
pub mod socket;

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::handler::{Handler, RequestContext, Transport};
use crate::stats::{DataPath, Stats, Tally};
use mmsg::Batch;
pub use socket::UdpEndpoint;

/// How often a waiting worker looks at the stop flag.
pub const WAKE: Duration = Duration::from_millis(100);
/// Most sockets (listen addresses) one worker serves.
pub const MAX_SOCKETS: usize = 16;
/// At most this many batches are drained from each socket on stop.
const DRAIN_BATCHES: usize = 64;

/// One UDP worker: its sockets and what it shares with the rest of the server.
#[derive(Debug)]
pub struct Worker<H> {
    /// One socket per listen address.
    pub endpoints: Vec<UdpEndpoint>,
    /// The query handler.
    pub handler: Arc<H>,
    /// Largest answer sent (the configured UDP payload maximum).
    pub max_response: usize,
    /// Set to stop the worker.
    pub stop: Arc<AtomicBool>,
    /// Counters.
    pub stats: Arc<Stats>,
}

impl<H: Handler> Worker<H> {
    /// Serves until the stop flag is set, then drains the sockets.
    pub fn run(self) {
        let mut batch = Batch::new(self.max_response);
        let mut scratch = self.handler.new_scratch();
        let mut tally = Tally::new(DataPath::Udp);
        while !self.stop.load(Ordering::Relaxed) {
            let received = match self.endpoints.as_slice() {
                [one] => self.serve(one, &mut batch, &mut scratch, 0, &mut tally),
                many => {
                    let ready = wait_readable(many);
                    let mut received = 0;
                    for (n, endpoint) in many.iter().enumerate() {
                        if ready & (1 << n) != 0 {
                            let flags = libc::MSG_DONTWAIT;
                            received +=
                                self.serve(endpoint, &mut batch, &mut scratch, flags, &mut tally);
                        }
                    }
                    received
                }
            };
            if received == 0 || tally.batches >= Tally::FLUSH_EVERY {
                tally.flush(&self.stats);
                self.stats.beat();
            }
            if received == 0 {
                self.handler.idle(&mut scratch);
            }
        }
        for endpoint in &self.endpoints {
            for _ in 0..DRAIN_BATCHES {
                let flags = libc::MSG_DONTWAIT;
                if self.serve(endpoint, &mut batch, &mut scratch, flags, &mut tally) == 0 {
                    break;
                }
            }
        }
        tally.flush(&self.stats);
    }

    /// Receives one batch on `endpoint` and answers it; returns the datagrams received.
    fn serve(
        &self,
        endpoint: &UdpEndpoint,
        batch: &mut Batch,
        scratch: &mut H::Scratch,
        flags: i32,
        tally: &mut Tally,
    ) -> usize {
        let fd = endpoint.socket.as_raw_fd();
        match batch.receive(fd, flags) {
            Ok(0) => 0,
            Ok(received) => {
                self.answer(endpoint, batch, scratch);
                tally.sent += batch.send(fd);
                tally.received += received;
                tally.batches += 1;
                received
            }
            Err(e) if is_transient(&e) => 0,
            Err(_) => {
                self.stats.add_udp_error();
                0
            }
        }
    }

    /// Runs the handler over the received batch and queues the answers.
    fn answer(&self, endpoint: &UdpEndpoint, batch: &mut Batch, scratch: &mut H::Scratch) {
        let mut state = self.handler.begin_batch(scratch);
        let received = batch.received();
        // Every query of the batch is told to look_ahead, and to handle or skip, in order.
        for i in 0..H::LOOK_AHEAD.min(received) {
            self.handler.look_ahead(&mut state, batch.query(i).unwrap_or(&[]));
        }
        for i in 0..received {
            let ahead = i + H::LOOK_AHEAD;
            if H::LOOK_AHEAD > 0 && ahead < received {
                self.handler.look_ahead(&mut state, batch.query(ahead).unwrap_or(&[]));
            }
            let Some((client, destination)) = batch.addresses(i) else {
                self.handler.skip(&mut state);
                continue;
            };
            let local = match destination.ip() {
                Some(ip) if endpoint.pktinfo => {
                    std::net::SocketAddr::new(ip, endpoint.local.port())
                }
                _ => endpoint.local,
            };
            let ctx = RequestContext {
                transport: Transport::Udp,
                client,
                local,
                max_response: self.max_response,
                keepalive: None,
                tls: None,
            };
            let Some((query, out)) = batch.slot(i) else {
                self.handler.skip(&mut state);
                continue;
            };
            let out_len = out.len();
            match self.handler.handle(&mut state, query, &ctx, out) {
                Some(len) if len > 0 && len <= out_len => batch.queue_answer(i, len, destination),
                _ => {}
            }
        }
    }
}

/// Errors that only mean "nothing to read now".
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Waits until one of the sockets is readable, or [`WAKE`] passes. Returns a bit mask of
/// the readable sockets (bit `n` for `endpoints[n]`; 0 on timeout). The `pollfd` array
/// lives on the stack: a worker has at most [`MAX_SOCKETS`] sockets.
fn wait_readable(endpoints: &[UdpEndpoint]) -> u32 {
    let mut fds = [libc::pollfd { fd: -1, events: 0, revents: 0 }; MAX_SOCKETS];
    for (slot, endpoint) in fds.iter_mut().zip(endpoints) {
        *slot = libc::pollfd { fd: endpoint.socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    }
    let count = endpoints.len().min(MAX_SOCKETS);
    let timeout = i32::try_from(WAKE.as_millis()).unwrap_or(100);
    // SAFETY: `fds` is a valid array of `count` (≤ MAX_SOCKETS) pollfd structs on the stack.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), count as libc::nfds_t, timeout) };
    if rc <= 0 {
        return 0;
    }
    let mut ready = 0;
    for (n, fd) in fds.iter().take(count).enumerate() {
        if fd.revents != 0 {
            ready |= 1 << n;
        }
    }
    ready
}
