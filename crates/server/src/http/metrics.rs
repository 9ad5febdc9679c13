//! `GET /metrics`: the counters in the Prometheus text format (version 0.0.4), written
//! by the `prometheus-client` crate's encoder.
//!
//! Nothing is kept here: every scrape reads the sources ([`Sources`]) and writes what
//! they hold now — the workers' query counters added up, the server's socket counters,
//! rate limiting's, the control plane's, each loaded zone's serial, and the per-zone
//! query counts of the zones that have them (`query-stats`).

use std::fmt;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use tern_wire::Name;
use tern_zone::ZoneDb;

use crate::counters::control::{control, ControlCounters, Direction};
use crate::counters::queries::{size_bound, QueryCounters, QueryTotals, ZoneTotals};
use crate::counters::queries::{QTYPES, SIZE_BUCKETS, TRANSPORTS};
use crate::counters::{Durations, RCODE_LABELS};
use crate::dns::EngineHandler;
use crate::io::tcp::ConnectionLimits;
use crate::stats::{QuicSnapshot, Stats};

/// The `Content-Type` of the answer.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Where the metrics are read from.
#[derive(Debug)]
pub struct Sources {
    /// The socket counters.
    pub stats: Arc<Stats>,
    /// The TCP connections open.
    pub connections: Arc<ConnectionLimits>,
    /// The TLS connections open, when DoT listens.
    pub tls_connections: Option<Arc<ConnectionLimits>>,
    /// The DoT settings in force (the certificate's end), when DoT listens.
    pub tls_serving: Option<crate::io::tls::TlsServing>,
    /// The query handler: the workers' counters and rate limiting's.
    pub handler: Arc<EngineHandler>,
    /// The served zones.
    pub zones: Arc<ZoneDb>,
}

/// The metrics: a registry whose one collector reads the [`Sources`] at each scrape.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
}

impl Metrics {
    /// Metrics read from `sources`, named `tern_…`.
    pub fn new(sources: Sources) -> Metrics {
        let mut registry = Registry::with_prefix("tern");
        registry.register_collector(Box::new(Arc::new(sources)));
        Metrics { registry }
    }

    /// The metrics as they are now, in the Prometheus text format.
    pub fn render(&self) -> Result<String, fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

impl Collector for Sources {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let e = &mut encoder;
        let query_counters = self.handler.query_counters();
        queries(e, &query_counters.sum())?;
        sockets(e, self)?;
        tls(e, self)?;
        quic(e, &self.stats.snapshot().quic)?;
        rate_limiting(e, &self.handler)?;
        zones(e, &self.zones)?;
        zone_queries(e, &self.zones, &query_counters)?;
        control_plane(e, control())
    }
}

/// Labels of one series: `(name, value)` pairs.
type Labels = Vec<(&'static str, String)>;

/// One label.
fn label(name: &'static str, value: impl ToString) -> Labels {
    vec![(name, value.to_string())]
}

/// A metric of `kind` with one series per `(labels, value)`.
fn family<V: Copy>(
    e: &mut DescriptorEncoder,
    (name, help, kind): (&str, &str, MetricType),
    series: impl IntoIterator<Item = (Labels, V)>,
) -> fmt::Result
where
    ConstCounter<V>: EncodeMetric,
    ConstGauge<V>: EncodeMetric,
{
    let mut metric = e.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in series {
        let labelled = metric.encode_family(&labels)?;
        match kind {
            MetricType::Gauge => ConstGauge::new(value).encode(labelled)?,
            _ => ConstCounter::new(value).encode(labelled)?,
        }
    }
    Ok(())
}

/// A counter with one series per `(labels, value)`.
fn counters(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (Labels, u64)>,
) -> fmt::Result {
    family(e, (name, help, MetricType::Counter), series)
}

/// A counter without labels.
fn counter(e: &mut DescriptorEncoder, name: &str, help: &str, value: u64) -> fmt::Result {
    let metric = e.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(value).encode(metric)
}

/// A histogram with one series per `(labels, (sum, count, buckets))`; buckets are
/// `(upper bound, count)`, not cumulative, the last bound infinite.
fn histograms<L: EncodeLabelSet>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (L, (f64, u64, Vec<(f64, u64)>))>,
) -> fmt::Result {
    let mut metric = e.encode_descriptor(name, help, None, MetricType::Histogram)?;
    for (labels, (sum, count, buckets)) in series {
        metric.encode_family(&labels)?.encode_histogram::<Labels>(sum, count, &buckets, None)?;
    }
    Ok(())
}

