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

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use super::addr::{self, ControlBuf, Destination, CONTROL_SIZE};
use super::UdpEndpoint;

/// Sends late UDP answers (see the module comment).
#[derive(Debug)]
pub struct Replier {
    sockets: Vec<Outgoing>,
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
        Ok(Replier { sockets })
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

    /// Sends every answer of `answers`, in one `sendmmsg` per socket used; returns how
    /// many the kernel took. One it refuses (or with no socket for its address) is
    /// skipped, not retried.
    pub fn send_all(&self, answers: &[Late<'_>]) -> usize {
        let routes: Vec<Option<usize>> = answers.iter().map(|a| self.route(a.local)).collect();
        let mut sent = 0;
        for (index, out) in self.sockets.iter().enumerate() {
            let mut batch = Outbound::default();
            let mine = answers.iter().zip(&routes).filter(|(_, &r)| r == Some(index));
            mine.for_each(|(a, _)| batch.push(a, out.wildcard));
            sent += batch.send(&out.socket);
        }
        sent
    }

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
#[derive(Debug, Clone, Copy)]
pub struct Late<'a> {
    /// The message.
    pub answer: &'a [u8],
    /// Where it goes.
    pub client: SocketAddr,
    /// Where it leaves from.
    pub local: SocketAddr,
}

fn no_socket() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no socket for that address")
}

/// The `sendmmsg` headers of one socket's answers, and what they point at. Filled
/// completely before the headers are linked, so that no pointer moves.
#[derive(Default)]
struct Outbound<'a> {
    answers: Vec<&'a [u8]>,
    names: Vec<socket2::SockAddr>,
    sources: Vec<Option<Destination>>,
}

impl<'a> Outbound<'a> {
    fn push(&mut self, late: &Late<'a>, wildcard: bool) {
        self.answers.push(late.answer);
        self.names.push(socket2::SockAddr::from(late.client));
        let from = match late.local {
            SocketAddr::V4(a) => Destination::V4(*a.ip()),
            SocketAddr::V6(a) => Destination::V6(*a.ip(), a.scope_id()),
        };
        self.sources.push(wildcard.then_some(from));
    }

    /// Sends them; returns how many the kernel took.
    fn send(self, socket: &UdpSocket) -> usize {
        let count = self.answers.len();
        if count == 0 {
            return 0;
        }
        let mut iovs: Vec<libc::iovec> = self
            .answers
            .iter()
            .map(|a| libc::iovec { iov_base: a.as_ptr().cast_mut().cast(), iov_len: a.len() })
            .collect();
        let mut controls = vec![ControlBuf([0; CONTROL_SIZE]); count];
        // SAFETY: an all-zero mmsghdr is a valid empty header.
        let mut hdrs = vec![unsafe { std::mem::zeroed::<libc::mmsghdr>() }; count];
        let parts = iovs.iter_mut().zip(&mut controls).zip(&self.names).zip(&self.sources);
        for (hdr, (((iov, control), name), source)) in hdrs.iter_mut().zip(parts) {
            let msg = &mut hdr.msg_hdr;
            msg.msg_name = name.as_ptr().cast_mut().cast();
            msg.msg_namelen = name.len();
            msg.msg_iov = iov;
            msg.msg_iovlen = 1;
            if let Some(from) = *source {
                msg.msg_control = control.0.as_mut_ptr().cast();
                msg.msg_controllen = CONTROL_SIZE as _;
                // SAFETY: the control buffer is `control`, aligned and CONTROL_SIZE
                // bytes long, alive until the headers are dropped.
                unsafe { addr::write_pktinfo(msg, from) };
            }
        }
        // SAFETY: each header points at a name, an iovec over an answer and a control
        // buffer owned here or by the caller, alive and unchanged during the call.
        unsafe { super::mmsg::send_headers(socket.as_raw_fd(), &mut hdrs) }
    }
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

    /// A batch leaves in one call: every client gets its own answer, from the address
    /// its request went to; one with no socket for its address is skipped.
    #[test]
    fn a_batch_reaches_every_client() {
        let endpoint =
            super::super::socket::bind("0.0.0.0:0".parse().unwrap(), Duration::from_secs(1));
        let endpoint = endpoint.unwrap();
        let replier = Replier::new(std::slice::from_ref(&endpoint)).unwrap();
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
