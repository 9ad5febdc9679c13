//! The real `ternd` as the secondary of primaries that misbehave, played by a fake
//! primary written here (UDP and TCP on one loopback port): a transfer dripping one
//! record at a time must neither hold up a reload nor run past `max-time-in`; a flood of
//! NOTIFYs must not turn into as many SOA queries and log lines; a catalog listing more
//! members than `catalog-max-members` serves only that many, and is refreshed while
//! its members' transfers hold every transfer slot; a record outside the zone is treated
//! alike in an AXFR and an IXFR.
//!
//! Every fake primary stops when dropped, and every loop here is bounded in count and
//! time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Opcode, Rcode, Rtype};

/// One message of a transfer: sent after `pause`, holding `records` (presentation
/// format, absolute names: `owner ttl TYPE rdata`).
struct Step {
    pause: Duration,
    records: Vec<String>,
}

fn step(pause_ms: u64, records: Vec<String>) -> Step {
    Step { pause: Duration::from_millis(pause_ms), records }
}

/// What a fake primary serves.
trait Script: Send + Sync + 'static {
    /// The serial of `zone` (lower case, final dot), or `None` to answer REFUSED.
    fn serial(&self, zone: &str) -> Option<u32>;
    /// The messages answering an AXFR or IXFR (`ours`: the serial an IXFR asks from).
    fn transfer(&self, zone: &str, qtype: Rtype, ours: Option<u32>) -> Vec<Step>;
}

/// What a fake primary saw.
#[derive(Default)]
struct Seen {
    /// SOA queries per zone.
    soa: HashMap<String, u64>,
    /// Transfers asked, in order: zone and type.
    transfers: Vec<(String, Rtype)>,
    /// Transfers being sent now.
    sending: u32,
    /// Transfers over (sent, or cut off by the secondary): zone and how long they took.
    finished: Vec<(String, Duration)>,
}

/// A primary on a loopback port, answering as its [`Script`] says, until dropped.
struct FakePrimary {
    addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl FakePrimary {
    fn start(script: Arc<dyn Script>) -> FakePrimary {
        let port = free_port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let udp = UdpSocket::bind(addr).unwrap();
        udp.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let tcp = TcpListener::bind(addr).unwrap();
        tcp.set_nonblocking(true).unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let udp_thread = {
            let (script, seen, stop) = (Arc::clone(&script), Arc::clone(&seen), Arc::clone(&stop));
            std::thread::spawn(move || serve_udp(&udp, &*script, &seen, &stop))
        };
        let tcp_thread = {
            let (seen, stop, conns) =
                (Arc::clone(&seen), Arc::clone(&stop), Arc::clone(&connections));
            std::thread::spawn(move || accept_tcp(&tcp, &script, &seen, &stop, &conns))
        };
        FakePrimary { addr, seen, stop, threads: vec![udp_thread, tcp_thread], connections }
    }

    fn soa_queries(&self, zone: &str) -> u64 {
        self.seen.lock().unwrap().soa.get(zone).copied().unwrap_or(0)
    }

    fn transfers(&self) -> Vec<(String, Rtype)> {
        self.seen.lock().unwrap().transfers.clone()
    }

    fn transfers_of(&self, zone: &str) -> usize {
        self.transfers().iter().filter(|(z, _)| z == zone).count()
    }

    fn sending(&self) -> u32 {
        self.seen.lock().unwrap().sending
    }

    /// How long the first transfer of `zone` took, once over.
    fn first_took(&self, zone: &str) -> Option<Duration> {
        let seen = self.seen.lock().unwrap();
        seen.finished.iter().find(|(z, _)| z == zone).map(|(_, took)| *took)
    }
}

impl Drop for FakePrimary {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let connections: Vec<_> = self.connections.lock().unwrap().drain(..).collect();
        for thread in connections {
            let _ = thread.join();
        }
    }
}

