//! RRset changes planned against a small zone, and what the engine makes of the plan.

use std::path::Path;

use tern_engine::UpdatePolicy;

use super::*;

const ZONE: &str = "$ORIGIN example.com.\n$TTL 300\n\
    @ SOA ns1 hostmaster 7 3600 600 86400 60\n@ NS ns1\n@ NS ns2\n@ MX 10 mail\n\
    ns1 A 192.0.2.53\nns2 A 192.0.2.54\nmail A 192.0.2.25\nwww CNAME @\n";

fn zone() -> ZoneContents {
    let origin: Name = "example.com.".parse().unwrap();
    tern_zone::load_bytes(ZONE.as_bytes(), Path::new("t"), &origin, &Default::default())
        .unwrap()
        .contents
}

fn name(text: &str) -> Name {
    text.parse().unwrap()
}

/// The plan of `rrsets` (a JSON list) against the zone.
fn plan_of(rrsets: &str) -> Result<Plan, PatchError> {
    plan(format!("{{\"rrsets\":{rrsets}}}").as_bytes(), &zone())
}

/// The zone after `plan`, as the engine applies its edit.
fn applied(plan: &Plan) -> ZoneContents {
    let zone = zone();
    let change = plan.edit().changeset(&zone, &UpdatePolicy::default(), 0).unwrap();
    zone.apply(&change).unwrap().0
}

/// The RDATA of `owner` `rtype` in `zone`.
fn rdatas(zone: &ZoneContents, owner: &str, rtype: Rtype) -> Vec<Vec<u8>> {
    let node = zone.find(&name(owner)).and_then(|id| zone.node(id));
    let rrset = node.and_then(|n| n.rrset(rtype));
    rrset.map(|r| r.rdatas().map(<[u8]>::to_vec).collect()).unwrap_or_default()
}

fn malformed(rrsets: &str) -> String {
    match plan_of(rrsets) {
        Err(PatchError::Malformed(why)) => why,
        other => panic!("{rrsets}: {other:?}"),
    }
}

fn rule(rrsets: &str) -> String {
    match plan_of(rrsets) {
        Err(PatchError::Rule(why)) => why,
        other => panic!("{rrsets}: {other:?}"),
    }
}

#[test]
fn rrsets_are_removed_first_then_records_added() {
    let plan = plan_of(
        r#"[{"name":"web","type":"A","changetype":"REPLACE","ttl":60,"records":["192.0.2.1","192.0.2.2"]},
            {"name":"mail","type":"A","changetype":"delete"}]"#,
    )
    .unwrap();
    let steps = plan.txn_steps();
    assert_eq!(steps.len(), 4);
    assert!(
        matches!(&steps[0], TxnStep::Unset { owner, rdata: None, .. } if owner == "web.example.com.")
    );
    assert!(
        matches!(&steps[1], TxnStep::Unset { owner, rdata: None, .. } if owner == "mail.example.com.")
    );
    assert!(matches!(&steps[3], TxnStep::Set { ttl: Some(60), rdata, .. } if rdata == "192.0.2.2"));
    let after = applied(&plan);
    assert_eq!(rdatas(&after, "web.example.com.", Rtype::A).len(), 2);
    assert!(rdatas(&after, "mail.example.com.", Rtype::A).is_empty());
}

