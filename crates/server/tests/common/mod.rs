//! Test helpers: a small handler double, query builders, socket helpers, and starting
//! the server in-process or the real `ternd` binary.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

pub mod dnssec;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_server::io::server::{self, Listeners, RunningServer};
use tern_server::{Config, Handler, RequestContext, Transport};

/// The test double: decides by the query name's first label.
/// * `drop`: no answer;
/// * `big`: an answer of `ctx.max_response` bytes (ID, QR, then zeros);
/// * `ctx`: the header, then `transport local keepalive-units max-response` as text;
/// * anything else: the query echoed with QR set.
#[derive(Debug, Default)]
pub struct TestHandler;

impl Handler for TestHandler {
    type Scratch = ();
    type Batch<'s> = ();

    fn new_scratch(&self) {}

    fn begin_batch(&self, _: &mut ()) {}

    fn handle(
        &self,
        _: &mut (),
        query: &[u8],
        ctx: &RequestContext,
        out: &mut [u8],
    ) -> Option<usize> {
        let header = query.get(..12)?;
        let label_len = usize::from(*query.get(12)?);
        let label = query.get(13..13 + label_len).unwrap_or_default();
        let len = match label {
            b"drop" => return None,
            b"big" => {
                out.get_mut(..ctx.max_response)?.fill(0);
                out.get_mut(..2)?.copy_from_slice(&header[..2]);
                ctx.max_response
            }
            b"ctx" => {
                let transport = match ctx.transport {
                    Transport::Udp => "udp",
                    Transport::Tcp => "tcp",
                    Transport::Tls => "tls",
                    Transport::Quic => "quic",
                };
                let text = format!(
                    "{transport} {} {} {}",
                    ctx.local,
                    ctx.keepalive_units().map_or("-".into(), |u| u.to_string()),
                    ctx.max_response
                );
                out.get_mut(..12)?.copy_from_slice(header);
                out.get_mut(12..12 + text.len())?.copy_from_slice(text.as_bytes());
                12 + text.len()
            }
            _ => {
                out.get_mut(..query.len())?.copy_from_slice(query);
                query.len()
            }
        };
        *out.get_mut(2)? |= 0x80;
        Some(len)
    }
}

/// A query for `name` (dotted, no final dot), type A, with ID `id` and RD set.
pub fn query(id: u16, name: &str) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.').filter(|l| !l.is_empty()) {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    q
}

/// The ID of a message.
pub fn id_of(message: &[u8]) -> u16 {
    u16::from_be_bytes([message[0], message[1]])
}

/// Parses configuration text (with `path` for errors).
pub fn config(text: &str) -> Config {
    Config::from_text(text, Path::new("test.toml")).unwrap()
}

/// Starts the server in-process with the test handler.
pub fn start(text: &str) -> RunningServer {
    let config = config(text);
    let listeners = Listeners::bind(&config).unwrap();
    server::start(&config, listeners, Arc::new(TestHandler)).unwrap()
}

/// A UDP socket on loopback with a receive timeout.
pub fn udp_client() -> UdpSocket {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    socket
}

/// Sends one UDP query and waits for its answer.
pub fn udp_ask(server: SocketAddr, message: &[u8]) -> Option<Vec<u8>> {
    let socket = udp_client();
    socket.send_to(message, server).unwrap();
    let mut buf = vec![0u8; 65535];
    let (len, _) = socket.recv_from(&mut buf).ok()?;
    Some(buf[..len].to_vec())
}

/// A TCP connection with read and write timeouts.
pub fn tcp_connect(server: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(server).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// Frames `message` for TCP.
pub fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = (message.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(message);
    out
}

/// Reads one framed message; `None` on end of stream or timeout.
pub fn tcp_read(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    stream.read_exact(&mut len).ok()?;
    let mut message = vec![0u8; usize::from(u16::from_be_bytes(len))];
    stream.read_exact(&mut message).ok()?;
    Some(message)
}

/// Sends one framed query and reads one answer.
pub fn tcp_ask(stream: &mut TcpStream, message: &[u8]) -> Option<Vec<u8>> {
    stream.write_all(&framed(message)).ok()?;
    tcp_read(stream)
}

/// Whether the server closed `stream` (end of stream or reset) within `limit`; data or
/// a timeout mean it did not.
pub fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 1];
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => {
            !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        }
    }
}

