//! Issue #49, items 1, 2 and 4, through the real `ternd`: what a hostile catalog, a
//! careless operator and a damaged disk can do to the files the server keeps.
//!
//! * A catalog whose members are named like paths (`/tmp/x/pwn.`, `<storage>/example.com.`)
//!   writes nothing outside storage and takes no other zone's journal, and removing
//!   the members deletes only their own files: every acknowledged update survives.
//! * A zone added at run time cannot name a file outside `added-zone-dirs` (never read,
//!   never quoted), nor inject tables into `zones-added.toml`.
//! * A journal that cannot be read never lets an update be acknowledged; one damaged in
//!   the middle keeps what verifies, is set aside, and the serial never goes back.
//! * A storage directory that cannot be used stops the start.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use tern_wire::message::MessageReader;
use tern_wire::Rcode;

const ZONE: &str = "$ORIGIN example.com.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n\
                    @ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.80\n";

fn rcode(message: &[u8]) -> Rcode {
    let reader = MessageReader::new(message).unwrap();
    Rcode::from(u16::from(reader.header().flags.rcode_bits()))
}

/// The RCODE the server answers `name` A `address` added with.
fn add(addr: SocketAddr, name: &str, address: &str) -> Rcode {
    let message = update_adding(0x49, "example.com.", name, address);
    rcode(&udp_ask(addr, &message).expect("no answer to the update"))
}

/// The rcode and serial `addr` answers for `zone`'s SOA.
fn soa(addr: SocketAddr, zone: &str) -> (String, Option<u32>) {
    dig_soa(addr, zone)
}

fn has_a(addr: SocketAddr, name: &str, address: &str) -> bool {
    dig_short(addr, name, "A").lines().any(|l| l == address)
}

/// A configuration serving example.com. from `dir`, updatable from 127.0.0.1, its
/// journal in `dir/storage`, with `extra` appended; the arguments and the address.
fn configure(dir: &Path, extra: &str) -> (Vec<String>, SocketAddr) {
    configure_on(dir, free_port(), extra)
}

/// [`configure`] on `port`.
fn configure_on(dir: &Path, port: u16, extra: &str) -> (Vec<String>, SocketAddr) {
    std::fs::write(dir.join("example.com.zone"), ZONE).unwrap();
    let config = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\n[control]\nsocket = \"ctl.sock\"\n\
         [[acl]]\nid = \"u\"\naddress = \"127.0.0.1\"\naction = [\"update\", \"transfer\"]\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nacl = [\"u\"]\n\
         zonefile-sync = \"1h\"\n{extra}"
    );
    std::fs::write(dir.join("ternd.toml"), config).unwrap();
    let conf = dir.join("ternd.toml").to_str().unwrap().to_owned();
    (vec!["--config".to_owned(), conf], SocketAddr::from(([127, 0, 0, 1], port)))
}

fn spawn(dir: &Path, args: &[String], addr: SocketAddr) -> Daemon {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Daemon::spawn(&args, addr, &dir.join("log"))
}

fn kill(mut daemon: Daemon) {
    daemon.signal(libc::SIGKILL);
    let _ = daemon.child.wait();
}

fn ternctl(dir: &Path, args: &[&str]) -> (bool, String) {
    let out =
        common::ternctl().arg("--socket").arg(dir.join("ctl.sock")).args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Every file below `dir`, as paths.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(tree(&path));
        }
        out.push(path);
    }
    out
}

const MEMBER: &str = "@ 300 SOA ns.test. h.test. 1 60 60 600 60\n@ 300 NS ns.test.\n";

/// The hostile catalog's zone file: a member for each of `members` (none: the members
/// are removed), at `serial`.
fn catalog_text(members: &[&str], serial: u32) -> String {
    let mut text = format!("@ 0 SOA invalid. invalid. {serial} 60 60 600 60\n@ 0 NS invalid.\n");
    text += "version 0 TXT \"2\"\n";
    for (n, member) in members.iter().enumerate() {
        text += &format!("m{n}.zones 0 PTR {member}\n");
    }
    text
}

