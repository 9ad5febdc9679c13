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

/// A small zone `origin` (no final dot): SOA, NS, `www` A, `mail` MX.
fn small_zone(origin: &str) -> String {
    format!(
        "$ORIGIN {origin}.\n@ 300 SOA ns1 hostmaster 1 3600 600 86400 300\n@ 300 NS ns1\n\
         ns1 300 A 192.0.2.1\nwww 300 A 192.0.2.2\nmail 300 MX 10 www\n"
    )
}

/// A configuration counting at most two zones, with `zones` as `(name, query-stats)`
/// (`None`: the key left out; `Some("template")`: from the template).
fn stats_config(port: u16, http_port: u16, zones: &[(&str, Option<&str>)]) -> String {
    let mut text = format!(
        "[server]\nlisten = [\"127.0.0.1:{port}\"]\nudp-workers = 1\ntcp-workers = 1\n\
         storage = \"storage\"\nquery-stats-max-zones = 2\n\
         [http]\nlisten = \"127.0.0.1:{http_port}\"\n\
         [[template]]\nid = \"counted\"\nquery-stats = true\n"
    );
    for (name, stats) in zones {
        text += &format!("[[zone]]\nname = \"{name}\"\nfile = \"{name}.zone\"\n");
        match stats {
            Some("template") => text += "template = \"counted\"\n",
            Some(value) => text += &format!("query-stats = {value}\n"),
            None => {}
        }
    }
    text
}

/// The per-zone series of `scrape`: `(metric, zone, label value, count)`, sorted.
fn zone_series(scrape: &Scrape) -> Vec<(String, String, String, f64)> {
    let mut series: Vec<_> = scrape
        .samples
        .iter()
        .filter(|s| {
            s.metric.starts_with("tern_zone_responses")
                || s.metric.starts_with("tern_zone_query_types")
        })
        .map(|s| {
            let key = if s.metric.contains("responses") { "rcode" } else { "qtype" };
            let value = match s.value {
                Value::Counter(v) => v,
                _ => panic!("{s:?}"),
            };
            (s.metric.clone(), s.labels["zone"].to_owned(), s.labels[key].to_owned(), value)
        })
        .collect();
    series.sort_by(|a, b| a.partial_cmp(b).unwrap());
    series
}

fn series(list: &[(&str, &str, &str, f64)]) -> Vec<(String, String, String, f64)> {
    let mut list: Vec<_> = list
        .iter()
        .map(|(m, z, l, v)| (format!("tern_zone_{m}_total"), z.to_string(), l.to_string(), *v))
        .collect();
    list.sort_by(|a, b| a.partial_cmp(b).unwrap());
    list
}

/// A running `ternd` counting zones (see [`stats_config`]), its directory and its
/// configuration file, DNS and HTTP addresses.
struct Counting {
    dir: tempfile::TempDir,
    config: PathBuf,
    dns: SocketAddr,
    http: SocketAddr,
    ports: (u16, u16),
}

impl Counting {
    /// A directory with the zones a.test to e.test, and a configuration serving `zones`.
    fn new(zones: &[(&str, Option<&str>)]) -> Counting {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.test", "b.test", "c.test", "d.test", "e.test"] {
            std::fs::write(dir.path().join(format!("{name}.zone")), small_zone(name)).unwrap();
        }
        let ports = (free_port(), free_port());
        let config = dir.path().join("ternd.toml");
        let counting = Counting {
            dir,
            config,
            dns: SocketAddr::from(([127, 0, 0, 1], ports.0)),
            http: SocketAddr::from(([127, 0, 0, 1], ports.1)),
            ports,
        };
        counting.write(zones);
        counting
    }

    /// Rewrites the configuration to serve `zones`.
    fn write(&self, zones: &[(&str, Option<&str>)]) {
        std::fs::write(&self.config, stats_config(self.ports.0, self.ports.1, zones)).unwrap();
    }

    /// Asks `name` `qtype` over UDP: the answer.
    fn ask(&self, id: u16, name: &str, qtype: u16) -> Vec<u8> {
        udp_ask(self.dns, &query_for(id, name, qtype, false)).unwrap()
    }

    /// The per-zone series scraped now, and the scrape's text.
    fn scrape(&self) -> (Vec<(String, String, String, f64)>, String) {
        let (_, _, text) = get(self.http, "/metrics");
        (zone_series(&parse(&text)), text)
    }
}

