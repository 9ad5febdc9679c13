//! Answers sent over UDP after the worker that received the query moved on: the answer
//! to a dynamic update, written by the zone's writer once the change is durable.
//!
//! The [`Replier`] holds a duplicate of one worker's socket per listen address, so a
//! late answer leaves from the address and port the client sent its request to, as an
//! answer of the worker would. A wildcard socket is told which address to send from
//! with a packet-info message (`IP_PKTINFO` / `IPV6_PKTINFO`, as the workers do).
//! A writer's batch of answers leaves in one `sendmmsg` per socket ([`Replier::send_all`]):
//! on loopback an answer's send costs a few microseconds of the writer's CPU, most of
//! it delivering and waking the client, and a burst wakes a client once, not per answer.
//! A client's answers of one length (a stream of updates from one socket) go as one
//! segmented message (`UDP_SEGMENT`), which the kernel routes once and cuts into the
//! datagrams the client reads: on this machine's loopback 1.1 µs an answer instead of
//! 4.5. Where the kernel refuses them (no checksum offload, IPsec), answers go one by
//! one from then on.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use tern_control::updates::Datagrams;
use tracing::warn;

use super::addr::{self, ControlBuf, Destination, CONTROL_SIZE};
use super::UdpEndpoint;

/// Sends late UDP answers (see the module comment).
#[derive(Debug)]
pub struct Replier {
    sockets: Vec<Outgoing>,
    /// Segmented messages are sent (until the kernel refuses one: see
    /// [`Outbound::send`]).
    segment: AtomicBool,
}

#[derive(Debug)]
struct Outgoing {
    socket: UdpSocket,
    /// The address it is bound to.
    bound: SocketAddr,
    /// Bound to a wildcard address: the source is given per datagram.
    wildcard: bool,
}

impl Replier {
    /// Duplicates `endpoints` (one worker's sockets, one per listen address).
    pub fn new(endpoints: &[UdpEndpoint]) -> io::Result<Replier> {
        let sockets = endpoints
            .iter()
            .map(|e| {
                let socket = e.socket.try_clone()?;
                Ok(Outgoing { socket, bound: e.local, wildcard: e.pktinfo })
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Replier { sockets, segment: AtomicBool::new(true) })
    }

    /// Sends `answer` to `client` from `local`, the address its request was sent to.
    pub fn send(&self, answer: &[u8], client: SocketAddr, local: SocketAddr) -> io::Result<()> {
        let late = Late { answer, client, local };
        match self.send_all(std::slice::from_ref(&late)) {
            1 => Ok(()),
            _ if self.route(local).is_none() => Err(no_socket()),
            _ => Err(io::Error::last_os_error()),
        }
    }
}

impl Datagrams for Replier {
    /// Sends every answer of `answers`, in one `sendmmsg` per socket used; returns how
    /// many the kernel took. One it refuses (or with no socket for its address) is
    /// skipped, not retried.
    fn send_all(&self, answers: &[Late<'_>]) -> usize {
        let routes: Vec<Option<usize>> = answers.iter().map(|a| self.route(a.local)).collect();
        let mut sent = 0;
        for (index, out) in self.sockets.iter().enumerate() {
            let mut batch = Outbound::default();
            let mine = answers.iter().zip(&routes).filter(|(_, &r)| r == Some(index));
            mine.for_each(|(a, _)| batch.push(a, out.wildcard));
            let (count, refused) = batch.send(&out.socket, self.segment.load(Ordering::Relaxed));
            if let Some(e) = refused.filter(|_| self.segment.swap(false, Ordering::Relaxed)) {
                warn!("late UDP answers are sent one by one: the kernel refused a segmented message: {e}");
            }
            sent += count;
        }
        sent
    }
}

impl Replier {
    /// The socket an answer to a request sent to `local` leaves from: the one bound to
    /// it, else a wildcard one of its port and family.
    fn route(&self, local: SocketAddr) -> Option<usize> {
        let exact = self.sockets.iter().position(|s| s.bound == local);
        exact.or_else(|| {
            self.sockets.iter().position(|s| {
                s.wildcard && s.bound.port() == local.port() && s.bound.is_ipv4() == local.is_ipv4()
            })
        })
    }
}

/// One late answer: its bytes, the client, and the address its request was sent to.
pub use tern_control::updates::Datagram as Late;

fn no_socket() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no socket for that address")
}

/// Most answers one segmented message carries (the limit of older kernels; newer ones
/// take 128).
const MAX_SEGMENTS: usize = 64;

/// Answers longer than this are never segmented: every path's MTU takes them whole.
const MAX_SEGMENT: usize = 512;

/// The `sendmmsg` messages of one socket's answers, and what they point at. Filled
/// completely before the headers are linked, so that no pointer moves.
#[derive(Default)]
struct Outbound<'a> {
    entries: Vec<Entry<'a>>,
}

