//! Response rate limiting and DNS cookies on the real `ternd` binary, over loopback
//! (127.0.0.0/8 gives plenty of source addresses): a flood from many addresses of one
//! prefix is cut to the configured rate with the configured share slipped, while an
//! honest prefix is answered throughout; a client with a valid cookie is never limited;
//! `require-cookie` sends a limited client back with a cookie; `log-only` sends
//! everything and logs the prefix once, not per packet; and secrets rotated by
//! configuration keep a client's cookie good.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use tern_wire::edns::{Cookie, CookieStatus, OptionCode, ServerSecret};
use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::{Class, Name, Rcode, Rtype};

const ZONE: &str = "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n\
                    @ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n";
const SECRET_A: &str = "e5e973e5a6b2a43f48e7dc849e37bfcf";
const SECRET_B: &str = "445536bcd2513298075a5d379663c962";
const CLIENT_COOKIE: [u8; 8] = [0x24, 0x64, 0xc4, 0xab, 0xcf, 0x10, 0xc9, 0x57];

/// Starts `ternd` serving the zone from `dir` on `port` with `extra` configuration.
fn start(dir: &Path, port: u16, workers: usize, extra: &str) -> Daemon {
    std::fs::write(dir.join("example.com.zone"), ZONE).unwrap();
    let config = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = {workers}\ntcp-workers = 1\n\
         storage = \"{}\"\n{extra}\n[[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\n",
        dir.join("storage").display()
    );
    std::fs::write(dir.join("ternd.toml"), config).unwrap();
    let conf = dir.join("ternd.toml");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    Daemon::spawn(&["--config", conf.to_str().unwrap()], addr, &dir.join("log"))
}

/// A UDP socket at `ip` (any port), not blocking.
fn source(ip: &str) -> UdpSocket {
    let socket = UdpSocket::bind((ip.parse::<IpAddr>().unwrap(), 0)).unwrap();
    socket.set_nonblocking(true).unwrap();
    socket
}

/// `www.example.com. A` with EDNS and, when given, a COOKIE option.
fn www(id: u16, cookie: Option<&[u8]>) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(id);
    w.push_question(&"www.example.com.".parse::<Name>().unwrap(), Rtype::A, Class::IN).unwrap();
    let mut opt = w.push_opt(1232, 0, 0).unwrap();
    if let Some(data) = cookie {
        opt.option(OptionCode::COOKIE, data).unwrap();
    }
    w.finish().to_vec()
}

/// What an answer was.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reply {
    id: u16,
    rcode: Rcode,
    truncated: bool,
    answers: u16,
    cookie: Option<Vec<u8>>,
}

impl Reply {
    /// A whole answer: NOERROR with the address, not truncated.
    fn is_full(&self) -> bool {
        self.rcode == Rcode::NOERROR && !self.truncated && self.answers == 1
    }
}

fn reply(message: &[u8]) -> Reply {
    let mut reader = MessageReader::new(message).unwrap();
    let header = *reader.header();
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    while reader.record(&mut scratch).unwrap().is_some() {}
    let edns = reader.edns().copied();
    Reply {
        id: header.id,
        rcode: edns
            .map_or(Rcode::from(u16::from(header.flags.rcode_bits())), |e| e.rcode(header.flags)),
        truncated: header.flags.has(Flags::TC),
        answers: header.count(Section::Answer),
        cookie: edns.and_then(|e| e.option(OptionCode::COOKIE)).map(|o| o.data.to_vec()),
    }
}

/// Every answer waiting on `socket`.
fn drain(socket: &UdpSocket) -> Vec<Reply> {
    let mut buf = [0u8; 4096];
    let mut out = Vec::new();
    while let Ok((len, _)) = socket.recv_from(&mut buf) {
        out.push(reply(&buf[..len]));
    }
    out
}

