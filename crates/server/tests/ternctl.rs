//! `ternctl` against running `ternd`s, as an operator uses it: every command, the
//! readable and the JSON output, exit codes, who may use the socket, and a server that
//! is not running. A second `ternd` is the primary of the secondary zone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;

const PRIMARY_ZONE: &str = "$ORIGIN primary.example.\n$TTL 300\n\
    @ SOA ns hostmaster 1 3600 600 86400 60\n@ NS ns\nns A 192.0.2.53\nwww A 192.0.2.1\n";

fn ternctl(socket: &Path, args: &[&str]) -> (i32, String, String) {
    let out = common::ternctl().arg("--socket").arg(socket).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

/// `ternctl` that must succeed; its output.
fn ok(socket: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = ternctl(socket, args);
    assert_eq!(code, 0, "ternctl {args:?}: {stdout}{stderr}");
    stdout
}

fn dig(addr: SocketAddr, name: &str, rtype: &str) -> String {
    dig_short(addr, name, rtype)
}

/// Starts `ternd` on a free loopback port with one worker of each kind and the rest of
/// its configuration `rest` (after `[server]`'s `listen` and worker lines), written to
/// `dir/NAME.toml`, logging to `dir/NAME.log`: the server and its configuration file.
fn spawn_in(dir: &Path, name: &str, rest: &str) -> (Daemon, PathBuf) {
    let port = free_port();
    let head =
        format!("[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n");
    let config = dir.join(format!("{name}.toml"));
    std::fs::write(&config, head + rest).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let log = dir.join(format!("{name}.log"));
    (Daemon::spawn(&["--config", config.to_str().unwrap()], addr, &log), config)
}

/// The primary of `example.com` (the demo zone), allowing transfers from loopback.
fn primary(dir: &Path) -> Daemon {
    std::fs::write(dir.join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
    let rest = "storage = \"p-storage\"\nadded-zone-dirs = [\".\"]\n\
         [[acl]]\nid = \"lo\"\naddress = \"127.0.0.0/8\"\naction = [\"transfer\", \"notify\"]\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nacl = \"lo\"\n";
    spawn_in(dir, "primary", rest).0
}

/// The server under test: `primary.example` from a file, `example.com` as a secondary
/// of `upstream`; the control socket in `dir`.
fn server(dir: &Path, upstream: SocketAddr) -> (Daemon, PathBuf, PathBuf) {
    std::fs::write(dir.join("primary.example.zone"), PRIMARY_ZONE).unwrap();
    let rest = format!(
        "storage = \"storage\"\nadded-zone-dirs = [\".\"]\n\
         [control]\nsocket = \"run/ternd.sock\"\n\
         [[remote]]\nid = \"up\"\naddress = \"{upstream}\"\n\
         [[zone]]\nname = \"primary.example\"\nfile = \"primary.example.zone\"\nnotify = \"up\"\nzonefile-sync = \"1h\"\n\
         [[zone]]\nname = \"example.com\"\nprimary = \"up\"\n"
    );
    let (daemon, config) = spawn_in(dir, "ternd", &rest);
    (daemon, dir.join("run/ternd.sock"), config)
}

#[test]
fn every_command_against_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = primary(dir.path());
    let (mut daemon, socket, config) = server(dir.path(), upstream.addr);
    let addr = daemon.addr;
    assert!(eventually(Duration::from_secs(20), || !dig(addr, "www.example.com", "A").is_empty()));
    status_and_listing(&socket, &config);
    secondary_commands(&socket, &daemon);
    transactions(&socket, addr, dir.path());
    freeze_and_reload(&socket, addr, dir.path());
    zones_at_run_time(&socket, addr, dir.path());
    let stopped = ok(&socket, &["stop"]);
    assert!(stopped.contains("stopping"));
    let status = daemon.wait(Duration::from_secs(10)).expect("ternd did not stop");
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "the socket file is removed at exit");
    let (code, _, stderr) = ternctl(&socket, &["status"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("is ternd running"), "{stderr}");
}

fn status_and_listing(socket: &Path, config: &Path) {
    let status = ok(socket, &["status"]);
    assert!(status.starts_with("ternd 0."), "{status}");
    assert!(status.contains("2 zones"), "{status}");
    // The socket found through the configuration file, and JSON for scripts.
    let out = common::ternctl()
        .args(["--config", config.to_str().unwrap(), "--json", "zone-list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let zones = json["zones"].as_array().unwrap();
    assert_eq!(zones.len(), 2);
    assert_eq!(zones[0]["zone"], "example.com.");
    assert_eq!(zones[0]["role"], "secondary");
    let list = ok(socket, &["zone-list"]);
    assert!(list.starts_with("ZONE"), "{list}");
    assert!(list.contains("primary.example.") && list.contains("primary"), "{list}");
    let one = ok(socket, &["zone-status", "example.com"]);
    assert!(one.contains("role:          secondary"), "{one}");
    assert!(one.contains("next refresh:  in "), "{one}");
    // Issue #53 item 5: the command, not the number of zones, chooses the format.
    let every = ok(socket, &["zone-status"]);
    assert!(!every.starts_with("ZONE"), "{every}");
    assert_eq!(every.matches("role:          ").count(), 2, "{every}");
    let two = ok(socket, &["zone-status", "example.com", "primary.example"]);
    assert_eq!(two.matches("role:          ").count(), 2, "{two}");
    let (code, _, stderr) = ternctl(socket, &["zone-status", "nope.example"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("not served"), "{stderr}");
}

fn secondary_commands(socket: &Path, daemon: &Daemon) {
    let refreshed = ok(socket, &["zone-refresh", "example.com"]);
    assert!(refreshed.contains("example.com.: serial"), "{refreshed}");
    let (code, stdout, _) = ternctl(socket, &["zone-refresh", "primary.example"]);
    assert_eq!(code, 1, "a primary is not refreshed");
    assert!(stdout.contains("not a secondary"), "{stdout}");
    ok(socket, &["zone-retransfer", "example.com"]);
    assert!(eventually(Duration::from_secs(5), || daemon
        .log_text()
        .lines()
        .filter(|l| l.contains("transfer in done") && l.contains("AXFR"))
        .count()
        >= 2));
    let flushed = ok(socket, &["zone-flush", "example.com"]);
    assert!(flushed.contains("zone file written"), "{flushed}");
    let notified = ok(socket, &["zone-notify", "primary.example"]);
    assert!(notified.contains("NOTIFY sent to 1 targets"), "{notified}");
    let (code, stdout, _) = ternctl(socket, &["zone-notify", "example.com"]);
    assert_eq!(code, 1, "no targets: {stdout}");
}

fn transactions(socket: &Path, addr: SocketAddr, dir: &Path) {
    let read = ok(socket, &["zone-read", "primary.example", "www", "A"]);
    assert_eq!(read, "www.primary.example. 300 IN A 192.0.2.1\n");
    let (code, _, stderr) =
        ternctl(socket, &["zone-set", "primary.example", "mail", "A", "192.0.2.25"]);
    assert_eq!(code, 1, "no transaction open");
    assert!(stderr.contains("zone-begin"), "{stderr}");
    ok(socket, &["zone-begin", "primary.example"]);
    let (code, _, stderr) = ternctl(socket, &["zone-begin", "primary.example"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("already open"), "{stderr}");
    ok(socket, &["zone-set", "primary.example", "mail", "600", "A", "192.0.2.25"]);
    ok(socket, &["zone-set", "primary.example", "@", "MX", "10", "mail"]);
    ok(socket, &["zone-unset", "primary.example", "www", "A", "192.0.2.1"]);
    let (code, _, stderr) = ternctl(socket, &["zone-set", "primary.example", "x", "A", "nope"]);
    assert_eq!(code, 1, "bad RDATA refused");
    assert!(stderr.contains("A nope"), "{stderr}");
    let diff = ok(socket, &["zone-diff", "primary.example"]);
    assert!(
        diff.contains("-primary.example. 300 IN SOA")
            && diff.contains("+primary.example. 300 IN SOA"),
        "{diff}"
    );
    assert!(diff.contains("+mail.primary.example. 600 IN A 192.0.2.25"), "{diff}");
    assert!(diff.contains("-www.primary.example. 300 IN A 192.0.2.1"), "{diff}");
    assert!(dig(addr, "mail.primary.example", "A").is_empty(), "not before the commit");
    let committed = ok(socket, &["zone-commit", "primary.example"]);
    assert!(committed.contains("serial 1 → 2"), "{committed}");
    assert_eq!(dig(addr, "mail.primary.example", "A"), "192.0.2.25\n");
    assert_eq!(dig(addr, "primary.example", "MX"), "10 mail.primary.example.\n");
    assert!(dig(addr, "www.primary.example", "A").is_empty());
    // Journaled: the zone file still has the old version until flushed.
    let file = std::fs::read_to_string(dir.join("primary.example.zone")).unwrap();
    assert!(!file.contains("192.0.2.25"));
    let status = ok(socket, &["zone-status", "primary.example"]);
    assert!(status.contains("holds updates the zone file lacks"), "{status}");
    ok(socket, &["zone-flush", "primary.example"]);
    let file = std::fs::read_to_string(dir.join("primary.example.zone")).unwrap();
    assert!(file.contains("192.0.2.25"), "{file}");
    ok(socket, &["zone-begin", "primary.example"]);
    ok(socket, &["zone-set", "primary.example", "tmp", "A", "192.0.2.99"]);
    ok(socket, &["zone-abort", "primary.example"]);
    assert!(dig(addr, "tmp.primary.example", "A").is_empty());
    let (code, _, _) = ternctl(socket, &["zone-begin", "example.com"]);
    assert_eq!(code, 1, "a secondary is not edited");
}

fn freeze_and_reload(socket: &Path, addr: SocketAddr, dir: &Path) {
    ok(socket, &["zone-freeze", "primary.example"]);
    assert!(ok(socket, &["zone-list"]).contains("frozen"));
    let (code, stdout, _) = ternctl(socket, &["zone-reload", "primary.example"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("frozen"), "{stdout}");
    // The operator edits the file while frozen; thaw reads it.
    let file = dir.join("primary.example.zone");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace(" 2 3600 600 86400 60", " 10 3600 600 86400 60")
        + "edited.primary.example. 300 IN A 192.0.2.77\n";
    std::fs::write(&file, edited).unwrap();
    let thawed = ok(socket, &["zone-thaw", "primary.example"]);
    assert!(thawed.contains("thawed; loaded serial 10"), "{thawed}");
    assert_eq!(dig(addr, "edited.primary.example", "A"), "192.0.2.77\n");
    let reloaded = ok(socket, &["reload"]);
    assert!(reloaded.contains("reload done: 2 zones loaded"), "{reloaded}");
}

fn zones_at_run_time(socket: &Path, addr: SocketAddr, dir: &Path) {
    let file = dir.join("added.example.zone");
    std::fs::write(&file, PRIMARY_ZONE.replace("primary.example.", "added.example.")).unwrap();
    let added = ok(socket, &["zone-add", "added.example", "--file", file.to_str().unwrap()]);
    assert!(added.contains("zone-add done: 1 zones loaded (4 records"), "{added}");
    assert!(ok(socket, &["status"]).contains("3 zones"));
    assert_eq!(dig(addr, "www.added.example", "A"), "192.0.2.1\n");
    // Many in one step, a file each by pattern, names from standard input too.
    for zone in ["m1.example", "m2.example", "m3.example"] {
        let text = PRIMARY_ZONE.replace("primary.example.", &format!("{zone}."));
        std::fs::write(dir.join(format!("{zone}.zone")), text).unwrap();
    }
    let pattern = dir.join("%s.zone").display().to_string();
    let names = dir.join("names");
    std::fs::write(&names, "m2.example\nm3.example\n").unwrap();
    let args = ["zone-add", "m1.example", "--from", names.to_str().unwrap(), "--file", &pattern];
    let added = ok(socket, &args);
    assert!(added.contains("zone-add done: 3 zones loaded (12 records"), "{added}");
    assert_eq!(dig(addr, "www.m3.example", "A"), "192.0.2.1\n");
    let (code, _, stderr) = ternctl(socket, &["zone-add", "m4.example", "m1.example"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("m1.example. is served already"), "{stderr}");
    assert_eq!(
        ok(socket, &["zone-remove", "m1.example", "m2.example", "m3.example"]),
        "zone-remove done\n"
    );
    // Issue #53 item 4: all or none — one zone whose file is missing (or broken) adds
    // nothing, neither served nor kept for the next start.
    std::fs::write(dir.join("good.example.zone"), PRIMARY_ZONE.replace("primary.", "good."))
        .unwrap();
    std::fs::write(dir.join("broken.example.zone"), "@ 300 SOA ns h 1 2 3 4 5\nns A 1.2.3.999\n")
        .unwrap();
    for other in ["missing.example", "broken.example"] {
        let (code, _, stderr) =
            ternctl(socket, &["zone-add", "good.example", other, "--file", &pattern]);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("nothing added") && stderr.contains(other), "{stderr}");
        let kept = std::fs::read_to_string(dir.join("storage/zones-added.toml")).unwrap();
        assert!(!kept.contains("good.example"), "{kept}");
        assert!(ok(socket, &["zone-list"]).lines().all(|l| !l.starts_with("good.example.")));
    }
    let added = ok(socket, &["zone-add", "good.example", "--file", &pattern]);
    assert!(added.contains("zone-add done: 1 zones loaded"), "{added}");
    ok(socket, &["zone-remove", "good.example"]);
    let (code, _, stderr) = ternctl(socket, &["zone-add", "bad.example", "--template", "nope"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("nope"), "{stderr}");
    let (code, _, stderr) = ternctl(socket, &["zone-remove", "primary.example"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("remove it there"), "{stderr}");
    // Kept across a reload (and so a restart: both read the same file).
    ok(socket, &["reload"]);
    assert_eq!(dig(addr, "www.added.example", "A"), "192.0.2.1\n");
    let removed = ok(socket, &["zone-remove", "added.example"]);
    assert_eq!(removed, "zone-remove done\n");
    let answer = Command::new("dig")
        .args(["+tries=1", "+time=2", "-p", &addr.port().to_string()])
        .arg(format!("@{}", addr.ip()))
        .args(["www.added.example", "A"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&answer.stdout).contains("REFUSED"));
}

/// Only root and the server's user may use the socket: the file's mode keeps others
/// out, and with a mode that lets them in, the peer check still refuses them.
#[test]
fn other_users_are_refused() {
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: needs root and setpriv to act as another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    let port = free_port();
    let socket = dir.path().join("ternd.sock");
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\nadded-zone-dirs = [\".\"]\n\
         [control]\nsocket = \"ternd.sock\"\nmode = 0o666\n"
    );
    let config = dir.path().join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let _daemon = Daemon::spawn_answering(
        &["--config", config.to_str().unwrap()],
        addr,
        &dir.path().join("log"),
    );
    assert!(eventually(Duration::from_secs(5), || socket.exists()));
    let as_nobody = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::ternctl_path())
        .arg("--socket")
        .arg(&socket)
        .arg("status")
        .output()
        .unwrap();
    assert_eq!(as_nobody.status.code(), Some(1), "{}", String::from_utf8_lossy(&as_nobody.stderr));
    assert!(String::from_utf8_lossy(&as_nobody.stderr).contains("may not control"));
    assert!(ok(&socket, &["status"]).contains("0 zones"));
}

/// Issue #53 item 7: a log file moved away (as logrotate does) is reopened at its path
/// by `ternctl log-reopen` and by SIGUSR1; the lines after go to the new file.
#[test]
fn the_log_file_is_reopened_after_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("primary.example.zone"), PRIMARY_ZONE).unwrap();
    let port = free_port();
    let socket = dir.path().join("ternd.sock");
    let config = dir.path().join("ternd.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n\
             [control]\nsocket = \"ternd.sock\"\n\
             [[zone]]\nname = \"primary.example\"\nfile = \"primary.example.zone\"\n"
        ),
    )
    .unwrap();
    let log = dir.path().join("ternd.log");
    let args = ["--config", config.to_str().unwrap(), "--log-file", log.to_str().unwrap()];
    let daemon = Daemon::spawn(&args, SocketAddr::from(([127, 0, 0, 1], port)), &log);
    let rotated = dir.path().join("ternd.log.1");
    std::fs::rename(&log, &rotated).unwrap();
    let said = ok(&socket, &["log-reopen"]);
    assert_eq!(said.trim(), format!("log file {} reopened", log.display()));
    ok(&socket, &["reload"]);
    let now = daemon.log_text();
    assert!(now.contains("log file reopened") && now.contains("reload done"), "{now}");
    let before = std::fs::read_to_string(&rotated).unwrap();
    assert!(before.contains("load done") && !before.contains("reopened"), "{before}");

    std::fs::rename(&log, dir.path().join("ternd.log.2")).unwrap();
    daemon.signal(libc::SIGUSR1);
    assert!(eventually(Duration::from_secs(5), || daemon.log_text().contains("(SIGUSR1)")));
    assert!(!dig(daemon.addr, "www.primary.example", "A").is_empty(), "still serving");
}

/// Issue #53 item 10: `zone-purge` deletes what storage keeps of a zone no longer
/// served — a secondary's copy, timers and journal, left behind when the zone was taken
/// out of the configuration — and refuses a zone still served, purging nothing.
#[test]
fn zone_purge_deletes_what_storage_keeps_of_zones_no_longer_served() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = primary(dir.path());
    let (daemon, socket, config) = server(dir.path(), upstream.addr);
    let addr = daemon.addr;
    assert!(eventually(Duration::from_secs(20), || !dig(addr, "www.example.com", "A").is_empty()));
    ok(&socket, &["zone-flush", "example.com"]);
    let storage = dir.path().join("storage");
    let kept = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&storage)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("example.com."))
            .collect();
        names.sort();
        names
    };
    assert!(kept().contains(&"example.com.zone".to_owned()), "{:?}", kept());

    let (code, _, stderr) = ternctl(&socket, &["zone-purge", "gone.example", "example.com"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("zone example.com. is served") && stderr.contains("nothing purged"),
        "{stderr}"
    );
    assert!(!kept().is_empty(), "nothing purged");

    let text = std::fs::read_to_string(&config).unwrap();
    let without = text.replace("[[zone]]\nname = \"example.com\"\nprimary = \"up\"\n", "");
    assert_ne!(text, without);
    std::fs::write(&config, without).unwrap();
    ok(&socket, &["reload"]);
    assert!(eventually(Duration::from_secs(5), || dig(addr, "www.example.com", "A").is_empty()));
    let purged = ok(&socket, &["zone-purge", "example.com", "gone.example"]);
    assert!(
        purged.contains("example.com.: removed ") && purged.contains("example.com.zone"),
        "{purged}"
    );
    assert!(purged.contains("gone.example.: nothing kept in"), "{purged}");
    assert!(kept().is_empty(), "{:?}", kept());
    let (code, _, stderr) = ternctl(&socket, &["zone-purge"]);
    assert_eq!(code, 2, "a zone must be named: {stderr}");
}

/// A primary that allows transfers from loopback (`primary.example`, updates kept in the
/// journal for an hour) and a secondary of `upstream` (`example.com`); the control
/// socket in `dir`.
fn backed_up_server(dir: &Path, upstream: SocketAddr) -> (Daemon, PathBuf, PathBuf) {
    std::fs::write(dir.join("primary.example.zone"), PRIMARY_ZONE).unwrap();
    let rest = format!(
        "storage = \"storage\"\n\
         [control]\nsocket = \"run/ternd.sock\"\n\
         [[acl]]\nid = \"lo\"\naddress = \"127.0.0.0/8\"\naction = [\"transfer\"]\n\
         [[remote]]\nid = \"up\"\naddress = \"{upstream}\"\n\
         [[zone]]\nname = \"primary.example\"\nfile = \"primary.example.zone\"\nacl = \"lo\"\nzonefile-sync = \"1h\"\n\
         [[zone]]\nname = \"example.com\"\nprimary = \"up\"\n"
    );
    let (daemon, config) = spawn_in(dir, "ternd", &rest);
    (daemon, dir.join("run/ternd.sock"), config)
}

/// One transaction on `primary.example`: `unset` removed, `set` added (A records).
fn edit(socket: &Path, unset: Option<&str>, set: &str) {
    ok(socket, &["zone-begin", "primary.example"]);
    if let Some(name) = unset {
        ok(socket, &["zone-unset", "primary.example", name]);
    }
    ok(socket, &["zone-set", "primary.example", set, "A", "192.0.2.7"]);
    ok(socket, &["zone-commit", "primary.example"]);
}

/// Issue #53 item 10: `zone-backup` copies each zone's served data and journal into a
/// directory (never over an earlier backup); `zone-restore` makes a primary serve the
/// backup's data again as a journaled change under a higher serial (IXFR shows it, and
/// it survives SIGKILL), refuses a secondary's older version, and names a backup that
/// is missing or does not parse while the zone keeps serving.
#[test]
fn zone_backup_and_restore_as_an_operator_uses_them() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = primary(dir.path());
    let (daemon, socket, config) = backed_up_server(dir.path(), upstream.addr);
    let addr = daemon.addr;
    assert!(eventually(Duration::from_secs(20), || !dig(addr, "www.example.com", "A").is_empty()));
    edit(&socket, None, "kept");
    assert_eq!(dig_soa(addr, "primary.example").1, Some(2));
    let backups = backs_up_every_zone(&socket, dir.path());
    restores_a_primary(&socket, addr, &backups);
    restores_a_secondary_only_newer(&socket, addr, dir.path(), &backups);
    names_a_backup_it_cannot_read(&socket, addr, dir.path());
    keeps_to_backup_dir(&socket, dir.path());

    // Journaled before it was acknowledged: a SIGKILL loses nothing.
    drop(daemon);
    let argv = ["--config", config.to_str().unwrap()];
    let daemon = Daemon::spawn(&argv, addr, &dir.path().join("ternd.2.log"));
    assert_eq!(dig_soa(daemon.addr, "primary.example").1, Some(4));
    assert_eq!(dig(daemon.addr, "kept.primary.example", "A"), "192.0.2.7\n");
}

