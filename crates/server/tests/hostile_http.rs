//! The HTTP API and the control socket against careless operators and hostile peers,
//! with the real `ternd` and raw HTTP over std `TcpStream`s: the token is checked before
//! a body is read (a 60 MB POST without it grows nothing), one client holding many
//! connections does not stop `/metrics`, the API or DNS over TCP for another, slow
//! headers and bodies are cut, the bearer scheme is case-insensitive, RRset changes the
//! server would not carry out exactly are refused (400, 422) instead of answered 200,
//! a control socket path naming a regular file is kept and refused at start, and
//! `ternctl` says in words when the server did not answer in time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `ternd` serving example.com with the API on, and its HTTP address.
struct Server {
    daemon: Daemon,
    http: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts `ternd` with `http_extra` added to `[http]`; with `max_files`, under that
    /// limit of open files (soft and hard).
    fn start(http_extra: &str, max_files: Option<u64>) -> Server {
        Server::start_with(http_extra, max_files, "")
    }

    /// [`Server::start`], with `zones` (more `[[zone]]` tables) added.
    fn start_with(http_extra: &str, max_files: Option<u64>, zones: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        std::fs::write(path.join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
        std::fs::write(
            path.join("small.zone"),
            "@ 300 SOA ns h 1 2 3 4 5\n@ 300 NS ns\nns 300 A 192.0.2.53\n",
        )
        .unwrap();
        std::fs::write(path.join("token"), format!("{TOKEN}\n")).unwrap();
        let (port, http) = (free_port(), free_port());
        let text = format!(
            "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n\
             [http]\nlisten = \"127.0.0.1:{http}\"\napi-token-file = \"token\"\n{http_extra}\n\
             [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\nzonefile-sync = \"1h\"\n{zones}"
        );
        let config = path.join("ternd.toml");
        std::fs::write(&config, text).unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let daemon = spawn(&config, addr, &path.join("log"), max_files);
        Server { daemon, http: SocketAddr::from(([127, 0, 0, 1], http)), _dir: dir }
    }

    fn pid(&self) -> i32 {
        self.daemon.pid()
    }
}

/// [`Daemon::spawn`], with the open files limited to `max_files` when given.
fn spawn(config: &Path, addr: SocketAddr, log: &Path, max_files: Option<u64>) -> Daemon {
    let mut command = ternd();
    command.args(["--config", config.to_str().unwrap()]);
    command.stdout(Stdio::null()).stderr(std::fs::File::create(log).unwrap());
    if let Some(max) = max_files {
        // SAFETY (test): setrlimit between fork and exec touches no memory of ours.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: max, rlim_max: max };
                match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    let daemon = Daemon { child: command.spawn().unwrap(), addr, log: log.to_owned() };
    let loaded = eventually(Duration::from_secs(30), || daemon.log_text().contains("load done"));
    assert!(loaded, "ternd did not start: {}", daemon.log_text());
    daemon
}

/// A connection to `to` from the loopback address `from` (127.0.0.x: Linux routes all of
/// 127/8 to loopback, so each is another client to the server).
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::from((from, 0)).into())?;
    socket.connect_timeout(&to.into(), Duration::from_secs(2))?;
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    Ok(stream)
}

/// The status code of the answer read from `stream` within `limit`; `None` when none
/// came (a timeout, or the connection closed first).
fn read_status(stream: &mut TcpStream, limit: Duration) -> Option<u16> {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n") && head.len() < 200 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let line = String::from_utf8_lossy(&head);
    line.split(' ').nth(1)?.parse().ok()
}

/// One request (`Connection: close`) from `from`; the status and the body as JSON (or
/// as a JSON string when it is not JSON).
fn request_from(
    from: Ipv4Addr,
    http: SocketAddr,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, Value) {
    let mut stream = connect_from(from, http).unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n");
    for header in headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let code = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.into())))
}

const LOCAL: Ipv4Addr = Ipv4Addr::LOCALHOST;
const OTHER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// An API request with the token, from 127.0.0.1.
fn api(server: &Server, method: &str, path: &str, body: &str) -> (u16, Value) {
    let auth = format!("Authorization: Bearer {TOKEN}");
    request_from(LOCAL, server.http, method, path, &[&auth, "Content-Type: application/json"], body)
}