/// `query-stats`: the zones that set it (themselves or by their template) are counted
/// by rcode and type, over UDP and TCP, exactly; the others and names in no zone are
/// not; beyond `query-stats-max-zones` a zone is not counted, which `--check-config`
/// notes and the server logs at each reload. A zone removed frees its row, and the zone
/// added that takes it starts from 0; a zone that stays counted keeps its counts.
#[test]
fn query_stats_count_per_zone_within_the_limit() {
    let counting = Counting::new(&[
        ("a.test", Some("true")),
        ("b.test", Some("false")),
        ("c.test", Some("template")),
        ("d.test", Some("true")),
    ]);
    let config = counting.config.to_str().unwrap();
    let checked = ternd().args(["--check-config", config]).output().unwrap();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(checked.status.success(), "{said}");
    let note = "1 more zones set query-stats and will not be counted (from d.test. on)";
    assert!(said.contains(note), "{said}");
    let log = counting.dir.path().join("ternd.log");
    let daemon = Daemon::spawn(&["--config", config], counting.dns, &log);
    let left_out = "query-stats: 1 zones are not counted";
    assert!(daemon.log_text().contains(left_out), "{}", daemon.log_text());
    counted_exactly(&counting);
    // a.test removed, e.test added with query-stats before d.test: it takes a.test's
    // row (the rows left go in the configuration's order), from 0; c.test keeps its
    // row and counts; d.test is still left out.
    counting.write(&[
        ("b.test", Some("false")),
        ("c.test", Some("template")),
        ("e.test", Some("true")),
        ("d.test", Some("true")),
    ]);
    daemon.signal(libc::SIGHUP);
    let reloaded = || daemon.log_text().contains("reload done");
    assert!(eventually(Duration::from_secs(10), reloaded), "{}", daemon.log_text());
    assert_eq!(daemon.log_text().matches(left_out).count(), 2, "at start, and at the reload");
    assert_eq!(counting.ask(20, "www.e.test", 1)[3] & 0x0f, 0, "NOERROR");
    assert_eq!(counting.ask(21, "www.a.test", 1)[3] & 0x0f, 5, "REFUSED: not served");
    counting.ask(22, "www.c.test", 1);
    let expected = series(&[
        ("responses", "c.test.", "NOERROR", 2.0),
        ("query_types", "c.test.", "TXT", 1.0),
        ("query_types", "c.test.", "A", 1.0),
        ("responses", "e.test.", "NOERROR", 1.0),
        ("query_types", "e.test.", "A", 1.0),
    ]);
    let (got, text) = counting.scrape();
    assert_eq!(got, expected, "{text}");
}

/// Queries of several types and rcodes over UDP and TCP to the zones of
/// [`query_stats_count_per_zone_within_the_limit`]: counted exactly, for a.test and
/// c.test only.
fn counted_exactly(counting: &Counting) {
    for (id, name, qtype) in [
        (1, "www.a.test", 1),
        (2, "www.a.test", 1),
        (3, "nope.a.test", 1),
        (4, "a.test", 15),
        (5, "www.b.test", 1),
        (6, "www.c.test", 16),
        (7, "www.d.test", 1),
        (8, "www.example.org", 1),
    ] {
        counting.ask(id, name, qtype);
    }
    let mut stream = tcp_connect(counting.dns);
    tcp_ask(&mut stream, &query_for(9, "www.a.test", 28, true)).unwrap();
    tcp_ask(&mut stream, &query_for(10, "mail.a.test", 15, false)).unwrap();
    let (got, text) = counting.scrape();
    // www.example.org (and the start-up probes, up.test) are REFUSED: in no zone.
    let refused = value(&parse(&text), "tern_responses_total", &[("rcode", "REFUSED")]);
    assert!(refused >= 1.0, "{text}");
    let expected = series(&[
        ("responses", "a.test.", "NOERROR", 5.0),
        ("responses", "a.test.", "NXDOMAIN", 1.0),
        ("query_types", "a.test.", "A", 3.0),
        ("query_types", "a.test.", "AAAA", 1.0),
        ("query_types", "a.test.", "MX", 2.0),
        ("responses", "c.test.", "NOERROR", 1.0),
        ("query_types", "c.test.", "TXT", 1.0),
    ]);
    assert_eq!(got, expected, "{text}");
}