/// Sends one query from `socket` and waits up to half a second for its answer.
fn ask(socket: &UdpSocket, server: SocketAddr, query: &[u8]) -> Option<Reply> {
    socket.send_to(query, server).unwrap();
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if let Some(r) = drain(socket).pop() {
            return Some(r);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

/// Sends `per_second` queries a second for `seconds` from `sources` in turn (query `i`
/// has ID `i`), calling `each(i)` after each; returns when each was sent and the
/// answers that came back.
fn flood(
    server: SocketAddr,
    sources: &[UdpSocket],
    per_second: u32,
    seconds: u32,
    mut each: impl FnMut(u32),
) -> (Vec<Duration>, Vec<Reply>) {
    let step = Duration::from_secs(1) / per_second;
    let start = Instant::now();
    let (mut sent, mut replies) = (Vec::new(), Vec::new());
    for i in 0..per_second * seconds {
        let due = start + step * i;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let socket = &sources[i as usize % sources.len()];
        sent.push(start.elapsed());
        socket.send_to(&www(i as u16, None), server).unwrap();
        each(i);
        if i % 16 == 0 {
            sources.iter().for_each(|s| replies.extend(drain(s)));
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    sources.iter().for_each(|s| replies.extend(drain(s)));
    (sent, replies)
}

fn flooders(count: u8) -> Vec<UdpSocket> {
    (1..=count).map(|n| source(&format!("127.0.1.{n}"))).collect()
}

fn within(value: f64, expected: f64, share: f64) -> bool {
    (value - expected).abs() <= expected * share
}

/// The first check: 5× the rate from 16 addresses of one /24, on two workers
/// sharing the table, is cut to the rate within ±10% once the burst is spent, half the
/// limited answers slip as TC=1 (slip 2), and a client of another /24 gets every answer.
#[test]
fn a_flood_is_cut_to_the_rate_and_another_prefix_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start(dir.path(), free_port(), 2, "[rrl]\nrate = 40\nwindow = \"1s\"\nslip = 2\n");
    let honest = source("127.0.2.1");
    let mut honest_replies = Vec::new();
    let mut honest_sent = 0;
    let (sent, replies) = flood(daemon.addr, &flooders(16), 200, 5, |i| {
        if i % 20 == 0 {
            honest.send_to(&www(i as u16, None), daemon.addr).unwrap();
            honest_sent += 1;
        }
        honest_replies.extend(drain(&honest));
    });
    std::thread::sleep(Duration::from_millis(200));
    honest_replies.extend(drain(&honest));
    assert_eq!(honest_replies.len(), honest_sent, "every honest query answered");
    assert!(honest_replies.iter().all(Reply::is_full), "{honest_replies:?}");

    // After the first second (the burst of rate × window), the rate.
    let late = |r: &&Reply| sent[usize::from(r.id)] >= Duration::from_secs(1);
    let asked = sent.iter().filter(|t| **t >= Duration::from_secs(1)).count() as f64;
    let full = replies.iter().filter(late).filter(|r| r.is_full()).count() as f64;
    let slipped = replies.iter().filter(late).filter(|r| r.truncated).count() as f64;
    assert!(within(full, 40.0 * 4.0, 0.10), "{full} answers in 4 s at 40/s");
    let limited = asked - full;
    assert!(within(slipped, limited / 2.0, 0.10), "{slipped} slipped of {limited} limited");
    let tc = replies.iter().find(|r| r.truncated).unwrap();
    assert_eq!((tc.rcode, tc.answers), (Rcode::NOERROR, 0), "a slip is TC=1 and empty");
    // The prefix is logged once (the flood lasted less than a log interval).
    let logged =
        eventually(Duration::from_secs(5), || daemon.log_text().contains("rate limiting started"));
    assert!(logged, "{}", daemon.log_text());
    let log = daemon.log_text();
    assert_eq!(log.matches("rate limiting started").count(), 1, "{log}");
    assert!(log.contains("127.0.1.0/24"), "{log}");
    assert!(!log.contains("127.0.2.0/24"), "{log}");
}

/// A client whose query shows a valid server cookie is at the address it claims: not
/// limited, even from a flooded prefix; one with a cookie the server did not make is.
#[test]
fn a_valid_cookie_is_not_limited() {
    let dir = tempfile::tempdir().unwrap();
    let extra = format!("[rrl]\nrate = 10\nslip = 0\n[cookies]\nsecret = \"{SECRET_A}\"\n");
    let daemon = start(dir.path(), free_port(), 1, &extra);
    let with_cookie = source("127.0.1.200");
    let first = ask(&with_cookie, daemon.addr, &www(1, Some(&CLIENT_COOKIE))).unwrap();
    assert!(first.is_full());
    let cookie = first.cookie.unwrap();
    assert_eq!(cookie.len(), 24, "client cookie + RFC 9018 server cookie");
    let forged = {
        let mut c = cookie.clone();
        c[23] ^= 0xff;
        c
    };
    let without = source("127.0.1.201");
    let (mut valid, mut invalid) = (Vec::new(), Vec::new());
    let (_, flood_replies) = flood(daemon.addr, &flooders(8), 100, 3, |i| {
        if i % 10 == 5 {
            with_cookie.send_to(&www(i as u16, Some(&cookie)), daemon.addr).unwrap();
            without.send_to(&www(i as u16, Some(&forged)), daemon.addr).unwrap();
        }
        valid.extend(drain(&with_cookie));
        invalid.extend(drain(&without));
    });
    std::thread::sleep(Duration::from_millis(200));
    valid.extend(drain(&with_cookie));
    invalid.extend(drain(&without));
    assert_eq!(valid.len(), 30, "every query with the valid cookie answered");
    assert!(valid.iter().all(Reply::is_full));
    assert!(valid.iter().all(|r| r.cookie.as_deref() == Some(&cookie[..])), "echoed while fresh");
    assert!(invalid.len() <= 3, "a forged cookie is limited: {}", invalid.len());
    let full = flood_replies.iter().filter(|r| r.is_full()).count();
    assert!(full <= 10 + 3 * 10 + 2, "the flood itself is limited: {full}");
}

/// `require-cookie`: a limited client that sent a client cookie is told BADCOOKIE with a
/// server cookie (as Knot DNS answers), comes back with it, and is answered; a client
/// without a cookie in the same prefix is sent to TCP.
#[test]
fn require_cookie_sends_a_limited_client_back_with_a_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        "[rrl]\nrate = 5\nslip = 1\nrequire-cookie = true\n[cookies]\nsecret = \"{SECRET_A}\"\n"
    );
    let daemon = start(dir.path(), free_port(), 1, &extra);
    let client = source("127.0.1.1");
    let replies: Vec<Reply> = (0..20)
        .map(|i| ask(&client, daemon.addr, &www(i, Some(&CLIENT_COOKIE))).unwrap())
        .collect();
    let full = replies.iter().filter(|r| r.is_full()).count();
    let bad: Vec<&Reply> = replies.iter().filter(|r| r.rcode == Rcode::BADCOOKIE).collect();
    assert!((5..=6).contains(&full), "the burst: {full}");
    assert_eq!(full + bad.len(), 20, "the rest BADCOOKIE: {replies:?}");
    assert!(bad.iter().all(|r| r.answers == 0 && !r.truncated));
    let server_cookie = bad[0].cookie.clone().unwrap();
    let parsed = Cookie::parse(&server_cookie).unwrap();
    let secret = ServerSecret::new(hex16(SECRET_A));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let ip: IpAddr = "127.0.1.1".parse().unwrap();
    assert_eq!(secret.check(&parsed, ip, now as u32), CookieStatus::Valid);
    for i in 0..20 {
        let again = ask(&client, daemon.addr, &www(100 + i, Some(&server_cookie))).unwrap();
        assert!(again.is_full(), "with the cookie: {again:?}");
    }
    let plain = source("127.0.1.2");
    let sent_to_tcp = ask(&plain, daemon.addr, &www(7, None)).unwrap();
    assert!(sent_to_tcp.truncated && sent_to_tcp.cookie.is_none(), "{sent_to_tcp:?}");
}

/// `log-only`: every answer goes out; the prefix is logged once as it starts, and the
/// limited answers are counted, handed over even when queries stop.
#[test]
fn log_only_sends_everything_and_logs_the_prefix_once() {
    let dir = tempfile::tempdir().unwrap();
    let extra =
        "[rrl]\nrate = 5\nlog-only = true\nlog-interval = \"2s\"\n[log]\nlevel = \"info\"\n";
    let daemon = start(dir.path(), free_port(), 1, extra);
    let (_, replies) = flood(daemon.addr, &flooders(4), 200, 1, |_| {});
    assert_eq!(replies.len(), 200);
    assert!(replies.iter().all(Reply::is_full));
    // 200 offered over a second; the burst of 5 and one per 200 ms pass. The last
    // totals line (one per log interval while they grow) has them all.
    let counted = || {
        let log = daemon.log_text();
        let totals = log.lines().rfind(|l| l.contains("rate limiting totals"))?;
        let after = totals.split("logged_only=").nth(1)?;
        after.split(' ').next()?.parse::<u64>().ok()
    };
    let all = eventually(Duration::from_secs(8), || counted().is_some_and(|n| n >= 188));
    let ended =
        eventually(Duration::from_secs(8), || daemon.log_text().contains("rate limiting ended"));
    let log = daemon.log_text();
    assert!(all && ended, "{log}");
    assert!(counted().is_some_and(|n| n <= 192), "{log}");
    assert_eq!(log.matches("rate limiting started").count(), 1, "{log}");
    assert!(
        log.contains("prefix=\"127.0.1.0/24\"") || log.contains("prefix=127.0.1.0/24"),
        "{log}"
    );
}

fn hex16(text: &str) -> [u8; 16] {
    let mut key = [0u8; 16];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap();
    }
    key
}