/// The data plane's counters.
fn queries(e: &mut DescriptorEncoder, t: &QueryTotals) -> fmt::Result {
    let by_transport = |values: [u64; TRANSPORTS.len()]| {
        TRANSPORTS.into_iter().zip(values).map(|(t, v)| (label("transport", t), v))
    };
    counters(e, "queries", "Queries received, by transport.", by_transport(t.queries))?;
    let qtypes = QTYPES.iter().map(ToString::to_string).chain(["other".to_owned()]);
    let by_type = qtypes.zip(t.qtypes).map(|(q, v)| (label("qtype", q), v));
    counters(e, "query_types", "Questions answered, by type (a fixed set, then other).", by_type)?;
    counter(e, "queries_dnssec_ok", "Questions answered that set the DO bit.", t.dnssec_ok)?;
    let by_rcode = RCODE_LABELS.iter().zip(t.rcodes).map(|(r, v)| (label("rcode", r), v));
    counters(e, "responses", "Responses sent, by rcode.", by_rcode)?;
    let help = "Responses sent with TC set, by transport.";
    counters(e, "responses_truncated", help, by_transport(t.truncated))?;
    let sizes = TRANSPORTS.into_iter().zip(t.sizes.iter().zip(t.size_sums)).map(
        |(transport, (buckets, sum))| {
            let bounds = (0..SIZE_BUCKETS).map(|i| size_bound(i) as f64);
            let mut buckets: Vec<(f64, u64)> = bounds.zip(buckets.iter().copied()).collect();
            buckets.push((f64::INFINITY, 0));
            let count = buckets.iter().map(|(_, c)| c).sum();
            (label("transport", transport), (sum as f64, count, buckets))
        },
    );
    histograms(e, "response_size_bytes", "Sizes of the responses sent, by transport.", sizes)
}

/// The socket counters and the TCP connections open.
fn sockets(e: &mut DescriptorEncoder, sources: &Sources) -> fmt::Result {
    let s = sources.stats.snapshot();
    counter(e, "udp_received", "UDP datagrams received.", s.udp_received)?;
    counter(e, "udp_sent", "UDP responses the kernel accepted.", s.udp_sent)?;
    counter(e, "udp_receive_errors", "Failed UDP receive calls.", s.udp_errors)?;
    counter(e, "tcp_accepted", "TCP connections accepted.", s.tcp_accepted)?;
    let help = "TCP connections closed at once: a connection limit was reached.";
    counter(e, "tcp_refused", help, s.tcp_refused)?;
    let help = "TCP connections evicted to make room for new ones.";
    counter(e, "tcp_evicted", help, sources.connections.evicted())?;
    let help = "TCP connections closed for taking too long, by what: idle (no query, or \
                a query too slow to arrive) or slow (the client not taking its answers).";
    let timed_out = [
        (label("reason", "idle"), s.tcp_closed_idle),
        (label("reason", "slow"), s.tcp_closed_slow),
    ];
    counters(e, "tcp_timed_out", help, timed_out)?;
    let open = sources.connections.open() as u64;
    let metric =
        e.encode_descriptor("tcp_connections", "TCP connections open.", None, MetricType::Gauge)?;
    ConstGauge::new(open).encode(metric)
}

/// DNS over TLS: connections and handshakes (all 0 when DoT is off).
fn tls(e: &mut DescriptorEncoder, sources: &Sources) -> fmt::Result {
    let s = sources.stats.snapshot();
    let help = "TLS connections whose handshake succeeded (and were served).";
    counter(e, "tls_accepted", help, s.tls_accepted)?;
    let help = "TLS connections closed at once: a connection limit was reached.";
    counter(e, "tls_refused", help, s.tls_refused)?;
    let help = "TLS handshakes that resumed a session (a ticket): no full handshake.";
    counter(e, "tls_resumed", help, s.tls_resumed)?;
    let help = "TLS handshakes that failed, by reason: timeout (handshake-timeout passed), \
                error (a protocol error, no common version or ALPN, a client certificate \
                refused, the client closing).";
    let failed = [
        (label("reason", "timeout"), s.tls_handshake_timeouts),
        (label("reason", "error"), s.tls_handshake_failures),
    ];
    counters(e, "tls_handshakes_failed", help, failed)?;
    let help = "TLS connections closed for taking too long, by what: idle or slow (as TCP's).";
    let timed_out = [
        (label("reason", "idle"), s.tls_closed_idle),
        (label("reason", "slow"), s.tls_closed_slow),
    ];
    counters(e, "tls_timed_out", help, timed_out)?;
    let evicted = sources.tls_connections.as_ref().map_or(0, |c| c.evicted());
    counter(e, "tls_evicted", "TLS connections evicted to make room for new ones.", evicted)?;
    let open = sources.tls_connections.as_ref().map_or(0, |c| c.open()) as u64;
    let help = "TLS connections open (handshakes included).";
    let metric = e.encode_descriptor("tls_connections", help, None, MetricType::Gauge)?;
    ConstGauge::new(open).encode(metric)?;
    let Some(expires) = sources.tls_serving.as_ref().and_then(|s| s.load().expires) else {
        return Ok(());
    };
    let help = "When the DoT certificate in force stops being valid (its notAfter), in \
                seconds since the epoch.";
    let name = "tls_certificate_expiry_timestamp_seconds";
    let metric = e.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(expires).encode(metric)
}