/// A primary serving the hostile catalog `cat.test.` and its members, notifying
/// `consumer`.
fn hostile_primary(dir: &Path, port: u16, consumer: SocketAddr, members: &[&str]) -> Daemon {
    std::fs::write(dir.join("cat.zone"), catalog_text(members, 1)).unwrap();
    let mut zones = String::new();
    for (n, member) in members.iter().enumerate() {
        std::fs::write(dir.join(format!("m{n}.zone")), MEMBER).unwrap();
        zones += &format!("[[zone]]\nname = \"{member}\"\nfile = \"m{n}.zone\"\nacl = \"x\"\n");
    }
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n\
         [[remote]]\nid = \"c\"\naddress = \"{consumer}\"\n\
         [[acl]]\nid = \"x\"\naddress = \"127.0.0.0/8\"\naction = \"transfer\"\n\
         [[zone]]\nname = \"cat.test\"\nfile = \"cat.zone\"\nacl = \"x\"\nnotify = \"c\"\n{zones}"
    );
    std::fs::write(dir.join("p.toml"), text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let config = dir.join("p.toml");
    Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &dir.join("p.log"))
}

/// Item 1: catalog member names never become paths outside storage, never take a
/// configured zone's journal, and their removal deletes only their own files.
#[test]
fn a_hostile_catalog_writes_nothing_outside_storage_and_takes_no_other_zones_files() {
    let (p_dir, c_dir, outside) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let storage = c_dir.path().join("storage");
    let pwn = format!("{}/pwn.", outside.path().display());
    let shadow = format!("{}/example.com.", storage.display());
    let (p_port, c_port) = (free_port(), free_port());
    let p_addr = SocketAddr::from(([127, 0, 0, 1], p_port));
    let extra = format!(
        "[[remote]]\nid = \"p\"\naddress = \"{p_addr}\"\n\
         [[template]]\nid = \"m\"\nprimary = \"p\"\n\
         [[zone]]\nname = \"cat.test\"\nprimary = \"p\"\ncatalog-role = \"consumer\"\ncatalog-template = \"m\"\n"
    );
    let (args, c_addr) = configure_on(c_dir.path(), c_port, &extra);
    let _p = hostile_primary(p_dir.path(), p_port, c_addr, &[&pwn, &shadow, "example.com."]);
    let c = spawn(c_dir.path(), &args, c_addr);
    assert_eq!(add(c_addr, "before.example.com.", "192.0.2.1"), Rcode::NOERROR);
    let served = |zone: &str| soa(c_addr, zone).0 == "NOERROR";
    let both = eventually(Duration::from_secs(20), || served(&pwn) && served(&shadow));
    assert!(both, "members not served: {}", c.log_text());
    assert_eq!(add(c_addr, "during.example.com.", "192.0.2.2"), Rcode::NOERROR);
    assert!(tree(outside.path()).is_empty(), "written outside storage: {:?}", tree(outside.path()));
    let kept: Vec<PathBuf> = tree(&storage);
    assert!(kept.iter().all(|p| p.parent() == Some(&*storage)), "{kept:?}");
    assert!(
        c.log_text().contains("the zone is in the configuration, which wins"),
        "{}",
        c.log_text()
    );
    // The members go: only their own files are deleted.
    let journal = storage.join("example.com.journal");
    assert!(journal.exists());
    std::fs::write(p_dir.path().join("cat.zone"), catalog_text(&[], 2)).unwrap();
    _p.signal(libc::SIGHUP);
    let gone = eventually(Duration::from_secs(20), || soa(c_addr, &pwn).0 == "REFUSED");
    assert!(gone, "members not removed: {}", c.log_text());
    assert!(journal.exists() && c_dir.path().join("example.com.zone").exists());
    assert!(tree(outside.path()).is_empty());
    kill(c);
    let c = spawn(c_dir.path(), &args, c_addr);
    for (name, address) in [("before", "192.0.2.1"), ("during", "192.0.2.2")] {
        let name = format!("{name}.example.com.");
        assert!(has_a(c_addr, &name, address), "{name} lost: {}", c.log_text());
    }
}

