//! `ternctl`'s readable output: replies as text, times as "5m ago" and "in 1h 2m".

use std::fmt::Write as _;

use crate::proto::{Reply, ServerStatus, ZoneStatus};

/// How a list of zones is shown: the command decides, not how many zones there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZonesAs {
    /// One line a zone (`zone-list`).
    Table,
    /// Every field of each zone, a blank line between zones (`zone-status`).
    Detail,
}

/// `reply` as text (errors are printed by the caller), `now` in seconds since the epoch.
pub fn text(reply: &Reply, now: u64, zones_as: ZonesAs) -> String {
    match reply {
        Reply::Error { error } => format!("error: {error}\n"),
        Reply::Done { message } => format!("{message}\n"),
        Reply::Text { text } => text.clone(),
        Reply::Status(status) => server(status),
        Reply::Zones { zones } if zones_as == ZonesAs::Detail => {
            zones.iter().map(|z| detail(z, now)).collect::<Vec<_>>().join("\n")
        }
        Reply::Zones { zones } => table(zones),
        Reply::PerZone { results } => results
            .iter()
            .map(|r| match &r.outcome {
                Ok(done) => format!("{}: {done}\n", r.zone),
                Err(why) => format!("{}: error: {why}\n", r.zone),
            })
            .collect(),
    }
}

fn server(s: &ServerStatus) -> String {
    let config = s.config.as_deref().unwrap_or("(built in)");
    let xdp = if s.xdp {
        format!("; xdp: {} queries, {} answers", s.xdp_queries, s.xdp_answers)
    } else {
        String::new()
    };
    format!(
        "{}\npid {}, up {}, {} zones, configuration {config}\n\
         udp: {} queries, {} answers; tcp: {} connections, {} queries{xdp}\n",
        s.version,
        s.pid,
        span(s.uptime),
        s.zones,
        s.udp_queries,
        s.udp_answers,
        s.tcp_connections,
        s.tcp_queries
    )
}

/// One line per zone, columns aligned.
fn table(zones: &[ZoneStatus]) -> String {
    let width = zones.iter().map(|z| z.zone.len()).max().unwrap_or(4).max(4);
    let mut out =
        format!("{:<width$}  {:<9}  {:>10}  {:>9}  STATE\n", "ZONE", "ROLE", "SERIAL", "RECORDS");
    for z in zones {
        let serial = z.serial.map_or_else(|| "-".to_owned(), |s| s.to_string());
        let _ = writeln!(
            out,
            "{:<width$}  {:<9}  {serial:>10}  {:>9}  {}",
            z.zone,
            z.role,
            z.records,
            state(z)
        );
    }
    out
}

/// A zone's state in a word or two.
fn state(z: &ZoneStatus) -> String {
    let mut words = Vec::new();
    if z.serial.is_none() {
        words.push("not loaded");
    }
    if z.expired {
        words.push("expired");
    }
    if z.frozen {
        words.push("frozen");
    }
    if z.transaction {
        words.push("transaction open");
    }
    if z.last_error.is_some() {
        words.push("error");
    }
    if words.is_empty() {
        words.push("ok");
    }
    words.join(", ")
}

/// One zone in detail.
fn detail(z: &ZoneStatus, now: u64) -> String {
    let mut out = format!("zone:          {}\nrole:          {}\n", z.zone, z.role);
    let serial = z.serial.map_or_else(|| "- (nothing served)".to_owned(), |s| s.to_string());
    let _ = writeln!(out, "serial:        {serial}\nrecords:       {}", z.records);
    let _ = writeln!(out, "state:         {}", state(z));
    let mut time = |label: &str, at: Option<u64>| {
        if let Some(at) = at {
            let _ = writeln!(out, "{label:<14} {}", when(at, now));
        }
    };
    time("loaded:", z.loaded_at);
    time("last refresh:", z.last_refresh);
    time("next refresh:", z.next_refresh);
    time("expires:", z.expires_at);
    if let Some(bytes) = z.journal_bytes {
        let unflushed = if z.unflushed { " (holds updates the zone file lacks)" } else { "" };
        let _ = writeln!(out, "journal:       {bytes} bytes{unflushed}");
    }
    if let Some((at, why)) = &z.last_error {
        let _ = writeln!(out, "last error:    {} ({})", why, when(*at, now));
    }
    out
}