/// One answer of an [`Outbound`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry<'a> {
    answer: &'a [u8],
    client: SocketAddr,
    /// The address it leaves from, for a wildcard socket.
    source: Option<Destination>,
}

impl Entry<'_> {
    /// `next` may follow it in one segmented message.
    fn joins(&self, next: &Entry<'_>) -> bool {
        (self.client, self.source, self.answer.len())
            == (next.client, next.source, next.answer.len())
            && self.answer.len() <= MAX_SEGMENT
    }
}

impl<'a> Outbound<'a> {
    fn push(&mut self, late: &Late<'a>, wildcard: bool) {
        let from = match late.local {
            SocketAddr::V4(a) => Destination::V4(*a.ip()),
            SocketAddr::V6(a) => Destination::V6(*a.ip(), a.scope_id()),
        };
        let source = wildcard.then_some(from);
        self.entries.push(Entry { answer: late.answer, client: late.client, source });
    }

    /// The messages to send, in order. With `segment`, a client's answers of one
    /// length share a message, up to [`MAX_SEGMENTS`] (each client's answers keep their
    /// order); otherwise each answer is a message of its own.
    fn plan(&mut self, segment: bool) -> Vec<&[Entry<'a>]> {
        if !segment {
            return self.entries.chunks(1).collect();
        }
        self.entries.sort_by_key(|e| e.client); // stable
        let runs = self.entries.chunk_by(|a, b| a.joins(b));
        runs.flat_map(|run| run.chunks(MAX_SEGMENTS)).collect()
    }

    /// Sends them, a client's answers of one length as one segmented message
    /// (`UDP_SEGMENT`) when `segment`: the kernel then routes and queues them as one
    /// packet and cuts it into datagrams at the end (on loopback, at the client's
    /// socket). Returns how many answers the kernel took, and why a segmented message
    /// was refused, if one was: its answers were sent one by one instead.
    fn send(mut self, socket: &UdpSocket, segment: bool) -> (usize, Option<io::Error>) {
        let messages = self.plan(segment);
        let mut iovs: Vec<libc::iovec> = messages
            .iter()
            .flat_map(|m| m.iter())
            .map(|e| libc::iovec {
                iov_base: e.answer.as_ptr().cast_mut().cast(),
                iov_len: e.answer.len(),
            })
            .collect();
        let names: Vec<socket2::SockAddr> = messages
            .iter()
            .map(|m| socket2::SockAddr::from(m.first().map_or(UNSPECIFIED, |e| e.client)))
            .collect();
        let mut controls = vec![ControlBuf([0; CONTROL_SIZE]); messages.len()];
        // SAFETY: an all-zero mmsghdr is a valid empty header.
        let mut hdrs = vec![unsafe { std::mem::zeroed::<libc::mmsghdr>() }; messages.len()];
        let mut rest = iovs.as_mut_slice();
        let parts = messages.iter().zip(&mut controls).zip(&names);
        for (hdr, ((m, control), name)) in hdrs.iter_mut().zip(parts) {
            let (mine, after) = std::mem::take(&mut rest).split_at_mut(m.len());
            rest = after;
            // SAFETY: `name`, `mine` and `control` (CONTROL_SIZE bytes, aligned) stay
            // alive and in place until the headers are dropped.
            unsafe { link(&mut hdr.msg_hdr, m, name, mine, control) };
        }
        let (mut sent, mut refused) = (messages.iter().map(|m| m.len()).sum(), None);
        let resend = |h: usize, e: io::Error| {
            let m = messages.get(h).copied().unwrap_or_default();
            sent -= m.len();
            if m.len() > 1 {
                sent += one_by_one(m, socket);
                refused = Some(e);
            }
        };
        // SAFETY: each header points at a name, iovecs over answers and a control
        // buffer owned here or by the caller, alive and unchanged during the call.
        unsafe { super::mmsg::send_headers_then(socket.as_raw_fd(), &mut hdrs, resend) };
        (sent, refused)
    }
}

/// An address no header is sent to (a message is never empty).
const UNSPECIFIED: SocketAddr =
    SocketAddr::V4(std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0));