/// Item 4: a zone added at run time names a file inside `added-zone-dirs` or nothing is
/// read; a value cannot add a table to `zones-added.toml`.
#[test]
fn zones_added_at_run_time_keep_to_their_directories() {
    let (dir, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let (args, addr) = configure(dir.path(), "");
    let _daemon = spawn(dir.path(), &args, addr);
    let secret_arg = secret.to_str().unwrap();
    let (ok, text) = ternctl(dir.path(), &["zone-add", "evil.test", "--file", secret_arg]);
    assert!(!ok && text.contains("added-zone-dirs") && !text.contains("root:x"), "{text}");
    let (ok, text) = ternctl(dir.path(), &["zone-add", "evil.test", "--file", "/etc/passwd"]);
    assert!(!ok && !text.contains("root:"), "{text}");
    // A secondary's copy would overwrite it: refused the same way.
    let (ok, text) = ternctl(
        dir.path(),
        &["zone-add", "evil.test", "--file", secret_arg, "--set", "primary=[]"],
    );
    assert!(!ok, "{text}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root:x:0:0:root:/root:/bin/bash\n");
    // A value holding a table.
    let zones = dir.path().join("storage");
    std::fs::write(zones.join("ok.test.zone"), MEMBER).unwrap();
    let ok_file = zones.join("ok.test.zone");
    let (ok, text) = ternctl(
        dir.path(),
        &[
            "zone-add",
            "ok.test",
            "--file",
            ok_file.to_str().unwrap(),
            "--set",
            "notify-ns=false\n[[zone]]\nname = \"injected.test\"\nfile = \"/etc/passwd\"",
        ],
    );
    assert!(!ok, "{text}");
    let (ok, text) =
        ternctl(dir.path(), &["zone-add", "ok.test", "--file", ok_file.to_str().unwrap()]);
    assert!(ok, "{text}");
    let added = std::fs::read_to_string(zones.join("zones-added.toml")).unwrap();
    assert_eq!(added.matches("[[zone]]").count(), 1, "{added}");
    assert!(!added.contains("injected"), "{added}");
    assert_eq!(soa(addr, "ok.test").0, "NOERROR");
}

/// Issue #54: each zone added or removed at run time is appended to `zones-added.toml`
/// and synced before `ternctl` is answered: a SIGKILL right after loses none of them,
/// and a change torn by a crash (so never acknowledged) is ignored at the next start,
/// the changes after it kept.
#[test]
fn zones_added_one_by_one_survive_sigkill_and_a_torn_append() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let (args, addr) = configure_on(dir.path(), port, "");
    let daemon = spawn(dir.path(), &args, addr);
    let storage = dir.path().join("storage");
    for zone in ["a.test", "b.test", "c.test"] {
        std::fs::write(storage.join(format!("{zone}.zone")), MEMBER).unwrap();
    }
    let pattern = storage.join("%s.zone").display().to_string();
    for zone in ["a.test", "b.test", "c.test"] {
        let (ok, text) = ternctl(dir.path(), &["zone-add", zone, "--file", &pattern]);
        assert!(ok, "{text}");
    }
    let (ok, text) = ternctl(dir.path(), &["zone-remove", "b.test"]);
    assert!(ok, "{text}");
    kill(daemon);
    // A crash in the middle of the next change: half a table, no mark.
    let added = storage.join("zones-added.toml");
    let mut text = std::fs::read_to_string(&added).unwrap();
    text.push_str("[[zone]]\nname = \"torn.test\"\nfi");
    std::fs::write(&added, text).unwrap();
    let daemon = spawn(dir.path(), &args, addr);
    assert_eq!(soa(addr, "a.test").0, "NOERROR");
    assert_eq!(soa(addr, "c.test").0, "NOERROR");
    assert_eq!(soa(addr, "b.test").0, "REFUSED", "removed, and kept removed");
    assert!(daemon.log_text().contains("was not finished"), "{}", daemon.log_text());
    let (ok, text) = ternctl(dir.path(), &["zone-add", "b.test", "--file", &pattern]);
    assert!(ok, "{text}");
    kill(daemon);
    let daemon = spawn(dir.path(), &args, addr);
    for zone in ["a.test", "b.test", "c.test"] {
        assert_eq!(soa(addr, zone).0, "NOERROR", "{zone}: {}", daemon.log_text());
    }
    assert!(!std::fs::read_to_string(&added).unwrap().contains("torn.test"));
}

