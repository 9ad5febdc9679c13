//! Dynamic updates through the real `ternd` binary: answered over UDP from the address
//! asked and over TCP on the connection, durable before they are answered (a SIGKILL
//! right after the answer loses nothing), written to the zone file, and merged with an
//! edit of the file on reload. `tests/interop/updates.py` covers nsupdate, TSIG, the
//! access rules and forwarding against the peers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use common::*;
use tern_wire::message::{CompressionTable, MessageReader, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Rcode, Rtype};

const ZONE: &str = "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n\
                    @ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n";

/// An UPDATE of example.com. adding `name` A `address`.
fn add(id: u16, name: &str, address: &str) -> Vec<u8> {
    update_adding(id, "example.com.", name, address)
}

fn query(id: u16, name: &str, rtype: Rtype) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.set_id(id);
    w.push_question(&name.parse::<Name>().unwrap(), rtype, Class::IN).unwrap();
    w.finish().to_vec()
}

/// The RCODE and the answer's RDATA as text.
fn answer(message: &[u8]) -> (Rcode, Vec<String>) {
    let mut reader = MessageReader::new(message).unwrap();
    let rcode = Rcode::from(u16::from(reader.header().flags.rcode_bits()));
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    let mut answers = Vec::new();
    while let Some(rr) = reader.record(&mut scratch).unwrap() {
        if rr.section == Section::Answer {
            answers.push(rdata::to_text(rr.rtype, rr.rdata));
        }
    }
    (rcode, answers)
}

fn lookup(addr: SocketAddr, name: &str, rtype: Rtype) -> Vec<String> {
    answer(&udp_ask(addr, &query(5, name, rtype)).expect("no answer")).1
}

fn serial(addr: SocketAddr) -> u32 {
    let soa = lookup(addr, "example.com.", Rtype::SOA);
    soa[0].split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// Writes the zone and a configuration letting 127.0.0.1 update it; returns the
/// arguments and the address.
fn configure(dir: &Path, sync: &str) -> (Vec<String>, SocketAddr) {
    configure_with(dir, sync, "")
}

/// [`configure`], with `extra` lines in the zone's section.
fn configure_with(dir: &Path, sync: &str, extra: &str) -> (Vec<String>, SocketAddr) {
    std::fs::write(dir.join("example.com.zone"), ZONE).unwrap();
    let port = free_port();
    let config = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"{}\"\n[[acl]]\nid = \"u\"\naddress = \"127.0.0.1\"\naction = \"update\"\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nacl = [\"u\"]\n\
         zonefile-sync = \"{sync}\"\n{extra}",
        dir.join("storage").display()
    );
    std::fs::write(dir.join("ternd.toml"), config).unwrap();
    let conf = dir.join("ternd.toml").to_str().unwrap().to_owned();
    (vec!["--config".to_owned(), conf], SocketAddr::from(([127, 0, 0, 1], port)))
}

fn spawn(dir: &Path, args: &[String], addr: SocketAddr) -> Daemon {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Daemon::spawn(&args, addr, &dir.join("log"))
}

/// Over UDP the answer comes from the server's address with the request's ID; the change
/// is served at once; a SIGKILL right after the answer loses nothing.
#[test]
fn an_acknowledged_update_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "1h");
    let mut daemon = spawn(dir.path(), &args, addr);
    let socket = udp_client();
    socket.send_to(&add(0x2136, "new.example.com.", "192.0.2.7"), addr).unwrap();
    let mut buf = [0u8; 512];
    let (len, from) = socket.recv_from(&mut buf).expect("no answer to the update");
    assert_eq!(from, addr);
    assert_eq!(id_of(&buf[..len]), 0x2136);
    assert_eq!(answer(&buf[..len]).0, Rcode::NOERROR);
    assert_eq!(lookup(addr, "new.example.com.", Rtype::A), ["192.0.2.7"]);
    assert_eq!(serial(addr), 2);
    daemon.signal(libc::SIGKILL);
    let _ = daemon.child.wait();
    let daemon = spawn(dir.path(), &args, addr);
    assert_eq!(lookup(addr, "new.example.com.", Rtype::A), ["192.0.2.7"], "{}", daemon.log_text());
    assert_eq!(serial(addr), 2);
    assert!(daemon.log_text().contains("journal replayed"), "{}", daemon.log_text());
}

