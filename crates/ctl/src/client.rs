//! `ternctl`'s end of the control socket: connect, send one request, read one reply.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::proto::{Reply, Request};

/// Why a request got no reply.
#[derive(Debug)]
pub enum ClientError {
    /// The socket cannot be reached (the server is not running, or not with this
    /// socket, or we may not use it).
    Connect(std::io::Error),
    /// The exchange failed half-way (the server stopped).
    Exchange(std::io::Error),
    /// No reply came within the timeout.
    Timeout(Duration),
    /// The server's reply could not be read.
    Reply(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Connect(e) => write!(f, "cannot connect: {e}"),
            ClientError::Exchange(e) => write!(f, "no answer: {e}"),
            ClientError::Timeout(timeout) => write!(f, "no answer within {}", seconds(*timeout)),
            ClientError::Reply(e) => write!(f, "unreadable answer: {e}"),
        }
    }
}

/// A duration as `N s` (`N ms` below a second).
fn seconds(duration: Duration) -> String {
    match duration.as_secs() {
        0 => format!("{} ms", duration.as_millis()),
        secs if duration.subsec_millis() == 0 => format!("{secs} s"),
        _ => format!("{:.1} s", duration.as_secs_f64()),
    }
}

/// Sends `request` to the server at `socket` and waits up to `timeout` for its reply.
pub fn ask(socket: &Path, request: &Request, timeout: Duration) -> Result<Reply, ClientError> {
    let mut stream = UnixStream::connect(socket).map_err(ClientError::Connect)?;
    stream.set_read_timeout(Some(timeout)).map_err(ClientError::Exchange)?;
    stream.set_write_timeout(Some(timeout)).map_err(ClientError::Exchange)?;
    // A timed-out read or write says "Resource temporarily unavailable": say what it means.
    let failed = |e: std::io::Error| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => ClientError::Timeout(timeout),
        _ => ClientError::Exchange(e),
    };
    let mut line = serde_json::to_vec(request).map_err(|e| ClientError::Reply(e.to_string()))?;
    line.push(b'\n');
    // A server that refuses us answers without reading: its reply is still there to read.
    let written = stream.write_all(&line);
    let mut answer = String::new();
    let read = BufReader::new(stream).read_line(&mut answer);
    if answer.is_empty() {
        written.map_err(failed)?;
        read.map_err(failed)?;
        return Err(ClientError::Reply(
            "the server closed the connection without answering".into(),
        ));
    }
    serde_json::from_str(&answer).map_err(|e| ClientError::Reply(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_does_not_answer_in_time_is_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // Accepted, read, never answered.
        let silent = std::thread::spawn(move || listener.accept().map(|(stream, _)| stream));
        let timeout = Duration::from_millis(200);
        let e = ask(&path, &Request::Status, timeout).unwrap_err();
        assert!(matches!(e, ClientError::Timeout(t) if t == timeout), "{e:?}");
        assert_eq!(e.to_string(), "no answer within 200 ms");
        drop(silent.join());
        assert_eq!(seconds(Duration::from_secs(60)), "60 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }
}
