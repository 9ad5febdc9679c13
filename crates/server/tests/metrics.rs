//! `GET /metrics` on the real `ternd` binary: queries over UDP and TCP move the
//! counters they should, and the output is read by two Prometheus parsers — the
//! `prometheus-parse` crate, and `promtool check metrics` (Debian's `prometheus`
//! package) when it is installed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use prometheus_parse::{Scrape, Value};

/// A directory with the demo zone and a configuration with `http` as its `[http]`
/// table; returns the DNS and HTTP addresses.
fn setup(http: &str) -> (tempfile::TempDir, PathBuf, SocketAddr, SocketAddr) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("example.com.zone"), tern_server::demo::ZONE_TEXT).unwrap();
    let (port, http_port) = (free_port(), free_port());
    let text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\nstorage = \"storage\"\n\
         [http]\nlisten = \":{http_port}\"\n{http}\n\
         [[zone]]\nname = \"example.com\"\nfile = \"example.com.zone\"\n"
    );
    let config = dir.path().join("ternd.toml");
    std::fs::write(&config, text).unwrap();
    (
        dir,
        config,
        SocketAddr::from(([127, 0, 0, 1], port)),
        SocketAddr::from(([127, 0, 0, 1], http_port)),
    )
}

/// GETs `path`: the status line, the headers and the body.
fn get(addr: SocketAddr, path: &str) -> (String, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: tern\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_owned(), headers.to_lowercase(), body.to_owned())
}

/// A query for `name` of type `qtype`, with an OPT record setting DO when `dnssec_ok`.
fn query_for(id: u16, name: &str, qtype: u16, dnssec_ok: bool) -> Vec<u8> {
    let mut q = query(id, name);
    let len = q.len();
    q[len - 4..len - 2].copy_from_slice(&qtype.to_be_bytes());
    if dnssec_ok {
        q[11] = 1; // ARCOUNT
        q.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0]);
    }
    q
}

/// The value of the series `name` whose labels include `labels` (a histogram: its
/// count); 0 when there is none.
fn value(scrape: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    let found = scrape
        .samples
        .iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)));
    match found.map(|s| &s.value) {
        Some(Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v)) => *v,
        Some(Value::Histogram(buckets)) => buckets.last().map_or(0.0, |b| b.count),
        _ => 0.0,
    }
}

fn parse(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap()
}

/// `promtool check metrics` on `text`; `None` when promtool is not installed.
fn promtool(text: &str) -> Option<(bool, String)> {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = child.ok()?;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Some((out.status.success(), said))
}

#[test]
fn queries_move_the_counters_and_the_output_parses() {
    let (dir, config, dns, http) = setup("");
    let log = dir.path().join("ternd.log");
    let _daemon = Daemon::spawn(&["--config", config.to_str().unwrap()], dns, &log);
    let (status, headers, before) = get(http, "/metrics");
    assert!(status.contains("200"), "{status}");
    assert!(headers.contains("content-type: text/plain; version=0.0.4"), "{headers}");
    let before = parse(&before);
    for id in 0..5 {
        udp_ask(dns, &query_for(id, "example.com", 1, false)).unwrap();
    }
    udp_ask(dns, &query_for(5, "example.com", 28, true)).unwrap();
    udp_ask(dns, &query_for(6, "nowhere.example.com", 1, false)).unwrap();
    udp_ask(dns, &query_for(7, "example.org", 99, false)).unwrap();
    let mut stream = tcp_connect(dns);
    tcp_ask(&mut stream, &query_for(8, "example.com", 6, true)).unwrap();
    tcp_ask(&mut stream, &query_for(9, "example.com", 15, false)).unwrap();
    let (_, _, text) = get(http, "/metrics");
    let after = parse(&text);
    let moved = |name: &str, labels: &[(&str, &str)]| {
        value(&after, name, labels) - value(&before, name, labels)
    };
    assert_eq!(moved("tern_queries_total", &[("transport", "udp")]), 8.0, "{text}");
    assert_eq!(moved("tern_queries_total", &[("transport", "tcp")]), 2.0);
    assert_eq!(moved("tern_query_types_total", &[("qtype", "A")]), 6.0);
    assert_eq!(moved("tern_query_types_total", &[("qtype", "AAAA")]), 1.0);
    assert_eq!(moved("tern_query_types_total", &[("qtype", "SOA")]), 1.0);
    assert_eq!(moved("tern_query_types_total", &[("qtype", "other")]), 1.0);
    assert_eq!(moved("tern_queries_dnssec_ok_total", &[]), 2.0);
    assert_eq!(moved("tern_responses_total", &[("rcode", "NOERROR")]), 8.0);
    assert_eq!(moved("tern_responses_total", &[("rcode", "NXDOMAIN")]), 1.0);
    assert_eq!(moved("tern_responses_total", &[("rcode", "REFUSED")]), 1.0);
    assert_eq!(moved("tern_response_size_bytes_count", &[("transport", "tcp")]), 2.0);
    assert_eq!(moved("tern_tcp_accepted_total", &[]), 1.0);
    assert_eq!(value(&after, "tern_tcp_connections", &[]), 1.0);
    assert_eq!(value(&after, "tern_zone_serial", &[("zone", "example.com.")]), 2024010101.0);
    assert_eq!(value(&after, "tern_zones", &[]), 1.0);
    assert!(value(&after, "tern_zone_loads_total", &[("result", "loaded")]) >= 1.0);
    assert!(value(&after, "tern_zone_load_duration_seconds_count", &[]) >= 1.0);
    for name in ["tern_rrl_limited_total", "tern_transfers_total", "tern_updates_total"] {
        assert!(after.samples.iter().any(|s| s.metric == name), "{name} missing: {text}");
    }
    // The socket counters are handed over by the worker when it is idle.
    assert!(eventually(Duration::from_secs(3), || {
        let (_, _, text) = get(http, "/metrics");
        value(&parse(&text), "tern_udp_received_total", &[]) >= 8.0
    }));
    match promtool(&text) {
        Some((ok, said)) => assert!(ok, "promtool check metrics: {said}\n{text}"),
        None => eprintln!(
            "promtool is not installed (Debian: apt-get install prometheus): not checked with it"
        ),
    }
}

#[test]
fn without_metrics_nothing_is_served() {
    let (dir, config, dns, http) = setup("metrics = false");
    let log = dir.path().join("ternd.log");
    let _daemon = Daemon::spawn(&["--config", config.to_str().unwrap()], dns, &log);
    let (status, _, _) = get(http, "/metrics");
    assert!(status.contains("404"), "{status}");
}
