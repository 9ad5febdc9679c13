//! A reload applies the settings beyond zones that the data plane can take live —
//! `[identity]`, `tsig-max-fudge`, `[rrl]`, `[cookies]`, `[tcp]`, the transfer limits — in the
//! same process, and says which changed settings wait for a restart (issue #53,
//! item 10), as an operator sees it: `ternctl reload`'s answer, `dig`, and a flood.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

const ZONE: &str = "$ORIGIN live.test.\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 60\n\
    @ NS ns\nns A 192.0.2.53\nwww A 192.0.2.1\n";

/// The configuration: `extra` sections after `[server]`'s keys and the zone.
fn config_text(port: u16, server: &str, extra: &str) -> String {
    format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n{server}\
         [control]\nsocket = \"ternd.sock\"\n{extra}\
         [[zone]]\nname = \"live.test\"\nfile = \"live.test.zone\"\n"
    )
}

/// A server on `zone` (the text of `live.test`) with `server`'s keys and `extra`
/// sections, started with `args` after `--config FILE`: its directory, file, address
/// and process.
fn serve(zone: &str, server: &str, extra: &str, args: &[&str]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("live.test.zone"), zone).unwrap();
    let port = free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let file = dir.path().join("ternd.toml");
    std::fs::write(&file, config_text(port, server, extra)).unwrap();
    let mut argv = vec!["--config", file.to_str().unwrap()];
    argv.extend_from_slice(args);
    let daemon = Daemon::spawn(&argv, addr, &dir.path().join("log"));
    Served { port, addr, file, daemon, dir }
}

/// What [`serve`] started (the directory removed when dropped, after the server).
struct Served {
    port: u16,
    addr: SocketAddr,
    file: std::path::PathBuf,
    daemon: Daemon,
    dir: tempfile::TempDir,
}

/// The answer of `dig` with `args` at `addr` (one try), whole.
fn dig(addr: SocketAddr, args: &[&str]) -> String {
    let out = Command::new("dig")
        .args(["+tries=1", "+time=2", "-p", &addr.port().to_string()])
        .arg(format!("@{}", addr.ip()))
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `ternctl reload` against the socket in `dir`: exit code and output.
fn reload(dir: &Path) -> (i32, String) {
    let out = ternctl().arg("--socket").arg(dir.join("ternd.sock")).arg("reload").output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// Answers to `count` queries for www.live.test sent at once from one socket.
fn answered_of(addr: SocketAddr, count: u16) -> usize {
    let socket = udp_client();
    socket.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    for id in 0..count {
        socket.send_to(&query(id, "www.live.test"), addr).unwrap();
    }
    let mut buf = [0u8; 512];
    std::iter::from_fn(|| socket.recv_from(&mut buf).ok()).count()
}

#[test]
fn a_reload_applies_identity_rate_limiting_and_cookies_in_the_same_process() {
    let before = "[identity]\nversion = \"first\"\n[cookies]\nenabled = false\n";
    let Served { port, addr, file, daemon, dir } = serve(ZONE, "", before, &[]);
    let version = || dig(addr, &["+short", "CH", "TXT", "version.bind"]);
    assert_eq!(version().trim(), "\"first\"");
    assert!(!dig(addr, &["+cookie", "www.live.test"]).contains("COOKIE:"), "cookies are off");
    assert_eq!(answered_of(addr, 50), 50, "no rate limiting yet");

    let after = "[identity]\nversion = \"second\"\n[cookies]\nenabled = true\n\
                 [rrl]\nrate = 5\nslip = 0\n[tcp]\nidle-timeout = \"5s\"\n";
    std::fs::write(&file, config_text(port, "tsig-max-fudge = 60\n", after)).unwrap();
    let (code, said) = reload(dir.path());
    assert_eq!(code, 0, "{said}");
    for key in ["identity", "rrl", "cookies", "server.tsig-max-fudge", "tcp"] {
        assert!(said.contains(&format!("`{key}` changed: applied")), "{key}: {said}");
    }
    assert!(!said.contains("next restart"), "{said}");
    assert!(said.contains("reload done"), "{said}");

    assert_eq!(version().trim(), "\"second\"", "the new identity, same process");
    let with_cookie = dig(addr, &["+cookie", "www.live.test"]);
    assert!(with_cookie.contains("COOKIE:"), "cookies answered now: {with_cookie}");
    let answered = answered_of(addr, 50);
    assert!(answered <= 10, "rate limiting now holds a flood back: {answered} of 50 answered");
    assert!(daemon.log_text().contains("`rrl` changed: applied"));

    // Turned off again: every answer goes.
    std::fs::write(&file, config_text(port, "", before)).unwrap();
    let (code, said) = reload(dir.path());
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("`rrl` changed: applied"), "{said}");
    std::thread::sleep(Duration::from_millis(1100)); // the flood's own window passes
    assert_eq!(answered_of(addr, 50), 50, "rate limiting off again");
    assert_eq!(version().trim(), "\"first\"");
}

/// `udp-payload-max` sizes the UDP workers' buffers at start: a reload says it waits
/// for a restart, and answers keep the size they had.
#[test]
fn udp_payload_max_waits_for_a_restart_and_says_so() {
    let big: String = (0..4).map(|i| format!("big TXT \"{}\"\n", "x".repeat(200 + i))).collect();
    let Served { port, addr, file, dir, daemon: _daemon } =
        serve(&format!("{ZONE}{big}"), "", "", &[]);
    let ask = || dig(addr, &["+ignore", "+bufsize=4096", "big.live.test", "TXT"]);
    assert!(!ask().contains(" tc"), "1232 bytes hold the answer: {}", ask());
    std::fs::write(&file, config_text(port, "udp-payload-max = 512\n", "")).unwrap();
    let (code, said) = reload(dir.path());
    assert_eq!(code, 0, "{said}");
    let expected = "`server.udp-payload-max` changed: it takes effect at the next restart";
    assert!(said.contains(expected), "{said}");
    assert!(!ask().contains(" tc"), "still 1232 bytes: {}", ask());
}

/// `[tcp]` caps and timeouts hold for connections accepted after a reload; those
/// already open keep going; `defer-accept` (a socket option) waits for a restart.
#[test]
fn tcp_caps_and_timeouts_follow_a_reload() {
    let Served { port, addr, file, dir, daemon: _daemon } = serve(ZONE, "", "", &[]);
    let mut first = tcp_connect(addr);
    assert!(tcp_ask(&mut first, &query(1, "www.live.test")).is_some());
    let mut second = tcp_connect(addr);
    assert!(tcp_ask(&mut second, &query(2, "www.live.test")).is_some(), "64 a client");
    drop(second);

    let tcp =
        "[tcp]\nmax-connections-per-client = 1\nidle-timeout = \"1s\"\ndefer-accept = false\n";
    std::fs::write(&file, config_text(port, "", tcp)).unwrap();
    let (code, said) = reload(dir.path());
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("`tcp` changed: applied"), "{said}");
    let restart = "`tcp.defer-accept` changed: it takes effect at the next restart";
    assert!(said.contains(restart), "{said}");

    assert!(tcp_ask(&mut first, &query(3, "www.live.test")).is_some(), "open before: kept");
    let mut over = tcp_connect(addr);
    assert!(tcp_ask(&mut over, &query(4, "www.live.test")).is_none(), "one a client now");
    drop(first);
    let mut later = None;
    assert!(eventually(Duration::from_secs(5), || {
        let mut stream = tcp_connect(addr);
        let answered = tcp_ask(&mut stream, &query(5, "www.live.test")).is_some();
        later = Some(stream);
        answered
    }));
    let mut later = later.unwrap();
    assert!(closed_within(&mut later, Duration::from_secs(4)), "closed after 1 s idle, not 10");
}

