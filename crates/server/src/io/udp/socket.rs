//! Creating the UDP sockets: one per worker and address, all sharing the port through
//! `SO_REUSEPORT`, so the kernel spreads datagrams over the workers without a lock.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::error::{Error, Result};
use crate::io::sockopt::set_int;

/// Receive buffer asked for each socket (the kernel caps it at `net.core.rmem_max`).
const RECV_BUFFER: usize = 4 << 20;
/// Send buffer asked for each socket.
const SEND_BUFFER: usize = 1 << 20;

/// One bound UDP socket and what the worker needs to know about it.
#[derive(Debug)]
pub struct UdpEndpoint {
    /// The socket, blocking, with a receive timeout (see [`bind`]).
    pub socket: UdpSocket,
    /// The address it is bound to (port resolved when 0 was asked).
    pub local: SocketAddr,
    /// Whether datagrams carry their destination address (wildcard binds only).
    pub pktinfo: bool,
}

/// Binds a UDP socket to `addr` with `SO_REUSEPORT`; on a wildcard address, asks for the
/// destination of each datagram (`IP_PKTINFO` / `IPV6_RECVPKTINFO`). `wake` is the
/// receive timeout after which a blocked worker looks at the stop flag.
pub fn bind(addr: SocketAddr, wake: Duration) -> Result<UdpEndpoint> {
    let fail = |source| Error::Bind { addr, source };
    let socket =
        Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP)).map_err(fail)?;
    socket.set_reuse_port(true).map_err(fail)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true).map_err(fail)?;
    }
    // Larger buffers absorb bursts; refusals (above rmem_max) are not errors.
    let _ = socket.set_recv_buffer_size(RECV_BUFFER);
    let _ = socket.set_send_buffer_size(SEND_BUFFER);
    omit_path_mtu_discovery(&socket, addr);
    let pktinfo = addr.ip().is_unspecified();
    if pktinfo {
        let (level, name) = match addr {
            SocketAddr::V4(_) => (libc::IPPROTO_IP, libc::IP_PKTINFO),
            SocketAddr::V6(_) => (libc::IPPROTO_IPV6, libc::IPV6_RECVPKTINFO),
        };
        set_int(&socket, level, name, 1).map_err(fail)?;
    }
    socket.set_read_timeout(Some(wake)).map_err(fail)?;
    socket.bind(&addr.into()).map_err(fail)?;
    let socket: UdpSocket = socket.into();
    let local = socket.local_addr().map_err(fail)?;
    Ok(UdpEndpoint { socket, local, pktinfo })
}

/// Answers are sent without the DF bit and never sized by ICMP "fragmentation needed"
/// messages, which an attacker can forge (the choice Knot DNS makes; RFC 8900 §3.2).
/// Best effort: a kernel without the option still serves.
fn omit_path_mtu_discovery(socket: &Socket, addr: SocketAddr) {
    let _ = match addr {
        SocketAddr::V4(_) => {
            set_int(socket, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, libc::IP_PMTUDISC_OMIT)
        }
        SocketAddr::V6(_) => {
            set_int(socket, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER, libc::IPV6_PMTUDISC_OMIT)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_share_a_port() {
        let wake = Duration::from_millis(50);
        let first = bind("127.0.0.1:0".parse().unwrap(), wake).unwrap();
        assert!(!first.pktinfo);
        let second = bind(first.local, wake).unwrap();
        assert_eq!(second.local, first.local);
    }

    #[test]
    fn wildcard_asks_for_destination() {
        let any = bind("0.0.0.0:0".parse().unwrap(), Duration::from_millis(50)).unwrap();
        assert!(any.pktinfo);
    }
}