/// The peak resident size of process `pid`, in kB (`VmHWM`).
fn peak_rss_kb(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Sends request headers announcing a body of `length` bytes, and none of the body.
fn announce_body(http: SocketAddr, method: &str, path: &str, length: u64) -> TcpStream {
    let mut stream = connect_from(LOCAL, http).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream
}

#[test]
fn the_token_is_checked_before_a_body_is_read() {
    let server = Server::start("", None);
    // Headers only: a server that reads the body before the token never answers.
    for (method, path) in [("POST", "/api/v1/zones"), ("PATCH", "/api/v1/zones/example.com/rrsets")]
    {
        let mut stream = announce_body(server.http, method, path, 60_000_000);
        assert_eq!(read_status(&mut stream, Duration::from_secs(3)), Some(401), "{method} {path}");
    }
    // Ten 60 MB bodies sent in full: answered 401, and the server does not grow.
    let before = peak_rss_kb(server.pid());
    for _ in 0..10 {
        let mut stream = announce_body(server.http, "POST", "/api/v1/zones", 60_000_000);
        let mut writer = stream.try_clone().unwrap();
        let sending = std::thread::spawn(move || {
            let chunk = vec![b' '; 1 << 20];
            for _ in 0..60 {
                if writer.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        assert_eq!(read_status(&mut stream, Duration::from_secs(30)), Some(401));
        drop(stream);
        sending.join().unwrap();
    }
    let grown = peak_rss_kb(server.pid()).saturating_sub(before);
    assert!(grown < 20_000, "the server grew by {grown} kB for refused requests");
    // Refusals are logged, at a bounded rate.
    let log = server.daemon.log_text();
    assert!(log.contains("HTTP API: request refused"), "{log}");
    assert!(log.contains("/api/v1/zones"), "the whole path is logged: {log}");
    let lines = log.lines().filter(|l| l.contains("HTTP API: request refused")).count();
    assert!(lines <= 12, "{lines} lines for 12 refusals within a second or two");
}

#[test]
fn one_client_holding_many_connections_does_not_stop_the_others() {
    let server = Server::start("max-connections-per-client = 8\n", Some(256));
    // 300 connections from one address, kept open and silent (those refused are closed
    // by the server; holding them costs it nothing).
    let held: Vec<TcpStream> =
        (0..300).map_while(|_| connect_from(LOCAL, server.http).ok()).collect();
    assert!(held.len() > 200, "could only open {} connections", held.len());
    let started = Instant::now();
    let (code, _) = request_from(OTHER, server.http, "GET", "/metrics", &[], "");
    assert_eq!(code, 200, "/metrics for another client");
    let auth = format!("Authorization: Bearer {TOKEN}");
    let (code, status) = request_from(OTHER, server.http, "GET", "/api/v1/status", &[&auth], "");
    assert_eq!(code, 200, "the API for another client: {status}");
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    let mut dns = tcp_connect(server.daemon.addr);
    let answer = tcp_ask(&mut dns, &query(7, "www.example.com")).expect("DNS over TCP answers");
    assert_eq!(id_of(&answer), 7);
    // Over the per-client limit, a connection is closed at once.
    let mut extra = connect_from(LOCAL, server.http).unwrap();
    assert!(closed_within(&mut extra, Duration::from_secs(2)), "a 301st connection stays open");
    drop(held);
    assert!(server.daemon.log_text().contains("HTTP: connection refused"));
}

#[test]
fn metrics_answer_while_large_changes_keep_the_control_plane_busy() {
    let zones = "[[zone]]\nname = \"a.example\"\nfile = \"small.zone\"\n\
                 [[zone]]\nname = \"b.example\"\nfile = \"small.zone\"\n";
    let server = Server::start_with("", None, zones);
    // One large RRset change for each zone: each keeps a zone's writer working a while.
    let records: Vec<String> =
        (0..10_000).map(|i| format!("\"10.{}.{}.{}\"", i >> 16, (i >> 8) & 255, i & 255)).collect();
    let body = format!(
        r#"{{"rrsets":[{{"name":"big","type":"A","changetype":"replace","records":[{}]}}]}}"#,
        records.join(",")
    );
    let patches: Vec<_> = ["a.example", "b.example"]
        .into_iter()
        .map(|zone| {
            let (http, body) = (server.http, body.clone());
            std::thread::spawn(move || {
                let path = format!("/api/v1/zones/{zone}/rrsets");
                let auth = format!("Authorization: Bearer {TOKEN}");
                let mut stream = connect_from(LOCAL, http).unwrap();
                let head = format!(
                    "PATCH {path} HTTP/1.1\r\nHost: t\r\n{auth}\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).unwrap();
                stream.write_all(body.as_bytes()).unwrap();
                read_status(&mut stream, Duration::from_secs(60))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..3 {
        let started = Instant::now();
        let (code, _) = request_from(OTHER, server.http, "GET", "/metrics", &[], "");
        assert_eq!(code, 200);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "/metrics took {:?}",
            started.elapsed()
        );
    }
    // The changes are not waited for: the server is stopped under them.
    drop(server);
    for patch in patches {
        let _ = patch.join();
    }
}

#[test]
fn slow_clients_are_cut_after_the_timeouts() {
    let server = Server::start("header-timeout = \"1s\"\nbody-timeout = \"1s\"\n", None);
    // Silent, and headers that never end: closed after the header timeout.
    let mut silent = connect_from(LOCAL, server.http).unwrap();
    let mut slow = connect_from(LOCAL, server.http).unwrap();
    slow.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\n").unwrap();
    let started = Instant::now();
    assert!(closed_within(&mut silent, Duration::from_secs(4)), "a silent client stays");
    assert!(closed_within(&mut slow, Duration::from_secs(4)), "slow headers stay");
    assert!(started.elapsed() < Duration::from_secs(3), "cut after {:?}", started.elapsed());
    // A body that stops coming: 408 after the body timeout.
    let mut stream = connect_from(LOCAL, server.http).unwrap();
    let head = format!(
        "PATCH /api/v1/zones/example.com/rrsets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"rrsets\":"
    );
    stream.write_all(head.as_bytes()).unwrap();
    assert_eq!(read_status(&mut stream, Duration::from_secs(4)), Some(408));
    // A body over the limit: 413 without reading it.
    let auth_big = format!(
        "PATCH /api/v1/zones/example.com/rrsets HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Length: 500000000\r\n\r\n"
    );
    let mut big = connect_from(LOCAL, server.http).unwrap();
    big.write_all(auth_big.as_bytes()).unwrap();
    assert_eq!(read_status(&mut big, Duration::from_secs(3)), Some(413));
}

#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let server = Server::start("", None);
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let auth = format!("Authorization: {scheme} {TOKEN}");
        let (code, body) = request_from(LOCAL, server.http, "GET", "/api/v1/status", &[&auth], "");
        assert_eq!(code, 200, "{scheme}: {body}");
    }
    for wrong in [format!("Basic {TOKEN}"), format!("Bearer {TOKEN}x"), format!("Bearer{TOKEN}")] {
        let auth = format!("Authorization: {wrong}");
        let (code, _) = request_from(LOCAL, server.http, "GET", "/api/v1/status", &[&auth], "");
        assert_eq!(code, 401, "{wrong}");
    }
}

/// The zone's serial, read through the API.
fn serial(server: &Server) -> u64 {
    let (code, zone) = api(server, "GET", "/api/v1/zones/example.com", "");
    assert_eq!(code, 200, "{zone}");
    zone["serial"].as_u64().unwrap()
}

/// PATCHes `rrsets` (a JSON list); the status and the error text.
fn patch(server: &Server, rrsets: &str) -> (u16, String) {
    let body = format!("{{\"rrsets\":{rrsets}}}");
    let (code, answer) = api(server, "PATCH", "/api/v1/zones/example.com/rrsets", &body);
    let text = answer["error"].as_str().or(answer["message"].as_str()).unwrap_or("").to_owned();
    (code, text)
}

#[test]
fn rrset_changes_the_server_would_not_make_exactly_are_refused() {
    let server = Server::start("", None);
    let before = serial(&server);
    // A record text holding a newline is two records, or one cut short: 400, named.
    let (code, why) = patch(
        &server,
        r#"[{"name":"nl","type":"TXT","changetype":"replace","records":["\"one\"\n\"two\""]}]"#,
    );
    assert_eq!(code, 400, "{why}");
    assert!(why.contains("nl.example.com.") && why.contains("TXT"), "{why}");
    let (code, why) = patch(
        &server,
        r#"[{"name":"nl","type":"A","changetype":"replace","records":["192.0.2.1\n192.0.2.2"]}]"#,
    );
    assert_eq!(code, 400, "{why}");
    // Rules a change would break: 422, naming the rule.
    for (rrsets, rule) in [
        (
            r#"[{"name":"@","type":"CNAME","changetype":"replace","records":["www.example.net."]}]"#,
            "CNAME",
        ),
        (
            r#"[{"name":"mail","type":"CNAME","changetype":"replace","records":["www"]}]"#,
            "RFC 1034 §3.6.2",
        ),
        (r#"[{"name":"www","type":"A","changetype":"replace","records":["192.0.2.9"]}]"#, "CNAME"),
        (
            r#"[{"name":"two","type":"CNAME","changetype":"replace","records":["a","b"]}]"#,
            "one CNAME",
        ),
        (
            r#"[{"name":"@","type":"SOA","changetype":"replace","records":["ns1 h 0 1 2 3 4"]}]"#,
            "serial",
        ),
        (r#"[{"name":"@","type":"SOA","changetype":"delete"}]"#, "RFC 2136 §3.4.2.3"),
        (r#"[{"name":"@","type":"NS","changetype":"delete"}]"#, "RFC 2136 §3.4.2.3"),
        (
            r#"[{"name":"x","type":"SOA","changetype":"replace","records":["ns1 h 2024010102 1 2 3 4"]}]"#,
            "apex",
        ),
        (r#"[{"name":"x","type":"RRSIG","changetype":"delete"}]"#, "signer"),
    ] {
        let (code, why) = patch(&server, rrsets);
        assert_eq!(code, 422, "{rrsets}: {why}");
        assert!(why.contains(rule), "{rrsets}: {why}");
    }
    // Malformed: 400.
    for rrsets in [
        r#"[{"name":"b","type":"A","changetype":"replace","records":["nope"]}]"#,
        r#"[{"name":"b","type":"NOPE","changetype":"replace","records":["1"]}]"#,
        r#"[{"name":"b","type":"A","changetype":"delete","records":["192.0.2.1"]}]"#,
        r#"[{"name":"b","type":"A","changetype":"delete"},{"name":"b","type":"A","changetype":"delete"}]"#,
        r#"[{"name":"b","type":"ANY","changetype":"delete"}]"#,
    ] {
        let (code, why) = patch(&server, rrsets);
        assert_eq!(code, 400, "{rrsets}: {why}");
    }
    assert_eq!(serial(&server), before, "nothing was changed");
    // What is allowed still works: a CNAME once the other data goes in the same change
    // (whatever the order), the apex NS replaced exactly (not added to).
    let (code, why) = patch(
        &server,
        r#"[{"name":"old","type":"A","changetype":"replace","records":["192.0.2.7"]}]"#,
    );
    assert_eq!(code, 200, "{why}");
    let (code, why) = patch(
        &server,
        r#"[{"name":"old","type":"CNAME","changetype":"replace","records":["www"]},
            {"name":"old","type":"A","changetype":"delete"},
            {"name":"@","type":"NS","changetype":"replace","records":["ns1","ns3.example.net."]}]"#,
    );
    assert_eq!(code, 200, "{why}");
    let mut ns: Vec<String> =
        dig_short(server.daemon.addr, "example.com", "NS").lines().map(String::from).collect();
    ns.sort();
    assert_eq!(ns, ["ns1.example.com.", "ns3.example.net."]);
    assert_eq!(dig_short(server.daemon.addr, "old.example.com", "CNAME"), "www.example.com.\n");
}

/// `[control] socket = "ctl.sock"` in `dir`, with a zone; the configuration's path.
fn control_config(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
    let port = free_port();
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n\
         [control]\nsocket = \"ctl.sock\"\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\n"
    );
    let config = dir.join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    config
}

#[test]
fn only_a_socket_is_removed_at_the_control_socket_path() {
    let dir = tempfile::tempdir().unwrap();
    let config = control_config(dir.path());
    let socket = dir.path().join("ctl.sock");
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep me\n").unwrap();
    let kinds: [(&str, &dyn Fn()); 3] = [
        ("regular file", &|| std::fs::write(&socket, "keep me\n").unwrap()),
        ("directory", &|| std::fs::create_dir(&socket).unwrap()),
        ("symbolic link", &|| std::os::unix::fs::symlink(&target, &socket).unwrap()),
    ];
    for (kind, make) in kinds {
        make();
        let log = dir.path().join("log");
        let child = ternd()
            .args(["--config", config.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let mut daemon = Daemon { child, addr, log };
        let status = daemon.wait(Duration::from_secs(10));
        let stderr = daemon.log_text();
        assert!(status.is_some_and(|s| !s.success()), "{kind}: {status:?}: {stderr}");
        assert!(stderr.contains("ctl.sock") && stderr.contains(kind), "{kind}: {stderr}");
        let meta = std::fs::symlink_metadata(&socket).expect("the path is still there");
        assert!(!meta.file_type().is_socket(), "{kind}");
        match kind {
            "directory" => std::fs::remove_dir(&socket).unwrap(),
            _ => std::fs::remove_file(&socket).unwrap(),
        }
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    // A socket no server answers on (left by one that died) is still replaced.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    let addr = SocketAddr::from(([127, 0, 0, 1], 0));
    let mut daemon = spawn(&config, addr, &dir.path().join("log"), None);
    assert!(daemon.wait(Duration::from_millis(200)).is_none(), "{}", daemon.log_text());
    assert!(daemon.log_text().contains("control socket ready"), "{}", daemon.log_text());
}

#[test]
fn ternctl_says_when_the_server_did_not_answer_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("ctl.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // Accepts, and never answers (a server whose control threads are all busy).
    let silent = std::thread::spawn(move || listener.accept().map(|(stream, _)| stream));
    let out = common::ternctl()
        .args(["--socket", socket.to_str().unwrap(), "--timeout", "1", "status"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("no answer within 1 s") && stderr.contains("--timeout"), "{stderr}");
    assert!(!stderr.contains("os error"), "{stderr}");
    drop(silent.join());
}
