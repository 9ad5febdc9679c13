//! Parsing whole configuration files: defaults, every section, and located errors.

use super::*;
use tern_control::plan::ZonefileSync;

fn parse(text: &str) -> Result<Config> {
    Config::from_text(text, Path::new("/etc/tern/ternd.toml"))
}

fn error(text: &str) -> String {
    match parse(text) {
        Err(Error::Config(message)) => message,
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn empty_file_gives_the_defaults() {
    let config = parse("").unwrap();
    assert_eq!(config.server.listen.len(), 2);
    assert_eq!(config.server.udp_payload_max, 1232);
    assert_eq!(config.server.tsig_max_fudge, 300);
    assert_eq!(config.tcp.idle_timeout, Duration::from_secs(10));
    assert_eq!(config.tcp.max_connections, 1024);
    assert_eq!(config.tcp.max_connections_per_client, 64);
    assert_eq!(config.tcp.io_timeout, Duration::from_secs(2));
    assert!(config.tcp.defer_accept);
    assert_eq!(config.identity.nsid, Toggle::Off);
    assert_eq!(config.log.level, LevelFilter::INFO);
    assert!(config.resolved.zones.is_empty());
    assert!(config.udp_workers() >= 1);
}

#[test]
fn every_section() {
    let config = parse(
        r#"
        [server]
        listen = ["127.0.0.1:5353", "::1"]
        udp-workers = 3
        tcp-workers = 2
        udp-payload-max = 4096
        tsig-max-fudge = 60
        user = "nobody"
        pid-file = "run/ternd.pid"

        [tcp]
        idle-timeout = "3s"
        io-timeout = "500ms"
        max-connections = 10
        max-connections-per-client = 2
        max-queries-per-connection = 100
        defer-accept = false

        [identity]
        nsid = "ns1"
        version = false
        hostname = true

        [log]
        level = "debug"
        format = "json"

        [[zone]]
        name = "example.com"
        file = "example.com.zone"

        [[zone]]
        name = "example.net."
        file = "/var/lib/tern/example.net.zone"
        "#,
    )
    .unwrap();
    assert_eq!(config.server.listen[1].0.to_string(), "[::1]:53");
    assert_eq!(config.udp_workers(), 3);
    assert_eq!(config.tcp_workers(), 2);
    assert_eq!(config.server.tsig_max_fudge, 60);
    assert_eq!(config.server.pid_file.as_deref(), Some(Path::new("/etc/tern/run/ternd.pid")));
    assert_eq!(config.tcp.io_timeout, Duration::from_millis(500));
    assert_eq!(config.tcp.max_queries_per_connection, 100);
    assert!(!config.tcp.defer_accept);
    let identity = config.identity.resolve("host.example");
    assert_eq!(identity.nsid.as_deref(), Some("ns1"));
    assert_eq!(identity.version, None);
    assert_eq!(identity.hostname.as_deref(), Some("host.example"));
    assert_eq!(config.log.format, LogFormat::Json);
    assert_eq!(config.resolved.zones[0].name.to_string(), "example.com.");
    assert_eq!(
        config.resolved.zones[0].source,
        ZoneSource::File(PathBuf::from("/etc/tern/example.com.zone"))
    );
    assert_eq!(
        config.resolved.zones[1].source,
        ZoneSource::File(PathBuf::from("/var/lib/tern/example.net.zone"))
    );
}

#[test]
fn unknown_key_names_line_and_suggests() {
    let message = error("[server]\nlisten = [\"127.0.0.1\"]\nudp-worker = 2\n");
    assert!(
        message.starts_with("/etc/tern/ternd.toml:3:1: unknown field `udp-worker`"),
        "{message}"
    );
    assert!(message.contains("hint: did you mean `udp-workers`?"), "{message}");
}

#[test]
fn unknown_section() {
    let message = error("[sever]\nlisten = []\n");
    assert!(message.starts_with("/etc/tern/ternd.toml:1:"), "{message}");
    assert!(message.contains("did you mean `server`?"), "{message}");
}

#[test]
fn bad_values_point_at_the_value() {
    let cases = [
        ("[server]\nlisten = [\"1.2.3.4:99999\"]\n", "2:10", "not a listen address"),
        ("[server]\nudp-payload-max = 100\n", "2:19", "out of range"),
        ("[server]\ntsig-max-fudge = 0\n", "2:18", "out of range"),
        ("[server]\nudp-workers = 0\n", "2:15", "out of range"),
        ("[tcp]\nidle-timeout = \"ten\"\n", "2:16", "not a duration"),
        ("[tcp]\nidle-timeout = 10\n", "2:16", "invalid type"),
        ("[identity]\nnsid = \"\"\n", "2:8", "1 to 255 bytes"),
        ("[log]\nlevel = \"loud\"\n", "2:9", "not a log level"),
        ("[log]\nformat = \"xml\"\n", "2:10", "unknown variant"),
        ("[[zone]]\nname = \"a..b\"\nfile = \"x\"\n", "2:8", "not a domain name"),
        ("[[zone]]\nname = \"example.com\"\n", "1:1", "a primary zone needs `file`"),
        (
            "[[key]]\nname = \"k\"\nalgorithm = \"hmac-sha999\"\nsecret = \"AA==\"\n",
            "3:13",
            "unknown TSIG algorithm",
        ),
        ("[[acl]]\nid = \"a\"\naction = \"axfr\"\n", "3:10", "unknown action"),
        (
            "[[acl]]\nid = \"a\"\naddress = \"10.0.0.0/40\"\naction = \"transfer\"\n",
            "3:11",
            "not an address",
        ),
        ("[transfer]\nmax-zone-size = \"12X\"\n", "2:17", "not a size"),
    ];
    for (text, at, what) in cases {
        let message = error(text);
        let prefix = format!("/etc/tern/ternd.toml:{at}: ");
        assert!(message.starts_with(&prefix), "{text:?} gave {message}");
        assert!(message.contains(what), "{text:?} gave {message}");
        assert!(message.contains("\nhint: "), "{message}");
    }
}

#[test]
fn duplicate_zone_points_at_the_second() {
    let text = "[[zone]]\nname = \"a.\"\nfile = \"a\"\n\n[[zone]]\nname = \"A\"\nfile = \"b\"\n";
    let message = error(text);
    assert!(message.starts_with("/etc/tern/ternd.toml:5:"), "{message}");
    assert!(message.contains("zone A. is listed twice"), "{message}");
    assert!(message.contains("hint: each zone may be listed once"), "{message}");
}

#[test]
fn toml_syntax_error_is_located() {
    let message = error("[server]\nlisten = [\n");
    assert!(message.starts_with("/etc/tern/ternd.toml:"), "{message}");
}

#[test]
fn built_in_refuses_duplicates() {
    let zone = |name: &str| {
        ZoneConfig::primary(values::parse_zone_name(name).unwrap(), ZoneSource::Embedded(""))
    };
    assert!(Config::built_in(vec![], vec![zone("a"), zone("b")]).is_ok());
    assert!(Config::built_in(vec![], vec![zone("a"), zone("A.")]).is_err());
}

#[test]
fn every_error_of_a_file_is_reported() {
    let text = "[server]\nudp-workers = 0\n[tcp]\nidle-timeout = \"ten\"\n[[zone]]\nname = \"a..b\"\nfile = \"x\"\n[[zone]]\nname = \"ok\"\nfil = \"y\"\n";
    let message = error(text);
    for at in ["ternd.toml:2:15:", "ternd.toml:4:16:", "ternd.toml:6:8:", "ternd.toml:10:1:"] {
        assert!(message.contains(at), "{at} missing from {message}");
    }
}

#[test]
fn transfers_keys_remotes_acls_and_templates() {
    let config = parse(
        r#"
        [server]
        storage = "data"
        [[key]]
        name = "xfr.example"
        secret = "MDEyMzQ1Njc4OWFiY2RlZg=="
        [[remote]]
        id = "primary"
        address = ["192.0.2.1", "[2001:db8::1]:5300"]
        key = "xfr.example"
        [[remote]]
        id = "secondary"
        address = "192.0.2.2:53"
        [[acl]]
        id = "to-secondaries"
        address = ["192.0.2.0/24"]
        key = "xfr.example"
        action = ["transfer"]
        [[template]]
        id = "default"
        notify = "secondary"
        acl = "to-secondaries"
        [[zone]]
        name = "primary.example"
        file = "primary.zone"
        [[zone]]
        name = "secondary.example"
        primary = "primary"
        notify = []
        "#,
    )
    .unwrap();
    let plans = &config.resolved.zones;
    assert_eq!(config.resolved.keys.len(), 1);
    assert!(matches!(plans[0].role, Role::Primary));
    assert_eq!(plans[0].notify.len(), 1, "from the default template");
    assert_eq!(plans[0].rules.len(), 1);
    let Role::Secondary(primaries) = &plans[1].role else { panic!("not a secondary") };
    assert_eq!(primaries[0].addrs.len(), 2);
    assert!(primaries[0].key.is_some());
    assert!(plans[1].notify.is_empty(), "the zone's own empty list wins");
    assert_eq!(plans[1].rules.len(), 2, "the template's rule and the primary's NOTIFY rule");
    let ZoneSource::File(kept) = &plans[1].source else { panic!() };
    assert_eq!(kept, &PathBuf::from("/etc/tern/data/secondary.example.zone"));
}

#[test]
fn references_are_checked() {
    let cases = [
        ("[[zone]]\nname = \"a\"\nprimary = \"nope\"\n", "primary `nope` is not a [[remote]] id"),
        ("[[zone]]\nname = \"a\"\nfile = \"f\"\nacl = \"nope\"\n", "acl `nope` is not declared"),
        ("[[zone]]\nname = \"a\"\nfile = \"f\"\ntemplate = \"t\"\n", "template `t` is not declared"),
        ("[[remote]]\nid = \"r\"\naddress = \"127.0.0.1\"\nkey = \"k\"\n", "key `k` is not declared"),
        ("[[key]]\nname = \"k\"\n", "give the secret"),
        ("[[key]]\nname = \"k\"\nsecret = \"!!\"\n", "not usable base64"),
        ("[[key]]\nname = \"k\"\nsecret-file = \"/nonexistent/k\"\n", "cannot read"),
        ("[[remote]]\nid = \"r\"\naddress = \"127.0.0.1\"\n[[remote]]\nid = \"r\"\naddress = \"127.0.0.2\"\n", "declared twice"),
    ];
    for (text, what) in cases {
        let message = error(text);
        assert!(message.contains(what), "{text:?} gave {message}");
        assert!(message.starts_with("/etc/tern/ternd.toml:"), "{message}");
    }
}

#[test]
fn update_rules_and_the_serial_policy() {
    use tern_engine::{Action, OwnerMatch, Owners, SerialPolicy};
    use tern_wire::Rtype;
    let config = parse(
        r#"
        [[key]]
        name = "acme.example.com"
        secret = "MDEyMzQ1Njc4OWFiY2RlZg=="
        [[key]]
        name = "host.example.com"
        secret = "MDEyMzQ1Njc4OWFiY2RlZg=="
        [[acl]]
        id = "acme"
        key = "acme.example.com"
        action = "update"
        update-owner-name = ["_acme-challenge", "_acme-challenge.www", "_acme-challenge.other.org."]
        update-owner-match = "equal"
        update-type = "TXT"
        [[acl]]
        id = "self"
        key = "host.example.com"
        action = "update"
        update-owner = "key"
        update-type = ["A", "AAAA", "TYPE65534"]
        [[acl]]
        id = "apex"
        action = ["update", "transfer"]
        update-owner = "zone"
        update-owner-match = "sub"
        [[template]]
        id = "default"
        acl = ["acme", "self", "apex"]
        serial-policy = "dateserial"
        [[zone]]
        name = "example.com"
        file = "example.com.zone"
        [[zone]]
        name = "example.net"
        file = "example.net.zone"
        serial-policy = "unixtime"
        "#,
    )
    .unwrap();
    let plans = &config.resolved.zones;
    let names = |plan: usize| match &plans[plan].rules[0].update.owners {
        Owners::Names(names) => names.iter().map(ToString::to_string).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        names(0),
        [
            "_acme-challenge.example.com.",
            "_acme-challenge.www.example.com.",
            "_acme-challenge.other.org."
        ],
        "relative names end in each zone's name"
    );
    assert_eq!(names(1)[0], "_acme-challenge.example.net.");
    let acme = &plans[0].rules[0];
    assert_eq!(
        (acme.actions.as_slice(), acme.update.owner_match),
        (&[Action::Update][..], OwnerMatch::Equal)
    );
    assert_eq!(acme.update.types, [Rtype::TXT]);
    let own = &plans[0].rules[1];
    assert_eq!(
        (&own.update.owners, own.update.owner_match),
        (&Owners::Key, OwnerMatch::SubOrEqual)
    );
    assert_eq!(own.update.types, [Rtype::A, Rtype::AAAA, Rtype(65534)]);
    assert_eq!(plans[0].rules[2].update.owners, Owners::Zone);
    assert_eq!(plans[0].update.serial, SerialPolicy::DateSerial, "from the template");
    assert_eq!(plans[1].update.serial, SerialPolicy::UnixTime, "the zone's own");
}

#[test]
fn update_rules_are_checked() {
    let acl = |extra: &str| {
        format!("[[acl]]\nid = \"a\"\naction = \"update\"\n{extra}[[zone]]\nname = \"z\"\nfile = \"f\"\nacl = \"a\"\n")
    };
    let cases = [
        (
            "[[acl]]\nid = \"a\"\naction = \"transfer\"\nupdate-type = \"TXT\"\n".to_string(),
            "need `action = \"update\"`",
        ),
        (acl("update-owner = \"name\"\n"), "needs `update-owner-name`"),
        (
            acl("update-owner = \"key\"\nupdate-owner-name = \"x\"\n"),
            "goes with `update-owner = \"name\"`",
        ),
        (acl("update-owner-name = \"a..b\"\n"), "not a domain name"),
        (acl("update-type = \"AXFR\"\n"), "not a record type"),
        (acl("update-type = \"NOPE\"\n"), "not a record type"),
        (acl("update-owner = \"host\"\n"), "unknown variant"),
        (acl("update-owner-match = \"prefix\"\n"), "unknown update-owner-match"),
        (
            "[[zone]]\nname = \"z\"\nfile = \"f\"\nserial-policy = \"date\"\n".to_string(),
            "unknown serial-policy",
        ),
        (
            "[[acl]]\nid = \"a\"\naction = \"updates\"\n".to_string(),
            "expected `transfer`, `notify` or `update`",
        ),
    ];
    for (text, what) in cases {
        let message = error(&text);
        assert!(message.contains(what), "{text:?} gave {message}");
        assert!(message.starts_with("/etc/tern/ternd.toml:"), "{message}");
    }
}

/// The keys a table takes, as the code knows them: those its unknown-key error lists.
fn known_keys(table: &str) -> Vec<String> {
    let message = error(&format!("{table}\nzz-unknown = 1\n"));
    let (_, expected) = message.split_once("expected one of ").unwrap();
    let expected = expected.lines().next().unwrap();
    expected.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The part of `docs/configuration.md` under the heading that names `table`.
fn documented_section(table: &str) -> &'static str {
    let doc = crate::manpage::CONFIGURATION;
    let start = doc.find(&format!("## `{table}`")).unwrap_or_else(|| panic!("no {table} heading"));
    let rest = &doc[start + 3..];
    let level = if doc[..start].ends_with('#') { "\n### " } else { "\n## " };
    &rest[..rest.find(level).unwrap_or(rest.len())]
}

/// Every key the code reads is documented in its table's section of
/// `docs/configuration.md` (and so in ternd.toml(5), which is made from it).
#[test]
fn every_key_is_documented_where_its_table_is() {
    for table in [
        "server", "tcp", "identity", "log", "transfer", "rrl", "cookies", "control", "xdp", "http",
        "tls", "quic",
    ] {
        assert!(known_keys("").contains(&table.to_owned()), "{table}");
        let section = documented_section(&format!("[{table}]"));
        for key in known_keys(&format!("[{table}]")) {
            assert!(section.contains(&format!("`{key}`")), "[{table}] {key} is not documented");
        }
    }
    for table in ["key", "remote", "acl", "template", "zone", "policy", "database"] {
        assert!(known_keys("").contains(&table.to_owned()), "{table}");
        let section = documented_section(&format!("[[{table}]]"));
        for key in known_keys(&format!("[[{table}]]")) {
            assert!(section.contains(&format!("`{key}`")), "[[{table}]] {key} is not documented");
        }
    }
    assert_eq!(known_keys("").len(), 19, "a new table: add it above");
}

#[test]
fn xdp_section() {
    let config = parse("").unwrap();
    assert_eq!(config.xdp.interface, None, "off by default");
    let config = parse("[xdp]\ninterface = \"eth0\"\n").unwrap();
    assert_eq!(config.xdp.interface.as_deref(), Some("eth0"));
    assert_eq!(config.xdp.queues, XdpQueues::All);
    assert_eq!(config.xdp.mode, XdpMode::Auto);
    let config =
        parse("[xdp]\ninterface = \"eth0\"\nqueues = [0, 2]\nmode = \"generic\"\n").unwrap();
    assert_eq!(config.xdp.queues, XdpQueues::List(vec![0, 2]));
    assert_eq!(config.xdp.mode, XdpMode::Generic);
    assert!(error("[xdp]\nqueues = \"some\"\n").contains("write `\"all\"`"));
    assert!(error("[xdp]\nqueues = [1, 1]\n").contains("listed twice"));
    assert!(error("[xdp]\nqueues = []\n").contains("1 to 256"));
    assert!(error("[xdp]\nmode = \"fast\"\n").contains("unknown variant"));
    assert!(error("[xdp]\ninterfce = \"eth0\"\n").contains("unknown field"));
}

/// Every key the code reads appears in `docs/ternd.example.toml` under its table, set
/// or commented out with its default (issue 50): adding a key to the configuration
/// without it fails here.
#[test]
fn every_key_is_in_the_example_configuration() {
    let example = include_str!("../../../../docs/ternd.example.toml");
    let mut sections: std::collections::HashMap<String, String> = Default::default();
    let mut current = String::new();
    for line in example.lines() {
        let header = line.trim_start_matches('#').trim();
        if header.starts_with('[') && header.ends_with(']') {
            current = header.to_owned();
            continue;
        }
        let entry = sections.entry(current.clone()).or_default();
        entry.push_str(line);
        entry.push('\n');
    }
    let tables: Vec<String> = [
        "server", "tcp", "identity", "log", "transfer", "rrl", "cookies", "control", "xdp", "http",
        "tls", "quic",
    ]
    .iter()
    .map(|t| format!("[{t}]"))
    .chain(
        ["key", "remote", "acl", "template", "zone", "policy", "database"]
            .iter()
            .map(|t| format!("[[{t}]]")),
    )
    .collect();
    let mut missing = Vec::new();
    for table in &tables {
        let section = sections.get(table).map_or("", String::as_str);
        for key in known_keys(table) {
            let present = section.lines().any(|line| {
                let line = line.trim_start_matches('#').trim_start();
                line.strip_prefix(key.as_str())
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
            });
            if !present {
                missing.push(format!("{table} {key}"));
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/ternd.example.toml: {}", missing.join(", "));
}

#[test]
fn a_remotes_via_is_one_address_per_family() {
    let remote = |via: &str| {
        format!(
            "[[remote]]\nid = \"p\"\naddress = [\"192.0.2.1\", \"[2001:db8::1]:5300\"]\nvia = {via}\n\
             [[zone]]\nname = \"s.example\"\nprimary = \"p\"\n"
        )
    };
    let config = parse(&remote(r#"["192.0.2.53", "2001:db8::53"]"#)).unwrap();
    let Role::Secondary(primaries) = &config.resolved.zones[0].role else {
        panic!("not a secondary")
    };
    let (v4, v6) = (primaries[0].addrs[0], primaries[0].addrs[1]);
    assert_eq!(primaries[0].source_for(v4), Some("192.0.2.53".parse().unwrap()));
    assert_eq!(primaries[0].source_for(v6), Some("2001:db8::53".parse().unwrap()));
    let config = parse(&remote(r#""192.0.2.53""#)).unwrap();
    let Role::Secondary(primaries) = &config.resolved.zones[0].role else {
        panic!("not a secondary")
    };
    assert_eq!(primaries[0].source_for(v6), None, "no IPv6 via: the kernel chooses");

    let two = error(&remote(r#"["192.0.2.53", "192.0.2.54"]"#));
    assert!(two.contains(":1:") && two.contains("at most one IPv4 and one IPv6"), "{two}");
    let any = error(&remote(r#""0.0.0.0""#));
    assert!(any.contains("via 0.0.0.0: give an address of this host"), "{any}");
    let bad = error(&remote(r#""host.example""#));
    assert!(bad.contains(":4:") && bad.contains("`host.example` is not an IP address"), "{bad}");
}

#[test]
fn zonefile_sync_takes_a_duration_or_never() {
    let zone = |sync: &str| {
        format!("[[zone]]\nname = \"a.example\"\nfile = \"a.zone\"\nzonefile-sync = \"{sync}\"\n")
    };
    let config = parse(&zone("never")).unwrap();
    assert_eq!(config.resolved.zones[0].zonefile_sync, ZonefileSync::Never);
    let config = parse(&zone("5m")).unwrap();
    assert_eq!(
        config.resolved.zones[0].zonefile_sync,
        ZonefileSync::After(Duration::from_secs(300))
    );
    let bad = error(&zone("sometimes"));
    assert!(bad.contains("`sometimes` is not a duration") && bad.contains("or \"never\""), "{bad}");
}

/// A bad value among a zone's own settings is shown at its key's line, named, not at
/// the `[[zone]]` line.
#[test]
fn a_bad_zone_setting_is_shown_at_its_line() {
    let text =
        "[[zone]]\nname = \"a.example\"\nfile = \"a.zone\"\n\n[[zone]]\nname = \"b.example\"\n\
                file = \"b.zone\"\nnotify = []\nzonefile-sync = \"sometimes\"\n";
    let bad = error(text);
    assert!(bad.contains(":9:17: zone b.example.: `zonefile-sync`: `sometimes`"), "{bad}");
    let bad = error(&text.replace("zonefile-sync = \"sometimes\"", "ixfr-history = -3"));
    assert!(bad.contains(":9:16: zone b.example.: `ixfr-history`: "), "{bad}");
}

#[test]
fn query_stats_comes_from_the_zone_or_its_template_within_the_limit() {
    let config = parse(
        r#"
        [server]
        query-stats-max-zones = 1
        [[template]]
        id = "counted"
        query-stats = true
        [[zone]]
        name = "a.example"
        file = "a"
        template = "counted"
        [[zone]]
        name = "b.example"
        file = "b"
        [[zone]]
        name = "c.example"
        file = "c"
        query-stats = true
        [[zone]]
        name = "d.example"
        file = "d"
        template = "counted"
        query-stats = false
        "#,
    )
    .unwrap();
    let counted: Vec<bool> = config.resolved.zones.iter().map(|p| p.query_stats).collect();
    assert_eq!(counted, [true, false, true, false]);
    assert_eq!(config.query_stats_rows(), 1);
    let left_out: Vec<String> =
        config.query_stats_left_out().iter().map(ToString::to_string).collect();
    assert_eq!(left_out, ["c.example."]);
    let defaults = parse("").unwrap();
    assert_eq!(defaults.server.query_stats_max_zones, 1000);
    assert!(defaults.query_stats_left_out().is_empty());
}

#[test]
fn bad_query_stats_values_are_located() {
    let cases = [
        ("[server]\nquery-stats-max-zones = 100001\n", "2:25", "out of range"),
        ("[[template]]\nid = \"t\"\nquery-stats = \"yes\"\n", "3:15", "invalid type"),
    ];
    for (text, at, what) in cases {
        let message = error(text);
        let prefix = format!("/etc/tern/ternd.toml:{at}: ");
        assert!(message.starts_with(&prefix), "{text:?} gave {message}");
        assert!(message.contains(what), "{text:?} gave {message}");
    }
    let message = error("[[zone]]\nname = \"a\"\nfile = \"a\"\nquery-stats = 1\n");
    assert!(
        message.starts_with("/etc/tern/ternd.toml:4:15: zone a.: `query-stats`: "),
        "{message}"
    );
    assert!(message.contains("invalid type"), "{message}");
}

/// `[[remote]]` over TLS (RFC 9103): the settings each way of checking the primary
/// takes, and what is said when they do not fit together.
#[test]
fn a_remote_over_tls() {
    let testdata = concat!(env!("CARGO_MANIFEST_DIR"), "/src/tls/testdata");
    let pin = std::fs::read_to_string(format!("{testdata}/ns1.pin")).unwrap();
    let remote = |settings: &str| {
        format!(
            "[[remote]]\nid = \"p\"\naddress = [\"192.0.2.1\", \"192.0.2.2:8853\"]\n{settings}\n\
             [[zone]]\nname = \"s.example\"\nprimary = \"p\"\nnotify = \"p\"\n"
        )
    };
    let config = parse(&remote(&format!("tls = true\ncert-key = \"{}\"", pin.trim()))).unwrap();
    let Role::Secondary(primaries) = &config.resolved.zones[0].role else { panic!() };
    let p = &primaries[0];
    assert_eq!(p.addrs[0].port(), 853, "no port written: DoT's");
    assert_eq!(p.addrs[1].port(), 8853);
    assert_eq!(&*p.tls.as_ref().unwrap().auth, "key pin");
    assert_eq!(p.notify_addr(p.addrs[1]).port(), 53, "NOTIFY stays on UDP port 53");
    let by_name =
        format!("tls = true\ntls-hostname = \"ns1.example\"\ntls-ca = \"{testdata}/ca.pem\"");
    let config = parse(&remote(&by_name)).unwrap();
    let Role::Secondary(primaries) = &config.resolved.zones[0].role else { panic!() };
    assert_eq!(&*primaries[0].tls.as_ref().unwrap().auth, "name ns1.example");
    let config = parse(&remote("tls = \"opportunistic\"")).unwrap();
    let Role::Secondary(primaries) = &config.resolved.zones[0].role else { panic!() };
    assert_eq!(&*primaries[0].tls.as_ref().unwrap().auth, "opportunistic");
    let config = parse(&remote("tls = false")).unwrap();
    let Role::Secondary(primaries) = &config.resolved.zones[0].role else { panic!() };
    assert!(primaries[0].tls.is_none());
    assert_eq!(primaries[0].addrs[0].port(), 53);

    let cases = [
        ("tls = true", "needs a way to authenticate the primary: `tls-hostname"),
        ("tls-hostname = \"ns1.example\"", "add `tls = true`"),
        ("cert-key = \"AAAA\"", "add `tls = true`"),
        ("tls = \"opportunistic\"\ncert-key = \"AAAA\"", "opportunistic TLS checks no certificate"),
        ("tls = true\ncert-key = \"AAAA\"", "`AAAA` is not a key pin"),
        (
            "tls = true\ntls-ca = \"ca.pem\"\ncert-key = \"AAAA\"",
            "`tls-ca` checks the certificate for `tls-hostname`",
        ),
        (
            "tls = true\ntls-hostname = \"not a name\"",
            "tls-hostname `not a name` is not a host name",
        ),
        (
            "tls = true\ntls-hostname = \"ns1.example\"\ntls-ca = \"/nonexistent/ca.pem\"",
            "/nonexistent/ca.pem",
        ),
        (
            "tls = \"opportunistic\"\ntls-client-certificate = \"c.pem\"",
            "`tls-client-certificate` and `tls-client-key` go together",
        ),
        ("tls = \"yes\"", "expected true, false or \"opportunistic\""),
    ];
    for (settings, what) in cases {
        let message = error(&remote(settings));
        assert!(message.contains(what), "{settings:?} gave {message}");
        assert!(message.contains("remote p") || message.contains(":4:"), "{message}");
    }
    let bad = error("[[remote]]\nid = \"p\"\naddress = \"ns1.example\"\n");
    assert!(bad.contains("`ns1.example` is not an address"), "{bad}");
}

/// DoQ presents `[tls]`'s certificate: `[quic] listen` without one is an error that
/// points at the table, with or without a `[tls]` table.
#[test]
fn quic_needs_the_tls_certificate() {
    let message = error("[server]\nlisten = [\"127.0.0.1:53\"]\n[quic]\nlisten = \"127.0.0.1\"\n");
    assert!(message.contains("ternd.toml:3:"), "{message}");
    assert!(message.contains("need `certificate` and `key`"), "{message}");
    let message = error("[tls]\nmin-version = \"1.3\"\n[quic]\nlisten = \"127.0.0.1\"\n");
    assert!(message.contains("ternd.toml:1:"), "{message}");
    let config = parse(
        "[tls]\ncertificate = \"/c.pem\"\nkey = \"/k.pem\"\n[quic]\nlisten = \"127.0.0.1\"\n",
    )
    .unwrap();
    assert_eq!(config.quic.listen, ["127.0.0.1:853".parse().unwrap()]);
}

#[test]
fn a_zone_has_a_file_or_a_script_with_its_bounds() {
    let zone = |extra: &str| format!("[[zone]]\nname = \"s.example\"\n{extra}");
    let config = parse(&zone(
        "script = \"s.lua\"\nscript-max-memory = \"32M\"\nscript-max-instructions = 5000\n",
    ))
    .unwrap();
    let ZoneSource::Script(script) = &config.resolved.zones[0].source else {
        panic!("not a script zone: {:?}", config.resolved.zones[0].source)
    };
    assert_eq!(script.path, Path::new("/etc/tern/s.lua"), "relative to the configuration");
    assert_eq!((script.max_memory, script.max_instructions), (32 << 20, 5000));
    let both = error(&zone("file = \"s.zone\"\nscript = \"s.lua\"\n"));
    assert!(both.contains(":1:") && both.contains("`file` and `script` both given"), "{both}");
    let bounds = error(&zone("file = \"s.zone\"\nscript-max-instructions = 10\n"));
    assert!(bounds.contains("need `script`"), "{bounds}");
    let secondary = error(&format!(
        "[[remote]]\nid = \"p\"\naddress = \"192.0.2.1\"\n{}",
        zone("script = \"s.lua\"\nprimary = \"p\"\n")
    ));
    assert!(secondary.contains("`script` is for primary zones"), "{secondary}");
}

/// Every setting the example shows commented out in `[[template]]` reads as written
/// once uncommented (the documented `"1d"` once did not).
#[test]
fn the_example_templates_commented_values_read() {
    let example = include_str!("../../../../docs/ternd.example.toml");
    let after = |table: &str| example.split(table).nth(1).unwrap();
    let template = after("[[template]]").split("# Online DNSSEC").next().unwrap();
    let policy = after("# [[policy]]").split("[[zone]]").next().unwrap();
    for (table, section, least) in [("template", template, 10), ("policy", policy, 20)] {
        let mut checked = 0;
        for line in section.lines().filter_map(|l| l.strip_prefix("# ")) {
            let setting = line.split(" #").next().unwrap().trim();
            if !setting.contains(" = ") || setting.starts_with("id =") {
                continue;
            }
            let nsec3 = if setting.starts_with("nsec3-") { "denial = \"nsec3\"\n" } else { "" };
            let text = format!("[[{table}]]\nid = \"t\"\n{nsec3}{setting}\n");
            assert!(parse(&text).is_ok(), "{setting}: {:?}", parse(&text).err());
            checked += 1;
        }
        assert!(checked >= least, "{table}: {checked} settings read");
    }
}

/// Two remotes (`one`, `two`) and an ACL that completes owner names with each zone's
/// name (`acme`).
const REMOTES_AND_ACME: &str = r#"
        [[remote]]
        id = "one"
        address = "192.0.2.1"
        [[remote]]
        id = "two"
        address = "192.0.2.2"
        [[acl]]
        id = "acme"
        action = "update"
        update-owner-name = "_acme-challenge"
"#;

/// A configuration of zones that name template `t` and nothing else, one zone that
/// also sets its own `notify`, and one whose template completes owner names with its
/// name; `t` notifies `notified`.
fn template_zones(notified: &str) -> Config {
    parse(&format!(
        r#"{REMOTES_AND_ACME}
        [[template]]
        id = "t"
        notify = "{notified}"
        ixfr-history = 7
        [[template]]
        id = "named"
        acl = "acme"
        [[zone]]
        name = "a.example"
        file = "a.zone"
        template = "t"
        [[zone]]
        name = "b.example"
        file = "b.zone"
        template = "t"
        [[zone]]
        name = "c.example"
        file = "c.zone"
        template = "t"
        notify = []
        [[zone]]
        name = "d.example"
        file = "d.zone"
        template = "named"
        [[zone]]
        name = "e.example"
        file = "e.zone"
        template = "named"
        "#
    ))
    .unwrap()
}

#[test]
fn zones_that_name_only_their_template_share_its_settings() {
    let config = template_zones("one");
    let [a, b, c, d, e] = &config.resolved.zones[..] else { panic!("five zones") };
    assert!(Arc::ptr_eq(&a.settings, &b.settings), "one value for the template's zones");
    assert_eq!(
        (a.name.to_string(), b.name.to_string()),
        ("a.example.".into(), "b.example.".into())
    );
    assert_ne!(a.source, b.source, "each its own file");
    assert_eq!(a.notify[0].id, "one");
    assert_eq!(a.history.max_changes, 7);
    assert!(!Arc::ptr_eq(&a.settings, &c.settings), "a zone with settings of its own");
    assert!(c.notify.is_empty());
    assert_eq!(c.history.max_changes, 7, "and the template's others");
    assert!(!Arc::ptr_eq(&d.settings, &e.settings), "owner names completed with each zone's");
    let owners = |p: &ZonePlan| p.rules[0].update.owners.clone();
    assert_ne!(owners(d), owners(e));
    assert!(config.producers().is_empty(), "no table kept once resolved");
}

#[test]
fn zones_that_set_the_same_of_their_own_share_their_settings() {
    let config = parse(&format!(
        r#"{REMOTES_AND_ACME}
        [[zone]]
        name = "a.example"
        primary = "one"
        [[zone]]
        name = "b.example"
        primary = "one"
        [[zone]]
        name = "c.example"
        primary = "two"
        [[zone]]
        name = "d.example"
        file = "d.zone"
        acl = "acme"
        [[zone]]
        name = "e.example"
        file = "e.zone"
        acl = "acme"
        "#
    ))
    .unwrap();
    let [a, b, c, d, e] = &config.resolved.zones[..] else { panic!("five zones") };
    assert!(Arc::ptr_eq(&a.settings, &b.settings), "two secondaries of one primary");
    assert_ne!(a.source, b.source, "each its own copy");
    assert!(!Arc::ptr_eq(&a.settings, &c.settings), "another primary");
    let Role::Secondary(primaries) = &c.role else { panic!("not a secondary") };
    assert_eq!(primaries[0].id, "two");
    assert!(!Arc::ptr_eq(&d.settings, &e.settings), "owner names completed with each zone's");
    let owners = |p: &ZonePlan| p.rules[0].update.owners.clone();
    assert_ne!(owners(d), owners(e));
}

#[test]
fn zones_added_later_share_the_settings_of_the_served_zones_alike() {
    let config = parse(
        r#"
        [[remote]]
        id = "p"
        address = "192.0.2.1"
        [[zone]]
        name = "a.example"
        primary = "p"
        [[zone]]
        name = "b.example"
        file = "b.zone"
        "#,
    )
    .unwrap();
    let batch = r#"
        [[zone]]
        name = "c.example"
        primary = "p"
        [[zone]]
        name = "d.example"
        file = "d.zone"
        "#;
    let added = config.read_new_zones(batch, Path::new("/etc/tern/added.toml"), [].iter());
    let (zones, plans) = added.expect("no produced catalog").unwrap();
    assert_eq!(zones.len(), 2);
    let [a, b] = &config.resolved.zones[..] else { panic!("two zones") };
    assert!(Arc::ptr_eq(&plans[0].settings, &a.settings), "a secondary of the same primary");
    assert!(Arc::ptr_eq(&plans[1].settings, &b.settings), "a zone that sets nothing");
    assert_eq!(plans[0].name.to_string(), "c.example.");
}

#[test]
fn a_changed_template_reaches_every_zone_that_uses_it() {
    let before = template_zones("one");
    let after = template_zones("two");
    let notified = |config: &Config| -> Vec<String> {
        config
            .resolved
            .zones
            .iter()
            .map(|p| p.notify.iter().map(|r| r.id.clone()).collect())
            .collect()
    };
    assert_eq!(notified(&before), ["one", "one", "", "", ""]);
    assert_eq!(notified(&after), ["two", "two", "", "", ""]);
}

#[test]
fn a_plan_changed_alone_gets_its_own_settings() {
    let config = template_zones("one");
    let mut a = ZonePlan::clone(&config.resolved.zones[0]);
    a.query_stats = true;
    assert!(a.query_stats);
    assert!(!config.resolved.zones[1].query_stats, "the others keep the shared value");
}

/// Many zone tables, each parsed on its own (see `layout`): an error in the 500th is
/// shown at its own line, whatever the kind of error.
#[test]
fn an_error_in_the_500th_zone_table_is_shown_at_its_line() {
    let zones = |bad: &str| {
        let mut text = String::from("[server]\nstorage = \"data\"\n");
        for n in 1..=1000 {
            match n {
                500 => text += bad,
                _ => text += &format!("[[zone]]\nname = \"z{n}.example\"\nfile = \"z{n}.zone\"\n"),
            }
        }
        text
    };
    // The 500th table starts on line 3 + 3 × 499.
    let header = 3 + 3 * 499;
    let cases = [
        ("[[zone]]\nname = \"a..b\"\nfile = \"x\"\n", header + 1, 8, "not a domain name"),
        ("[[zone]]\nname = \"x.example\"\nfil = \"x\"\n", header + 2, 1, "unknown field `fil`"),
        (
            "[[zone]]\nname = \"x.example\"\nnotify = 3\n",
            header + 2,
            10,
            "zone x.example.: `notify`",
        ),
        ("[[zone]]\nname = \"x.example\"\n# no file\n", header, 1, "a primary zone needs `file`"),
        ("[[zone]]\nname = \"z1.example\"\nfile = \"y\"\n", header, 1, "listed twice"),
        ("[[zone]]\nname = \"x.example\"\nfile = \"z1.zone\"\nprimary = []\n", header, 1, ""),
    ];
    for (bad, line, column, what) in cases {
        let text = zones(bad);
        if what.is_empty() {
            assert!(parse(&text).is_ok(), "{bad}: two primaries may share a file");
            continue;
        }
        let message = error(&text);
        let at = format!("/etc/tern/ternd.toml:{line}:{column}: ");
        assert!(message.starts_with(&at), "{bad:?}: {message}");
        assert!(message.contains(what), "{bad:?}: {message}");
        assert_eq!(message.matches("ternd.toml:").count(), 1, "{message}");
    }
    let config = parse(&zones("")).unwrap();
    assert_eq!(config.resolved.zones.len(), 999);
    assert_eq!(config.resolved.zones[998].name.to_string(), "z1000.example.");
}

/// A `[[zone]]` line inside a multi-line string is part of the string (the file is
/// then parsed whole, as the cut there does not hold), and errors after it are still
/// shown at their lines.
#[test]
fn a_zone_header_inside_a_multi_line_string_is_text() {
    for quotes in ["\"\"\"", "'''"] {
        let text = format!(
            "[[zone]]\nname = \"a.example\"\nfile = {quotes}\n[[zone]]\nname = \"b.example\"\n{quotes}\n\
             [[zone]]\nname = \"c.example\"\nfile = \"c.zone\"\n"
        );
        let config = parse(&text).unwrap();
        let names: Vec<String> = config.resolved.zones.iter().map(|p| p.name.to_string()).collect();
        assert_eq!(names, ["a.example.", "c.example."], "{text}");
        let ZoneSource::File(file) = &config.resolved.zones[0].source else { panic!() };
        assert!(file.ends_with("[[zone]]\nname = \"b.example\"\n"), "{file:?}");
        let bad = error(&text.replace("c.example", "c..example"));
        assert!(bad.starts_with("/etc/tern/ternd.toml:8:8: "), "{bad}");
    }
    let text = "[server]\nuser = \"\"\"\n[[zone]]\nname = \"b.example\"\n\"\"\"\n[[zone]]\nname = \"c.example\"\nfile = \"c\"\n";
    let config = parse(text).unwrap();
    assert_eq!(config.server.user.as_deref(), Some("[[zone]]\nname = \"b.example\"\n"));
    assert_eq!(config.resolved.zones.len(), 1);
}

/// Zones however TOML allows them to be written: between other tables, as an inline
/// array, with the key quoted; and what is not a zone table.
#[test]
fn zone_tables_however_written() {
    let text = "[[zone]]\nname = \"a\"\nfile = \"a\"\n[log]\nlevel = \"warn\"\n  [[ \"zone\" ]]  # b\nname = \"b\"\nfile = \"b\"\n[server]\nstorage = \"s\"\n[[zone]]\nname = \"c\"\nfile = \"c\"\n";
    let config = parse(text).unwrap();
    let names: Vec<String> = config.resolved.zones.iter().map(|p| p.name.to_string()).collect();
    assert_eq!(names, ["a.", "b.", "c."]);
    assert_eq!(
        (config.log.level, config.server.storage.as_path()),
        (LevelFilter::WARN, Path::new("/etc/tern/s"))
    );
    let inline =
        parse("zone = [{ name = \"a\", file = \"a\" }, { name = \"b\", file = \"b\" }]\n").unwrap();
    assert_eq!(inline.resolved.zones.len(), 2);
    let bad = error("[[zone]]\nname = \"a\"\nfile = \"a\"\n[zone.x]\ny = 1\n");
    assert!(bad.starts_with("/etc/tern/ternd.toml:"), "{bad}");
    let bad = error("[[zone]]\nname = \"a\"\nfile = \"a\"\n[log]\nlevel = \"loud\"\n[[zone]]\nname = \"b\"\nfil = \"b\"\n");
    assert!(
        bad.starts_with("/etc/tern/ternd.toml:5:9: ")
            && bad.contains("\n/etc/tern/ternd.toml:8:1: "),
        "{bad}"
    );
}

/// A zone of no settings of its own takes the empty template's without reading it:
/// the same value as reading one.
#[test]
fn the_settings_of_a_zone_of_none_are_the_empty_templates() {
    let mut table = toml::Table::new();
    table.insert("id".into(), toml::Value::String(String::new()));
    let read = xfr::TemplateConfig::deserialize(toml::Value::Table(table)).unwrap();
    assert_eq!(read, xfr::TemplateConfig::default());
}

/// The file of added zones is read with the configuration file, once; the file's own
/// errors come first, as when it is read alone, and those the added zones bring are
/// shown in their file.
#[test]
fn the_added_zones_are_read_with_the_file_and_its_errors_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let storage = dir.path().join("s");
    std::fs::create_dir(&storage).unwrap();
    let main = dir.path().join("ternd.toml");
    let zone = "[[zone]]\nname = \"a.example\"\nfile = \"a\"\n";
    std::fs::write(&main, format!("[server]\nstorage = \"s\"\n{zone}")).unwrap();
    let added = storage.join(ADDED_ZONES);
    std::fs::write(&added, "[[zone]]\nname = \"b.example\"\nfile = \"/z/b\"\n").unwrap();
    let config = Config::from_file(&main).unwrap();
    assert_eq!(config.zones_split().0.len(), 1);
    assert_eq!(config.zones_split().1[0].name.to_string(), "b.example.");
    assert_eq!(config.added_log.tables, 1);
    std::fs::write(&added, "[[zone]]\nname = \"A.example\"\nfile = \"/z/b\"\n").unwrap();
    let twice = Config::from_file(&main).unwrap_err().to_string();
    assert!(
        twice.starts_with(&format!("{}:1:1: zone A.example. is listed twice", added.display())),
        "{twice}"
    );
    std::fs::write(&main, format!("[server]\nstorage = \"s\"\nudp-workers = 0\n{zone}")).unwrap();
    let own = Config::from_file(&main).unwrap_err().to_string();
    assert!(own.starts_with(&format!("{}:3:15: ", main.display())), "{own}");
    assert!(!own.contains(ADDED_ZONES), "{own}");
    std::fs::remove_file(&added).unwrap();
    std::fs::create_dir(&added).unwrap();
    let own = Config::from_file(&main).unwrap_err().to_string();
    assert!(own.starts_with(&format!("{}:3:15: ", main.display())), "{own}");
    std::fs::write(&main, format!("[server]\nstorage = \"s\"\n{zone}")).unwrap();
    assert!(matches!(Config::from_file(&main), Err(Error::File { .. })));
}
