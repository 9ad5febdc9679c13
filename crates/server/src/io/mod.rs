//! The server's I/O: the sockets queries and answers go through, and nothing of DNS
//! beyond framing. [`server`] binds every listening socket (as root, before privileges
//! are dropped) and starts the workers; [`udp`] (`recvmmsg`/`sendmmsg` batches, one
//! `SO_REUSEPORT` socket per worker), [`tcp`] (RFC 7766: pipelining, out-of-order
//! answers, idle and I/O timeouts, connection limits) and [`xdp`] (AF_XDP, off by
//! default) each hand every query to the [`Handler`](crate::handler::Handler), and so
//! do [`tls`] (DNS over TLS, through the same connection code as TCP) and [`quic`] (DNS
//! over QUIC, RFC 9250, with quinn); [`sockopt`] holds the socket options they share,
//! [`streams`] what the stream transports share.

pub mod quic;
pub mod server;
pub mod sockopt;
pub mod streams;
pub mod tcp;
pub mod tls;
pub mod udp;
pub mod xdp;