/// `at` relative to `now`: "5m 3s ago", "in 1h 2m", "now".
pub fn when(at: u64, now: u64) -> String {
    match at.cmp(&now) {
        std::cmp::Ordering::Less => format!("{} ago", span(now - at)),
        std::cmp::Ordering::Greater => format!("in {}", span(at - now)),
        std::cmp::Ordering::Equal => "now".into(),
    }
}

/// A duration in seconds as "2d 3h", "1h 2m", "5m 3s" or "42s".
pub fn span(seconds: u64) -> String {
    let (d, h, m, s) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::ZoneResult;

    #[test]
    fn times_read_naturally() {
        assert_eq!(span(42), "42s");
        assert_eq!(span(303), "5m 3s");
        assert_eq!(span(3720), "1h 2m");
        assert_eq!(span(2 * 86_400 + 3 * 3600 + 5), "2d 3h");
        assert_eq!(when(100, 160), "1m 0s ago");
        assert_eq!(when(160, 100), "in 1m 0s");
        assert_eq!(when(5, 5), "now");
    }

    #[test]
    fn the_xdp_path_shows_when_it_is_attached() {
        let mut s =
            ServerStatus { version: "ternd 1".into(), udp_queries: 2, ..Default::default() };
        assert!(!server(&s).contains("xdp"), "{}", server(&s));
        (s.xdp, s.xdp_queries, s.xdp_answers) = (true, 9, 8);
        assert!(server(&s).contains(
            "udp: 2 queries, 0 answers; tcp: 0 connections, 0 queries; xdp: 9 queries, 8 answers\n"
        ));
        // An older server's reply, without the XDP fields, still reads.
        let old = r#"{"version":"v","pid":1,"uptime":0,"config":null,"zones":0,"udp_queries":0,"udp_answers":0,"tcp_connections":0,"tcp_queries":0}"#;
        assert!(!serde_json::from_str::<ServerStatus>(old).unwrap().xdp);
    }

    #[test]
    fn zones_show_as_a_table_or_in_detail() {
        let a = ZoneStatus {
            zone: "a.example.".into(),
            role: "primary".into(),
            serial: Some(7),
            records: 3,
            loaded_at: Some(940),
            ..ZoneStatus::default()
        };
        let b = ZoneStatus {
            zone: "b.example.".into(),
            role: "secondary".into(),
            frozen: true,
            last_error: Some((990, "refresh failed: timeout".into())),
            ..ZoneStatus::default()
        };
        let both = Reply::Zones { zones: vec![a.clone(), b] };
        let table = text(&both, 1000, ZonesAs::Table);
        assert!(table.starts_with("ZONE"), "{table}");
        assert!(table.contains("not loaded, frozen, error"), "{table}");
        let details = text(&both, 1000, ZonesAs::Detail);
        assert!(details.contains("\n\nzone:          b.example."), "{details}");
        let one = Reply::Zones { zones: vec![a] };
        let detail = text(&one, 1000, ZonesAs::Detail);
        assert!(detail.contains("serial:        7") && detail.contains("loaded:        1m 0s ago"));
        assert!(text(&one, 1000, ZonesAs::Table).starts_with("ZONE"), "one zone, still a table");
        let results = Reply::PerZone {
            results: vec![ZoneResult { zone: "a.".into(), outcome: Err("not a secondary".into()) }],
        };
        assert_eq!(text(&results, 0, ZonesAs::Table), "a.: error: not a secondary\n");
    }
}
