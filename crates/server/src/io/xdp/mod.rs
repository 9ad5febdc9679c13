//! The AF_XDP data plane: DNS over UDP received and answered without the kernel's
//! socket path, beside the socket workers of [`crate::io::udp`].
//!
//! [`XdpListeners::open`] (run while binding, as root) opens one AF_XDP socket per
//! configured queue of the interface, each with its own UMEM and rings
//! ([`socket::XskSocket`]), puts them in an XSKMAP, loads the program of [`program`]
//! that sends them the DNS queries for the listen addresses, and attaches it with a BPF
//! link ([`bpf`]): native mode where the driver has it, else generic. Every other frame
//! (TCP, other ports, fragments, ICMP, ARP, non-IP) goes to the kernel untouched, so the
//! socket path keeps serving TCP — and UDP too, if XDP cannot be set up.
//!
//! A [`Worker`] per socket takes a batch of frames from the RX ring, finds each query
//! ([`packet::parse`]), has the [`Handler`] write the answer behind room for the headers
//! in a frame of its own, writes the headers ([`packet::write_headers`]) and puts the
//! frame on the TX ring; the query frames go back to the fill ring. No allocation, lock
//! or log per packet. The answer's size limit is the configured UDP maximum, the
//! client's EDNS size (the handler's rule, so an answer too large gets TC as on the
//! socket path) and the interface's MTU: nothing is sent as IP fragments.

pub mod bpf;
pub mod packet;
pub mod program;
pub mod socket;

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{XdpConfig, XdpMode, XdpQueues};
use crate::error::{Error, Result};
use crate::handler::{Handler, RequestContext, Transport};
use crate::stats::{DataPath, Stats, Tally};
use socket::{XskSocket, FRAMES, FRAME_SIZE, RING_SIZE};

/// Frames taken from the RX ring at a time.
const BATCH: usize = 64;
/// `sendto` calls at most per batch to empty the TX ring (the copy path sends up to 32
/// frames per call).
const MAX_KICKS: usize = BATCH / 32 + 2;

/// How the program ended up attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachMode {
    /// In the driver.
    Native,
    /// In the kernel's generic receive path (slower; any interface).
    Generic,
}

impl std::fmt::Display for AttachMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AttachMode::Native => "native",
            AttachMode::Generic => "generic",
        })
    }
}

/// The program attached to the interface; dropping it detaches the program.
#[derive(Debug)]
pub struct Attachment {
    _link: OwnedFd,
    _program: OwnedFd,
    _map: OwnedFd,
    /// The interface's name.
    pub interface: String,
    /// Native or generic.
    pub mode: AttachMode,
}

/// The sockets and the attached program, ready for workers.
#[derive(Debug)]
pub struct XdpListeners {
    /// One socket per queue.
    pub sockets: Vec<XskSocket>,
    /// The program; keep it while the workers run.
    pub attachment: Attachment,
    /// The interface's MTU: the largest IP packet sent.
    pub mtu: usize,
}

/// How long a queue still bound to an AF_XDP socket being released is waited for.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

fn xdp_error(interface: &str, doing: &str, e: std::io::Error) -> Error {
    let hint = match e.raw_os_error() {
        Some(libc::EBUSY) if doing == OPENING_SOCKET => {
            " (the queue is bound to another AF_XDP socket, still after 2 s)"
        }
        Some(libc::EPERM) | Some(libc::EACCES) => {
            " (needs root, or CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW: under the packaged \
             systemd unit, add /usr/share/doc/tern/examples/ternd-xdp.conf as a drop-in)"
        }
        Some(libc::EAFNOSUPPORT) | Some(libc::ENOSYS) => {
            " (a kernel without CONFIG_XDP_SOCKETS or CONFIG_BPF_SYSCALL, or a systemd unit \
             whose RestrictAddressFamilies= lacks AF_XDP: see \
             /usr/share/doc/tern/examples/ternd-xdp.conf)"
        }
        Some(libc::EBUSY) | Some(libc::EEXIST) => {
            " (another XDP program is attached to the interface; Tern does not replace it)"
        }
        _ => "",
    };
    Error::Xdp(format!("{interface}: {doing}: {e}{hint}"))
}

