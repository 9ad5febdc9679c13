//! The stream a request goes over — TCP, or TLS over TCP for a remote that has it (RFC
//! 9103) — behind one trait, so that transfers, SOA queries over TLS and forwarded
//! updates are written once; and the [`Deadline`] every read of an answer keeps.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::{source, via_error, ClientError, Peer, Result};

/// A byte stream to a remote whose reads can be given a timeout.
pub trait Connection: Read + Write + Send {
    /// How long one read may wait for the remote (the socket's `SO_RCVTIMEO`).
    fn set_read_timeout(&mut self, wait: Duration) -> std::io::Result<()>;
}

impl Connection for TcpStream {
    fn set_read_timeout(&mut self, wait: Duration) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, Some(wait))
    }
}

/// Connects to `peer` — over TLS when it has it, the handshake included — every step
/// within `timeout`, and sends `message` with its length prefix (RFC 1035 §4.2.2).
pub fn send(peer: Peer<'_>, message: &[u8], timeout: Duration) -> Result<Box<dyn Connection>> {
    let started = Instant::now();
    let tcp = tcp_connect(peer, timeout)?;
    tcp.set_read_timeout(Some(timeout))?;
    tcp.set_write_timeout(Some(timeout))?;
    tcp.set_nodelay(true)?;
    let mut stream: Box<dyn Connection> = match peer.tls {
        Some(tls) => Box::new(super::tls::connect(tcp, peer.addr, tls, started + timeout)?),
        None => Box::new(tcp),
    };
    let len =
        u16::try_from(message.len()).map_err(|_| ClientError::Broken("request too long".into()))?;
    let mut framed = len.to_be_bytes().to_vec();
    framed.extend_from_slice(message);
    stream.write_all(&framed)?;
    stream.flush()?;
    Ok(stream)
}

/// A TCP connection to `peer` from its `via` address when it has one.
fn tcp_connect(peer: Peer<'_>, timeout: Duration) -> Result<TcpStream> {
    if peer.source.is_none() {
        return Ok(TcpStream::connect_timeout(&peer.addr, timeout)?);
    }
    let domain = socket2::Domain::for_address(peer.addr);
    let socket = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    socket.bind(&SocketAddr::new(source(peer), 0).into()).map_err(|e| via_error(peer, e))?;
    socket.connect_timeout(&peer.addr.into(), timeout)?;
    Ok(socket.into())
}

/// When reading answers must be over, and how long it may wait for a byte.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    end: Instant,
    max_time: Duration,
    idle: Duration,
}

impl Deadline {
    /// From now: over after `max_time`, a read waiting at most `idle`.
    pub fn new(max_time: Duration, idle: Duration) -> Deadline {
        Deadline { end: Instant::now() + max_time, max_time, idle }
    }

    /// Fills `buf` from `stream`, each read waiting at most the idle timeout or what is
    /// left of the whole, whichever is less.
    pub fn read_exact(&self, stream: &mut dyn Connection, buf: &mut [u8]) -> Result<()> {
        let mut filled = 0;
        while let Some(rest) = buf.get_mut(filled..).filter(|rest| !rest.is_empty()) {
            let left = self.end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ClientError::TooLong(self.max_time));
            }
            let wait = self.idle.min(left);
            stream.set_read_timeout(wait)?;
            match stream.read(rest) {
                Ok(0) => return Err(cut_short(std::io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => filled += n,
                // A TLS stream read bytes but not yet a whole record: see the deadline.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) && wait < self.idle => {
                    return Err(ClientError::TooLong(self.max_time))
                }
                Err(e) if is_timeout(&e) => return Err(ClientError::Idle(self.idle)),
                Err(e) => return Err(cut_short(e)),
            }
        }
        Ok(())
    }

    /// One length-prefixed message into `buf` (65,535 bytes); its length.
    pub fn read_message(&self, stream: &mut dyn Connection, buf: &mut [u8]) -> Result<usize> {
        let mut prefix = [0u8; 2];
        self.read_exact(stream, &mut prefix)?;
        let len = usize::from(u16::from_be_bytes(prefix));
        let body =
            buf.get_mut(..len).ok_or_else(|| ClientError::Broken("message too long".into()))?;
        self.read_exact(stream, body)?;
        Ok(len)
    }
}

/// The one answer to a request sent on `stream`, within `timeout` in all.
pub fn read_answer(stream: &mut dyn Connection, timeout: Duration) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; 65535];
    let len = match Deadline::new(timeout, timeout).read_message(stream, &mut buf) {
        Ok(len) => len,
        Err(ClientError::TooLong(_) | ClientError::Idle(_)) => {
            return Err(ClientError::Broken(
                "no answer within the timeout ([transfer] timeout)".into(),
            ))
        }
        Err(e) => return Err(e),
    };
    buf.truncate(len);
    Ok(buf)
}

/// A read that timed out (`SO_RCVTIMEO` gives `WouldBlock` on Unix).
pub fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

/// A connection that ended before the answer did says so.
fn cut_short(e: std::io::Error) -> ClientError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            ClientError::Broken("the primary closed the connection mid-transfer".into())
        }
        _ => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remote that sends `chunks`, one per read, then times out.
    struct Script {
        chunks: Vec<std::io::Result<Vec<u8>>>,
        pause: Duration,
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(self.pause);
            if self.chunks.is_empty() {
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            let chunk = self.chunks.remove(0)?;
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    impl Write for Script {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Connection for Script {
        fn set_read_timeout(&mut self, _: Duration) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_message_arrives_in_pieces_and_interruptions() {
        let chunks = vec![
            Ok(vec![0]),
            Err(std::io::ErrorKind::Interrupted.into()),
            Ok(vec![3]),
            Ok(vec![b'a']),
            Ok(vec![b'b', b'c']),
        ];
        let mut script = Script { chunks, pause: Duration::ZERO };
        let mut buf = vec![0u8; 65535];
        let deadline = Deadline::new(Duration::from_secs(5), Duration::from_secs(1));
        assert_eq!(deadline.read_message(&mut script, &mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");
    }

    #[test]
    fn interruptions_do_not_outlast_the_deadline() {
        // A TLS stream that keeps getting bytes but never a whole record.
        let chunks = (0..1000).map(|_| Err(std::io::ErrorKind::Interrupted.into())).collect();
        let mut script = Script { chunks, pause: Duration::from_millis(5) };
        let deadline = Deadline::new(Duration::from_millis(100), Duration::from_secs(1));
        let started = Instant::now();
        let error = deadline.read_exact(&mut script, &mut [0u8; 2]).unwrap_err();
        assert!(matches!(error, ClientError::TooLong(_)), "{error}");
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn silence_is_idle_and_a_close_is_a_cut() {
        let deadline = Deadline::new(Duration::from_secs(5), Duration::from_secs(1));
        let mut silent = Script { chunks: Vec::new(), pause: Duration::ZERO };
        let error = deadline.read_exact(&mut silent, &mut [0u8; 2]).unwrap_err();
        assert!(matches!(error, ClientError::Idle(_)), "{error}");
        let mut closed =
            Script { chunks: vec![Ok(vec![1]), Ok(Vec::new())], pause: Duration::ZERO };
        let error = deadline.read_exact(&mut closed, &mut [0u8; 2]).unwrap_err();
        assert!(error.to_string().contains("closed the connection"), "{error}");
        let mut silent = Script { chunks: Vec::new(), pause: Duration::ZERO };
        let error = read_answer(&mut silent, Duration::from_secs(1)).unwrap_err();
        assert!(error.to_string().contains("no answer within the timeout"), "{error}");
    }
}
