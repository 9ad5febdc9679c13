//! The TCP data plane (RFC 7766, RFC 7828), in-process with the test handler:
//! pipelining, split and out-of-order reads, limits, timeouts, slow readers, half-open
//! connections, garbage, the largest messages, the stop drain, and slowloris attacks.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;

fn config(tcp: &str) -> String {
    format!(
        "[server]\nlisten = [\"127.0.0.1:0\"]\nudp-workers = 1\ntcp-workers = 2\n\n[tcp]\n{tcp}"
    )
}

fn addr(server: &tern_server::RunningServer) -> SocketAddr {
    server.local_addrs()[0]
}

#[test]
fn answers_and_advertises_keepalive() {
    let server = start(&config("idle-timeout = \"7s\"\n"));
    let mut stream = tcp_connect(addr(&server));
    let answer = tcp_ask(&mut stream, &query(0x4242, "www.example.com")).unwrap();
    assert_eq!(id_of(&answer), 0x4242);
    let ctx = tcp_ask(&mut stream, &query(1, "ctx")).unwrap();
    assert_eq!(&ctx[12..], format!("tcp {} 70 65535", addr(&server)).as_bytes());
}

#[test]
fn pipelined_queries_in_one_write_are_all_answered() {
    let server = start(&config(""));
    let mut stream = tcp_connect(addr(&server));
    let mut wire = Vec::new();
    for id in 0..200u16 {
        wire.extend(framed(&query(id, &format!("q{id}.example"))));
    }
    stream.write_all(&wire).unwrap();
    let ids: HashSet<u16> = (0..200).map(|_| id_of(&tcp_read(&mut stream).unwrap())).collect();
    assert_eq!(ids.len(), 200, "every ID answered once; order is free (RFC 7766 §7)");
    assert_eq!(server.stats().tcp_queries, 200);
}

#[test]
fn queries_split_at_every_byte_are_reassembled() {
    let server = start(&config(""));
    let mut stream = tcp_connect(addr(&server));
    stream.set_nodelay(true).unwrap();
    let mut wire = framed(&query(1, "split.example"));
    wire.extend(framed(&query(2, "other.example")));
    for byte in &wire {
        stream.write_all(std::slice::from_ref(byte)).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(id_of(&tcp_read(&mut stream).unwrap()), 1);
    assert_eq!(id_of(&tcp_read(&mut stream).unwrap()), 2);
}

#[test]
fn largest_messages_both_ways() {
    let server = start(&config(""));
    let mut stream = tcp_connect(addr(&server));
    let mut q = query(5, "echo.example");
    q.resize(65535, 0);
    assert_eq!(tcp_ask(&mut stream, &q).unwrap().len(), 65535, "65535-byte query echoed");
    assert_eq!(tcp_ask(&mut stream, &query(6, "big")).unwrap().len(), 65535);
}

#[test]
fn idle_connection_is_closed_after_the_idle_timeout() {
    let server = start(&config("idle-timeout = \"300ms\"\n"));
    let mut stream = tcp_connect(addr(&server));
    assert!(tcp_ask(&mut stream, &query(1, "a.example")).is_some());
    let started = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(3)));
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(250) && waited < Duration::from_secs(2), "{waited:?}");
    assert_eq!(server.stats().tcp_closed_idle, 1);
}

/// A connection from `source` (a loopback address) to `server`.
fn connect_from(source: [u8; 4], server: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((source, 0)).into()).unwrap();
    socket.connect(&server.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    stream
}

#[test]
fn connection_limits_total_and_per_client() {
    let server = start(&config("max-connections = 3\nmax-connections-per-client = 2\n"));
    let port = addr(&server).port();
    let from_1 = SocketAddr::from(([127, 0, 0, 1], port));
    let mut a = tcp_connect(from_1);
    let mut b = tcp_connect(from_1);
    assert!(tcp_ask(&mut a, &query(1, "a")).is_some());
    assert!(tcp_ask(&mut b, &query(2, "b")).is_some());
    // Over the per-client cap, a connection is closed as soon as the kernel hands it
    // over: with `defer-accept` (the default) once its query has arrived.
    let mut c = tcp_connect(from_1);
    c.write_all(&framed(&query(3, "c"))).unwrap();
    assert!(closed_within(&mut c, Duration::from_secs(2)), "third from one client is closed");
    // Another client address (127.0.0.2 as source) is still admitted, up to the total.
    let mut d = connect_from([127, 0, 0, 2], from_1);
    assert!(tcp_ask(&mut d, &query(3, "d")).is_some());
    assert_eq!(server.stats().tcp_refused, 1);
    // At the total, a newcomer evicts the idle connection open longest: `a`.
    let mut e = connect_from([127, 0, 0, 3], from_1);
    assert!(tcp_ask(&mut e, &query(5, "e")).is_some(), "room made at the total");
    assert!(closed_within(&mut a, Duration::from_secs(2)), "the oldest idle one evicted");
    assert!(tcp_ask(&mut b, &query(6, "b")).is_some(), "the others are kept");
    assert_eq!(server.tcp_connections(), 3);
    assert_eq!(server.stats().tcp_refused, 1);
    drop(b);
    assert!(eventually(Duration::from_secs(2), || server.tcp_connections() == 2));
    let mut f = tcp_connect(from_1);
    assert!(tcp_ask(&mut f, &query(4, "f")).is_some(), "slot given back on close");
}