/// The DNS over QUIC counters and the connections open.
fn quic(e: &mut DescriptorEncoder, q: &QuicSnapshot) -> fmt::Result {
    let plain = [
        ("quic_accepted", "QUIC connections accepted (their handshake started).", q.accepted),
        ("quic_handshakes", "QUIC handshakes completed.", q.handshakes),
        ("quic_refused", "QUIC connections refused at a connection limit.", q.refused),
        (
            "quic_retries",
            "QUIC Retry packets sent: clients asked to prove their address.",
            q.retries,
        ),
        ("quic_evicted", "QUIC connections closed to make room for new ones.", q.evicted),
        ("quic_streams", "QUIC streams (queries) accepted.", q.streams),
        (
            "quic_streams_reset",
            "QUIC streams reset: their query did not arrive in time.",
            q.streams_reset,
        ),
        (
            "quic_protocol_errors",
            "QUIC connections closed for breaking DNS over QUIC.",
            q.protocol_errors,
        ),
        (
            "quic_early_held",
            "Transactions other than queries received in 0-RTT, held until the handshake.",
            q.early_held,
        ),
        (
            "quic_early_dropped",
            "Of those, the ones dropped: the handshake never completed.",
            q.early_dropped,
        ),
    ];
    for (name, help, value) in plain {
        counter(e, name, help, value)?;
    }
    let [timeout, tls, other] = q.failed;
    let help = "QUIC handshakes failed, by reason: timeout, tls (an alert), other.";
    let failed = [("timeout", timeout), ("tls", tls), ("other", other)];
    counters(e, "quic_handshakes_failed", help, failed.map(|(r, v)| (label("reason", r), v)))?;
    let metric = e.encode_descriptor(
        "quic_connections",
        "QUIC connections open, handshakes included.",
        None,
        MetricType::Gauge,
    )?;
    ConstGauge::new(q.open).encode(metric)
}

/// Rate limiting's and cookies' counters (zero when rate limiting is off).
fn rate_limiting(e: &mut DescriptorEncoder, handler: &EngineHandler) -> fmt::Result {
    let c = handler.rrl_counters().unwrap_or_default();
    let actions = [
        ("dropped", c.dropped),
        ("slipped", c.slipped),
        ("bad_cookie", c.bad_cookie),
        ("logged_only", c.logged_only),
    ];
    let help = "Responses over their rate, by what was done: dropped, slipped (sent with \
                TC), bad_cookie (sent as BADCOOKIE), logged_only (sent anyway).";
    counters(e, "rrl_limited", help, actions.map(|(a, v)| (label("action", a), v)))
}

/// The zones configured, and each loaded zone's serial.
fn zones(e: &mut DescriptorEncoder, db: &ZoneDb) -> fmt::Result {
    let set = db.snapshot();
    let configured = set.len() as u64;
    let metric = e.encode_descriptor("zones", "Zones configured.", None, MetricType::Gauge)?;
    ConstGauge::new(configured).encode(metric)?;
    let serials = set.slots().filter_map(|slot| {
        let serial = slot.contents_full()?.serial();
        Some((label("zone", slot.origin()), u64::from(serial)))
    });
    family(e, ("zone_serial", "Each loaded zone's SOA serial.", MetricType::Gauge), serials)
}

