//! Online signing beside zone transfers, with real `ternd` processes: a signing
//! secondary killed (SIGKILL) and started again asks its unsigned primary for IXFR from
//! the primary's serial it kept on disk, and serves on a valid signed zone whose serial
//! does not go back; with that copy cut short it says why and transfers the whole zone.
//! And an unsigned zone given an NSEC3 policy by a reload is served signed, and its
//! secondary follows. Each signed zone is checked with `ldns-verify-zone` and BIND's
//! `dnssec-verify` on what AXFR gives.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::dnssec::{axfr_file, validate};
use common::*;

const ZONE: &str = "signed.test";

const ZONE_TEXT: &str = "$ORIGIN signed.test.\n$TTL 300\n\
     @ IN SOA ns hostmaster 100 3600 600 86400 60\n\
     @ NS ns\nns A 192.0.2.53\nwww A 192.0.2.1\nsub NS ns.sub\nns.sub A 192.0.2.54\n";

/// A primary (`p`) and a secondary (`s`) of [`ZONE`] in one directory, each `ternd`
/// with its own configuration, storage and log.
struct Pair {
    dir: tempfile::TempDir,
    p: SocketAddr,
    s: SocketAddr,
}

impl Pair {
    /// The primary serves the zone file unsigned and NOTIFYs the secondary, whose
    /// configuration gets `policy` (a `[[policy]]` table) and whose zone table gets
    /// `secondary_extra`.
    fn new(policy: &str, secondary_extra: &str) -> Pair {
        let dir = tempfile::tempdir().unwrap();
        let (p, s) = (free_port(), free_port());
        std::fs::write(dir.path().join("signed.test.zone"), ZONE_TEXT).unwrap();
        let head = |port: u16, storage: &str, other: u16, id: &str, policy: &str| {
            format!(
                "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
                 storage = \"{storage}\"\n\
                 [[remote]]\nid = \"{id}\"\naddress = \"127.0.0.1:{other}\"\n\
                 [[acl]]\nid = \"a\"\naddress = \"127.0.0.0/8\"\naction = [\"update\", \"transfer\"]\n\
                 {policy}\n"
            )
        };
        let primary = head(p, "p", s, "s", "")
            + &format!("[[zone]]\nname = \"{ZONE}\"\nfile = \"signed.test.zone\"\nacl = [\"a\"]\nnotify = [\"s\"]\n");
        let secondary = head(s, "s", p, "p", policy)
            + &format!(
                "[[zone]]\nname = \"{ZONE}\"\nprimary = \"p\"\nacl = [\"a\"]\n{secondary_extra}"
            );
        std::fs::write(dir.path().join("p.toml"), primary).unwrap();
        std::fs::write(dir.path().join("s.toml"), secondary).unwrap();
        Pair { dir, p: ([127, 0, 0, 1], p).into(), s: ([127, 0, 0, 1], s).into() }
    }

    /// Starts `name` (`p` or `s`); its log starts afresh.
    fn spawn(&self, name: &str) -> Daemon {
        let config = self.dir.path().join(format!("{name}.toml"));
        let log = self.dir.path().join(format!("{name}.log"));
        let addr = if name == "p" { self.p } else { self.s };
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &log)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Both validators on the zone as `addr` transfers it.
    fn validate(&self, addr: SocketAddr, name: &str) {
        validate(&axfr_file(addr, ZONE, self.path(name)), ZONE, false, name);
    }
}

/// Adds `name` A 192.0.2.`n` at the primary by UPDATE; NOERROR.
fn update(primary: SocketAddr, name: &str, n: u8) {
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let owner = format!("{name}.{ZONE}.");
    let update = update_adding(u16::from(n), &format!("{ZONE}."), &owner, &format!("192.0.2.{n}"));
    socket.send_to(&update, primary).unwrap();
    let mut buf = [0u8; 512];
    let (len, _) = socket.recv_from(&mut buf).unwrap();
    assert_eq!(buf[..len][3] & 0x0f, 0, "UPDATE of {name}: not NOERROR");
}

/// True once `name` is served signed at `addr` (its A RRset with one RRSIG).
fn signed_at(addr: SocketAddr, name: &str) -> bool {
    let answer = dig_short(addr, &format!("{name}.{ZONE}"), "RRSIG");
    answer.lines().any(|l| l.starts_with("A "))
}

/// The seal line of the kept copy of the primary's version says `serial`.
fn upstream_kept(path: &Path, serial: u32) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let seal = text.lines().last().unwrap_or_default();
    seal.starts_with("; sealed by ternd:") && seal.contains(&format!(" serial {serial} "))
}

/// Lines of `log` that report a transfer of `kind` (in or out).
fn transfers(log: &str, kind: &str) -> usize {
    let (quoted, plain) = (format!("kind=\"{kind}\""), format!("kind={kind} "));
    log.lines()
        .filter(|l| l.contains("transfer in done") || l.contains("transfer out done"))
        .filter(|l| l.contains(&quoted) || l.contains(&plain))
        .count()
}

fn wait(what: &str, log: impl Fn() -> String, check: impl FnMut() -> bool) {
    assert!(eventually(Duration::from_secs(20), check), "{what}:\n{}", log());
}

