//! The TCP data plane (RFC 7766): listeners, the accept loop with connection caps, and
//! one task per connection ([`conn`]) on a tokio runtime.
//!
//! A connection over a cap is accepted and closed at once, so the client learns at once
//! instead of waiting in the backlog. On stop, the listeners close first; each connection
//! answers what it has already received and closes.

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
pub use conn::{Shared, TcpSettings};
pub use limits::ConnectionLimits;

/// Pending connections the kernel queues per listener.
const BACKLOG: i32 = 1024;
/// Pause after a failed `accept` (out of file descriptors), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// Binds a TCP listener to `addr` (`SO_REUSEADDR`, IPv6-only on IPv6 addresses), with
/// `TCP_NODELAY`, which accepted connections inherit: an answer leaves as soon as it is
/// written, and no connection needs a system call to set it.
pub fn bind(addr: SocketAddr) -> Result<StdListener> {
    let fail = |source| Error::Bind { addr, source };
    let socket =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?;
    socket.set_reuse_address(true).map_err(fail)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true).map_err(fail)?;
    }
    socket.set_tcp_nodelay(true).map_err(fail)?;
    socket.bind(&addr.into()).map_err(fail)?;
    socket.listen(BACKLOG).map_err(fail)?;
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
            shared.stats.add_tcp_refused();
            drop(stream);
            continue;
        };
        shared.stats.add_tcp_accepted();
        let task = conn::serve(
            stream,
            (client, local),
            Arc::clone(&shared),
            stopping.clone(),
            permit,
            alive.clone(),
        );
        tokio::spawn(task);
    }
}