/// Over TCP the update's answer comes on the connection, before the answer to a query
/// sent after it, which already sees the change.
#[test]
fn a_tcp_update_is_answered_in_order_on_its_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "1h");
    let _daemon = spawn(dir.path(), &args, addr);
    let mut stream = tcp_connect(addr);
    let mut both = framed(&add(1, "t.example.com.", "192.0.2.9"));
    both.extend(framed(&query(2, "t.example.com.", Rtype::A)));
    std::io::Write::write_all(&mut stream, &both).unwrap();
    let first = tcp_read(&mut stream).expect("no answer to the update");
    assert_eq!((id_of(&first), answer(&first).0), (1, Rcode::NOERROR));
    let second = tcp_read(&mut stream).expect("no answer to the query");
    assert_eq!(id_of(&second), 2);
    assert_eq!(answer(&second), (Rcode::NOERROR, vec!["192.0.2.9".to_owned()]));
}

/// With `zonefile-sync = "0s"` the zone file holds the update once it is answered (the
/// file is written before the next update is taken).
#[test]
fn the_zone_file_catches_up_with_the_updates() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "0s");
    let daemon = spawn(dir.path(), &args, addr);
    assert_eq!(
        answer(&udp_ask(addr, &add(3, "f.example.com.", "192.0.2.3")).unwrap()).0,
        Rcode::NOERROR
    );
    let file = dir.path().join("example.com.zone");
    let written = eventually(Duration::from_secs(10), || {
        std::fs::read_to_string(&file).unwrap().contains("f.example.com. 60 IN A 192.0.2.3")
    });
    assert!(written, "{}\n{}", std::fs::read_to_string(&file).unwrap(), daemon.log_text());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("SOA ns1.example.com. hostmaster.example.com. 2 "));
}

/// An edit of the zone file made while updates are not yet in it is merged on reload:
/// the edit's removal and addition, and the update, are all served; the serial rises.
#[test]
fn a_reload_merges_an_edit_with_the_updates() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "1h");
    let daemon = spawn(dir.path(), &args, addr);
    assert_eq!(
        answer(&udp_ask(addr, &add(4, "u.example.com.", "192.0.2.4")).unwrap()).0,
        Rcode::NOERROR
    );
    let edited = ZONE.replace("www A 192.0.2.80\n", "edit A 192.0.2.81\n");
    std::fs::write(dir.path().join("example.com.zone"), edited).unwrap();
    daemon.signal(libc::SIGHUP);
    let merged = eventually(Duration::from_secs(10), || {
        lookup(addr, "edit.example.com.", Rtype::A) == ["192.0.2.81"]
    });
    assert!(merged, "{}", daemon.log_text());
    assert_eq!(lookup(addr, "u.example.com.", Rtype::A), ["192.0.2.4"], "the update stays");
    assert!(lookup(addr, "www.example.com.", Rtype::A).is_empty(), "the edit's removal holds");
    assert_eq!(serial(addr), 3);
}

/// Counts the commits the log reports, and the updates they held.
fn commits(log: &str) -> (usize, usize) {
    let held = |line: &str| -> Option<usize> {
        let (_, rest) = line.split_once("updates=")?;
        rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    let batches: Vec<usize> =
        log.lines().filter(|l| l.contains("updates applied")).filter_map(held).collect();
    (batches.len(), batches.iter().sum())
}

/// One client's updates, each sent after the answer to the one before, are committed
/// one by one; updates streaming in from several clients share commits, one every
/// `dynamic::STREAM_GAP` (36 ms) while they keep coming, and one serial. Every one is
/// answered NOERROR and served.
#[test]
fn updates_from_several_clients_share_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "1h");
    let daemon = spawn(dir.path(), &args, addr);
    for n in 0..10u16 {
        let update = add(n, &format!("s{n}.example.com."), "192.0.2.1");
        assert_eq!(answer(&udp_ask(addr, &update).unwrap()).0, Rcode::NOERROR);
    }
    let sequential = commits(&daemon.log_text());
    assert_eq!(sequential, (10, 10), "{}", daemon.log_text());
    // 150 clients, an update every 700 µs for about 105 ms: more than a commit takes on
    // an idle machine, so without the gaps most would be committed alone. With commits
    // every COMMIT_GAP (5 ms) there would be about 21, with STREAM_GAP 4 (idle); the
    // bound leaves room for a loaded machine, where the sender's pauses break the
    // stream (14 commits with both CPUs busy).
    let clients: Vec<_> = (0..150).map(|_| udp_client()).collect();
    for (n, socket) in clients.iter().enumerate() {
        socket
            .send_to(&add(100 + n as u16, &format!("c{n}.example.com."), "192.0.2.2"), addr)
            .unwrap();
        std::thread::sleep(Duration::from_micros(700));
    }
    let mut buf = [0u8; 512];
    for socket in &clients {
        let (len, _) = socket.recv_from(&mut buf).expect("no answer to an update");
        assert_eq!(answer(&buf[..len]).0, Rcode::NOERROR);
    }
    let (all, held) = commits(&daemon.log_text());
    let (streamed, streamed_held) = (all - sequential.0, held - sequential.1);
    assert_eq!(streamed_held, 150, "{}", daemon.log_text());
    assert!(streamed <= 40, "{streamed} commits for 150 updates\n{}", daemon.log_text());
    assert_eq!(lookup(addr, "c149.example.com.", Rtype::A), ["192.0.2.2"]);
    // The serial rises once a commit (RFC 2136 §3.6), not once an update.
    assert_eq!(serial(addr), 11 + streamed as u32);
    // The journal's file, kept open while updates streamed in, is let go once idle.
    let journal_open = || {
        let fds = std::fs::read_dir(format!("/proc/{}/fd", daemon.pid())).unwrap();
        fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .any(|target| target.to_string_lossy().contains("journal"))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while journal_open() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!journal_open(), "the journal is still open after the updates");
}

