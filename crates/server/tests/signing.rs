//! Online signing (`[[policy]]`, `dnssec-policy`; issue #51) as an operator runs it: an
//! unsigned zone file served signed, checked after every change by two independent
//! validators (`ldns-verify-zone`, BIND's `dnssec-verify`) on what AXFR gives; an UPDATE
//! signed as it is committed and served by IXFR; a reload of an edited file; `ternctl
//! zone-keys` and `zone-sign`; a restart after SIGKILL that serves the same signatures
//! (nothing signed again); configuration errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;

const ZONE: &str = "signed.test";

fn zone_text(serial: u32, extra: &str) -> String {
    format!(
        "$ORIGIN signed.test.\n$TTL 300\n\
         @ IN SOA ns hostmaster {serial} 3600 600 86400 60\n\
         @ NS ns\nns A 192.0.2.53\nwww A 192.0.2.1\nwww AAAA 2001:db8::1\n\
         *.wild TXT \"wildcard\"\nalias CNAME www\nsub NS ns.sub\nns.sub A 192.0.2.54\n\
         a.b.c TXT \"empty non-terminals above\"\n{extra}"
    )
}

struct Signed {
    addr: SocketAddr,
    daemon: Option<Daemon>,
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Signed {
    fn start(policy: &str) -> Signed {
        Signed::start_with(policy, "")
    }

    /// With `top` (tables such as `[http]`) before the zone's.
    fn start_with(policy: &str, top: &str) -> Signed {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("signed.test.zone"), zone_text(10, "")).unwrap();
        let port = free_port();
        let text = format!(
            "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
             storage = \"storage\"\n[control]\nsocket = \"ternd.sock\"\n{top}\n\
             [[acl]]\nid = \"anyone\"\naddress = \"127.0.0.0/8\"\naction = [\"update\", \"transfer\"]\n\
             [[policy]]\nid = \"p\"\n{policy}\n\
             [[zone]]\nname = \"{ZONE}\"\nfile = \"signed.test.zone\"\nacl = [\"anyone\"]\n\
             dnssec-policy = \"p\"\n"
        );
        let config = dir.path().join("ternd.toml");
        std::fs::write(&config, text).unwrap();
        let mut signed = Signed { addr: ([127, 0, 0, 1], port).into(), daemon: None, dir, config };
        signed.spawn();
        signed
    }

    fn spawn(&mut self) {
        let log = self.dir.path().join("log");
        let args = ["--config", self.config.to_str().unwrap()];
        self.daemon = Some(Daemon::spawn(&args, self.addr, &log));
    }

    fn log(&self) -> String {
        self.daemon.as_ref().map(Daemon::log_text).unwrap_or_default()
    }