/// Secrets rotated by configuration (a new secret first, the old one still accepted,
/// then the old one gone) never break a client that follows the cookies it is given.
/// Validity shows in rate limiting: with a rate of 1 and nothing slipped, only a valid
/// cookie gets more than one answer in a row.
#[test]
fn secret_rotation_does_not_break_a_client() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let keys = dir.path().join("cookie.keys");
    let extra = "[rrl]\nrate = 1\nslip = 0\n[cookies]\nsecret-file = \"cookie.keys\"\n";
    let client = source("127.0.1.1");
    let ip: IpAddr = "127.0.1.1".parse().unwrap();
    // All sent at once, so that the rate cannot refill the limit meanwhile.
    let answered = |daemon: &Daemon, cookie: &[u8], count: u16| -> Vec<Reply> {
        for i in 0..count {
            client.send_to(&www(i, Some(cookie)), daemon.addr).unwrap();
        }
        std::thread::sleep(Duration::from_millis(300));
        let mut replies = drain(&client);
        replies.sort_by_key(|r| r.id);
        replies
    };
    let valid_under = |secret: &str, cookie: &[u8]| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        let parsed = Cookie::parse(cookie).unwrap();
        ServerSecret::new(hex16(secret)).check(&parsed, ip, now.as_secs() as u32)
            == CookieStatus::Valid
    };

    std::fs::write(&keys, format!("{SECRET_A}\n")).unwrap();
    let daemon = start(dir.path(), port, 1, extra);
    let cookie_a = answered(&daemon, &CLIENT_COOKIE, 1)[0].cookie.clone().unwrap();
    assert!(valid_under(SECRET_A, &cookie_a));
    assert_eq!(answered(&daemon, &cookie_a, 5).len(), 5);
    drop(daemon);

    // B makes cookies, A is still accepted: the client's A cookie is good, and it is
    // given a B cookie.
    std::fs::write(&keys, format!("{SECRET_B}\n{SECRET_A}\n")).unwrap();
    let daemon = start(dir.path(), port, 1, extra);
    let replies = answered(&daemon, &cookie_a, 5);
    assert_eq!(replies.len(), 5, "the old secret's cookie is still valid");
    let cookie_b = replies[4].cookie.clone().unwrap();
    assert!(valid_under(SECRET_B, &cookie_b));
    assert_eq!(answered(&daemon, &cookie_b, 5).len(), 5);
    drop(daemon);

    // A is gone: the B cookie is good, the A cookie is not (limited after one answer).
    std::fs::write(&keys, format!("{SECRET_B}\n")).unwrap();
    let daemon = start(dir.path(), port, 1, extra);
    assert_eq!(answered(&daemon, &cookie_b, 5).len(), 5);
    assert!(answered(&daemon, &cookie_a, 5).len() <= 1);
}
