//! `ternctl`'s end of the control socket: connect, send one request, read one reply.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use super::proto::{Reply, Request};

/// Why a request got no reply.
#[derive(Debug)]
pub enum ClientError {
    /// The socket cannot be reached (the server is not running, or not with this
    /// socket, or we may not use it).
    Connect(std::io::Error),
    /// The exchange failed half-way (the server stopped, or took longer than the
    /// timeout).
    Exchange(std::io::Error),
    /// The server's reply could not be read.
    Reply(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Connect(e) => write!(f, "cannot connect: {e}"),
            ClientError::Exchange(e) => write!(f, "no answer: {e}"),
            ClientError::Reply(e) => write!(f, "unreadable answer: {e}"),
        }
    }
}

/// Sends `request` to the server at `socket` and waits up to `timeout` for its reply.
pub fn ask(socket: &Path, request: &Request, timeout: Duration) -> Result<Reply, ClientError> {
    let mut stream = UnixStream::connect(socket).map_err(ClientError::Connect)?;
    stream.set_read_timeout(Some(timeout)).map_err(ClientError::Exchange)?;
    stream.set_write_timeout(Some(timeout)).map_err(ClientError::Exchange)?;
    let mut line = serde_json::to_vec(request).map_err(|e| ClientError::Reply(e.to_string()))?;
    line.push(b'\n');
    // A server that refuses us answers without reading: its reply is still there to read.
    let written = stream.write_all(&line);
    let mut answer = String::new();
    let read = BufReader::new(stream).read_line(&mut answer);
    if answer.is_empty() {
        written.map_err(ClientError::Exchange)?;
        read.map_err(ClientError::Exchange)?;
        return Err(ClientError::Reply(
            "the server closed the connection without answering".into(),
        ));
    }
    serde_json::from_str(&answer).map_err(|e| ClientError::Reply(e.to_string()))
}