impl XdpListeners {
    /// Sets XDP up on the configured interface for `listen`; an error says why not.
    pub fn open(config: &XdpConfig, listen: &[SocketAddr]) -> Result<XdpListeners> {
        let name = config.interface.as_deref().unwrap_or("");
        let fail = |doing, e| xdp_error(name, doing, e);
        let ifindex = interface_index(name).map_err(|e| fail("no such interface", e))?;
        let count = queue_count(name);
        let queues: Vec<u32> = match &config.queues {
            XdpQueues::All => (0..count).collect(),
            XdpQueues::List(list) => list.clone(),
        };
        if let Some(bad) = queues.iter().find(|&&q| q >= count) {
            let e = std::io::Error::other(format!("queue {bad}, but it has {count}"));
            return Err(fail("no such queue", e));
        }
        let mtu = read_sys(name, "mtu").unwrap_or(1500) as usize;
        let map = bpf::create_xskmap(count).map_err(|e| fail("creating the XSKMAP", e))?;
        let insns = program::assemble(listen, std::os::fd::AsRawFd::as_raw_fd(&map))
            .ok_or_else(|| Error::Xdp("the XDP program did not assemble".into()))?;
        let program =
            bpf::load_program(&insns, "tern_dns").map_err(|e| fail("loading the program", e))?;
        let mut sockets = Vec::new();
        for &queue in &queues {
            let socket = open_socket(ifindex, queue).map_err(|e| fail(OPENING_SOCKET, e))?;
            bpf::insert_socket(&map, queue, socket.raw_fd())
                .map_err(|e| fail("adding a socket to the XSKMAP", e))?;
            sockets.push(socket);
        }
        let (link, mode) =
            attach(&program, ifindex, config.mode).map_err(|e| fail("attaching", e))?;
        let attachment =
            Attachment { _link: link, _program: program, _map: map, interface: name.into(), mode };
        Ok(XdpListeners { sockets, attachment, mtu })
    }
}

/// What [`XdpListeners::open`] was doing when a socket could not be opened.
const OPENING_SOCKET: &str = "opening an AF_XDP socket";

/// Opens queue `queue`'s AF_XDP socket. A queue stays bound for a moment after the
/// process that held it is gone (a ternd killed and restarted at once: the kernel frees
/// its XSKMAP, which holds the old socket, after the process has exited), and binding
/// then fails with EBUSY: that is retried for up to [`RELEASE_WAIT`].
fn open_socket(ifindex: u32, queue: u32) -> std::io::Result<XskSocket> {
    let started = Instant::now();
    let mut waited = false;
    loop {
        match XskSocket::open(ifindex, queue) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && started.elapsed() < RELEASE_WAIT => {
                waited = true;
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(socket) if waited => {
                let waited_ms = started.elapsed().as_millis();
                tracing::info!(queue, waited_ms, "XDP: the queue's previous socket was released");
                return Ok(socket);
            }
            other => return other,
        }
    }
}

/// Attaches in the mode asked; `auto` tries native first, then generic.
fn attach(
    program: &OwnedFd,
    ifindex: u32,
    mode: XdpMode,
) -> std::io::Result<(OwnedFd, AttachMode)> {
    let native = || bpf::attach(program, ifindex, bpf::XDP_FLAGS_DRV_MODE);
    let generic = || bpf::attach(program, ifindex, bpf::XDP_FLAGS_SKB_MODE);
    match mode {
        XdpMode::Native => Ok((native()?, AttachMode::Native)),
        XdpMode::Generic => Ok((generic()?, AttachMode::Generic)),
        XdpMode::Auto => match native() {
            Ok(link) => Ok((link, AttachMode::Native)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EEXIST)) => Err(e),
            Err(_) => Ok((generic()?, AttachMode::Generic)),
        },
    }
}

fn interface_index(name: &str) -> std::io::Result<u32> {
    let c_name = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: a NUL-terminated name, alive for the call.
    match unsafe { libc::if_nametoindex(c_name.as_ptr()) } {
        0 => Err(std::io::Error::last_os_error()),
        index => Ok(index),
    }
}

/// A number from `/sys/class/net/<interface>/<file>`.
fn read_sys(interface: &str, file: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{interface}/{file}")).ok()?;
    text.trim().parse().ok()
}

