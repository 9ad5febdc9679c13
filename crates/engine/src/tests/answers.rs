//! The kinds of authoritative answer (RFC 1034 §4.3.2, RFC 2308, RFC 4592, RFC 6672).

use tern_wire::Rtype;

use super::*;

#[test]
fn positive_answer_with_additional_addresses() {
    let z = example();
    // Compression is case-insensitive (RFC 1035 §4.1.4, RFC 4343 §4.1): the suffix of the
    // exchange points at the question, so it takes the query's spelling.
    assert_eq!(
        ask(&z, "Example.", Rtype::MX),
        "NOERROR aa rd | an: Example. 3600 MX 10 mail.Example. | ad: mail.Example. 3600 A 192.0.2.25; OPT(1232,-)"
    );
    assert_eq!(
        ask(&z, "example.", Rtype::NS),
        "NOERROR aa rd | an: example. 3600 NS ns1.example.; example. 3600 NS ns2.other. | \
         ad: ns1.example. 3600 A 192.0.2.53; ns1.example. 3600 AAAA 2001:db8::53; OPT(1232,-)"
    );
    assert_eq!(
        ask(&z, "_sip._tcp.example.", Rtype::SRV),
        "NOERROR aa rd | an: _sip._tcp.example. 300 SRV 10 60 5060 sip.example. | ad: sip.example. 300 A 192.0.2.60; OPT(1232,-)"
    );
}

#[test]
fn query_spelling_is_echoed_in_owner_names() {
    let z = example();
    assert_eq!(
        ask(&z, "NS1.EXAMPLE.", Rtype::A),
        "NOERROR aa rd | an: NS1.EXAMPLE. 3600 A 192.0.2.53 | ad: OPT(1232,-)"
    );
}

#[test]
fn nxdomain_and_nodata_carry_the_soa_with_negative_ttl() {
    let z = example();
    let soa = "example. 300 SOA ns1.example. hostmaster.example. 1 7200 3600 1209600 300";
    assert_eq!(
        ask(&z, "nope.example.", Rtype::A),
        format!("NXDOMAIN aa rd | au: {soa} | ad: OPT(1232,-)")
    );
    assert_eq!(
        ask(&z, "mail.example.", Rtype::AAAA),
        format!("NOERROR aa rd | au: {soa} | ad: OPT(1232,-)")
    );
    // An empty non-terminal exists: NODATA, not NXDOMAIN.
    assert_eq!(
        ask(&z, "ent.wild.example.", Rtype::A),
        format!("NOERROR aa rd | au: {soa} | ad: OPT(1232,-)")
    );
    assert_eq!(
        ask(&z, "example.", Rtype(666)),
        format!("NOERROR aa rd | au: {soa} | ad: OPT(1232,-)")
    );
}

#[test]
fn negative_soa_points_into_the_question() {
    // The prepared SOA (tern_zone::NegativeSoa): owner, MNAME and RNAME end in the apex,
    // which is the question's tail, so all three are pointers there and take its spelling.
    let z = example();
    let message = query("NOPE.Example.", Rtype::A, Ask::default());
    let response = raw(&z, Config::default(), &message, Transport::Udp).unwrap();
    assert_eq!(
        render(&response),
        "NXDOMAIN aa rd | au: Example. 300 SOA ns1.Example. hostmaster.Example. 1 7200 3600 \
         1209600 300 | ad: OPT(1232,-)"
    );
    // Header and question (12 + 14 + 4), SOA with pointers (2 + 10 + 4 + 2 + 11 + 2 + 20),
    // OPT (11): nothing written twice.
    assert_eq!(response.len(), 30 + 51 + 11);
    // NODATA at the apex itself: the whole question is the apex.
    let message = query("example.", Rtype::TXT, Ask::default());
    let response = raw(&z, Config::default(), &message, Transport::Udp).unwrap();
    assert_eq!(response.len(), 12 + 9 + 4 + 51 + 11);
}

