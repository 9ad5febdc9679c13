//! The TCP data plane (RFC 7766): listeners, the accept loop with connection caps, and
//! one task per connection ([`conn`]) on a tokio runtime.
//!
//! A connection from a client at its own cap is accepted and closed at once, so the
//! client learns at once instead of waiting in the backlog. When all slots are taken, an
//! idle or the slowest connection is evicted to make room ([`limits`]); only when every
//! connection is busy answering is the newcomer closed instead. On stop, the listeners
//! close first; each connection answers what it has already received and closes.

pub mod conn;
pub mod framing;
pub mod limits;

use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::error::{Error, Result};
use crate::handler::Handler;
use crate::io::sockopt::set_int;
pub use conn::{Shared, TcpSettings};
pub use limits::ConnectionLimits;

/// Pending connections the kernel queues per listener.
const BACKLOG: i32 = 1024;
/// With `defer-accept`, the kernel hands a connection over only once its first bytes
/// have arrived (`TCP_DEFER_ACCEPT`), so the first read finds the query and a connection
/// costs one wake-up of the server less. One that stays silent is handed over when it
/// answers the SYN-ACK the kernel repeats after this long (about a second; Linux counts
/// it in retransmissions), and the idle timeout applies from then.
pub const DEFER_ACCEPT_SECS: i32 = 1;
/// Pause after a failed `accept` (out of file descriptors), so the loop does not spin.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// Binds a TCP listener to `addr` (`SO_REUSEADDR`, IPv6-only on IPv6 addresses) with
/// options that accepted connections inherit, so none needs a system call of its own:
/// * `TCP_NODELAY`: an answer leaves as soon as it is written;
/// * `TCP_QUICKACK` off: connections start in delayed-ACK mode, so the segment carrying
///   the answer also acknowledges the query, instead of a bare ACK going out first. Later
///   exchanges on a connection work that way anyway (Linux enters this mode once it sees
///   requests and responses alternate); this makes the first one do so too. A query
///   left unanswered for the delayed-ACK time (40 ms) gets its ACK then, and the
///   connection leaves that mode.
///
/// With `defer_accept`, `TCP_DEFER_ACCEPT` too (see [`DEFER_ACCEPT_SECS`]).
pub fn bind(addr: SocketAddr, defer_accept: bool) -> Result<StdListener> {
    let fail = |source| Error::Bind { addr, source };
    let socket =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?;
    socket.set_reuse_address(true).map_err(fail)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true).map_err(fail)?;
    }
    socket.set_tcp_nodelay(true).map_err(fail)?;
    if defer_accept {
        set_int(&socket, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT, DEFER_ACCEPT_SECS)
            .map_err(fail)?;
    }
    socket.bind(&addr.into()).map_err(fail)?;
    socket.listen(BACKLOG).map_err(fail)?;
    // After `listen`, which resets the ACK mode.
    set_int(&socket, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 0).map_err(fail)?;
    socket.set_nonblocking(true).map_err(fail)?;
    Ok(socket.into())
}

/// Accepts connections on `listener` until `stopping` turns true. Every task it starts
/// holds a clone of `alive`, so the server knows when all have ended.
pub async fn accept_loop<H: Handler>(
    listener: TcpListener,
    shared: Arc<Shared<H>>,
    limits: Arc<ConnectionLimits>,
    mut stopping: watch::Receiver<bool>,
    alive: mpsc::Sender<()>,
) {
    // A listener bound to one address knows every connection's local address; only a
    // wildcard one has to ask the kernel per connection.
    let local = listener.local_addr().ok().filter(|a| !a.ip().is_unspecified());
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopping.changed() => return,
        };
        let (stream, client) = match accepted {
            Ok(pair) => pair,
            Err(_) => {
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(permit) = limits.admit(client.ip()) else {
            shared.counters().add_refused();
            drop(stream);
            continue;
        };
        shared.counters().add_accepted();
        let task = conn::serve(
            stream,
            (client, local, None),
            Arc::clone(&shared),
            stopping.clone(),
            permit,
            alive.clone(),
        );
        tokio::spawn(task);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Write};
    use std::net::TcpStream;
    use std::time::Instant;

    use super::*;
    use crate::io::sockopt::get_int;

    /// Accepts from the non-blocking `listener` for up to `limit`.
    fn accept_within(listener: &StdListener, limit: Duration) -> Option<std::net::TcpStream> {
        let deadline = Instant::now() + limit;
        loop {
            match listener.accept() {
                Ok((stream, _)) => return Some(stream),
                Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return None,
            }
        }
    }

    #[test]
    fn deferred_connections_come_with_their_first_bytes() {
        let listener = bind("127.0.0.1:0".parse().unwrap(), true).unwrap();
        let defer = get_int(&listener, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT).unwrap();
        assert!(defer > 0, "TCP_DEFER_ACCEPT is {defer}");
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        // Connected as far as the client knows, but silent: the kernel keeps it.
        assert!(accept_within(&listener, Duration::from_millis(150)).is_none());
        client.write_all(&[0, 12]).unwrap();
        let accepted = accept_within(&listener, Duration::from_secs(2)).expect("accepted");
        assert_eq!(get_int(&accepted, libc::IPPROTO_TCP, libc::TCP_NODELAY).unwrap(), 1);
    }

    #[test]
    fn without_deferral_silent_connections_are_accepted_at_once() {
        let listener = bind("127.0.0.1:0".parse().unwrap(), false).unwrap();
        assert_eq!(get_int(&listener, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT).unwrap(), 0);
        let _client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let accepted = accept_within(&listener, Duration::from_secs(2)).expect("accepted");
        // 0: delayed-ACK mode, inherited from the listener. (Checked on a connection
        // that has sent nothing: one whose query waits 40 ms unanswered leaves the mode.)
        assert_eq!(get_int(&accepted, libc::IPPROTO_TCP, libc::TCP_QUICKACK).unwrap(), 0);
        assert_eq!(get_int(&accepted, libc::IPPROTO_TCP, libc::TCP_NODELAY).unwrap(), 1);
    }
}