/// The interface's receive queues (`/sys/class/net/<interface>/queues/rx-*`), at least 1.
fn queue_count(interface: &str) -> u32 {
    let dir = std::fs::read_dir(format!("/sys/class/net/{interface}/queues"));
    let count = dir.map_or(0, |entries| {
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
            .count()
    });
    u32::try_from(count).unwrap_or(1).max(1)
}

/// The DNS message of frame `n` of a batch (empty when it had none), for look-ahead.
fn query_bytes<'u>(
    umem: &'u socket::Umem,
    descs: &[libc::xdp_desc],
    found: &[Option<packet::Datagram>],
    n: usize,
) -> &'u [u8] {
    let (Some(desc), Some(Some(query))) = (descs.get(n), found.get(n)) else { return &[] };
    let frame = umem.received(desc.addr, desc.len).unwrap_or(&[]);
    frame.get(query.payload()).unwrap_or(&[])
}

/// One XDP worker: a socket (one queue) and what it shares with the rest of the server.
#[derive(Debug)]
pub struct Worker<H> {
    /// Its socket.
    pub socket: XskSocket,
    /// The query handler.
    pub handler: Arc<H>,
    /// Largest answer sent (the configured UDP payload maximum).
    pub max_response: usize,
    /// The interface's MTU.
    pub mtu: usize,
    /// Set to stop the worker.
    pub stop: Arc<AtomicBool>,
    /// Counters.
    pub stats: Arc<Stats>,
}

/// Frames of one worker that are free to send from (a stack: the most recently
/// completed, likely still cached, is used first).
#[derive(Debug)]
struct FreeFrames(Vec<u64>);

impl FreeFrames {
    /// The second half of the UMEM (the first is the fill ring's).
    fn new() -> FreeFrames {
        let mut frames = Vec::with_capacity(RING_SIZE as usize);
        frames.extend((RING_SIZE..FRAMES).rev().map(|n| u64::from(n) * u64::from(FRAME_SIZE)));
        FreeFrames(frames)
    }

    /// Takes back the frames the kernel has sent.
    fn reclaim(&mut self, socket: &mut XskSocket) {
        let done = socket.completion.peek(RING_SIZE);
        for n in 0..done {
            if let Some(addr) = socket.completion.read(n) {
                // Never past the capacity: each frame is either here or in flight.
                if self.0.len() < self.0.capacity() {
                    self.0.push(addr - addr % u64::from(FRAME_SIZE));
                }
            }
        }
        socket.completion.release(done);
    }
}

impl<H: Handler> Worker<H> {
    /// Serves until the stop flag is set.
    pub fn run(mut self) {
        let mut scratch = self.handler.new_xdp_scratch();
        let mut free = FreeFrames::new();
        let mut tally = Tally::new(DataPath::Xdp);
        while !self.stop.load(Ordering::Relaxed) {
            free.reclaim(&mut self.socket);
            let received = self.socket.rx.peek(BATCH as u32) as usize;
            if received > 0 {
                let sent = self.serve(received, &mut free, &mut scratch);
                tally.received += received;
                tally.sent += sent;
                tally.batches += 1;
            }
            if received == 0 || tally.batches >= Tally::FLUSH_EVERY {
                tally.flush(&self.stats);
                self.stats.beat();
            }
            if received == 0 {
                self.handler.idle(&mut scratch);
                self.send_pending();
                self.socket.wait(crate::io::udp::WAKE);
            }
        }
        self.send_pending();
        tally.flush(&self.stats);
        self.log_statistics();
    }

    /// Logs, once at the end, the frames the kernel could not hand over.
    fn log_statistics(&self) {
        let Ok(s) = self.socket.statistics() else { return };
        let lost = s.rx_dropped + s.rx_ring_full + s.rx_invalid_descs + s.tx_invalid_descs;
        if lost > 0 || s.rx_fill_ring_empty_descs > 0 {
            tracing::info!(
                queue = self.socket.queue,
                rx_dropped = s.rx_dropped,
                rx_ring_full = s.rx_ring_full,
                fill_ring_empty = s.rx_fill_ring_empty_descs,
                invalid = s.rx_invalid_descs + s.tx_invalid_descs,
                "XDP socket statistics"
            );
        }
    }