#[test]
fn a_negative_soa_naming_servers_elsewhere_is_written_as_the_zone_holds_it() {
    // A hosting platform's zone: MNAME and RNAME are the platform's, so the prepared SOA
    // is the apex data's RDATA as it is (tern_zone::NegativeSoa::Whole), only the owner
    // a pointer into the question.
    let z = zones(&[(
        "cust.example.",
        "$TTL 3600\n@ SOA ns1.hoster.example. hostmaster.hoster.example. 7 7200 3600 \
         1209600 300\n@ NS ns1.hoster.example.\nwww A 192.0.2.1\n",
    )]);
    let soa = "Cust.Example. 300 SOA ns1.hoster.example. hostmaster.hoster.example. 7 7200 \
               3600 1209600 300";
    let message = query("nope.Cust.Example.", Rtype::A, Ask::default());
    let response = raw(&z, Config::default(), &message, Transport::Udp).unwrap();
    assert_eq!(render(&response), format!("NXDOMAIN aa rd | au: {soa} | ad: OPT(1232,-)"));
    // Header and question (12 + 19 + 4), the SOA: owner pointer, fields, RDATA whole
    // (2 + 10 + 20 + 27 + 20), OPT (11).
    assert_eq!(response.len(), 35 + 79 + 11);
    assert_eq!(
        ask(&z, "www.cust.example.", Rtype::TXT),
        "NOERROR aa rd | au: cust.example. 300 SOA ns1.hoster.example. hostmaster.hoster.example. \
         7 7200 3600 1209600 300 | ad: OPT(1232,-)"
    );
}

#[test]
fn cname_chains_are_followed_in_zone() {
    let z = example();
    assert_eq!(
        ask(&z, "chain1.example.", Rtype::A),
        "NOERROR aa rd | an: chain1.example. 300 CNAME chain2.example.; chain2.example. 300 CNAME www.example.; \
         www.example. 300 CNAME example.; example. 3600 A 192.0.2.1 | ad: OPT(1232,-)"
    );
    // A CNAME query returns the CNAME itself.
    assert_eq!(
        ask(&z, "www.example.", Rtype::CNAME),
        "NOERROR aa rd | an: www.example. 300 CNAME example. | ad: OPT(1232,-)"
    );
    // Out of zone: stop after the CNAME.
    assert_eq!(
        ask(&z, "out.example.", Rtype::A),
        "NOERROR aa rd | an: out.example. 300 CNAME www.other. | ad: OPT(1232,-)"
    );
    // Dangling: NXDOMAIN for the target (RFC 6604), CNAME kept.
    let soa = "example. 300 SOA ns1.example. hostmaster.example. 1 7200 3600 1209600 300";
    assert_eq!(
        ask(&z, "dangling.example.", Rtype::A),
        format!("NXDOMAIN aa rd | an: dangling.example. 300 CNAME nothing.example. | au: {soa} | ad: OPT(1232,-)")
    );
    // Loops stop.
    assert_eq!(
        ask(&z, "loop1.example.", Rtype::A),
        "NOERROR aa rd | an: loop1.example. 300 CNAME loop2.example.; loop2.example. 300 CNAME loop1.example. | ad: OPT(1232,-)"
    );
}

#[test]
fn wildcards_synthesize_only_for_missing_names() {
    let z = example();
    assert_eq!(
        ask(&z, "any.wild.example.", Rtype::A),
        "NOERROR aa rd | an: any.wild.example. 300 A 192.0.2.80 | ad: OPT(1232,-)"
    );
    assert_eq!(
        ask(&z, "a.b.wild.example.", Rtype::TXT),
        "NOERROR aa rd | an: a.b.wild.example. 300 TXT \"wild\" | ad: OPT(1232,-)"
    );
    // An existing name or ENT blocks the wildcard (RFC 4592 §3.3.1).
    assert_eq!(
        ask(&z, "exists.wild.example.", Rtype::TXT),
        "NOERROR aa rd | an: exists.wild.example. 300 TXT \"real\" | ad: OPT(1232,-)"
    );
    assert!(ask(&z, "exists.wild.example.", Rtype::A)
        .starts_with("NOERROR aa rd | au: example. 300 SOA"));
    assert!(ask(&z, "x.ent.wild.example.", Rtype::A)
        .starts_with("NXDOMAIN aa rd | au: example. 300 SOA"));
    // Wildcard NODATA.
    assert!(
        ask(&z, "q.wild.example.", Rtype::MX).starts_with("NOERROR aa rd | au: example. 300 SOA")
    );
    // The `*` label itself can be asked for.
    assert_eq!(
        ask(&z, "*.wild.example.", Rtype::A),
        "NOERROR aa rd | an: *.wild.example. 300 A 192.0.2.80 | ad: OPT(1232,-)"
    );
    // CNAME wildcard: synthesized CNAME, then followed.
    assert_eq!(
        ask(&z, "foo.cname.example.", Rtype::A),
        "NOERROR aa rd | an: foo.cname.example. 300 CNAME www.example.; www.example. 300 CNAME example.; \
         example. 3600 A 192.0.2.1 | ad: OPT(1232,-)"
    );
}