/// A compaction is decided at one version and carried out later, once the zone file
/// holds it: the updates journaled meanwhile must stay in the journal. Eight clients
/// stream updates while the journal is compacted every few commits; after a SIGKILL,
/// every acknowledged update is served and the serial has not gone back.
#[test]
fn updates_journaled_around_compactions_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let small = "ixfr-history = 2\nixfr-history-size = 600\n";
    let (args, addr) = configure_with(dir.path(), "1h", small);
    let mut daemon = spawn(dir.path(), &args, addr);
    let acknowledged: Vec<String> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..8u16)
            .map(|c| {
                s.spawn(move || {
                    let mut acknowledged = Vec::new();
                    for n in 0..40u16 {
                        let name = format!("k{c}-{n}.example.com.");
                        let asked = udp_ask(addr, &add(c * 100 + n, &name, "192.0.2.5"));
                        if asked.is_some_and(|a| answer(&a).0 == Rcode::NOERROR) {
                            acknowledged.push(name);
                        }
                    }
                    acknowledged
                })
            })
            .collect();
        clients.into_iter().flat_map(|c| c.join().unwrap()).collect()
    });
    let compactions = daemon.log_text().matches("journal compacted").count();
    assert!(compactions >= 5, "{compactions} compactions\n{}", daemon.log_text());
    assert!(acknowledged.len() >= 300, "{} acknowledged", acknowledged.len());
    let before = serial(addr);
    daemon.signal(libc::SIGKILL);
    let _ = daemon.child.wait();
    let daemon = spawn(dir.path(), &args, addr);
    let lost: Vec<&String> =
        acknowledged.iter().filter(|n| lookup(addr, n, Rtype::A).is_empty()).collect();
    assert!(
        lost.is_empty(),
        "{} lost, first {:?}\n{}",
        lost.len(),
        lost.first(),
        daemon.log_text()
    );
    assert_eq!(serial(addr), before, "{}", daemon.log_text());
}

/// A zone file edited while the server was down, to a serial its journal does not lead
/// to (nor start from), is served as edited; the journal's updates, which the edit did
/// not keep, are neither applied nor thrown away: the journal is kept aside and the
/// log says so. (An edit to a serial the journal passes through is merged instead.)
#[test]
fn a_journal_that_does_not_lead_to_an_edited_file_is_kept_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "1h");
    let mut daemon = spawn(dir.path(), &args, addr);
    for (n, name) in ["j1.example.com.", "j2.example.com."].into_iter().enumerate() {
        let answered = udp_ask(addr, &add(n as u16, name, "192.0.2.9")).unwrap();
        assert_eq!(answer(&answered).0, Rcode::NOERROR);
    }
    assert_eq!(serial(addr), 3);
    daemon.signal(libc::SIGKILL);
    let _ = daemon.child.wait();
    let edited = ZONE.replace(" 1 7200 ", " 5 7200 ") + "edit A 192.0.2.81\n";
    std::fs::write(dir.path().join("example.com.zone"), edited).unwrap();
    let daemon = spawn(dir.path(), &args, addr);
    assert_eq!(serial(addr), 5, "{}", daemon.log_text());
    assert_eq!(lookup(addr, "edit.example.com.", Rtype::A), ["192.0.2.81"]);
    assert!(lookup(addr, "j1.example.com.", Rtype::A).is_empty());
    let storage = dir.path().join("storage");
    let kept_aside = || {
        std::fs::read_dir(&storage)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("example.com.journal.unused-"))
    };
    assert!(
        eventually(Duration::from_secs(10), || kept_aside().is_some()),
        "{}",
        daemon.log_text()
    );
    let kept = tern_journal::Journal::open(&kept_aside().unwrap()).unwrap();
    let serials: Vec<_> = kept.changes.iter().map(|c| (c.from_serial(), c.to_serial())).collect();
    assert_eq!(serials, [(Some(1), Some(2)), (Some(2), Some(3))]);
    let log = daemon.log_text();
    assert!(log.contains("the journal is kept aside"), "{log}");
}

