//! The real `ternd` binary serving zones: answers come from the zone files, SIGHUP picks
//! up a changed zone under continuous load with every answer taken wholly from one
//! version, and a broken zone file keeps the previous contents in service.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use tern_wire::message::{CompressionTable, MessageReader, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Rtype};

/// A query for `name`/`rtype` with EDNS.
fn ask_query(id: u16, name: &str, rtype: Rtype) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(id);
    w.push_question(&name.parse::<Name>().unwrap(), rtype, Class::IN).unwrap();
    w.push_opt(1232, 0, 0).unwrap();
    w.finish().to_vec()
}

/// `RCODE an: rr; rr` with answer records as text (TTLs left out).
fn summary(message: &[u8]) -> String {
    let mut reader = MessageReader::new(message).unwrap();
    let rcode = reader.header().flags.rcode_bits();
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    let mut answers = Vec::new();
    while let Some(rr) = reader.record(&mut scratch).unwrap() {
        if rr.section == Section::Answer {
            answers.push(format!(
                "{} {} {}",
                rr.owner,
                rr.rtype,
                rdata::to_text(rr.rtype, rr.rdata)
            ));
        }
    }
    format!("{} an: {}", tern_wire::Rcode::from(u16::from(rcode)), answers.join("; "))
}

fn udp(addr: SocketAddr, name: &str, rtype: Rtype) -> String {
    let answer = udp_ask(addr, &ask_query(7, name, rtype)).expect("no answer");
    summary(&answer)
}

const APEX: &str = "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster SERIAL 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\n";

/// Zone version `v`: `load` is a CNAME to `aV`, which has address 192.0.2.V, plus
/// `filler` records to make loading take a while.
fn zone_text(v: u32, filler: usize) -> String {
    let mut text = APEX.replace("SERIAL", &v.to_string());
    text.push_str(&format!("load CNAME a{v}\na{v} A 192.0.2.{v}\n"));
    for i in 0..filler {
        text.push_str(&format!("f{i} A 198.51.100.{}\n", i % 250));
    }
    text
}

fn start(dir: &Path, zone: &str) -> Daemon {
    std::fs::write(dir.join("example.com.zone"), zone).unwrap();
    let (args, addr) = configure(dir);
    Daemon::spawn(&args.iter().map(String::as_str).collect::<Vec<_>>(), addr, &dir.join("log"))
}

/// Writes `ternd.toml` serving `example.com.zone` from `dir`; returns the arguments that
/// run it and the address it listens on.
fn configure(dir: &Path) -> (Vec<String>, SocketAddr) {
    let port = free_port();
    let config = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\n"
    );
    std::fs::write(dir.join("ternd.toml"), config).unwrap();
    let conf = dir.join("ternd.toml").to_str().unwrap().to_owned();
    (vec!["--config".to_owned(), conf], SocketAddr::from(([127, 0, 0, 1], port)))
}

#[test]
fn answers_come_from_the_zone_file() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start(dir.path(), &zone_text(1, 0));
    assert_eq!(
        udp(daemon.addr, "load.example.com.", Rtype::A),
        "NOERROR an: load.example.com. CNAME a1.example.com.; a1.example.com. A 192.0.2.1"
    );
    assert_eq!(udp(daemon.addr, "nothing.example.com.", Rtype::A), "NXDOMAIN an: ");
    assert_eq!(udp(daemon.addr, "example.org.", Rtype::A), "REFUSED an: ");
    let mut stream = tcp_connect(daemon.addr);
    let answer = tcp_ask(&mut stream, &ask_query(9, "ns1.example.com.", Rtype::A)).unwrap();
    assert_eq!(summary(&answer), "NOERROR an: ns1.example.com. A 192.0.2.53");
}