    fn dig(&self, args: &[&str]) -> String {
        let out = Command::new("dig")
            .args(["+tries=1", "+time=3", "-p", &self.addr.port().to_string(), "@127.0.0.1"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The zone as AXFR gives it, written to a file for the validators.
    fn axfr_file(&self, name: &str) -> PathBuf {
        common::dnssec::axfr_file(self.addr, ZONE, self.dir.path().join(name))
    }

    fn serial(&self) -> Option<u32> {
        dig_soa(self.addr, ZONE).1
    }
}

/// Both validators on a zone file (`csk`: every key has the SEP flag, `dnssec-verify -z`).
fn validate(path: &Path, csk: bool, what: &str) {
    common::dnssec::validate(path, ZONE, csk, what);
}

fn count(text: &str, rtype: &str) -> usize {
    text.lines().filter(|l| l.split_whitespace().nth(3) == Some(rtype)).count()
}

#[test]
fn a_zone_is_signed_and_every_change_is_signed_on_commit() {
    let mut served = Signed::start("");
    assert_eq!(served.serial(), Some(11), "signed whole: the serial raised once");
    validate(&served.axfr_file("first.zone"), false, "the first signing");
    let dnskeys = served.dig(&["+short", ZONE, "DNSKEY"]);
    assert_eq!(dnskeys.lines().count(), 2, "a KSK and a ZSK: {dnskeys}");
    // The zone file now holds the signed zone, written at once.
    let written = || std::fs::read_to_string(served.dir.path().join("signed.test.zone")).unwrap();
    assert!(eventually(Duration::from_secs(10), || written().contains("RRSIG")), "{}", written());

    // An UPDATE: signed as it is committed, served at once, and by IXFR.
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let update = update_adding(7, "signed.test.", "new.signed.test.", "192.0.2.99");
    socket.send_to(&update, served.addr).unwrap();
    let mut buf = [0u8; 512];
    let (n, _) = socket.recv_from(&mut buf).unwrap();
    assert_eq!(buf[..n][3] & 0x0f, 0, "NOERROR: {}", served.log());
    assert_eq!(served.serial(), Some(12));
    let answer = served.dig(&["+dnssec", "+noall", "+answer", "new.signed.test", "A"]);
    assert_eq!((count(&answer, "A"), count(&answer, "RRSIG")), (1, 1), "{answer}");
    validate(&served.axfr_file("updated.zone"), false, "after an UPDATE");
    let ixfr = served.dig(&["+nocmd", "+nostats", "+nocomments", ZONE, "IXFR=11"]);
    assert!(count(&ixfr, "NSEC") >= 2 && count(&ixfr, "RRSIG") >= 2, "signed IXFR: {ixfr}");

    // An edit of the (signed) zone file with its serial left alone: the signer leaves
    // the old signatures out, signs the new data and raises the serial.
    let path = served.dir.path().join("signed.test.zone");
    let edited = written() + "added.signed.test. 300 IN TXT \"by hand\"\n";
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, edited).unwrap();
    let socket_path = served.dir.path().join("ternd.sock");
    let out = ternctl().arg("--socket").arg(&socket_path).args(["zone-reload", ZONE]).output();
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(served.serial(), Some(13));
    validate(&served.axfr_file("edited.zone"), false, "after a reload of an edited file");

    // ternctl: the keys listed; every signature made again at once.
    let ctl = |command: &str| {
        let out = ternctl().arg("--socket").arg(&socket_path).args([command, ZONE]).output();
        let out = out.unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, keys) = ctl("zone-keys");
    assert!(ok && keys.lines().count() == 2, "{keys}");
    assert!(keys.contains("Ksk") && keys.contains("Zsk") && keys.contains("active"), "{keys}");
    let before = served.dig(&["+short", ZONE, "RRSIG"]);
    let (ok, text) = ctl("zone-sign");
    assert!(ok && text.contains("signatures made"), "{text}");
    assert_eq!(served.serial(), Some(14), "signed again: the serial rises");
    assert_ne!(served.dig(&["+short", ZONE, "RRSIG"]), before, "new signatures");
    validate(&served.axfr_file("resigned.zone"), false, "after zone-sign");

    // SIGKILL, then start again: the same signatures are served (nothing signed again).
    let apex = |s: &Signed| s.dig(&["+short", ZONE, "RRSIG"]);
    let before = apex(&served);
    assert!(!before.is_empty());
    served.daemon.as_ref().unwrap().signal(libc::SIGKILL);
    served.daemon.as_mut().unwrap().wait(Duration::from_secs(10)).unwrap();
    served.spawn();
    assert_eq!(served.serial(), Some(14), "{}", served.log());
    assert_eq!(apex(&served), before, "the same signatures after a restart");
    validate(&served.axfr_file("restarted.zone"), false, "after a restart");
}

#[test]
fn an_nsec3_opt_out_csk_zone_validates_after_updates() {
    let served = Signed::start("scheme = \"csk\"\ndenial = \"nsec3\"\nnsec3-opt-out = true\n");
    validate(&served.axfr_file("first.zone"), true, "NSEC3 opt-out");
    let param = served.dig(&["+short", ZONE, "NSEC3PARAM"]);
    assert_eq!(param.trim(), "1 0 0 -", "RFC 9276 defaults: {param}");
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for (i, name) in ["n1.signed.test.", "deep.er.n2.signed.test."].iter().enumerate() {
        let update = update_adding(10 + i as u16, "signed.test.", name, "192.0.2.77");
        socket.send_to(&update, served.addr).unwrap();
        let mut buf = [0u8; 512];
        let (n, _) = socket.recv_from(&mut buf).unwrap();
        assert_eq!(buf[..n][3] & 0x0f, 0, "NOERROR: {}", served.log());
    }
    validate(&served.axfr_file("updated.zone"), true, "NSEC3 opt-out after UPDATEs");
    // A name that does not exist: NXDOMAIN with NSEC3 proofs.
    let nx = served.dig(&["+dnssec", "+noall", "+authority", "nope.signed.test", "A"]);
    assert!(count(&nx, "NSEC3") >= 2, "{nx}");
}

#[test]
fn policy_errors_are_configuration_errors() {
    let dir = tempfile::tempdir().unwrap();
    let check = |text: &str| {
        let file = dir.path().join("ternd.toml");
        std::fs::write(&file, text).unwrap();
        std::fs::write(dir.path().join("z.zone"), zone_text(1, "")).unwrap();
        let out = ternd().args(["--check-config", file.to_str().unwrap()]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let zone = "[[zone]]\nname = \"signed.test\"\nfile = \"z.zone\"\n";
    let (ok, text) = check(&format!("{zone}dnssec-policy = \"nope\"\n"));
    assert!(!ok && text.contains("policy `nope` is not declared"), "{text}");
    let (ok, text) = check(&format!(
        "[[policy]]\nid = \"p\"\nalgorithm = \"dsa\"\n{zone}dnssec-policy = \"p\"\n"
    ));
    assert!(!ok && text.contains("`algorithm`") && text.contains(":1:"), "{text}");
    let never = "zonefile-sync = \"never\"\ndnssec-policy = \"p\"\n";
    let (ok, text) = check(&format!("[[policy]]\nid = \"p\"\n{zone}{never}"));
    assert!(!ok && text.contains("zonefile-sync"), "{text}");
    let (ok, text) = check(&format!("[[policy]]\nid = \"p\"\n{zone}dnssec-policy = \"p\"\n"));
    assert!(ok, "{text}");
}

/// Signatures valid 20 s and refreshed 12 s before they expire: the server makes them
/// again on its own (the serial rises with no change), and the zone stays valid.
#[test]
fn signatures_are_refreshed_before_they_expire() {
    let http = free_port();
    let policy = "signature-validity = \"20s\"\nsignature-refresh = \"12s\"\n";
    let served = Signed::start_with(policy, &format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"));
    assert_eq!(served.serial(), Some(11));
    let first = served.dig(&["+short", ZONE, "RRSIG"]);
    // Expirations are spread over a tenth of the refresh window: names come due apart.
    let apex = || served.dig(&["+short", ZONE, "RRSIG"]);
    let refreshed = eventually(Duration::from_secs(20), || apex() != first);
    assert!(refreshed, "no refresh: {}", served.log());
    assert!(served.serial().is_some_and(|s| s > 11), "the serial rises with the refresh");
    assert!(served.log().contains("signatures refreshed"), "{}", served.log());
    validate(&served.axfr_file("refreshed.zone"), false, "after a refresh");
    // The metric says how long the signatures stay valid at the least: about 8 s on.
    let metrics = http_get(http, "/metrics");
    let line = metrics.lines().find(|l| l.starts_with("tern_zone_signatures_valid_until_seconds{"));
    let until: u64 = line.and_then(|l| l.rsplit(' ').next()?.parse().ok()).unwrap_or(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(until > now && until <= now + 20, "{until} vs {now}: {metrics}");
}

/// The body of an HTTP GET of `path` on loopback `port`.
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

/// `ternctl ARGS` against a server's socket: success and output.
fn ternctl_at(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = ternctl().arg("--socket").arg(dir.join("ternd.sock")).args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// A CSK with second-long timings: its CDS appears; once the test puts the DS in the
/// parent zone (served by the same server, `ksk-submission` naming it), the server finds
/// it there and records it seen.
#[test]
fn the_parents_ds_is_found_by_asking_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let parent = "$ORIGIN test.\n$TTL 60\n@ SOA ns hostmaster 1 3600 600 86400 1\n@ NS ns\n\
                  ns A 192.0.2.53\nsigned NS ns\n";
    std::fs::write(dir.path().join("test.zone"), parent).unwrap();
    std::fs::write(dir.path().join("signed.test.zone"), zone_text(1, "")).unwrap();
    let quick = ["dnskey-ttl", "zone-max-ttl", "propagation-delay", "publish-safety"]
        .iter()
        .chain(&["retire-safety", "parent-ds-ttl", "parent-propagation-delay"])
        .map(|k| format!("{k} = \"1s\"\n"))
        .collect::<String>();
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[control]\nsocket = \"ternd.sock\"\n\
         [[remote]]\nid = \"parent\"\naddress = \"127.0.0.1:{port}\"\n\
         [[policy]]\nid = \"p\"\nscheme = \"csk\"\nsignature-validity = \"60s\"\n\
         signature-refresh = \"20s\"\nksk-submission = \"parent\"\n{quick}\
         [[zone]]\nname = \"test\"\nfile = \"test.zone\"\n\
         [[zone]]\nname = \"{ZONE}\"\nfile = \"signed.test.zone\"\ndnssec-policy = \"p\"\n"
    );
    let config = dir.path().join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let daemon =
        Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.path().join("log"));
    let keys = || ternctl_at(dir.path(), &["zone-keys", ZONE]).1;
    let cds = || dig_short(addr, ZONE, "CDS");
    assert!(eventually(Duration::from_secs(20), || !cds().trim().is_empty()), "{}", keys());
    assert!(keys().contains("Submitted"), "{}", keys());
    // The parent gets the DS the CDS asks for (the same RDATA), by a transaction.
    let ds = cds().lines().next().unwrap().to_owned();
    let mut set = vec!["zone-set", "test", "signed", "60", "DS"];
    set.extend(ds.split_whitespace());
    for step in [vec!["zone-begin", "test"], set, vec!["zone-commit", "test"]] {
        let (ok, text) = ternctl_at(dir.path(), &step);
        assert!(ok, "{step:?}: {text}");
    }
    let seen = eventually(Duration::from_secs(20), || keys().contains("Seen"));
    assert!(seen, "{}\n{}", keys(), daemon.log_text());
    assert!(daemon.log_text().contains("every server of the parent"), "{}", daemon.log_text());
}

/// Second-long timings, a DS at the parent, then `signing = false` and a reload: the
/// CDS takes its delete form (RFC 8078 §4); once the operator says the parent's DS is
/// gone, the keys and every signature go.
#[test]
fn a_zone_is_unsigned_by_its_policy() {
    let quick = ["dnskey-ttl", "zone-max-ttl", "propagation-delay", "publish-safety"]
        .iter()
        .chain(&["retire-safety", "parent-ds-ttl", "parent-propagation-delay"])
        .map(|k| format!("{k} = \"1s\"\n"))
        .collect::<String>();
    let signed = format!("scheme = \"csk\"\n{quick}");
    let served = Signed::start(&signed);
    assert!(!served.dig(&["+short", ZONE, "DNSKEY"]).trim().is_empty());
    // The parent gets the DS (the operator says so): the zone is secure.
    let keys = || ternctl_at(served.dir.path(), &["zone-keys", ZONE]).1;
    assert!(eventually(Duration::from_secs(15), || keys().contains("Submitted")), "{}", keys());
    assert!(ternctl_at(served.dir.path(), &["zone-ksk-submitted", ZONE]).0);
    assert!(keys().contains("Seen"), "{}", keys());
    let text = std::fs::read_to_string(&served.config).unwrap();
    let text = text.replace("scheme = \"csk\"\n", "scheme = \"csk\"\nsigning = false\n");
    std::fs::write(&served.config, text).unwrap();
    let (ok, out) = ternctl_at(served.dir.path(), &["reload"]);
    assert!(ok, "{out}");
    let cds = || served.dig(&["+short", ZONE, "CDS"]);
    let deleting = eventually(Duration::from_secs(15), || cds().trim() == "0 0 0 00");
    assert!(deleting, "{}\n{}\n{}", cds(), keys(), served.log());
    let gone = eventually(Duration::from_secs(30), || {
        let _ = ternctl_at(served.dir.path(), &["zone-ksk-submitted", ZONE]);
        served.dig(&["+short", ZONE, "DNSKEY"]).trim().is_empty()
    });
    assert!(gone, "{}\n{}", keys(), served.log());
    let axfr = served.dig(&["+nocmd", "+nostats", "+nocomments", ZONE, "AXFR"]);
    for rtype in ["RRSIG", "NSEC", "NSEC3", "DNSKEY", "CDS", "CDNSKEY"] {
        assert_eq!(count(&axfr, rtype), 0, "{rtype} left: {axfr}");
    }
    assert!(served.log().contains("unsigned"), "{}", served.log());
}

/// A key file that others may read is refused: after a restart the zone is served as its
/// file has it (signed), `zone-status` says why, and an UPDATE is not taken (SERVFAIL)
/// until the file is fixed and the zone reloaded.
#[test]
fn an_unusable_key_store_keeps_the_signed_zone_and_refuses_changes() {
    let mut served = Signed::start("");
    assert_eq!(served.serial(), Some(11));
    let written = served.dir.path().join("signed.test.zone");
    assert!(eventually(Duration::from_secs(10), || {
        std::fs::read_to_string(&written).unwrap().contains("RRSIG")
    }));
    let key = served.dir.path().join("storage/keys/signed.test./key1.pkcs8");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    served.daemon.as_ref().unwrap().signal(libc::SIGKILL);
    served.daemon.as_mut().unwrap().wait(Duration::from_secs(10)).unwrap();
    served.spawn();
    assert_eq!(served.serial(), Some(11), "served as the file has it: {}", served.log());
    validate(&served.axfr_file("kept.zone"), false, "served without its key store");
    let (_, status) = ternctl_at(served.dir.path(), &["zone-status", ZONE]);
    assert!(status.contains("key1.pkcs8"), "{status}");
    let update = |id: u16| {
        let socket = udp_client();
        socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let message = update_adding(id, "signed.test.", "new.signed.test.", "192.0.2.99");
        socket.send_to(&message, served.addr).unwrap();
        let mut buf = [0u8; 512];
        let (n, _) = socket.recv_from(&mut buf).unwrap();
        buf[..n][3] & 0x0f
    };
    assert_eq!(update(1), 2, "SERVFAIL: {}", served.log());
    assert_eq!(served.serial(), Some(11));
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (ok, text) = ternctl_at(served.dir.path(), &["zone-reload", ZONE]);
    assert!(ok, "{text}");
    assert_eq!(update(2), 0, "NOERROR once the key store is usable: {}", served.log());
    assert_eq!(served.serial(), Some(12));
    validate(&served.axfr_file("fixed.zone"), false, "after the key store came back");
}

/// A signing secondary: an unsigned primary (another ternd) and a secondary with a
/// policy. The secondary serves the zone signed; an UPDATE at the primary reaches it by
/// NOTIFY and IXFR and is served signed, under the secondary's own serial.
#[test]
fn a_signing_secondary_signs_what_its_primary_sends() {
    let dir = tempfile::tempdir().unwrap();
    let (p_port, s_port) = (free_port(), free_port());
    std::fs::write(dir.path().join("signed.test.zone"), zone_text(100, "")).unwrap();
    let primary = format!(
        "[server]\nlisten = [\"127.0.0.1:{p_port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"p\"\n\
         [[remote]]\nid = \"s\"\naddress = \"127.0.0.1:{s_port}\"\n\
         [[acl]]\nid = \"a\"\naddress = \"127.0.0.0/8\"\naction = [\"update\", \"transfer\"]\n\
         [[zone]]\nname = \"{ZONE}\"\nfile = \"signed.test.zone\"\nacl = [\"a\"]\nnotify = [\"s\"]\n"
    );
    let secondary = format!(
        "[server]\nlisten = [\"127.0.0.1:{s_port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"s\"\n\
         [[remote]]\nid = \"p\"\naddress = \"127.0.0.1:{p_port}\"\n\
         [[acl]]\nid = \"a\"\naddress = \"127.0.0.0/8\"\naction = \"transfer\"\n\
         [[policy]]\nid = \"pol\"\ndenial = \"nsec3\"\n\
         [[zone]]\nname = \"{ZONE}\"\nprimary = \"p\"\nacl = [\"a\"]\ndnssec-policy = \"pol\"\n"
    );
    std::fs::write(dir.path().join("p.toml"), primary).unwrap();
    std::fs::write(dir.path().join("s.toml"), secondary).unwrap();
    let spawn = |name: &str, port: u16| {
        let config = dir.path().join(format!("{name}.toml"));
        let log = dir.path().join(format!("{name}.log"));
        Daemon::spawn(&["--config", config.to_str().unwrap()], ([127, 0, 0, 1], port).into(), &log)
    };
    let _p = spawn("p", p_port);
    let s = spawn("s", s_port);
    let s_addr = SocketAddr::from(([127, 0, 0, 1], s_port));
    let signed = || dig_short(s_addr, ZONE, "NSEC3PARAM");
    assert!(
        eventually(Duration::from_secs(15), || !signed().trim().is_empty()),
        "{}",
        s.log_text()
    );
    let serial = dig_soa(s_addr, ZONE).1.unwrap();
    assert!(serial > 100, "its own serial, above the primary's: {serial}");
    let served = Signed {
        addr: s_addr,
        daemon: None,
        dir: tempfile::tempdir().unwrap(),
        config: PathBuf::new(),
    };
    validate(&served.axfr_file("secondary.zone"), false, "a signing secondary");
    // An UPDATE at the primary: NOTIFY, IXFR, signed at the secondary.
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let update = update_adding(3, "signed.test.", "late.signed.test.", "192.0.2.42");
    socket.send_to(&update, SocketAddr::from(([127, 0, 0, 1], p_port))).unwrap();
    let mut buf = [0u8; 512];
    let (n, _) = socket.recv_from(&mut buf).unwrap();
    assert_eq!(buf[..n][3] & 0x0f, 0);
    let arrived = || served.dig(&["+dnssec", "+noall", "+answer", "late.signed.test", "A"]);
    let seen = eventually(Duration::from_secs(15), || count(&arrived(), "RRSIG") == 1);
    assert!(seen, "{}\n{}", arrived(), s.log_text());
    assert!(dig_soa(s_addr, ZONE).1.unwrap() > serial);
    validate(&served.axfr_file("secondary-updated.zone"), false, "after an IXFR");
}

/// Runs `dnssec-keygen ARGS ZONE` in `dir` (BIND's tool, which scripts/test-all.sh
/// installs): the key files' path without `.private` or `.key`.
fn keygen(dir: &Path, zone: &str, args: &[&str]) -> String {
    let mut keygen = Command::new("dnssec-keygen");
    keygen.args(["-q", "-K"]).arg(dir).args(args).arg(zone);
    let out =
        keygen.output().expect("dnssec-keygen: install bind9-utils (scripts/test-all.sh does)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join(String::from_utf8(out.stdout).unwrap().trim()).display().to_string()
}

/// A record's RDATA from a line of zone-file text after ` TYPE `, in upper case and
/// without blanks (DS digests and keys as tools print them differently).
fn rdata_after(line: &str, rtype: &str) -> String {
    let rdata = line.split(&format!(" {rtype} ")).nth(1).unwrap_or_default();
    rdata.split_whitespace().collect::<String>().to_uppercase()
}

/// BIND's keys imported by `ternctl zone-key-import`: an active KSK (BIND's timings
/// kept) signs the DNSKEY RRset at once; a ZSK without timings is published by the
/// policy's steps; the zone stays valid for both validators; `zone-key-export` (and the
/// API's `key-export`) give the DNSKEY BIND made and the DS `dnssec-dsfromkey` computes;
/// bad files are refused, naming the file and line.
#[test]
fn bind_keys_are_imported_sign_the_zone_and_export_bind_s_ds() {
    let tokens = tempfile::tempdir().unwrap();
    let token = "test-token-0123456789abcdef";
    std::fs::write(tokens.path().join("token"), format!("{token}\n")).unwrap();
    let http = free_port();
    let top = format!(
        "[http]\nlisten = \"127.0.0.1:{http}\"\napi-token-file = \"{}\"\n",
        tokens.path().join("token").display()
    );
    let served = Signed::start_with("", &top);
    assert_eq!(served.serial(), Some(11));
    let bind = tempfile::tempdir().unwrap();
    let ksk = keygen(bind.path(), ZONE, &["-a", "ECDSAP256SHA256", "-f", "KSK"]);
    let zsk = keygen(bind.path(), ZONE, &["-a", "ECDSAP256SHA256", "-P", "none", "-A", "none"]);
    let ctl = |args: &[&str]| ternctl_at(served.dir.path(), args);

    let (ok, text) = ctl(&["zone-key-import", ZONE, &format!("{ksk}.private")]);
    assert!(ok && text.contains("it signs"), "{text}");
    let id = text.split("as key ").nth(1).unwrap().split(' ').next().unwrap().to_owned();
    let tag: u16 = ksk.rsplit('+').next().unwrap().parse().unwrap();
    let bind_key = std::fs::read_to_string(format!("{ksk}.key")).unwrap();
    let bind_key = bind_key.lines().find(|l| l.contains("DNSKEY")).unwrap();
    let dnskeys = served.dig(&["+dnssec", "+noall", "+answer", ZONE, "DNSKEY"]);
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let dnskeys: String = dnskeys.lines().map(|l| words(l) + "\n").collect();
    let served_keys: Vec<String> = dnskeys
        .lines()
        .filter(|l| l.split_whitespace().nth(3) == Some("DNSKEY"))
        .map(|l| rdata_after(l, "DNSKEY"))
        .collect();
    assert!(served_keys.contains(&rdata_after(bind_key, "DNSKEY")), "{dnskeys}");
    let by_tag = |l: &&str| l.contains(" RRSIG DNSKEY ") && l.contains(&format!(" {tag} {ZONE}."));
    assert!(dnskeys.lines().any(|l| by_tag(&l)), "the imported KSK signs: {dnskeys}");
    validate(&served.axfr_file("ksk-imported.zone"), false, "a BIND KSK imported");

    // The DNSKEY and DS for the parent, as BIND computes them.
    let (ok, exported) = ctl(&["zone-key-export", ZONE, &id]);
    assert!(ok && exported.lines().count() == 2, "{exported}");
    let line = |rtype: &str| {
        let find = |l: &&str| l.split_whitespace().nth(3) == Some(rtype);
        exported.lines().find(find).unwrap().to_owned()
    };
    assert_eq!(rdata_after(&line("DNSKEY"), "DNSKEY"), rdata_after(bind_key, "DNSKEY"));
    let out = Command::new("dnssec-dsfromkey").args(["-2", &format!("{ksk}.key")]).output();
    let bind_ds = String::from_utf8(out.unwrap().stdout).unwrap();
    assert_eq!(rdata_after(&line("DS"), "DS"), rdata_after(&bind_ds, "DS"), "{bind_ds}");
    // By default: every published KSK not retired — BIND's, which took the role over
    // from the server's own (its DS never seen at the parent).
    let (ok, all) = ctl(&["zone-key-export", ZONE]);
    assert!(ok && all == exported, "{all}");
    let (_, keys) = ctl(&["zone-keys", ZONE]);
    assert!(keys.lines().any(|l| l.contains("Ksk") && l.contains("retired")), "{keys}");
    let (code, body) =
        api_post(http, token, &format!("/api/v1/zones/{ZONE}/actions/key-export?key={id}"), "");
    assert_eq!((code, body["text"].as_str()), (200, Some(exported.as_str())), "{body}");

    // A ZSK without timings: the policy publishes it (pre-publication) in its turn.
    let (ok, text) = ctl(&["zone-key-import", ZONE, &format!("{zsk}.private")]);
    assert!(ok && text.contains("the policy"), "{text}");
    let count_keys = || served.dig(&["+short", ZONE, "DNSKEY"]).lines().count();
    assert!(
        eventually(Duration::from_secs(10), || count_keys() == 4),
        "{}",
        ctl(&["zone-keys", ZONE]).1
    );
    validate(&served.axfr_file("zsk-imported.zone"), false, "a BIND ZSK imported");

    // Refused, naming the file (and the line): the same key again, a key of another
    // zone, a key file whose key does not read; through the API too.
    let (ok, text) = ctl(&["zone-key-import", ZONE, &format!("{ksk}.private")]);
    assert!(!ok && text.contains(".private") && text.contains("already"), "{text}");
    let other = keygen(bind.path(), "other.test", &["-a", "ED25519"]);
    let (ok, text) = ctl(&["zone-key-import", ZONE, &format!("{other}.private")]);
    assert!(!ok && text.contains(".key") && text.contains("not signed.test."), "{text}");
    let broken = |suffix: &str| bind.path().join(format!("Ksigned.test.+013+00001.{suffix}"));
    let private = std::fs::read_to_string(format!("{ksk}.private")).unwrap();
    let number = private.lines().position(|l| l.starts_with("PrivateKey:")).unwrap() + 1;
    let bad: String = private
        .lines()
        .map(|l| {
            if l.starts_with("PrivateKey:") {
                "PrivateKey: !!!!\n".to_owned()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(broken("private"), &bad).unwrap();
    std::fs::copy(format!("{ksk}.key"), broken("key")).unwrap();
    let (ok, text) = ctl(&["zone-key-import", ZONE, broken("private").to_str().unwrap()]);
    assert!(!ok && text.contains(&format!("+00001.private:{number}: PrivateKey")), "{text}");
    let body =
        serde_json::json!({ "file": "K.private", "private": bad, "key": bind_key }).to_string();
    let path = format!("/api/v1/zones/{ZONE}/actions/key-import");
    let (code, body) = api_post(http, token, &path, &body);
    assert!(
        code == 409 && body["error"].as_str().unwrap_or_default().contains("K.private:"),
        "{body}"
    );
    assert_eq!(served.dig(&["+short", ZONE, "DNSKEY"]).lines().count(), 4, "nothing changed");
}

/// A POST of `body` (JSON) to the API at `path` with `token`: the status and the JSON.
fn api_post(http: u16, token: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", http)).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all((head + body).as_bytes()).unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let code = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (code, serde_json::from_str(body).unwrap_or_default())
}

/// The policy's denial changed by an edit and `ternctl reload`: NSEC to NSEC3, then
/// back; the zone is signed again whole each time and both validators accept it.
#[test]
fn nsec_to_nsec3_and_back_by_a_reload_keeps_the_zone_valid() {
    let served = Signed::start("");
    validate(&served.axfr_file("nsec.zone"), false, "NSEC");
    let config = std::fs::read_to_string(&served.config).unwrap();
    let policy = "[[policy]]\nid = \"p\"\n";
    for (denial, name) in [("denial = \"nsec3\"\n", "nsec3"), ("denial = \"nsec\"\n", "nsec-again")]
    {
        std::fs::write(&served.config, config.replace(policy, &format!("{policy}{denial}")))
            .unwrap();
        let (ok, text) = ternctl_at(served.dir.path(), &["reload"]);
        assert!(ok, "{text}");
        let nsec3 = name == "nsec3";
        let param = || served.dig(&["+short", ZONE, "NSEC3PARAM"]);
        let switched = eventually(Duration::from_secs(20), || param().trim().is_empty() != nsec3);
        assert!(switched, "{name}: {}\n{}", param(), served.log());
        let file = served.axfr_file(&format!("{name}.zone"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            (count(&text, "NSEC3") > 0, count(&text, "NSEC") > 0),
            (nsec3, !nsec3),
            "{name}"
        );
        validate(&file, false, name);
    }
}