    /// Kicks the kernel until the TX ring is sent or [`MAX_KICKS`] calls were made;
    /// nothing when the ring is empty or the kernel needs no kick.
    fn send_pending(&self) {
        for _ in 0..MAX_KICKS {
            if self.socket.tx.pending() == 0 || !self.socket.tx.needs_wakeup() {
                return;
            }
            self.socket.kick();
        }
    }

    /// Answers the `received` frames peeked on the RX ring; returns the answers queued.
    fn serve(&mut self, received: usize, free: &mut FreeFrames, scratch: &mut H::Scratch) -> usize {
        let mut descs = [libc::xdp_desc { addr: 0, len: 0, options: 0 }; BATCH];
        for (n, slot) in descs.iter_mut().enumerate().take(received) {
            *slot = self.socket.rx.read(n as u32).unwrap_or(*slot);
        }
        let descs = descs.get(..received).unwrap_or(&[]);
        let room = self.socket.tx.reserve(received.min(free.0.len()) as u32) as usize;
        let queued = self.answer(descs, room, free, scratch);
        self.socket.rx.release(received as u32);
        let refill = self.socket.fill.reserve(received as u32);
        for (n, desc) in descs.iter().enumerate().take(refill as usize) {
            self.socket.fill.write(n as u32, desc.addr - desc.addr % u64::from(FRAME_SIZE));
        }
        self.socket.fill.submit(refill);
        self.socket.tx.submit(queued as u32);
        if queued > 0 {
            self.send_pending();
        }
        queued
    }

    /// Runs the handler over the batch, queuing at most `room` answers on the TX ring.
    fn answer(
        &mut self,
        descs: &[libc::xdp_desc],
        room: usize,
        free: &mut FreeFrames,
        scratch: &mut H::Scratch,
    ) -> usize {
        for desc in descs {
            self.socket.umem.prefetch(desc.addr);
        }
        let mut found = [None; BATCH];
        for (slot, desc) in found.iter_mut().zip(descs) {
            *slot = self.socket.umem.received(desc.addr, desc.len).and_then(packet::parse);
        }
        let mut state = self.handler.begin_batch(scratch);
        for n in 0..H::LOOK_AHEAD.min(descs.len()) {
            self.handler.look_ahead(&mut state, query_bytes(&self.socket.umem, descs, &found, n));
        }
        let mut queued = 0;
        for (n, desc) in descs.iter().enumerate() {
            if H::LOOK_AHEAD > 0 && n + H::LOOK_AHEAD < descs.len() {
                let ahead = query_bytes(&self.socket.umem, descs, &found, n + H::LOOK_AHEAD);
                self.handler.look_ahead(&mut state, ahead);
            }
            let (Some(Some(query)), Some(&out)) = (found.get(n), free.0.last()) else {
                self.handler.skip(&mut state);
                continue;
            };
            if queued >= room {
                self.handler.skip(&mut state);
                continue;
            }
            if let Some(len) = self.answer_one(&mut state, desc, query, out) {
                let desc = libc::xdp_desc { addr: out, len, options: 0 };
                self.socket.tx.write(queued as u32, desc);
                free.0.pop();
                queued += 1;
            }
        }
        queued
    }

    /// Answers one query into frame `out`; the answer frame's length, or `None` when
    /// nothing is to be sent.
    fn answer_one(
        &mut self,
        state: &mut H::Batch<'_>,
        desc: &libc::xdp_desc,
        query: &packet::Datagram,
        out: u64,
    ) -> Option<u32> {
        let (frame, out) = self.socket.umem.received_and_out(desc.addr, desc.len, out)?;
        let header_len = query.header_len();
        let limit = self
            .max_response
            .min(query.payload_max(self.mtu))
            .min((FRAME_SIZE as usize).saturating_sub(header_len));
        let ctx = RequestContext {
            transport: Transport::Udp,
            client: query.client,
            local: query.local,
            max_response: limit,
            keepalive: None,
            tls: None,
        };
        let message = frame.get(query.payload())?;
        let room = out.get_mut(header_len..header_len + limit)?;
        let len =
            self.handler.handle(state, message, &ctx, room).filter(|&l| l > 0 && l <= limit)?;
        let total = packet::write_headers(out, frame, query, len)?;
        u32::try_from(total).ok()
    }
}