#[test]
fn referrals_carry_ns_and_glue_without_aa() {
    let z = example();
    let referral = "NOERROR rd | au: sub.example. 3600 NS ns.sub.example.; sub.example. 3600 NS ns1.example.; \
                    sub.example. 3600 NS ns.elsewhere.other. | ad: ns.sub.example. 3600 A 192.0.2.99; \
                    ns1.example. 3600 A 192.0.2.53; ns1.example. 3600 AAAA 2001:db8::53; OPT(1232,-)";
    assert_eq!(ask(&z, "sub.example.", Rtype::A), referral);
    assert_eq!(ask(&z, "www.sub.example.", Rtype::A), referral);
    // Glue and occluded data below the cut are referrals too, never authoritative.
    assert_eq!(ask(&z, "ns.sub.example.", Rtype::A), referral);
    assert_eq!(ask(&z, "deep.below.sub.example.", Rtype::A), referral);
    assert_eq!(ask(&z, "sub.example.", Rtype::NS), referral);
}

#[test]
fn ds_is_answered_by_the_parent() {
    let z = example();
    assert_eq!(
        ask(&z, "secure.example.", Rtype::DS),
        "NOERROR aa rd | an: secure.example. 3600 DS 12345 13 2 ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB | ad: OPT(1232,-)"
    );
    assert!(ask(&z, "sub.example.", Rtype::DS).starts_with("NOERROR aa rd | au: example. 300 SOA"));
    // Below the cut, DS is the child's business: a referral.
    assert!(
        ask(&z, "x.sub.example.", Rtype::DS).starts_with("NOERROR rd | au: sub.example. 3600 NS")
    );
}

#[test]
fn ds_at_a_served_child_apex_comes_from_the_parent() {
    let z = zones(&[
        ("example.", EXAMPLE),
        (
            "sub.example.",
            "@ 3600 SOA ns hm 5 1 1 1 60\n@ 3600 NS ns.sub.example.\nns 60 A 192.0.2.99\n",
        ),
    ]);
    // The child answers its own names...
    assert_eq!(
        ask(&z, "ns.sub.example.", Rtype::A),
        "NOERROR aa rd | an: ns.sub.example. 60 A 192.0.2.99 | ad: OPT(1232,-)"
    );
    // ...but DS at its apex is the parent's NODATA.
    assert!(ask(&z, "sub.example.", Rtype::DS).starts_with("NOERROR aa rd | au: example. 300 SOA"));
}

#[test]
fn dname_synthesizes_a_cname() {
    let z = example();
    assert_eq!(
        ask(&z, "x.dn.example.", Rtype::A),
        "NOERROR aa rd | an: dn.example. 300 DNAME target.example.; x.dn.example. 300 CNAME x.target.example.; \
         x.target.example. 300 A 192.0.2.70 | ad: OPT(1232,-)"
    );
    // A CNAME query gets the synthesized CNAME and no more.
    assert_eq!(
        ask(&z, "x.dn.example.", Rtype::CNAME),
        "NOERROR aa rd | an: dn.example. 300 DNAME target.example.; x.dn.example. 300 CNAME x.target.example. | ad: OPT(1232,-)"
    );
    // The DNAME owner itself is ordinary data.
    assert_eq!(
        ask(&z, "dn.example.", Rtype::DNAME),
        "NOERROR aa rd | an: dn.example. 300 DNAME target.example. | ad: OPT(1232,-)"
    );
    // Too long a result: YXDOMAIN (RFC 6672 §2.2).
    let long = format!("{0}.{0}.{0}.{1}.dn.example.", "a".repeat(63), "b".repeat(50));
    assert!(
        ask(&z, &long, Rtype::A).starts_with("YXDOMAIN aa rd | an: dn.example. 300 DNAME"),
        "{}",
        ask(&z, &long, Rtype::A)
    );
}

#[test]
fn any_returns_one_rrset_and_rrsig_queries_return_signatures() {
    let z = example();
    assert_eq!(
        ask(&z, "example.", Rtype::ANY),
        "NOERROR aa rd | an: example. 3600 A 192.0.2.1 | ad: OPT(1232,-)"
    );
    assert!(ask(&z, "example.", Rtype::RRSIG).starts_with("NOERROR aa rd | au: example. 300 SOA"));
}