#[test]
fn a_record_text_is_exactly_one_record() {
    let why = malformed(
        r#"[{"name":"t","type":"TXT","changetype":"replace","records":["\"a\"\n\"b\""]}]"#,
    );
    assert!(why.contains("t.example.com. TXT") && why.contains("line break"), "{why}");
    let why =
        malformed(r#"[{"name":"t","type":"A","changetype":"replace","records":["192.0.2.1\r"]}]"#);
    assert!(why.contains("line break"), "{why}");
    let why =
        malformed(r#"[{"name":"t","type":"TXT","changetype":"replace","records":["a ; b"]}]"#);
    assert!(why.contains("comment"), "{why}");
    // Quoted or escaped, a `;` is data.
    let plan = plan_of(
        r#"[{"name":"t","type":"TXT","changetype":"replace","records":["\"a ; b\" c\\;d"]}]"#,
    );
    assert!(plan.is_ok(), "{plan:?}");
}

#[test]
fn malformed_changes_are_refused() {
    for (rrsets, needle) in [
        (
            r#"[{"name":"a","type":"A","changetype":"add","records":["192.0.2.1"]}]"#,
            "expected replace or delete",
        ),
        (
            r#"[{"name":"a","type":"A","changetype":"replace","records":["nope"]}]"#,
            "a.example.com. A",
        ),
        (r#"[{"name":"a","type":"NOPE","changetype":"delete"}]"#, "not a record type"),
        (r#"[{"name":"a","type":"ANY","changetype":"delete"}]"#, "meta-type"),
        (r#"[{"name":"a","type":"A","changetype":"replace","records":[]}]"#, "needs records"),
        (r#"[{"name":"a","type":"A","changetype":"replace"}]"#, "needs records"),
        (r#"[{"name":"a","type":"A","changetype":"delete","records":[]}]"#, "no records"),
        (r#"[{"name":"a.example.net.","type":"A","changetype":"delete"}]"#, "outside the zone"),
        (
            r#"[{"name":"a","type":"A","changetype":"delete"},{"name":"A","type":"a","changetype":"delete"}]"#,
            "named twice",
        ),
        (r#"[{"name":"a","type":"A","changetype":"delete","x":1}]"#, "unknown field"),
    ] {
        let why = malformed(rrsets);
        assert!(why.contains(needle), "{rrsets}: {why}");
    }
    assert!(matches!(plan(b"{", &zone()), Err(PatchError::Malformed(_))));
}

#[test]
fn changes_the_engine_would_leave_out_are_refused_with_the_rule() {
    for (rrsets, needle) in [
        (
            r#"[{"name":"@","type":"CNAME","changetype":"replace","records":["x.example.net."]}]"#,
            "zone's apex",
        ),
        (
            r#"[{"name":"mail","type":"CNAME","changetype":"replace","records":["www"]}]"#,
            "beside other data (A)",
        ),
        (
            r#"[{"name":"www","type":"TXT","changetype":"replace","records":["x"]}]"#,
            "RFC 1034 §3.6.2",
        ),
        (
            r#"[{"name":"c","type":"CNAME","changetype":"replace","records":["a","b"]}]"#,
            "one CNAME",
        ),
        (
            r#"[{"name":"@","type":"SOA","changetype":"replace","records":["ns1 h 0 1 2 3 4"]}]"#,
            "serial 0 is not higher than the zone's 7",
        ),
        (
            r#"[{"name":"@","type":"SOA","changetype":"replace","records":["ns1 h 7 1 2 3 4"]}]"#,
            "RFC 1982",
        ),
        (
            r#"[{"name":"@","type":"SOA","changetype":"replace","records":["ns1 h 8 1 2 3 4","ns1 h 9 1 2 3 4"]}]"#,
            "one SOA",
        ),
        (
            r#"[{"name":"x","type":"SOA","changetype":"replace","records":["ns1 h 8 1 2 3 4"]}]"#,
            "apex only",
        ),
        (r#"[{"name":"@","type":"SOA","changetype":"delete"}]"#, "§3.4.2.3"),
        (r#"[{"name":"@","type":"NS","changetype":"delete"}]"#, "§3.4.2.3"),
        (r#"[{"name":"@","type":"DNSKEY","changetype":"delete"}]"#, "signer"),
    ] {
        let why = rule(rrsets);
        assert!(why.contains(needle), "{rrsets}: {why}");
    }
}

#[test]
fn a_cname_may_take_the_place_of_data_deleted_in_the_same_change() {
    let plan = plan_of(
        r#"[{"name":"mail","type":"CNAME","changetype":"replace","records":["www"]},
            {"name":"mail","type":"A","changetype":"delete"},
            {"name":"www","type":"CNAME","changetype":"delete"},
            {"name":"www","type":"A","changetype":"replace","records":["192.0.2.80"]}]"#,
    )
    .unwrap();
    let after = applied(&plan);
    assert_eq!(rdatas(&after, "mail.example.com.", Rtype::CNAME).len(), 1);
    assert!(rdatas(&after, "mail.example.com.", Rtype::A).is_empty());
    assert_eq!(rdatas(&after, "www.example.com.", Rtype::A), [vec![192, 0, 2, 80]]);
    assert!(rdatas(&after, "www.example.com.", Rtype::CNAME).is_empty());
}

#[test]
fn the_apex_ns_and_soa_are_replaced_exactly() {
    let plan = plan_of(
        r#"[{"name":"@","type":"NS","changetype":"replace","records":["NS1","ns3.example.net."]},
            {"name":"@","type":"SOA","changetype":"replace","records":["ns1 h 2000000000 1 2 3 4"]}]"#,
    )
    .unwrap();
    let after = applied(&plan);
    let ns: Vec<String> = rdatas(&after, "example.com.", Rtype::NS)
        .iter()
        .map(|rd| tern_wire::rdata::to_text(Rtype::NS, rd))
        .collect();
    assert_eq!(ns.len(), 2, "{ns:?}");
    assert!(ns.contains(&"ns3.example.net.".to_owned()), "{ns:?}");
    assert!(!ns.iter().any(|n| n.eq_ignore_ascii_case("ns2.example.com.")), "{ns:?}");
    assert_eq!(after.soa_record().and_then(|s| soa_serial(&s.rdata)), Some(2_000_000_000));
    assert!(plan.deleted().is_empty());
    assert_eq!(plan.replaced().len(), 2);
}

#[test]
fn an_empty_list_plans_nothing() {
    let plan = plan_of("[]").unwrap();
    assert!(plan.is_empty());
    assert!(plan.txn_steps().is_empty());
}