/// Issue #53 item 2: with `zonefile-sync = "never"` a zone file kept by hand (comments,
/// `$ORIGIN`, `$TTL`, relative names) is never written: not after updates, not by
/// `zone-flush` (refused, saying why), not after a hundred updates whose journal was
/// compacted, not at a stop. The updates survive SIGKILL and restarts; an edit with a
/// raised serial is merged on reload and served under a serial above the file's, and
/// that survives a restart too.
#[test]
fn never_written_zone_files_stay_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let small = "ixfr-history = 2\nixfr-history-size = 600\n[control]\nsocket = \"ctl.sock\"\n";
    let (args, addr) = configure_with(dir.path(), "never", small);
    let file = dir.path().join("example.com.zone");
    let by_hand = format!("; kept in git, by hand\n{ZONE}mail A 192.0.2.25 ; the MX host\n");
    std::fs::write(&file, &by_hand).unwrap();
    let mut daemon = spawn(dir.path(), &args, addr);
    for n in 0..100u16 {
        let asked = udp_ask(addr, &add(n, &format!("n{n}.example.com."), "192.0.2.7")).unwrap();
        assert_eq!(answer(&asked).0, Rcode::NOERROR);
    }
    assert_eq!(serial(addr), 101);
    let compacted =
        eventually(Duration::from_secs(5), || daemon.log_text().contains("journal compacted"));
    assert!(compacted, "{}", daemon.log_text());
    let flush = common::ternctl()
        .arg("--socket")
        .arg(dir.path().join("ctl.sock"))
        .args(["zone-flush", "example.com"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&flush.stdout).into_owned()
        + &String::from_utf8_lossy(&flush.stderr);
    assert!(!flush.status.success() && said.contains("zonefile-sync is \"never\""), "{said}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), by_hand, "written after updates");

    daemon.signal(libc::SIGKILL);
    let _ = daemon.child.wait();
    let mut daemon = spawn(dir.path(), &args, addr);
    assert_eq!(serial(addr), 101, "{}", daemon.log_text());
    for n in 0..100 {
        assert_eq!(lookup(addr, &format!("n{n}.example.com."), Rtype::A), ["192.0.2.7"], "n{n}");
    }

    let edited = by_hand.replace(" 1 7200 ", " 200 7200 ") + "edit A 192.0.2.81 ; added by hand\n";
    std::fs::write(&file, &edited).unwrap();
    daemon.signal(libc::SIGHUP);
    let merged = eventually(Duration::from_secs(10), || {
        lookup(addr, "edit.example.com.", Rtype::A) == ["192.0.2.81"]
    });
    assert!(merged, "{}", daemon.log_text());
    assert_eq!(serial(addr), 201, "above the file's 200: the served data is not the file's");
    assert_eq!(lookup(addr, "n50.example.com.", Rtype::A), ["192.0.2.7"], "the updates stay");
    daemon.signal(libc::SIGTERM);
    let _ = daemon.wait(Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited, "written after a merge or a stop");

    let daemon = spawn(dir.path(), &args, addr);
    assert_eq!(serial(addr), 201, "{}", daemon.log_text());
    assert_eq!(lookup(addr, "edit.example.com.", Rtype::A), ["192.0.2.81"]);
    assert_eq!(lookup(addr, "n77.example.com.", Rtype::A), ["192.0.2.7"]);
    assert!(!daemon.log_text().contains("kept aside"), "{}", daemon.log_text());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
}