/// A relative directory is taken in backup-dir (by default `backup` in storage), and a
/// backup is never written over: the directory of the backup.
fn backs_up_every_zone(socket: &Path, dir: &Path) -> PathBuf {
    let said = ok(socket, &["zone-backup", "--dir", "one"]);
    let backups = dir.join("storage/backup/one");
    assert!(said.contains("primary.example.: backed up serial 2, journal "), "{said}");
    assert!(said.contains(&format!("in {}", backups.display())), "{said}");
    assert!(said.contains("example.com.: backed up serial "), "{said}");
    let copy = std::fs::read_to_string(backups.join("primary.example.zone")).unwrap();
    assert!(
        copy.contains("kept.primary.example.\t300\tIN\tA\t192.0.2.7")
            || copy.contains("kept.primary.example. 300 IN A 192.0.2.7"),
        "{copy}"
    );
    assert!(std::fs::metadata(backups.join("primary.example.journal")).unwrap().len() > 0);
    let (code, stdout, _) =
        ternctl(socket, &["zone-backup", "primary.example", "--dir", backups.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("exists: back up into another directory"), "{stdout}");
    backups
}

/// Changes after the backup, then the restore: the backup's data at a higher serial,
/// sent by IXFR; a second restore changes nothing.
fn restores_a_primary(socket: &Path, addr: SocketAddr, backups: &Path) {
    edit(socket, Some("kept"), "later");
    assert_eq!(dig_soa(addr, "primary.example").1, Some(3));
    let restored =
        ok(socket, &["zone-restore", "primary.example", "--dir", backups.to_str().unwrap()]);
    assert!(restored.contains("restored: serial 3 → 4, 2 records changed"), "{restored}");
    assert_eq!(dig(addr, "kept.primary.example", "A"), "192.0.2.7\n");
    assert!(dig(addr, "later.primary.example", "A").is_empty());
    let ixfr = dig_ixfr(addr, "primary.example", 3);
    assert!(
        ixfr.contains("kept.primary.example.") && ixfr.contains("later.primary.example."),
        "{ixfr}"
    );
    let again =
        ok(socket, &["zone-restore", "primary.example", "--dir", backups.to_str().unwrap()]);
    assert!(again.contains("nothing to restore: serial 4 holds the backup's data"), "{again}");
}

/// A secondary's version is its primary's: an older one is not restored, a newer one is
/// (a secondary whose storage was lost while its primary is away).
fn restores_a_secondary_only_newer(socket: &Path, addr: SocketAddr, dir: &Path, backups: &Path) {
    let (code, stdout, _) =
        ternctl(socket, &["zone-restore", "example.com", "--dir", backups.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("is not newer than the served"), "{stdout}");

    let (_, served) = dig_soa(addr, "example.com");
    let served = served.unwrap();
    let newer = dir.join("storage/backup/newer");
    std::fs::create_dir_all(&newer).unwrap();
    let text = std::fs::read_to_string(backups.join("example.com.zone")).unwrap();
    let raised = text.replacen(&format!(" {served} "), &format!(" {} ", served + 10), 2);
    assert_ne!(raised, text);
    std::fs::write(newer.join("example.com.zone"), raised).unwrap();
    let said = ok(socket, &["zone-restore", "example.com", "--dir", newer.to_str().unwrap()]);
    let expected = format!("restored: serial {}; refreshing from the primaries", served + 10);
    assert!(said.contains(&expected), "{said}");
    assert_eq!(dig_soa(addr, "example.com").1, Some(served + 10));
}

/// A backup that is missing or does not parse is named; the zone keeps serving.
fn names_a_backup_it_cannot_read(socket: &Path, addr: SocketAddr, dir: &Path) {
    let (code, stdout, _) = ternctl(socket, &["zone-restore", "primary.example", "--dir", "none"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("no backup of primary.example. there"), "{stdout}");
    let bad = dir.join("storage/backup/bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("primary.example.zone"), "@ SOA ns hostmaster 1 2 3 4 5\nwww A nope\n")
        .unwrap();
    let (code, stdout, _) =
        ternctl(socket, &["zone-restore", "primary.example", "--dir", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("primary.example.zone:2"), "file:line: {stdout}");
    assert_eq!(dig_soa(addr, "primary.example").1, Some(4));
}

/// Nothing is written or read outside backup-dir; without --dir, a new directory.
fn keeps_to_backup_dir(socket: &Path, dir: &Path) {
    for outside in ["/tmp", "../..", "one/../../x"] {
        let (code, _, stderr) = ternctl(socket, &["zone-backup", "--dir", outside]);
        assert_eq!(code, 1, "{outside}: {stderr}");
        assert!(stderr.contains("backup-dir") || stderr.contains("`..`"), "{stderr}");
    }
    let said = ok(socket, &["zone-backup", "primary.example"]);
    let made = said.split(" in ").nth(1).unwrap().trim();
    assert_eq!(Path::new(made).parent(), Some(&*dir.join("storage/backup")), "{said}");
    let named = Path::new(made).file_name().unwrap().to_str().unwrap();
    assert!(named.len() == 14 && named.starts_with("20"), "{said}");
    assert!(Path::new(made).join("primary.example.zone").exists(), "{said}");
}

/// The records of an IXFR of `zone` from `serial`, as dig prints them.
fn dig_ixfr(addr: SocketAddr, zone: &str, serial: u32) -> String {
    let out = Command::new("dig")
        .args(["+tries=1", "+time=2", "-p", &addr.port().to_string()])
        .arg(format!("@{}", addr.ip()))
        .args([zone, &format!("IXFR={serial}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}