/// Answers SOA queries (and anything else REFUSED) until stopped.
fn serve_udp(socket: &UdpSocket, script: &dyn Script, seen: &Mutex<Seen>, stop: &AtomicBool) {
    let mut buf = vec![0u8; 65535];
    while !stop.load(Ordering::SeqCst) {
        let Ok((len, from)) = socket.recv_from(&mut buf) else { continue };
        let Some((id, zone, qtype, _)) = question(&buf[..len]) else { continue };
        if qtype != Rtype::SOA {
            continue;
        }
        *seen.lock().unwrap().soa.entry(zone.clone()).or_default() += 1;
        let answer = match script.serial(&zone) {
            Some(serial) => message(id, &zone, qtype, &[&soa(&zone, serial)], Rcode::NOERROR),
            None => message(id, &zone, qtype, &[], Rcode::REFUSED),
        };
        let _ = socket.send_to(&answer, from);
    }
}

/// Takes TCP connections until stopped; each transfer is sent by a thread of its own.
fn accept_tcp(
    listener: &TcpListener,
    script: &Arc<dyn Script>,
    seen: &Arc<Mutex<Seen>>,
    stop: &Arc<AtomicBool>,
    connections: &Mutex<Vec<JoinHandle<()>>>,
) {
    while !stop.load(Ordering::SeqCst) {
        let Ok((stream, _)) = listener.accept() else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let (script, seen, stop) = (Arc::clone(script), Arc::clone(seen), Arc::clone(stop));
        let thread = std::thread::spawn(move || serve_transfer(stream, &*script, &seen, &stop));
        connections.lock().unwrap().push(thread);
    }
}

/// Reads one AXFR or IXFR request and sends the script's messages, pausing between
/// them (stopped early when the secondary goes away or the primary is stopped).
fn serve_transfer(
    mut stream: TcpStream,
    script: &dyn Script,
    seen: &Mutex<Seen>,
    stop: &AtomicBool,
) {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let Some(request) = tcp_read(&mut stream) else { return };
    let Some((id, zone, qtype, ours)) = question(&request) else { return };
    let started = Instant::now();
    seen.lock().unwrap().transfers.push((zone.clone(), qtype));
    seen.lock().unwrap().sending += 1;
    for step in script.transfer(&zone, qtype, ours) {
        if !pause(step.pause, &mut stream, stop) {
            break;
        }
        let records: Vec<&str> = step.records.iter().map(String::as_str).collect();
        let answer = message(id, &zone, qtype, &records, Rcode::NOERROR);
        if stream.write_all(&framed(&answer)).is_err() {
            break;
        }
    }
    // The secondary closes first once it has all; a transfer cut short ends here too.
    pause(Duration::from_secs(1), &mut stream, stop);
    let mut seen = seen.lock().unwrap();
    seen.sending -= 1;
    seen.finished.push((zone, started.elapsed()));
}

/// Waits `pause`, watching `stream`; false when the secondary closed it or the primary
/// is stopped meanwhile.
fn pause(pause: Duration, stream: &mut TcpStream, stop: &AtomicBool) -> bool {
    let until = Instant::now() + pause;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        stream.set_read_timeout(Some(left.min(Duration::from_millis(20)))).unwrap();
        match stream.read(&mut [0u8; 1]) {
            Ok(0) => return false,
            Err(e)
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            _ => {}
        }
    }
}

/// A request's ID, zone (lower case), type, and the serial of its authority SOA (IXFR).
fn question(message: &[u8]) -> Option<(u16, String, Rtype, Option<u32>)> {
    let mut reader = MessageReader::new(message).ok()?;
    let id = reader.header().id;
    let q = reader.question().ok()??;
    let zone = q.name.to_string().to_ascii_lowercase();
    let mut scratch = vec![0u8; 65535];
    let mut ours = None;
    while let Ok(Some(rr)) = reader.record(&mut scratch) {
        if rr.section == Section::Authority && rr.rtype == Rtype::SOA {
            ours = rdata::to_text(Rtype::SOA, rr.rdata).split_whitespace().nth(2)?.parse().ok();
        }
    }
    Some((id, zone, q.qtype, ours))
}