/// The counts of each zone counted (`query-stats`), in canonical order of the zones;
/// only the series that are not 0, as Knot DNS's `mod-stats` does, so that a zone
/// adds the lines of the rcodes and types it sees, not of all it could.
fn zone_queries(e: &mut DescriptorEncoder, db: &ZoneDb, c: &QueryCounters) -> fmt::Result {
    let set = db.snapshot();
    let mut counted: Vec<(&Name, ZoneTotals)> = set
        .slots()
        .filter_map(|slot| Some((slot.origin(), c.zone_sum(slot.stats_ticket())?)))
        .collect();
    counted.sort_by(|a, b| a.0.cmp(b.0));
    let by_rcode = zone_series(&counted, &RCODE_LABELS, |t| &t.rcodes, "rcode");
    let help = "Responses sent for each zone counted (query-stats), by rcode.";
    counters(e, "zone_responses", help, by_rcode)?;
    let qtypes: Vec<String> =
        QTYPES.iter().map(ToString::to_string).chain(["other".to_owned()]).collect();
    let by_type = zone_series(&counted, &qtypes, |t| &t.qtypes, "qtype");
    let help = "Questions answered for each zone counted (query-stats), by type.";
    counters(e, "zone_query_types", help, by_type)
}

/// The series of `counted` zones' `values`, labelled `zone` and `key` (the value's
/// label in `labels`), those that are not 0.
fn zone_series<'a, L: AsRef<str>>(
    counted: &'a [(&Name, ZoneTotals)],
    labels: &'a [L],
    values: fn(&ZoneTotals) -> &[u64],
    key: &'static str,
) -> impl Iterator<Item = (Labels, u64)> + 'a {
    counted.iter().flat_map(move |(zone, totals)| {
        let zone = zone.to_string();
        let nonzero = labels.iter().zip(values(totals)).filter(|(_, &v)| v > 0);
        nonzero.map(move |(l, &v)| (vec![("zone", zone.clone()), (key, l.as_ref().to_owned())], v))
    })
}