/// `--workers` given with `--config` wins over the file at every reload, as the `--log-*`
/// overrides do: no "changed" warning for a setting nobody changed.
#[test]
fn command_line_workers_are_not_taken_for_a_change_at_reload() {
    let Served { daemon, dir, .. } = serve(ZONE, "", "", &["--workers", "2"]);
    let (code, said) = reload(dir.path());
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("workers"), "{said}");
    assert!(!daemon.log_text().contains("workers` changed"), "{}", daemon.log_text());
}

/// A changed template reaches every zone that names nothing else (they share one value
/// of its settings): transfers both zones of the `default` template refused are allowed
/// by both once the template allows them.
#[test]
fn a_changed_template_reaches_every_zone_of_it() {
    let other = tempfile::tempdir().unwrap();
    let two = other.path().join("two.test.zone");
    std::fs::write(&two, ZONE.replace("live.test.", "two.test.")).unwrap();
    let zone = format!("[[zone]]\nname = \"two.test\"\nfile = \"{}\"\n", two.display());
    let acl = "[[acl]]\nid = \"xfr\"\naddress = \"127.0.0.1\"\naction = \"transfer\"\n";
    let before = format!("{acl}[[template]]\nid = \"default\"\n{zone}");
    let Served { port, addr, file, daemon: _daemon, dir } = serve(ZONE, "", &before, &[]);
    let transferred = |name: &str| dig(addr, &["AXFR", name]).matches("\tSOA\t").count() == 2;
    assert!(!transferred("live.test") && !transferred("two.test"), "no rule allows it yet");

    let after = format!("{acl}[[template]]\nid = \"default\"\nacl = \"xfr\"\n{zone}");
    std::fs::write(&file, config_text(port, "", &after)).unwrap();
    let (code, said) = reload(dir.path());
    assert_eq!(code, 0, "{said}");
    assert!(transferred("live.test") && transferred("two.test"), "both zones take the change");
}