/// An answer to `id` for `zone`/`qtype` with `records` in its answer section.
fn message(id: u16, zone: &str, qtype: Rtype, records: &[&str], rcode: Rcode) -> Vec<u8> {
    let mut buf = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
    w.set_id(id);
    let mut flags = Flags(0);
    flags.set(Flags::QR, true);
    flags.set(Flags::AA, true);
    w.set_flags(flags);
    w.set_rcode(rcode);
    w.push_question(&zone.parse::<Name>().unwrap(), qtype, Class::IN).unwrap();
    for record in records {
        let mut parts = record.splitn(4, ' ');
        let owner: Name = parts.next().unwrap().parse().unwrap();
        let ttl: u32 = parts.next().unwrap().parse().unwrap();
        let rtype = Rtype::from_mnemonic(parts.next().unwrap().as_bytes()).unwrap();
        let data = rdata::parse_str(rtype, parts.next().unwrap(), None).unwrap();
        w.push_record(Section::Answer, &owner, rtype, Class::IN, ttl, &data).unwrap();
    }
    w.finish().to_vec()
}

/// The SOA record of `zone` at `serial` (refresh 1 hour, retry 2 seconds).
fn soa(zone: &str, serial: u32) -> String {
    format!("{zone} 300 SOA ns.{zone} hostmaster.{zone} {serial} 3600 2 86400 300")
}

/// The apex of a small zone: SOA, NS and the name server's address.
fn apex(zone: &str, serial: u32) -> Vec<String> {
    vec![
        soa(zone, serial),
        format!("{zone} 300 NS ns.{zone}"),
        format!("ns.{zone} 300 A 192.0.2.53"),
    ]
}

/// A whole small zone in one message, between its SOAs.
fn whole(zone: &str, serial: u32, extra: &[String]) -> Vec<Step> {
    let mut records = apex(zone, serial);
    records.extend_from_slice(extra);
    records.push(soa(zone, serial));
    vec![Step { pause: Duration::ZERO, records }]
}

/// A zone sent one record every `every_ms`, `count` records long.
fn dripping(zone: &str, every_ms: u64, count: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = apex(zone, 1)
        .into_iter()
        .map(|r| Step { pause: Duration::ZERO, records: vec![r] })
        .collect();
    for i in 0..count {
        let record = format!("r{i}.{zone} 300 A 192.0.2.{}", i % 250);
        steps.push(Step { pause: Duration::from_millis(every_ms), records: vec![record] });
    }
    steps.push(step(every_ms, vec![soa(zone, 1)]));
    steps
}

/// Writes `ternd.toml` in `dir` (control socket `ctl.sock`, storage `storage`) with
/// `rest` after the `[server]` and `[control]` tables, and starts `ternd`.
fn ternd_with(dir: &Path, rest: &str) -> Daemon {
    let port = free_port();
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[control]\nsocket = \"ctl.sock\"\n{rest}"
    );
    let config = dir.join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.join("ternd.log"))
}

/// `ternctl` with `args` against the server in `dir`, killed after `limit`: its exit
/// status (`None` when killed) and how long it took.
fn ternctl(dir: &Path, args: &[&str], limit: Duration) -> (Option<bool>, Duration) {
    let socket: PathBuf = dir.join("ctl.sock");
    let started = Instant::now();
    let mut child = common::ternctl()
        .arg("--socket")
        .arg(&socket)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return (Some(status.success()), started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, started.elapsed())
}

/// The RCODE and SOA serial `addr` answers for `zone`.
fn served_soa(addr: SocketAddr, zone: &str) -> (Rcode, Option<u32>) {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(9);
    w.push_question(&zone.parse::<Name>().unwrap(), Rtype::SOA, Class::IN).unwrap();
    let query = w.finish().to_vec();
    let Some(answer) = udp_ask(addr, &query) else { return (Rcode::SERVFAIL, None) };
    let mut reader = MessageReader::new(&answer).unwrap();
    let rcode = Rcode::from_parts(reader.header().flags.rcode_bits(), 0);
    let mut scratch = vec![0u8; 65535];
    let mut serial = None;
    while let Ok(Some(rr)) = reader.record(&mut scratch) {
        if rr.section == Section::Answer && rr.rtype == Rtype::SOA {
            serial = rdata::to_text(Rtype::SOA, rr.rdata)
                .split_whitespace()
                .nth(2)
                .and_then(|s| s.parse().ok());
        }
    }
    (rcode, serial)
}