#[test]
fn other_zones_are_refused_and_unloaded_zones_fail() {
    let z = example();
    assert_eq!(ask(&z, "www.other.", Rtype::A), "REFUSED rd | ad: OPT(1232,-)");
    let refused =
        raw(&z, Config::default(), &query("www.other.", Rtype::A, Ask::default()), Transport::Udp)
            .unwrap();
    assert!(refused.ends_with(&[0, 15, 0, 2, 0, 20]), "EDE 20 Not Authoritative");
    let unloaded = ZoneSet::new(vec![Arc::new(ZoneSlot::new(&"late.".parse::<Name>().unwrap()))]);
    assert_eq!(ask(&unloaded, "late.", Rtype::SOA), "SERVFAIL rd | ad: OPT(1232,-)");
}

/// A zone whose apex holds a DNAME beside SOA and NS (RFC 6672 §2.3).
const APEX_DNAME: &str = r#"
@ 3600 SOA ns1.other. hostmaster.other. 1 7200 3600 1209600 300
@ 3600 NS ns1.other.
@ 3600 A 192.0.2.1
@ 3600 DNAME target.example.
"#;

/// The zone the apex DNAME points into, served beside it.
const DNAME_TARGET: &str = r#"
@ 3600 SOA ns1.other. hostmaster.other. 1 7200 3600 1209600 300
@ 3600 NS ns1.other.
www 300 A 192.0.2.80
"#;

#[test]
fn dname_at_the_apex_redirects_every_name_below_it() {
    let z = zones(&[("apex.", APEX_DNAME), ("target.example.", DNAME_TARGET)]);
    let dname = "apex. 3600 DNAME target.example.";
    // Any name below the apex, existing in the target or not: the DNAME and the CNAME
    // synthesized from it; the target is another zone's, left to the resolver (as Knot
    // DNS and BIND answer).
    for (name, target) in
        [("www.apex.", "www.target.example."), ("a.b.apex.", "a.b.target.example.")]
    {
        for qtype in [Rtype::A, Rtype::CNAME, Rtype::TXT] {
            assert_eq!(
                ask(&z, name, qtype),
                format!(
                    "NOERROR aa rd | an: {dname}; {name} 3600 CNAME {target} | ad: OPT(1232,-)"
                ),
                "{name} {qtype}"
            );
        }
    }
    // The apex itself answers from its own data.
    assert_eq!(
        ask(&z, "apex.", Rtype::A),
        "NOERROR aa rd | an: apex. 3600 A 192.0.2.1 | ad: OPT(1232,-)"
    );
    assert_eq!(
        ask(&z, "apex.", Rtype::DNAME),
        format!("NOERROR aa rd | an: {dname} | ad: OPT(1232,-)")
    );
    assert!(ask(&z, "apex.", Rtype::CNAME).starts_with("NOERROR aa rd | au: apex. 300 SOA"));
    // A substitution over 255 bytes: YXDOMAIN (RFC 6672 §2.2).
    let long = format!("{0}.{0}.{0}.{1}.apex.", "a".repeat(63), "b".repeat(50));
    let r = ask(&z, &long, Rtype::A);
    assert!(r.starts_with(&format!("YXDOMAIN aa rd | an: {dname} |")), "{r}");
}

/// CNAME chains through wildcards: a wildcard answers many names, so meeting its node
/// again is no loop; a CNAME target followed again is.
const WILD_CHAINS: &str = r#"
@ 3600 SOA ns1 hostmaster 1 7200 3600 1209600 300
@ 3600 NS ns1
ns1 3600 A 192.0.2.53
www 300 A 192.0.2.80
*.self 300 CNAME loop.self
*.back 300 CNAME x.back2
*.back2 300 CNAME y.back
start 300 CNAME a.back
real 300 CNAME b.viareal
*.viareal 300 CNAME real
*.two 300 CNAME host.three
*.three 300 CNAME www
*.p1 300 CNAME t.p2
*.p2 300 CNAME r
r 300 CNAME t.p2
"#;