#[test]
fn silent_connection_is_handed_over_when_it_speaks() {
    let server = start(&config(""));
    let mut stream = tcp_connect(addr(&server));
    // Connected as far as the client knows; the kernel keeps it until bytes arrive
    // (`defer-accept`), so the server holds nothing for it.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(server.tcp_connections(), 0);
    assert_eq!(server.stats().tcp_accepted, 0);
    assert!(tcp_ask(&mut stream, &query(1, "a.example")).is_some());
    assert_eq!(server.stats().tcp_accepted, 1);
}

#[test]
fn without_defer_accept_a_silent_connection_is_accepted_at_once() {
    let server = start(&config("defer-accept = false\n"));
    let _stream = tcp_connect(addr(&server));
    assert!(eventually(Duration::from_secs(2), || server.tcp_connections() == 1));
}

#[test]
fn connection_is_closed_after_its_query_cap() {
    let server = start(&config("max-queries-per-connection = 3\n"));
    let mut stream = tcp_connect(addr(&server));
    let mut wire = Vec::new();
    for id in 0..5 {
        wire.extend(framed(&query(id, "capped.example")));
    }
    stream.write_all(&wire).unwrap();
    for id in 0..3 {
        assert_eq!(id_of(&tcp_read(&mut stream).unwrap()), id);
    }
    assert!(closed_within(&mut stream, Duration::from_secs(2)));
}

#[test]
fn half_open_query_is_cut_off_after_the_io_timeout() {
    let server = start(&config("idle-timeout = \"30s\"\nio-timeout = \"300ms\"\n"));
    let mut stream = tcp_connect(addr(&server));
    stream.write_all(&[0, 40, 1, 2]).unwrap(); // 4 of 42 bytes, then silence
    let started = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(5)));
    assert!(started.elapsed() < Duration::from_secs(3), "io timeout, not idle timeout");
}

#[test]
fn client_that_never_reads_is_cut_off_and_others_are_served() {
    let server = start(&config("io-timeout = \"500ms\"\n"));
    let slow = tcp_connect(addr(&server));
    slow.set_write_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut slow_w = &slow;
    // Ask for many 64 KiB answers and never read them; bounded at 2000 queries.
    let mut sent = 0;
    for id in 0..2000u16 {
        if slow_w.write_all(&framed(&query(id, "big"))).is_err() {
            break;
        }
        sent += 1;
    }
    assert!(sent > 0);
    let mut other = tcp_connect(addr(&server));
    let started = Instant::now();
    assert!(tcp_ask(&mut other, &query(1, "ok.example")).is_some());
    assert!(started.elapsed() < Duration::from_secs(1), "others are not held up");
    assert!(eventually(Duration::from_secs(5), || server.stats().tcp_closed_slow == 1));
}

#[test]
fn garbage_is_dropped_without_harm() {
    let server = start(&config(""));
    let mut stream = tcp_connect(addr(&server));
    stream.write_all(&framed(&[])).unwrap();
    stream.write_all(&framed(&[0xde, 0xad])).unwrap();
    stream.write_all(&framed(&query(1, "drop"))).unwrap();
    assert_eq!(id_of(&tcp_ask(&mut stream, &query(9, "after.example")).unwrap()), 9);
    let mut noise = tcp_connect(addr(&server));
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let _ = noise.write_all(&bytes);
    drop(noise);
    let mut fresh = tcp_connect(addr(&server));
    assert!(tcp_ask(&mut fresh, &query(10, "x")).is_some());
}

#[test]
fn stop_answers_received_queries_then_closes() {
    let server = start(&config(""));
    let mut stream = tcp_connect(addr(&server));
    assert!(tcp_ask(&mut stream, &query(1, "first")).is_some());
    let mut wire = Vec::new();
    for id in 2..12 {
        wire.extend(framed(&query(id, "pending")));
    }
    stream.write_all(&wire).unwrap();
    let report = server.shutdown();
    let mut answered = 0;
    while tcp_read(&mut stream).is_some() {
        answered += 1;
    }
    assert_eq!(answered, 10, "queries sent before the stop are answered");
    assert_eq!(report.tcp_cut, 0);
    assert!(TcpStream::connect_timeout(&stream.peer_addr().unwrap(), Duration::from_millis(500))
        .is_err());
}