/// A NOTIFY for `zone` with ID `id`.
fn notify(id: u16, zone: &str) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(id);
    let mut flags = Flags(0);
    flags.set_opcode(Opcode::NOTIFY);
    flags.set(Flags::AA, true);
    w.set_flags(flags);
    w.push_question(&zone.parse::<Name>().unwrap(), Rtype::SOA, Class::IN).unwrap();
    w.finish().to_vec()
}

fn remote(primary: &FakePrimary) -> String {
    format!("[[remote]]\nid = \"p\"\naddress = \"{}\"\n", primary.addr)
}

fn secondary(zone: &str) -> String {
    format!("[[zone]]\nname = \"{zone}\"\nprimary = \"p\"\n")
}

/// `zone` as a consumed catalog of `p`.
fn consumer(zone: &str) -> String {
    format!("{}catalog-role = \"consumer\"\n", secondary(zone))
}

fn lines_with(text: &str, what: &str) -> usize {
    text.lines().filter(|l| l.contains(what)).count()
}

/// Serves `slow.test` one record every so many milliseconds (and `stall.test` not past
/// its first record).
struct Slow(u64);

impl Script for Slow {
    fn serial(&self, zone: &str) -> Option<u32> {
        matches!(zone, "slow.test." | "stall.test.").then_some(1)
    }

    fn transfer(&self, zone: &str, _: Rtype, _: Option<u32>) -> Vec<Step> {
        match zone {
            "slow.test." => dripping(zone, self.0, 30),
            "stall.test." => vec![step(0, vec![soa(zone, 1)]), step(30_000, vec![soa(zone, 1)])],
            _ => Vec::new(),
        }
    }
}

#[test]
fn a_reload_does_not_wait_for_a_slow_transfer() {
    let dir = tempfile::tempdir().unwrap();
    let primary = FakePrimary::start(Arc::new(Slow(1000)));
    let daemon = ternd_with(dir.path(), &format!("{}{}", remote(&primary), secondary("slow.test")));
    let started = eventually(Duration::from_secs(5), || primary.sending() > 0);
    assert!(started, "no transfer started: {}", daemon.log_text());
    std::thread::sleep(Duration::from_millis(300));
    let (status, took) = ternctl(dir.path(), &["reload"], Duration::from_secs(5));
    assert_eq!(status, Some(true), "ternctl reload: {}", daemon.log_text());
    assert!(took < Duration::from_millis(1500), "the reload took {took:?}");
    assert!(primary.sending() > 0, "the transfer was not running any more");
    assert_eq!(primary.transfers_of("slow.test."), 1, "the transfer was started again");
}

#[test]
fn a_transfer_past_max_time_in_or_idle_timeout_in_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let primary = FakePrimary::start(Arc::new(Slow(300)));
    let transfer = "[transfer]\nmax-time-in = \"2s\"\nidle-timeout-in = \"1s\"\n";
    let zones = format!("{}{}", secondary("slow.test"), secondary("stall.test"));
    let daemon = ternd_with(dir.path(), &format!("{transfer}{}{zones}", remote(&primary)));
    let cut = eventually(Duration::from_secs(6), || {
        primary.first_took("slow.test.").is_some() && primary.first_took("stall.test.").is_some()
    });
    assert!(cut, "not cut: {}", daemon.log_text());
    let slow = primary.first_took("slow.test.").unwrap();
    let stall = primary.first_took("stall.test.").unwrap();
    assert!(slow > Duration::from_millis(1800) && slow < Duration::from_millis(3500), "{slow:?}");
    assert!(stall > Duration::from_millis(800) && stall < Duration::from_millis(2500), "{stall:?}");
    let logged = eventually(Duration::from_secs(2), || {
        let log = daemon.log_text();
        log.contains("took longer than `[transfer] max-time-in` (2s)")
            && log.contains("sent nothing for `[transfer] idle-timeout-in` (1s)")
    });
    assert!(logged, "{}", daemon.log_text());
    assert_eq!(served_soa(daemon.addr, "slow.test").0, Rcode::SERVFAIL);
}

/// Serves `flood.test` at once.
struct Quick;

impl Script for Quick {
    fn serial(&self, zone: &str) -> Option<u32> {
        (zone == "flood.test.").then_some(1)
    }