/// Polls `check` every 20 ms until it holds or `limit` passes.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// A free loopback port (bound then released; both UDP and TCP were free).
pub fn free_port() -> u16 {
    loop {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = udp.local_addr().unwrap().port();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The `ternd` binary built for these tests.
pub fn ternd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ternd"))
}

/// The `ternctl` binary: `$TERNCTL` when set, else the one beside `ternd` in the same
/// target directory (`ternctl` belongs to the `tern-ctl` package, and
/// `CARGO_BIN_EXE_<name>` names only binaries of the package under test).
///
/// `cargo test --workspace` and `cargo nextest run --workspace [--release]` build it
/// before any test runs (cargo builds a package's binaries for its integration tests,
/// and tern-ctl has some). `cargo test -p ternd` alone does not: run
/// `cargo test -p ternd -p tern-ctl`, or `cargo build -p tern-ctl` first (same profile),
/// else the tests that run it stop saying so. A binary left from an older build would be
/// used as it is.
pub fn ternctl_path() -> PathBuf {
    if let Some(path) = std::env::var_os("TERNCTL") {
        return PathBuf::from(path);
    }
    let ternd = Path::new(env!("CARGO_BIN_EXE_ternd"));
    let path = ternd.with_file_name(format!("ternctl{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "no ternctl at {}: build it with this profile (cargo build -p tern-ctl, or test with \
         cargo test -p ternd -p tern-ctl), or set TERNCTL",
        path.display()
    );
    path
}

/// The `ternctl` binary ([`ternctl_path`]), to be given arguments.
pub fn ternctl() -> Command {
    Command::new(ternctl_path())
}

/// A running `ternd` child, killed when dropped.
pub struct Daemon {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: std::path::PathBuf,
}

impl Daemon {
    /// Starts `ternd` with `args`, stderr to `log`, and waits until it answers on `addr`
    /// and has loaded its zones (the log's "load done" line): zones load while the server
    /// already answers.
    pub fn spawn(args: &[&str], addr: SocketAddr, log: &Path) -> Daemon {
        let daemon = Daemon::spawn_answering(args, addr, log);
        let loaded =
            eventually(Duration::from_secs(60), || daemon.log_text().contains("load done"));
        assert!(loaded, "ternd did not finish loading: {}", daemon.log_text());
        daemon
    }

    /// [`spawn`](Self::spawn) without waiting for the zones: they may still be loading.
    pub fn spawn_answering(args: &[&str], addr: SocketAddr, log: &Path) -> Daemon {
        let log_file = std::fs::File::create(log).unwrap();
        let child = ternd().args(args).stdout(Stdio::null()).stderr(log_file).spawn().unwrap();
        let daemon = Daemon { child, addr, log: log.to_owned() };
        let up = eventually(Duration::from_secs(10), || {
            let socket = udp_client();
            socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
            socket.send_to(&query(1, "up.test"), addr).unwrap();
            socket.recv_from(&mut [0u8; 512]).is_ok()
        });
        assert!(up, "ternd did not answer on {addr}: {}", daemon.log_text());
        daemon
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY (test): sending a signal to our own child.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
    }

    /// Waits up to `limit` for the exit status.
    pub fn wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `dig +short` of `name` `rtype` at `addr` (one try, two seconds): the answer's data,
/// one record a line.
#[allow(dead_code)] // not every test file asks dig
pub fn dig_short(addr: std::net::SocketAddr, name: &str, rtype: &str) -> String {
    let out = Command::new("dig")
        .args(["+short", "+tries=1", "+time=2", "-p", &addr.port().to_string()])
        .arg(format!("@{}", addr.ip()))
        .args([name, rtype])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An UPDATE of `zone` (with the final dot) adding `name` A `address` (TTL 60), ID `id`.
pub fn update_adding(id: u16, zone: &str, name: &str, address: &str) -> Vec<u8> {
    use tern_wire::message::{CompressionTable, Flags, MessageWriter, Section};
    use tern_wire::{rdata, Class, Name, Opcode, Rtype};
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(id);
    let mut flags = Flags(0);
    flags.set_opcode(Opcode::UPDATE);
    w.set_flags(flags);
    w.push_question(&zone.parse::<Name>().unwrap(), Rtype::SOA, Class::IN).unwrap();
    let owner: Name = name.parse().unwrap();
    let data = rdata::parse_str(Rtype::A, address, None).unwrap();
    w.push_record(Section::Authority, &owner, Rtype::A, Class::IN, 60, &data).unwrap();
    w.finish().to_vec()
}

/// The rcode `addr` answers for `zone`'s SOA (as dig prints it: `NOERROR`, `REFUSED`,
/// …) and the serial, asked with dig (one try, two seconds).
pub fn dig_soa(addr: SocketAddr, zone: &str) -> (String, Option<u32>) {
    let out = Command::new("dig")
        .args(["+tries=1", "+time=2", "+norec", "-p", &addr.port().to_string()])
        .arg(format!("@{}", addr.ip()))
        .args([zone, "SOA"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let status = text.split("status: ").nth(1).and_then(|s| s.split(',').next()).unwrap_or("?");
    let serial = text
        .lines()
        .find(|l| l.contains("\tSOA\t") && !l.starts_with(';'))
        .and_then(|l| l.split_whitespace().nth(6))
        .and_then(|s| s.parse().ok());
    (status.to_owned(), serial)
}