/// Loads, transfers, updates and journals.
fn control_plane(e: &mut DescriptorEncoder, c: &ControlCounters) -> fmt::Result {
    let read =
        |counter: &std::sync::atomic::AtomicU64| counter.load(std::sync::atomic::Ordering::Relaxed);
    let results = ["loaded", "unchanged", "failed"].into_iter().zip(&c.loads);
    let loads = results.map(|(r, v)| (label("result", r), read(v)));
    counters(e, "zone_loads", "Zone loads, by result.", loads)?;
    let help = "How long the zone loads that served a new version took.";
    histograms::<Labels>(
        e,
        "zone_load_duration_seconds",
        help,
        [(Vec::new(), c.load_durations.read())],
    )?;
    let directions = [("in", Direction::In), ("out", Direction::Out)];
    let results = directions.iter().flat_map(|&(name, d)| {
        let t = c.transfers(d);
        [("done", read(&t.done)), ("failed", read(&t.failed))]
            .map(|(r, v)| (vec![("direction", name.to_owned()), ("result", r.to_owned())], v))
    });
    let help = "Zone transfers, by direction and result (in: failed counts failed refreshes).";
    counters(e, "transfers", help, results)?;
    let bytes = directions.map(|(name, d)| (label("direction", name), read(&c.transfers(d).bytes)));
    counters(e, "transfer_bytes", "Bytes of the transfers done, by direction.", bytes)?;
    let durations: Vec<(Labels, &Durations)> = directions
        .iter()
        .map(|&(name, d)| (label("direction", name), &c.transfers(d).durations))
        .collect();
    let help = "How long the transfers done took, by direction.";
    histograms(
        e,
        "transfer_duration_seconds",
        help,
        durations.into_iter().map(|(l, d)| (l, d.read())),
    )?;
    let updates = RCODE_LABELS.iter().zip(&c.updates).map(|(r, v)| (label("rcode", r), read(v)));
    counters(e, "updates", "Dynamic updates answered, by rcode.", updates)?;
    let journals = c.journals().into_iter().map(|(zone, size)| (label("zone", zone), size));
    family(e, ("journal_bytes", "Each zone's journal size.", MetricType::Gauge), journals)?;
    let signed = c.signatures().into_iter().map(|(zone, at)| (label("zone", zone), at));
    let help = "Each zone signed here: when its first signature expires, at the earliest (seconds since the epoch).";
    family(e, ("zone_signatures_valid_until_seconds", help, MetricType::Gauge), signed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::handler::{Handler, RequestContext, Transport};

    /// What `/metrics` shows of `handler`'s counters and `zones`.
    fn scrape(handler: Arc<EngineHandler>, zones: Arc<ZoneDb>) -> String {
        let connections = ConnectionLimits::new(10, 10);
        let metrics = Metrics::new(Sources {
            stats: Arc::default(),
            connections,
            tls_connections: None,
            tls_serving: None,
            handler,
            zones,
        });
        metrics.render().unwrap()
    }

    #[test]
    fn a_scrape_adds_up_the_workers_and_names_every_family() {
        let config = Config::built_in(Vec::new(), Vec::new()).unwrap();
        let zones = Arc::new(ZoneDb::new());
        let handler = Arc::new(EngineHandler::new(&config, Arc::clone(&zones)));
        let ctx = RequestContext {
            transport: Transport::Tcp,
            client: "127.0.0.1:5300".parse().unwrap(),
            local: "127.0.0.1:53".parse().unwrap(),
            max_response: 65535,
            keepalive: None,
            tls: None,
        };
        // Two workers, one query each (a FORMERR: too short for a question); then an
        // AF_XDP worker's UDP query, counted as XDP's.
        let query = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        for _ in 0..2 {
            let mut scratch = handler.new_scratch();
            let mut batch = handler.begin_batch(&mut scratch);
            let _ = handler.handle(&mut batch, &query, &ctx, &mut [0u8; 65535]);
        }
        let mut scratch = handler.new_xdp_scratch();
        let mut batch = handler.begin_batch(&mut scratch);
        let udp = RequestContext { transport: Transport::Udp, max_response: 512, ..ctx };
        let _ = handler.handle(&mut batch, &query, &udp, &mut [0u8; 65535]);
        drop(batch);
        let text = scrape(handler, zones);
        assert!(text.contains("tern_queries_total{transport=\"tcp\"} 2\n"), "{text}");
        assert!(text.contains("tern_queries_total{transport=\"xdp\"} 1\n"), "{text}");
        assert!(text.contains("tern_queries_total{transport=\"udp\"} 0\n"), "{text}");
        let xdp_sizes = "tern_response_size_bytes_count{transport=\"xdp\"} 1\n";
        assert!(text.contains(xdp_sizes), "{text}");
        for family in [
            "tern_responses_total",
            "tern_response_size_bytes_bucket",
            "tern_tcp_connections 0",
            "tern_rrl_limited_total",
            "tern_zones 0",
            "tern_zone_load_duration_seconds_count",
            "tern_transfer_duration_seconds_bucket",
            "tern_updates_total",
        ] {
            assert!(text.contains(family), "{family} missing: {text}");
        }
    }

    /// The counted zones' series, in canonical order, only those not 0; a zone's name
    /// escaped as the text format requires (a label may hold `"` and `\`), and read
    /// back as it was.
    #[test]
    fn counted_zones_have_their_series_with_names_escaped() {
        let config = Config::built_in(Vec::new(), Vec::new()).unwrap();
        let names = ["b.example.", "q\\\"x\\\\y.example.", "quiet.example."];
        let slots: Vec<Arc<tern_zone::ZoneSlot>> = names
            .iter()
            .map(|n| Arc::new(tern_zone::ZoneSlot::new(&n.parse::<Name>().unwrap())))
            .collect();
        let zones = Arc::new(ZoneDb::new());
        zones.publish_set(tern_zone::ZoneSet::new(slots.clone()));
        let handler = Arc::new(EngineHandler::new(&config, Arc::clone(&zones)));
        let worker = handler.query_counters().register(false);
        for (i, slot) in slots.iter().take(2).enumerate() {
            let ticket = tern_zone::StatsTicket::new(i as u32, i as u32 + 1);
            slot.set_stats_ticket(ticket);
            worker.zone(ticket, Some(tern_wire::Rtype::TXT), Some(tern_wire::Rcode::NXDOMAIN));
        }
        let text = scrape(handler, zones);
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("tern_zone_re")).collect();
        assert_eq!(
            lines,
            [
                r#"tern_zone_responses_total{zone="b.example.",rcode="NXDOMAIN"} 1"#,
                r#"tern_zone_responses_total{zone="q\\\"x\\\\y.example.",rcode="NXDOMAIN"} 1"#,
            ],
            "{text}"
        );
        assert!(text.contains("tern_zone_query_types_total{zone=\"b.example.\",qtype=\"TXT\"} 1\n"));
        assert!(!text.contains("quiet.example.\",rcode"), "not counted: no series");
        // Read back as the format says (`prometheus-parse` leaves escapes as they are).
        let quoted = lines[1].split("zone=\"").nth(1).unwrap().split("\",rcode").next().unwrap();
        let mut read = String::new();
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            read.push(match c {
                '\\' => match chars.next().unwrap() {
                    'n' => '\n',
                    other => other,
                },
                c => c,
            });
        }
        assert_eq!(read, names[1]);
    }
}