#[test]
fn cname_chains_through_wildcards_stop_when_a_target_repeats() {
    let z = zones(&[("example.", WILD_CHAINS)]);
    let answer =
        |links: &[&str]| format!("NOERROR aa rd | an: {} | ad: OPT(1232,-)", links.join("; "));
    // A wildcard CNAME pointing back into its own wildcard: one more link, then the
    // name repeats (as Knot DNS and NSD answer).
    assert_eq!(
        ask(&z, "a.self.example.", Rtype::A),
        answer(&[
            "a.self.example. 300 CNAME loop.self.example.",
            "loop.self.example. 300 CNAME loop.self.example."
        ])
    );
    // The query name is not a target followed: asked directly, its CNAME comes twice.
    assert_eq!(
        ask(&z, "loop.self.example.", Rtype::A),
        answer(&[
            "loop.self.example. 300 CNAME loop.self.example.",
            "loop.self.example. 300 CNAME loop.self.example."
        ])
    );
    // Two wildcards pointing into each other: each is met twice, with different names.
    assert_eq!(
        ask(&z, "start.example.", Rtype::A),
        answer(&[
            "start.example. 300 CNAME a.back.example.",
            "a.back.example. 300 CNAME x.back2.example.",
            "x.back2.example. 300 CNAME y.back.example.",
            "y.back.example. 300 CNAME x.back2.example."
        ])
    );
    // A real CNAME whose target a wildcard answers with a CNAME back to it.
    assert_eq!(
        ask(&z, "x.viareal.example.", Rtype::A),
        answer(&[
            "x.viareal.example. 300 CNAME real.example.",
            "real.example. 300 CNAME b.viareal.example.",
            "b.viareal.example. 300 CNAME real.example."
        ])
    );
    // A target followed again stops the chain, whichever node led to it (as NSD
    // answers; Knot DNS writes `t.p2 CNAME r` once more).
    assert_eq!(
        ask(&z, "q.p1.example.", Rtype::A),
        answer(&[
            "q.p1.example. 300 CNAME t.p2.example.",
            "t.p2.example. 300 CNAME r.example.",
            "r.example. 300 CNAME t.p2.example."
        ])
    );
    // Wildcard to wildcard to data.
    assert_eq!(
        ask(&z, "a.two.example.", Rtype::A),
        answer(&[
            "a.two.example. 300 CNAME host.three.example.",
            "host.three.example. 300 CNAME www.example.",
            "www.example. 300 A 192.0.2.80"
        ])
    );
}

/// A name of a signed zone with only types above NSEC's (47): its NSEC RRset has the
/// lowest type (signatures are made-up bytes: the engine does not validate).
const SIGNED_ANY: &str = r#"
@ 3600 SOA ns1 hostmaster 1 7200 3600 1209600 300
@ 3600 NS ns1
@ 300 NSEC ns1 NS SOA RRSIG NSEC
ns1 3600 A 192.0.2.53
ns1 300 NSEC tlsa A RRSIG NSEC
tlsa 3600 TLSA 3 1 1 16058D40FF834E025AD15EC37EE5C0ED9DF770C37BA2491CC5D8FC0DB93696EB
tlsa 3600 RRSIG TLSA 13 2 3600 20450101000000 20260101000000 1 example. AAAA
tlsa 300 NSEC txt RRSIG NSEC TLSA
tlsa 300 RRSIG NSEC 13 2 300 20450101000000 20260101000000 1 example. BBBB
txt 3600 TXT "t"
txt 3600 AAAA 2001:db8::1
txt 3600 CAA 0 issue "ca.example"
txt 300 NSEC example. AAAA TXT CAA RRSIG NSEC
"#;

#[test]
fn any_prefers_data_to_nsec_and_common_types_to_others() {
    let z = zones(&[("example.", SIGNED_ANY)]);
    // RFC 8482 §4.1: one RRset, chosen as NSD chooses: A, AAAA, SOA, MX or PTR first, then
    // any other data, then DNSKEY, NSEC or RRSIG; the lowest type within a group.
    assert_eq!(
        ask(&z, "tlsa.example.", Rtype::ANY),
        "NOERROR aa rd | an: tlsa.example. 3600 TLSA 3 1 1 16058D40FF834E025AD15EC37EE5C0ED9DF770C37BA2491CC5D8FC0DB93696EB | ad: OPT(1232,-)"
    );
    // With DO, the RRset's own signatures go with it.
    assert_eq!(
        ask_with(&z, "tlsa.example.", Rtype::ANY, dnssec()),
        "NOERROR aa rd | an: tlsa.example. 3600 TLSA 3 1 1 16058D40FF834E025AD15EC37EE5C0ED9DF770C37BA2491CC5D8FC0DB93696EB; \
         tlsa.example. 3600 RRSIG TLSA 13 2 3600 20450101000000 20260101000000 1 example. AAAA | ad: OPT(1232,do)"
    );
    assert_eq!(
        ask(&z, "txt.example.", Rtype::ANY),
        "NOERROR aa rd | an: txt.example. 3600 AAAA 2001:db8::1 | ad: OPT(1232,-)"
    );
    assert_eq!(
        ask(&z, "example.", Rtype::ANY),
        "NOERROR aa rd | an: example. 3600 SOA ns1.example. hostmaster.example. 1 7200 3600 1209600 300 | ad: OPT(1232,-)"
    );
}