#[test]
fn a_zone_not_loaded_answers_servfail_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The zone file is a pipe, which is not read (only regular files are: a FIFO would
    // block the load, a device feed it forever): the zone is configured, not loaded.
    let fifo = dir.path().join("example.com.zone");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY (test): mkfifo reads the NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let (args, addr) = configure(dir.path());
    // A second zone that loads: a server whose only zone failed would not start.
    let config = dir.path().join("ternd.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let net = APEX.replace("SERIAL", "1").replace("example.com.", "example.net.");
    std::fs::write(dir.path().join("example.net.zone"), net).unwrap();
    let other = "[[zone]]\nname = \"example.net\"\nfile = \"example.net.zone\"\n";
    std::fs::write(&config, format!("{text}{other}")).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let daemon = Daemon::spawn_answering(&args, addr, &dir.path().join("log"));
    assert!(eventually(Duration::from_secs(10), || daemon.log_text().contains("load done")));
    assert!(daemon.log_text().contains("example.com.zone: not a regular file (a FIFO)"));
    // Configured but not loaded: SERVFAIL (a resolver tries again or elsewhere), where
    // REFUSED would say this server is not authoritative for the zone at all.
    assert_eq!(udp(daemon.addr, "load.example.com.", Rtype::A), "SERVFAIL an: ");
    assert_eq!(udp(daemon.addr, "example.org.", Rtype::A), "REFUSED an: ");
    // A regular file in its place loads on SIGHUP.
    std::fs::remove_file(&fifo).unwrap();
    std::fs::write(&fifo, zone_text(1, 0)).unwrap();
    daemon.signal(libc::SIGHUP);
    let v1 = "NOERROR an: load.example.com. CNAME a1.example.com.; a1.example.com. A 192.0.2.1";
    assert!(eventually(Duration::from_secs(10), || udp(
        daemon.addr,
        "load.example.com.",
        Rtype::A
    ) == v1));
    // `$INCLUDE /dev/zero` is refused at once on reload (it used to take gigabytes of
    // memory in seconds), and the zone keeps its contents.
    std::fs::write(&fifo, zone_text(2, 0) + "$INCLUDE /dev/zero\n").unwrap();
    daemon.signal(libc::SIGHUP);
    let refused = "example.com.zone:8:10: cannot read '/dev/zero': not a regular file";
    assert!(eventually(Duration::from_secs(10), || daemon.log_text().contains(refused)));
    assert_eq!(udp(daemon.addr, "load.example.com.", Rtype::A), v1);
}

/// Asks `load.example.com A` until stopped; counts each distinct answer.
fn watch(
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<BTreeMap<String, u32>> {
    std::thread::spawn(move || {
        let socket = udp_client();
        socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        let mut buf = [0u8; 1500];
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut id = 0u16;
        // Bounded by time, not by count: a slow (debug, loaded) build may load version 2
        // after more queries than a count would allow.
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            id = id.wrapping_add(1);
            socket.send_to(&ask_query(id, "load.example.com.", Rtype::A), addr).unwrap();
            let text = match socket.recv_from(&mut buf) {
                Ok((len, _)) if id_of(&buf[..len]) == id => summary(&buf[..len]),
                Ok(_) => "wrong id".to_string(),
                Err(_) => "timeout".to_string(),
            };
            *seen.entry(text).or_default() += 1;
        }
        seen
    })
}

#[test]
fn sighup_swaps_a_changed_zone_whole_and_keeps_it_when_the_next_is_broken() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = start(dir.path(), &zone_text(1, 0));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch(daemon.addr, Arc::clone(&stop));
    std::thread::sleep(Duration::from_millis(200));
    // Version 2 is big enough that loading it takes a noticeable time under load.
    std::fs::write(dir.path().join("example.com.zone"), zone_text(2, 200_000)).unwrap();
    daemon.signal(libc::SIGHUP);
    let v2 = "NOERROR an: load.example.com. CNAME a2.example.com.; a2.example.com. A 192.0.2.2";
    assert!(eventually(Duration::from_secs(30), || udp(
        daemon.addr,
        "load.example.com.",
        Rtype::A
    ) == v2));
    // A broken version 3: reported with file and line, version 2 stays in service.
    let broken = zone_text(3, 0).replace("a3 A 192.0.2.3", "a3 A 192.0.2.333");
    std::fs::write(dir.path().join("example.com.zone"), broken).unwrap();
    daemon.signal(libc::SIGHUP);
    assert!(eventually(Duration::from_secs(10), || daemon.log_text().contains("zone not loaded")));
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    let v1 = "NOERROR an: load.example.com. CNAME a1.example.com.; a1.example.com. A 192.0.2.1";
    let total: u32 = seen.values().sum();
    assert!(total > 200, "only {total} queries: {seen:?}");
    for answer in seen.keys() {
        assert!(
            answer == v1 || answer == v2,
            "an answer from neither whole version: {answer:?} in {seen:?}"
        );
    }
    assert!(seen.contains_key(v1) && seen.contains_key(v2), "{seen:?}");
    assert_eq!(udp(daemon.addr, "load.example.com.", Rtype::A), v2);
    let log = daemon.log_text();
    assert!(log.contains("example.com.zone:7:"), "the error names file and line: {log}");
    assert!(log.contains("previous contents kept"), "{log}");
}

