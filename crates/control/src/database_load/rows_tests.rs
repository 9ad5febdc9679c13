use super::*;
use crate::database::OnBadRow;

fn row(id: i64, name: &str, rtype: &str, content: &str) -> Row {
    Row {
        id,
        name: name.into(),
        rtype: rtype.into(),
        content: content.into(),
        ttl: Some(300),
        prio: None,
    }
}

fn database(on_bad_row: OnBadRow) -> Database {
    Database::new("main".into(), String::new(), on_bad_row)
}

/// A zone as PowerDNS keeps it: names without trailing dots, MX and SRV priorities in
/// `prio`.
fn powerdns_rows() -> Vec<Row> {
    vec![
        row(1, "example.com", "SOA", "ns1.example.com hostmaster.example.com 7 3600 600 86400 60"),
        row(2, "example.com", "NS", "ns1.example.com"),
        row(3, "ns1.example.com", "A", "192.0.2.1"),
        Row { prio: Some(10), ..row(4, "example.com", "MX", "mail.example.com") },
        Row { prio: Some(5), ..row(5, "_sip._udp.example.com", "SRV", "0 5060 sip.example.com") },
        Row { ttl: None, ..row(6, "www.example.com", "CNAME", "example.com") },
        row(7, "example.com", "TXT", "\"v=spf1 -all\""),
    ]
}

fn records(loaded: &Loaded) -> Vec<String> {
    let mut out = Vec::new();
    loaded.contents.for_each_record(|owner, rtype, ttl, rdata| {
        let rdata = tern_wire::rdata::to_text(rtype, rdata);
        out.push(format!("{owner} {ttl} {rtype} {rdata}"));
    });
    out.sort();
    out
}

#[test]
fn powerdns_rows_load_with_absolute_names_and_priorities() {
    let origin: Name = "example.com.".parse().unwrap();
    let loaded = read(&database(OnBadRow::Refuse), &origin, &powerdns_rows()).unwrap();
    assert_eq!(loaded.contents.serial(), 7);
    let all = records(&loaded);
    for expected in [
        "example.com. 300 MX 10 mail.example.com.",
        "_sip._udp.example.com. 300 SRV 5 0 5060 sip.example.com.",
        "www.example.com. 3600 CNAME example.com.",
        "example.com. 300 NS ns1.example.com.",
        "example.com. 300 TXT \"v=spf1 -all\"",
    ] {
        assert!(all.iter().any(|r| r == expected), "{expected} not in {all:#?}");
    }
    assert_eq!(all.len(), 7);
}

#[test]
fn a_bad_row_is_left_out_or_refuses_the_load_naming_its_id() {
    let origin: Name = "example.com.".parse().unwrap();
    let mut rows = powerdns_rows();
    rows.push(row(41, "bad.example.com", "A", "not-an-address"));
    rows.push(row(42, "www2.example.com", "A", "192.0.2.2"));
    let loaded = read(&database(OnBadRow::Skip), &origin, &rows).unwrap();
    let all = records(&loaded);
    assert!(all.iter().any(|r| r.starts_with("www2.example.com.")), "{all:#?}");
    assert!(!all.iter().any(|r| r.starts_with("bad.example.com.")), "{all:#?}");
    let refused = read(&database(OnBadRow::Refuse), &origin, &rows).unwrap_err().to_string();
    assert!(
        refused.contains("database main") && refused.contains("table records, id 41"),
        "{refused}"
    );
}

#[test]
fn a_row_cannot_smuggle_a_second_record_or_a_directive() {
    let origin: Name = "example.com.".parse().unwrap();
    let smuggled = [
        row(50, "x.example.com", "A", "192.0.2.9\nevil.example.com. 60 IN A 192.0.2.66"),
        row(51, "$INCLUDE", "A", "/etc/passwd"),
        row(52, "y.example.com", "TXT", "( \"a\"\nz 60 A 192.0.2.66 )"),
        row(53, "y.example.com", "A B", "192.0.2.9"),
        Row { ttl: Some(-1), ..row(54, "t.example.com", "A", "192.0.2.9") },
        Row { prio: Some(70_000), ..row(55, "example.com", "MX", "mail.example.com") },
        row(56, "e.example.com", "A", " "),
    ];
    let mut rows = powerdns_rows();
    rows.extend(smuggled.iter().cloned());
    let loaded = read(&database(OnBadRow::Skip), &origin, &rows).unwrap();
    assert_eq!(records(&loaded).len(), 7, "{:#?}", records(&loaded));
    let refused = read(&database(OnBadRow::Refuse), &origin, &rows).unwrap_err().to_string();
    assert!(refused.contains("7 rows do not read") && refused.contains("id 50"), "{refused}");
}

#[test]
fn a_zone_without_its_soa_is_refused_whatever_the_rows() {
    let origin: Name = "example.com.".parse().unwrap();
    let rows: Vec<Row> = powerdns_rows().into_iter().skip(1).collect();
    let e = read(&database(OnBadRow::Skip), &origin, &rows).unwrap_err().to_string();
    assert!(e.contains("database main") && e.contains("SOA"), "{e}");
}