/// Raises this process's open-file limit to `wanted` if it is lower (as far as the hard
/// limit allows) and returns the limit now.
fn raise_fd_limit(wanted: u64) -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY (test): reading and setting our own process's limit with a valid struct.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
    if limit.rlim_cur < wanted {
        limit.rlim_cur = wanted.min(limit.rlim_max);
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    }
    limit.rlim_cur
}

/// A TCP socket bound to `source` that resets when closed: thousands of client ports
/// left in TIME-WAIT would keep other tests from binding a wildcard TCP listener on a
/// port the kernel gave their UDP socket.
fn unlingering(source: SocketAddr) -> Option<socket2::Socket> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).ok()?;
    socket.set_reuse_address(true).ok()?;
    socket.set_linger(Some(Duration::ZERO)).ok()?;
    socket.bind(&source.into()).ok()?;
    Some(socket)
}

/// Slowloris: `count` connections from `source`, each sending one byte a second of a
/// 512-byte query it never finishes; a connection the server closes is opened again.
struct Trickler {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Trickler {
    fn start(source: IpAddr, server: SocketAddr, count: usize) -> Trickler {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut conns: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
            while !stopped.load(Ordering::Relaxed) {
                let round = Instant::now();
                for conn in &mut conns {
                    if conn.as_mut().is_none_or(|c| !Trickler::trickle(c)) {
                        *conn = Trickler::open(source, server);
                    }
                }
                let rest = Duration::from_secs(1).saturating_sub(round.elapsed());
                let until = Instant::now() + rest;
                while Instant::now() < until && !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        Trickler { stop, thread: Some(thread) }
    }

    /// A new connection that has sent the first byte of the length prefix (512).
    fn open(source: IpAddr, server: SocketAddr) -> Option<TcpStream> {
        let socket = unlingering(SocketAddr::new(source, 0))?;
        socket.connect_timeout(&server.into(), Duration::from_millis(500)).ok()?;
        socket.set_nonblocking(true).ok()?;
        let mut stream: TcpStream = socket.into();
        stream.write_all(&[0x02]).ok()?;
        Some(stream)
    }

    /// Sends one more byte; false when the server has closed the connection.
    fn trickle(stream: &mut TcpStream) -> bool {
        match std::io::Read::read(stream, &mut [0u8; 64]) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            _ => return false, // closed, reset, or (never) answered
        }
        stream.write_all(&[0]).is_ok()
    }
}

impl Drop for Trickler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Under 1024 trickling connections from 127.0.0.2, asks from 127.0.0.1 on a fresh
/// connection every 250 ms for 5 s; each must be answered within 3 s. Returns the
/// connection counts seen at each question.
fn answered_throughout_slowloris(server: &tern_server::RunningServer, held: usize) -> Vec<usize> {
    assert!(raise_fd_limit(8192) >= 4096, "needs ~2100 descriptors (both ends in-process)");
    let target = addr(server);
    let _attack = Trickler::start(IpAddr::from([127, 0, 0, 2]), target, 1024);
    let full = eventually(Duration::from_secs(10), || server.tcp_connections() >= held);
    assert!(full, "the attack holds {} connections", server.tcp_connections());
    let mut seen = Vec::new();
    for id in 0..20u16 {
        let asked = Instant::now();
        let socket = unlingering(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        socket.connect_timeout(&target.into(), Duration::from_secs(3)).unwrap();
        let mut stream: TcpStream = socket.into();
        stream.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let answer = tcp_ask(&mut stream, &query(id, "legit.example"));
        let took = asked.elapsed();
        assert_eq!(answer.map(|a| id_of(&a)), Some(id), "question {id} unanswered ({took:?})");
        assert!(took < Duration::from_secs(3), "question {id} took {took:?}");
        seen.push(server.tcp_connections());
        std::thread::sleep(Duration::from_millis(250));
    }
    seen
}

/// With the defaults, the per-client cap keeps 127.0.0.2 to 64 connections and the
/// whole-message deadline cuts each trickled query after 2 s.
#[test]
fn slowloris_from_one_address_does_not_lock_others_out() {
    let server = start(&config(""));
    answered_throughout_slowloris(&server, 64);
    let stats = server.stats();
    assert!(stats.tcp_refused > 1000, "the attacker kept knocking: {stats:?}");
    assert!(stats.tcp_closed_idle >= 64, "trickled queries were cut off: {stats:?}");
}

/// Without a per-client cap and with a deadline longer than the test, the attacker fills
/// every slot: newcomers are still answered, each making room by evicting the slowest.
#[test]
fn slowloris_filling_every_slot_is_evicted_for_newcomers() {
    let tcp = "max-connections-per-client = 0\nio-timeout = \"60s\"\nidle-timeout = \"60s\"\n";
    let server = start(&config(tcp));
    let seen = answered_throughout_slowloris(&server, 1024);
    assert!(seen.iter().all(|&open| open >= 1000), "the attack held the table: {seen:?}");
    assert_eq!(server.stats().tcp_refused, 0, "room was made every time");
}