/// Item 7 of issue #32: loads run off the signal-handling thread, so SIGTERM ends the
/// server within half a second while a big zone is loading — at start and on reload.
#[test]
fn sigterm_while_a_zone_loads_exits_within_half_a_second() {
    let dir = tempfile::tempdir().unwrap();
    // Big enough that a release build is still loading it when the signal comes.
    let big = zone_text(1, 2_000_000);
    std::fs::write(dir.path().join("example.com.zone"), &big).unwrap();
    let (args, addr) = configure(dir.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // At start: the zone is still loading when the server answers.
    let mut daemon = Daemon::spawn_answering(&args, addr, &dir.path().join("log1"));
    assert!(!daemon.log_text().contains("load done"), "the load finished too soon to test");
    let asked = Instant::now();
    daemon.signal(libc::SIGTERM);
    let status = daemon.wait(Duration::from_secs(5));
    let took = asked.elapsed();
    assert_eq!(status.map(|s| s.code()), Some(Some(0)));
    assert!(took < Duration::from_millis(500), "exit took {took:?}");
    // On reload: SIGHUP starts loading a changed big zone, SIGTERM ends it.
    std::fs::write(dir.path().join("example.com.zone"), zone_text(1, 10)).unwrap();
    let mut daemon = Daemon::spawn(&args, addr, &dir.path().join("log2"));
    std::fs::write(dir.path().join("example.com.zone"), big.replace("a1 A", "a1 A ")).unwrap();
    daemon.signal(libc::SIGHUP);
    assert!(eventually(Duration::from_secs(5), || daemon.log_text().contains("SIGHUP: reloading")));
    std::thread::sleep(Duration::from_millis(100)); // the big zone's load is under way
    assert!(!daemon.log_text().contains("reload done"), "the load finished too soon to test");
    let asked = Instant::now();
    daemon.signal(libc::SIGTERM);
    let status = daemon.wait(Duration::from_secs(5));
    let took = asked.elapsed();
    assert_eq!(status.map(|s| s.code()), Some(Some(0)));
    assert!(took < Duration::from_millis(500), "exit during a reload took {took:?}");
}

/// Issue #53 item 1: a zone file edited with its serial left alone is not loaded —
/// `ternctl zone-reload` fails naming the cause, SIGHUP logs it — and the served
/// version stays, so secondaries (which compare serials) are never left with other
/// data under the same serial; the edit loads once the serial rises.
#[test]
fn a_changed_zone_with_the_same_serial_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("example.com.zone"), zone_text(7, 0)).unwrap();
    let (args, addr) = configure(dir.path());
    let config = dir.path().join("ternd.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replacen("[[zone]]", "[control]\nsocket = \"ctl.sock\"\n[[zone]]", 1);
    std::fs::write(&config, text).unwrap();
    let daemon = Daemon::spawn(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        addr,
        &dir.path().join("log"),
    );
    assert!(daemon.log_text().contains("serial=7"), "{}", daemon.log_text());
    let file = dir.path().join("example.com.zone");
    std::fs::write(&file, zone_text(7, 3)).unwrap();
    let socket = dir.path().join("ctl.sock");
    let reload = common::ternctl()
        .arg("--socket")
        .arg(&socket)
        .args(["zone-reload", "example.com"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&reload.stdout).into_owned()
        + &String::from_utf8_lossy(&reload.stderr);
    assert_eq!(reload.status.code(), Some(1), "{said}");
    assert!(said.contains("serial 7 did not rise"), "{said}");
    // Issue #53 item 5: one zone served, and `zone-list` is still a table.
    let list = common::ternctl().arg("--socket").arg(&socket).arg("zone-list").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.starts_with("ZONE") && list.contains("example.com."), "{list}");
    assert_eq!(udp(daemon.addr, "f2.example.com.", Rtype::A), "NXDOMAIN an: ");
    daemon.signal(libc::SIGHUP);
    let refused = || daemon.log_text().matches("serial 7 did not rise").count() >= 2;
    assert!(eventually(Duration::from_secs(10), refused), "{}", daemon.log_text());
    assert_eq!(udp(daemon.addr, "f2.example.com.", Rtype::A), "NXDOMAIN an: ");
    std::fs::write(&file, zone_text(8, 3)).unwrap();
    daemon.signal(libc::SIGHUP);
    let loaded = || udp(daemon.addr, "f2.example.com.", Rtype::A).starts_with("NOERROR an: f2");
    assert!(eventually(Duration::from_secs(10), loaded), "{}", daemon.log_text());
}