    fn transfer(&self, zone: &str, _: Rtype, _: Option<u32>) -> Vec<Step> {
        whole(zone, 1, &[])
    }
}

#[test]
fn a_flood_of_notifies_is_merged() {
    let dir = tempfile::tempdir().unwrap();
    let primary = FakePrimary::start(Arc::new(Quick));
    let daemon =
        ternd_with(dir.path(), &format!("{}{}", remote(&primary), secondary("flood.test")));
    let loaded =
        eventually(Duration::from_secs(5), || served_soa(daemon.addr, "flood.test").1 == Some(1));
    assert!(loaded, "{}", daemon.log_text());
    std::thread::sleep(Duration::from_millis(1100)); // past the refresh that loaded it
    let before = primary.soa_queries("flood.test.");
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let flood = Instant::now();
    for id in 0..3000u16 {
        socket.send_to(&notify(id, "flood.test"), daemon.addr).unwrap();
    }
    let sent_in = flood.elapsed();
    std::thread::sleep(Duration::from_millis(2500));
    let queries = primary.soa_queries("flood.test.") - before;
    let log = daemon.log_text();
    let logged = lines_with(&log, "NOTIFY received");
    assert!((1..=4).contains(&queries), "{queries} SOA queries for 3000 NOTIFYs in {sent_in:?}");
    assert!((1..=3).contains(&logged), "{logged} log lines for 3000 NOTIFYs in {sent_in:?}");
    let counted: u64 = log
        .lines()
        .filter(|l| l.contains("NOTIFY received"))
        .filter_map(|l| l.split("merged=").nth(1)?.split_whitespace().next()?.parse::<u64>().ok())
        .map(|merged| merged + 1)
        .sum();
    let merged = counted > logged as u64 && counted <= 3000;
    assert!(merged, "{counted} NOTIFYs counted in {logged} lines: {log}");
    assert_eq!(served_soa(daemon.addr, "flood.test"), (Rcode::NOERROR, Some(1)));
}

/// `out.test` at serial 1 (by AXFR) and 2 (by IXFR from 1, or AXFR), each with a record
/// outside the zone.
struct Outside {
    serial: AtomicU32,
}

impl Script for Outside {
    fn serial(&self, zone: &str) -> Option<u32> {
        (zone == "out.test.").then(|| self.serial.load(Ordering::SeqCst))
    }

    fn transfer(&self, zone: &str, qtype: Rtype, ours: Option<u32>) -> Vec<Step> {
        let serial = self.serial.load(Ordering::SeqCst);
        let stray = format!("stray{serial}.elsewhere.test. 300 A 192.0.2.99");
        let www = format!("www.{zone} 300 A 192.0.2.1");
        match (qtype, ours) {
            (Rtype::IXFR, Some(1)) if serial == 2 => vec![Step {
                pause: Duration::ZERO,
                records: vec![soa(zone, 2), soa(zone, 1), soa(zone, 2), www, stray, soa(zone, 2)],
            }],
            _ if serial == 1 => whole(zone, 1, &[stray]),
            _ => whole(zone, serial, &[www, stray]),
        }
    }
}

#[test]
fn a_record_outside_the_zone_is_treated_alike_in_axfr_and_ixfr() {
    let dir = tempfile::tempdir().unwrap();
    let script = Arc::new(Outside { serial: AtomicU32::new(1) });
    let primary = FakePrimary::start(Arc::clone(&script) as Arc<dyn Script>);
    let daemon = ternd_with(dir.path(), &format!("{}{}", remote(&primary), secondary("out.test")));
    let first =
        eventually(Duration::from_secs(5), || served_soa(daemon.addr, "out.test").1 == Some(1));
    assert!(first, "{}", daemon.log_text());
    script.serial.store(2, Ordering::SeqCst);
    let (status, _) = ternctl(dir.path(), &["zone-refresh", "out.test"], Duration::from_secs(5));
    assert_eq!(status, Some(true), "{}", daemon.log_text());
    assert_eq!(served_soa(daemon.addr, "out.test"), (Rcode::NOERROR, Some(2)));
    let log = daemon.log_text();
    let kinds: Vec<Rtype> = primary.transfers().into_iter().map(|(_, t)| t).collect();
    assert_eq!(kinds, [Rtype::AXFR, Rtype::IXFR], "{log}");
    for (serial, kind) in [(1, "AXFR"), (2, "IXFR")] {
        let warned = log.lines().any(|l| {
            l.contains("outside the zone") && l.contains(&format!("stray{serial}.elsewhere.test."))
        });
        assert!(warned, "the {kind}'s record outside the zone is not logged: {log}");
    }
}

