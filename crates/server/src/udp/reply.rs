//! Answers sent over UDP after the worker that received the query moved on: the answer
//! to a dynamic update, written by the zone's writer once the change is durable.
//!
//! The [`Replier`] holds a duplicate of one worker's socket per listen address, so a
//! late answer leaves from the address and port the client sent its request to, as an
//! answer of the worker would. A wildcard socket is told which address to send from
//! with a packet-info message (`IP_PKTINFO` / `IPV6_PKTINFO`, as the workers do).

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
        let exact = self.sockets.iter().find(|s| s.bound == local);
        let wildcard = || {
            self.sockets.iter().find(|s| {
                s.wildcard && s.bound.port() == local.port() && s.bound.is_ipv4() == local.is_ipv4()
            })
        };
        let Some(out) = exact.or_else(wildcard) else {
            return Err(io::Error::new(io::ErrorKind::NotFound, "no socket for that address"));
        };
        if !out.wildcard {
            return out.socket.send_to(answer, client).map(drop);
        }
        let from = match local {
            SocketAddr::V4(a) => Destination::V4(*a.ip()),
            SocketAddr::V6(a) => Destination::V6(*a.ip(), a.scope_id()),
        };
        send_from(&out.socket, answer, client, from)
    }
}

/// One `sendmsg` of `answer` to `client` with a packet-info message naming its source.
fn send_from(
    socket: &UdpSocket,
    answer: &[u8],
    client: SocketAddr,
    from: Destination,
) -> io::Result<()> {
    let name = socket2::SockAddr::from(client);
    let mut iov =
        libc::iovec { iov_base: answer.as_ptr().cast_mut().cast(), iov_len: answer.len() };
    let mut control = ControlBuf([0; CONTROL_SIZE]);
    // SAFETY: an all-zero msghdr is a valid empty header; every pointer set below
    // refers to a local that outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = name.as_ptr().cast_mut().cast();
    msg.msg_namelen = name.len();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_SIZE as _;
    // SAFETY: the control buffer is `control`, aligned and CONTROL_SIZE bytes long.
    unsafe { addr::write_pktinfo(&mut msg, from) };
    // SAFETY: `msg` points at the name, the iovec over `answer` and the control buffer,
    // all alive for the call; the kernel only reads them.
    let sent = unsafe { libc::sendmsg(socket.as_raw_fd(), &msg, 0) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