/// Item 2: a journal that cannot be read (empty, or a directory) is set aside and the
/// zone refuses every update (SERVFAIL) until an operator removes it and reloads; no
/// update is acknowledged that a restart would not find.
#[test]
fn an_unreadable_journal_never_lets_an_update_be_acknowledged() {
    for damage in ["empty", "directory"] {
        let dir = tempfile::tempdir().unwrap();
        let (args, addr) = configure(dir.path(), "");
        let daemon = spawn(dir.path(), &args, addr);
        assert_eq!(add(addr, "a.example.com.", "192.0.2.1"), Rcode::NOERROR);
        kill(daemon);
        let journal = dir.path().join("storage/example.com.journal");
        let aside = dir.path().join("storage/example.com.journal.damaged");
        std::fs::remove_file(&journal).unwrap();
        match damage {
            "empty" => std::fs::write(&journal, b"").unwrap(),
            _ => std::fs::create_dir(&journal).unwrap(),
        }
        let daemon = spawn(dir.path(), &args, addr);
        assert_eq!(add(addr, "b.example.com.", "192.0.2.2"), Rcode::SERVFAIL, "{damage}");
        assert!(aside.exists() && !journal.exists(), "{damage}: set aside");
        assert_eq!(soa(addr, "example.com.").0, "NOERROR", "{damage}: still served");
        let (_, status) = ternctl(dir.path(), &["zone-status", "example.com"]);
        assert!(status.contains("set aside"), "{damage}: {status}");
        kill(daemon);
        // A restart does not forget it.
        let daemon = spawn(dir.path(), &args, addr);
        assert_eq!(add(addr, "c.example.com.", "192.0.2.3"), Rcode::SERVFAIL, "{damage}");
        // The operator checks it, removes it, reloads: updates are kept again.
        match damage {
            "empty" => std::fs::remove_file(&aside).unwrap(),
            _ => std::fs::remove_dir(&aside).unwrap(),
        }
        let (ok, text) = ternctl(dir.path(), &["zone-reload", "example.com"]);
        assert!(ok, "{text}");
        assert_eq!(
            add(addr, "d.example.com.", "192.0.2.4"),
            Rcode::NOERROR,
            "{}",
            daemon.log_text()
        );
        kill(daemon);
        let daemon = spawn(dir.path(), &args, addr);
        assert!(has_a(addr, "d.example.com.", "192.0.2.4"), "{damage}: {}", daemon.log_text());
    }
}

/// Item 2: a flipped bit in the first of several journaled changes keeps what
/// verifies, sets the journal aside as it was, and raises the serial above every
/// serial the journal shows (it never goes back), across restarts.
#[test]
fn a_flipped_bit_in_the_journal_never_takes_the_serial_back() {
    let dir = tempfile::tempdir().unwrap();
    let (args, addr) = configure(dir.path(), "");
    let daemon = spawn(dir.path(), &args, addr);
    for n in 1..=3 {
        assert_eq!(add(addr, &format!("u{n}.example.com."), "192.0.2.1"), Rcode::NOERROR);
    }
    assert_eq!(soa(addr, "example.com.").1, Some(4));
    kill(daemon);
    let journal = dir.path().join("storage/example.com.journal");
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes[16 + 8 + 40] ^= 0x04; // in the first changeset's payload
    std::fs::write(&journal, &bytes).unwrap();
    let daemon = spawn(dir.path(), &args, addr);
    let serial = soa(addr, "example.com.").1.unwrap();
    assert!(serial > 4, "the served serial went back to {serial}: {}", daemon.log_text());
    assert!(daemon.log_text().contains("JOURNAL DAMAGED"), "{}", daemon.log_text());
    let aside = dir.path().join("storage/example.com.journal.damaged");
    assert_eq!(std::fs::read(&aside).unwrap(), bytes, "kept aside as it was");
    assert_eq!(add(addr, "after.example.com.", "192.0.2.9"), Rcode::NOERROR);
    kill(daemon);
    let daemon = spawn(dir.path(), &args, addr);
    let again = soa(addr, "example.com.").1.unwrap();
    assert!(again > serial, "{again} after {serial}: {}", daemon.log_text());
    assert!(has_a(addr, "after.example.com.", "192.0.2.9"));
}

/// Item 2: a storage directory that cannot be created or locked stops the start with a
/// clear error instead of serving without its lock.
#[test]
fn a_storage_directory_that_cannot_be_used_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let (args, _) = configure(dir.path(), "");
    let config = dir.path().join("ternd.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(dir.path().join("plain-file"), "x").unwrap();
    std::fs::write(&config, text.replace("storage = \"storage\"", "storage = \"plain-file/sub\""))
        .unwrap();
    let log = dir.path().join("log");
    let stderr = std::fs::File::create(&log).unwrap();
    let mut child = ternd().args(&args).stderr(stderr).spawn().unwrap();
    let exited = eventually(Duration::from_secs(10), || child.try_wait().unwrap().is_some());
    let _ = child.kill();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(exited, "still serving without its storage: {stderr}");
    assert_eq!(child.wait().unwrap().code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot use the storage directory"), "{stderr}");
}