/// The catalog `cat.test` (serial from `serial`, listing `members` zones
/// `mN.members.test`, the last `more` of them only from serial 2) and its members,
/// served at once, or one record a second when `slow_members`.
struct Catalog {
    serial: AtomicU32,
    members: usize,
    more: usize,
    slow_members: bool,
}

impl Catalog {
    fn listed(&self, serial: u32) -> usize {
        if serial >= 2 {
            self.members
        } else {
            self.members - self.more
        }
    }
}

impl Script for Catalog {
    fn serial(&self, zone: &str) -> Option<u32> {
        match zone {
            "cat.test." => Some(self.serial.load(Ordering::SeqCst)),
            _ if zone.ends_with(".members.test.") => Some(1),
            _ => None,
        }
    }

    fn transfer(&self, zone: &str, _: Rtype, _: Option<u32>) -> Vec<Step> {
        if zone != "cat.test." {
            return if self.slow_members { dripping(zone, 1000, 30) } else { whole(zone, 1, &[]) };
        }
        let serial = self.serial.load(Ordering::SeqCst);
        let mut records = vec![
            soa(zone, serial),
            format!("{zone} 0 NS invalid."),
            format!("version.{zone} 0 TXT \"2\""),
        ];
        for n in 0..self.listed(serial) {
            records.push(format!("m{n}.zones.{zone} 0 PTR m{n}.members.test."));
        }
        records.push(soa(zone, serial));
        vec![Step { pause: Duration::ZERO, records }]
    }
}

#[test]
fn a_catalog_serves_at_most_catalog_max_members() {
    let dir = tempfile::tempdir().unwrap();
    let script = Catalog { serial: AtomicU32::new(1), members: 25, more: 0, slow_members: false };
    let primary = FakePrimary::start(Arc::new(script));
    let catalog = format!("{}catalog-max-members = 10\n", consumer("cat.test"));
    let daemon = ternd_with(dir.path(), &format!("{}{catalog}", remote(&primary)));
    let served = |daemon: &Daemon| {
        (0..25)
            .filter(|n| served_soa(daemon.addr, &format!("m{n}.members.test")).0 == Rcode::NOERROR)
            .count()
    };
    let ten = eventually(Duration::from_secs(8), || served(&daemon) == 10);
    assert!(ten, "{} members served: {}", served(&daemon), daemon.log_text());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(served(&daemon), 10);
    let log = daemon.log_text();
    let said = log.lines().filter(|l| l.contains("catalog-max-members")).collect::<Vec<_>>();
    assert_eq!(said.len(), 1, "{log}");
    assert!(said[0].contains("25") && said[0].contains("15"), "{}", said[0]);
}

#[test]
fn a_catalog_is_refreshed_while_its_members_hold_every_transfer_slot() {
    let dir = tempfile::tempdir().unwrap();
    let script =
        Arc::new(Catalog { serial: AtomicU32::new(1), members: 4, more: 1, slow_members: true });
    let primary = FakePrimary::start(Arc::clone(&script) as Arc<dyn Script>);
    let rest =
        format!("[transfer]\nmax-incoming = 1\n{}{}", remote(&primary), consumer("cat.test"));
    let daemon = ternd_with(dir.path(), &rest);
    let busy = eventually(Duration::from_secs(5), || {
        primary.transfers().iter().any(|(zone, _)| zone.ends_with(".members.test."))
    });
    assert!(busy, "no member transfer: {}", daemon.log_text());
    script.serial.store(2, Ordering::SeqCst);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.send_to(&notify(1, "cat.test"), daemon.addr).unwrap();
    let refreshed =
        eventually(Duration::from_secs(4), || served_soa(daemon.addr, "cat.test").1 == Some(2));
    assert!(refreshed, "the catalog waited behind its members: {}", daemon.log_text());
}