/// Issue 51: a signing secondary keeps its primary's unsigned version on disk. Killed
/// and started again while the primary changed, it serves its kept signed version at
/// once, then takes the primary's changes by IXFR from the primary serial it kept (the
/// primary sends no second AXFR), and serves a valid signed zone with a serial above
/// the one before. With the kept copy cut short, it says so and transfers the whole
/// zone once, still valid, its serial still rising.
#[test]
fn a_signing_secondary_asks_ixfr_from_its_kept_primary_version_after_sigkill() {
    let pair = Pair::new("[[policy]]\nid = \"pol\"\n", "dnssec-policy = \"pol\"\n");
    let p = pair.spawn("p");
    let mut s = pair.spawn("s");
    let copy = pair.path("s/signed.test.zone.upstream");
    let s_log = |s: &Daemon| s.log_text() + "\n--- primary:\n" + &p.log_text();
    wait("signed at the secondary", || s_log(&s), || signed_at(pair.s, "www"));
    update(pair.p, "one", 11);
    wait("one, signed", || s_log(&s), || signed_at(pair.s, "one"));
    let upstream = dig_soa(pair.p, ZONE).1.unwrap();
    wait("the primary's version kept", || s_log(&s), || upstream_kept(&copy, upstream));
    assert_eq!(transfers(&p.log_text(), "AXFR"), 1, "{}", p.log_text());
    let before = dig_soa(pair.s, ZONE).1.unwrap();

    // SIGKILL; the primary changes meanwhile; started again, then told of one more.
    s.signal(libc::SIGKILL);
    s.wait(Duration::from_secs(10)).unwrap();
    update(pair.p, "two", 12);
    let mut s = pair.spawn("s");
    assert_eq!(dig_soa(pair.s, ZONE).1, Some(before), "the kept version at once: {}", s_log(&s));
    assert!(s.log_text().contains("the primary's version read back"), "{}", s_log(&s));
    update(pair.p, "three", 13);
    wait(
        "two and three, signed",
        || s_log(&s),
        || signed_at(pair.s, "two") && signed_at(pair.s, "three"),
    );
    let after = dig_soa(pair.s, ZONE).1.unwrap();
    assert!(after > before, "the serial rose: {before} → {after}");
    let log = s.log_text();
    assert!(transfers(&log, "IXFR") >= 1 && transfers(&log, "AXFR") == 0, "{}", s_log(&s));
    let from = [format!("from={upstream} "), format!("from=\"{upstream}\"")];
    let asked = |l: &str| l.contains("transfer in done") && from.iter().any(|f| l.contains(f));
    assert!(log.lines().any(asked), "IXFR from the kept serial {upstream}: {log}");
    assert_eq!(transfers(&p.log_text(), "AXFR"), 1, "no second AXFR: {}", p.log_text());
    pair.validate(pair.s, "after-restart.zone");

    // The copy cut short: said, and the whole zone transferred once.
    let upstream = dig_soa(pair.p, ZONE).1.unwrap();
    wait("the primary's version kept", || s_log(&s), || upstream_kept(&copy, upstream));
    s.signal(libc::SIGKILL);
    s.wait(Duration::from_secs(10)).unwrap();
    let whole = std::fs::read(&copy).unwrap();
    std::fs::write(&copy, &whole[..whole.len() - 20]).unwrap();
    let s = pair.spawn("s");
    let said = s.log_text();
    assert!(said.contains("the next refresh transfers the whole zone (AXFR)"), "{said}");
    assert!(said.contains("cut short"), "{said}");
    update(pair.p, "four", 14);
    wait("four, signed", || s_log(&s), || signed_at(pair.s, "four"));
    assert!(dig_soa(pair.s, ZONE).1.unwrap() > after);
    assert_eq!(transfers(&p.log_text(), "AXFR"), 2, "{}", p.log_text());
    pair.validate(pair.s, "after-whole-transfer.zone");
}

/// Issue 51: an unsigned zone, served and transferred to a secondary, given a policy
/// with NSEC3 by an edit and a reload (SIGHUP): the primary serves it signed with NSEC3,
/// valid, and its secondary follows to the same serial, valid too.
#[test]
fn an_unsigned_zone_given_an_nsec3_policy_by_a_reload_is_served_signed() {
    let pair = Pair::new("", "");
    let p = pair.spawn("p");
    let s = pair.spawn("s");
    let logs = || s.log_text() + "\n--- primary:\n" + &p.log_text();
    wait("the secondary serves 100", logs, || dig_soa(pair.s, ZONE).1 == Some(100));
    assert!(dig_short(pair.p, ZONE, "DNSKEY").trim().is_empty(), "unsigned at first");
    let config = pair.path("p.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text
        .replace("[[zone]]\n", "[[policy]]\nid = \"n3\"\ndenial = \"nsec3\"\n\n[[zone]]\n")
        + "dnssec-policy = \"n3\"\n";
    std::fs::write(&config, text).unwrap();
    p.signal(libc::SIGHUP);
    wait("NSEC3 at the primary", logs, || dig_short(pair.p, ZONE, "NSEC3PARAM").starts_with("1 "));
    let serial = dig_soa(pair.p, ZONE).1.unwrap();
    assert!(serial > 100, "{serial}: {}", logs());
    pair.validate(pair.p, "primary.zone");
    wait("the secondary follows", logs, || dig_soa(pair.s, ZONE).1 == Some(serial));
    let file = axfr_file(pair.s, ZONE, pair.path("secondary.zone"));
    let records = std::fs::read_to_string(&file).unwrap();
    let of = |t: &str| records.lines().filter(|l| l.split_whitespace().nth(3) == Some(t)).count();
    assert!(of("NSEC3PARAM") == 1 && of("NSEC3") > 0 && of("NSEC") == 0, "{records}");
    validate(&file, ZONE, false, "the secondary");
}