/// Issue #27, limits: long AXFRs — one to a client that reads slowly, others to a
/// client that reads as fast as it can — hold up neither the other TCP clients nor the
/// UDP workers (a transfer is produced on a thread of its own, not on the TCP worker,
/// and written a batch at a time).
#[test]
fn long_axfrs_hold_up_nobody() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("example.com.zone"), zone_text(1, 300_000)).unwrap();
    let (args, addr) = configure(dir.path());
    let config = dir.path().join("ternd.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let open = "[[acl]]\nid = \"any\"\naction = \"transfer\"\n";
    let text = text
        .replace("file = \"example.com.zone\"\n", "file = \"example.com.zone\"\nacl = \"any\"\n");
    std::fs::write(&config, format!("{open}{text}")).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let daemon = Daemon::spawn(&args, addr, &dir.path().join("log"));
    // The slow reader: asks for the zone and takes a little of it now and then.
    let mut slow = tcp_connect(addr);
    slow.write_all(&framed(&ask_query(9, "example.com.", Rtype::AXFR))).unwrap();
    let mut first = [0u8; 4096];
    slow.read_exact(&mut first).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let fast = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut transfers = 0;
            while !stop.load(Ordering::Relaxed) {
                let mut conn = tcp_connect(addr);
                conn.write_all(&framed(&ask_query(8, "example.com.", Rtype::AXFR))).unwrap();
                let mut sink = Vec::new();
                let _ = (&mut conn).take(4 << 20).read_to_end(&mut sink);
                transfers += 1;
            }
            transfers
        })
    };
    let mut worst = Duration::ZERO;
    for i in 0..20 {
        let mut other = tcp_connect(addr);
        let asked = Instant::now();
        let answer = tcp_ask(&mut other, &ask_query(i, "load.example.com.", Rtype::A)).unwrap();
        assert!(summary(&answer).starts_with("NOERROR an: load.example.com."));
        assert!(udp(daemon.addr, "a1.example.com.", Rtype::A).starts_with("NOERROR"));
        worst = worst.max(asked.elapsed());
        slow.read_exact(&mut first).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    assert!(fast.join().unwrap() > 0);
    assert!(worst < Duration::from_millis(500), "a TCP query waited {worst:?} behind the AXFR");
}