/// Points `msg` at the message of `entries`: `name`, their `iovs`, and in `control`
/// the source address (wildcard sockets) and, for several answers, their size.
///
/// # Safety
/// What `msg` is pointed at must stay alive and in place while it is used; `control`
/// is aligned for `cmsghdr`.
unsafe fn link(
    msg: &mut libc::msghdr,
    entries: &[Entry<'_>],
    name: &socket2::SockAddr,
    iovs: &mut [libc::iovec],
    control: &mut ControlBuf,
) {
    msg.msg_name = name.as_ptr().cast_mut().cast();
    msg.msg_namelen = name.len();
    msg.msg_iov = iovs.as_mut_ptr();
    msg.msg_iovlen = iovs.len();
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_SIZE as _;
    let first = entries.first();
    let source = first.and_then(|e| e.source).unwrap_or(Destination::Unknown);
    // SAFETY: the control buffer is `control`, aligned and CONTROL_SIZE bytes long.
    unsafe { addr::write_pktinfo(msg, source) };
    if let (Some(first), true) = (first, entries.len() > 1) {
        // SAFETY: as above; the packet-info message left room for this one.
        unsafe { addr::append_segment_size(msg, first.answer.len() as u16) };
    }
    if msg.msg_controllen == 0 {
        msg.msg_control = std::ptr::null_mut();
    }
}

/// Sends `entries` a message each; returns how many went.
fn one_by_one(entries: &[Entry<'_>], socket: &UdpSocket) -> usize {
    Outbound { entries: entries.to_vec() }.send(socket, false).0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::time::Duration;

    fn round_trip(bind: &str, to: &str) {
        let endpoint = super::super::socket::bind(bind.parse().unwrap(), Duration::from_secs(1));
        let endpoint = endpoint.unwrap();
        let replier = Replier::new(std::slice::from_ref(&endpoint)).unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let local: SocketAddr = format!("{to}:{}", endpoint.local.port()).parse().unwrap();
        replier.send(b"late answer", client.local_addr().unwrap(), local).unwrap();
        let mut buf = [0u8; 64];
        let (len, from) = client.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"late answer");
        assert_eq!(from, local, "the answer leaves from the address the request went to");
    }

    #[test]
    fn answers_from_a_bound_address() {
        round_trip("127.0.0.1:0", "127.0.0.1");
    }

    /// A wildcard socket sends from the address named: 127.0.0.2 here, though the
    /// kernel would have picked 127.0.0.1 for a reply to 127.0.0.1.
    #[test]
    fn answers_from_the_asked_address_on_a_wildcard_socket() {
        round_trip("0.0.0.0:0", "127.0.0.2");
    }

    /// A socket bound to 0.0.0.0 (a free port), and a replier on it.
    fn on_wildcard() -> (UdpEndpoint, Replier) {
        let endpoint =
            super::super::socket::bind("0.0.0.0:0".parse().unwrap(), Duration::from_secs(1));
        let endpoint = endpoint.unwrap();
        let replier = Replier::new(std::slice::from_ref(&endpoint)).unwrap();
        (endpoint, replier)
    }

    /// A batch leaves in one call: every client gets its own answer, from the address
    /// its request went to; one with no socket for its address is skipped.
    #[test]
    fn a_batch_reaches_every_client() {
        let (endpoint, replier) = on_wildcard();
        let port = endpoint.local.port();
        let clients: Vec<UdpSocket> =
            (0..3).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
        let texts: Vec<String> = (0..3).map(|i| format!("answer {i}")).collect();
        let local = |host: &str| format!("{host}:{port}").parse::<SocketAddr>().unwrap();
        let mut late: Vec<Late<'_>> = clients
            .iter()
            .zip(&texts)
            .enumerate()
            .map(|(i, (c, t))| Late {
                answer: t.as_bytes(),
                client: c.local_addr().unwrap(),
                local: local(&format!("127.0.0.{}", i + 1)),
            })
            .collect();
        let stray = Late { local: "[::1]:1".parse().unwrap(), ..late[0] };
        late.insert(1, stray);
        assert_eq!(replier.send_all(&late), 3);
        for (i, client) in clients.iter().enumerate() {
            client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = [0u8; 64];
            let (len, from) = client.recv_from(&mut buf).unwrap();
            assert_eq!(&buf[..len], texts[i].as_bytes());
            assert_eq!(from, local(&format!("127.0.0.{}", i + 1)));
        }
    }

    /// Answers as a client reads them: `count` datagrams, each with where it came from.
    fn read_all(client: &UdpSocket, count: usize) -> Vec<(Vec<u8>, SocketAddr)> {
        client.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 1024];
        (0..count)
            .map(|_| {
                let (len, from) = client.recv_from(&mut buf).unwrap();
                (buf[..len].to_vec(), from)
            })
            .collect()
    }

    /// Answers of the same length to two clients, interleaved, one longer, and more
    /// than one message takes: each client reads each of its answers as a datagram of
    /// its own, in the order they were given, from the address its requests went to.
    fn several_answers_per_client(replier: &Replier, port: u16) {
        let clients: Vec<UdpSocket> =
            (0..2).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
        let mut texts: Vec<String> = (0..150).map(|i| format!("answer {i:03}")).collect();
        texts[7] = "a longer answer".into();
        let local: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
        let late: Vec<Late<'_>> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Late {
                answer: t.as_bytes(),
                client: clients[i % 2].local_addr().unwrap(),
                local,
            })
            .collect();
        assert_eq!(replier.send_all(&late), 150);
        for (c, client) in clients.iter().enumerate() {
            let want: Vec<(Vec<u8>, SocketAddr)> =
                texts.iter().skip(c).step_by(2).map(|t| (t.as_bytes().to_vec(), local)).collect();
            assert_eq!(read_all(client, 75), want);
        }
    }

    #[test]
    fn a_client_reads_each_answer_of_a_segmented_message() {
        let (endpoint, replier) = on_wildcard();
        several_answers_per_client(&replier, endpoint.local.port());
        assert!(replier.segment.load(Ordering::Relaxed), "segmented messages were refused");
    }

    /// A socket that sends without UDP checksums cannot segment (the kernel refuses
    /// with EINVAL): the answers go one by one, then and from then on.
    #[test]
    fn answers_go_one_by_one_when_segmenting_is_refused() {
        let (endpoint, replier) = on_wildcard();
        let on: libc::c_int = 1;
        // SAFETY: a valid socket and an int option. (Set on the endpoint's descriptor:
        // the replier's duplicate is the same socket.)
        let set = unsafe {
            libc::setsockopt(
                endpoint.socket.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_NO_CHECK,
                (&on as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(set, 0);
        several_answers_per_client(&replier, endpoint.local.port());
        assert!(!replier.segment.load(Ordering::Relaxed));
        several_answers_per_client(&replier, endpoint.local.port());
    }

    /// A client's answers of one length share a message, up to the kernel's limit, in
    /// their order; another length, client or source starts another.
    #[test]
    fn messages_group_a_clients_answers_of_one_length() {
        let (a, b): (SocketAddr, SocketAddr) =
            ("127.0.0.1:1000".parse().unwrap(), "127.0.0.1:999".parse().unwrap());
        let mut out = Outbound::default();
        let push = |out: &mut Outbound<'static>, answer: &'static [u8], client, local: &str| {
            out.push(&Late { answer, client, local: local.parse().unwrap() }, true)
        };
        push(&mut out, b"aa", a, "127.0.0.1:53");
        push(&mut out, b"bb", b, "127.0.0.1:53");
        push(&mut out, b"cc", a, "127.0.0.1:53");
        push(&mut out, b"ddd", a, "127.0.0.1:53");
        push(&mut out, b"ee", a, "127.0.0.1:53");
        push(&mut out, b"ff", a, "127.0.0.2:53");
        let answers = |messages: Vec<&[Entry<'static>]>| -> Vec<Vec<&'static [u8]>> {
            messages.iter().map(|m| m.iter().map(|e| e.answer).collect()).collect()
        };
        let alone: Vec<Vec<&[u8]>> =
            [b"aa" as &[u8], b"bb", b"cc", b"ddd", b"ee", b"ff"].map(|a| vec![a]).to_vec();
        assert_eq!(answers(out.plan(false)), alone);
        let grouped: Vec<Vec<&[u8]>> =
            vec![vec![b"bb"], vec![b"aa", b"cc"], vec![b"ddd"], vec![b"ee"], vec![b"ff"]];
        assert_eq!(answers(out.plan(true)), grouped);
        let mut many = Outbound::default();
        (0..MAX_SEGMENTS + 1).for_each(|_| push(&mut many, b"xy", a, "127.0.0.1:53"));
        let sizes: Vec<usize> = many.plan(true).iter().map(|m| m.len()).collect();
        assert_eq!(sizes, [MAX_SEGMENTS, 1]);
    }

    #[test]
    fn no_socket_for_an_unknown_address() {
        let endpoint =
            super::super::socket::bind("127.0.0.1:0".parse().unwrap(), Duration::from_secs(1));
        let replier = Replier::new(std::slice::from_ref(&endpoint.unwrap())).unwrap();
        let err =
            replier.send(b"x", "127.0.0.1:9".parse().unwrap(), "127.0.0.1:1".parse().unwrap());
        assert_eq!(err.unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
