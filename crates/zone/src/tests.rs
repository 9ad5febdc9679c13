//! Tests of building, adjusting, checking and looking up zones.

use tern_wire::{Name, Rtype};

use crate::contents::{Lookup, APEX};
use crate::hash::SuffixHashes;
use crate::node::{Flags, NO_NODE};
use crate::testutil::{self, zone};
use crate::ZoneContents;

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

fn flags_of(z: &ZoneContents, n: &str) -> Flags {
    let id = z.find(&name(n)).unwrap_or_else(|| panic!("{n} not found"));
    z.node(id).unwrap().flags
}

fn lookup(z: &ZoneContents, n: &str) -> Lookup {
    let q = name(n);
    z.lookup(&q, &SuffixHashes::of(&q))
}

fn owner_of(z: &ZoneContents, id: u32) -> String {
    z.node(id).unwrap().owner().to_string()
}

const RICH: &str = "
sub.example. 3600 NS ns.sub.example.
sub.example. 3600 NS ns1.example.
sub.example. 3600 DS 12345 13 2 ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB
ns.sub.example. 3600 A 192.0.2.1
deep.below.sub.example. 3600 TXT \"occluded\"
*.wild.example. 300 A 192.0.2.2
a.b.c.example. 300 A 192.0.2.3
alias.example. 300 CNAME a.b.c.example.
dn.example. 300 DNAME target.example.
mail.example. 300 MX 10 mx.example.
mx.example. 300 AAAA 2001:db8::25
";

fn rich() -> ZoneContents {
    zone("example.", &format!("{}{RICH}", testutil::APEX)).0
}

#[test]
fn adjust_sets_cut_and_name_flags() {
    let z = rich();
    assert!(flags_of(&z, "example.").contains(Flags::APEX));
    assert!(!flags_of(&z, "example.").contains(Flags::DELEGATION));
    let sub = flags_of(&z, "sub.example.");
    assert!(sub.contains(Flags::DELEGATION | Flags::DS) && !sub.contains(Flags::NONAUTH));
    assert!(flags_of(&z, "ns.sub.example.").contains(Flags::NONAUTH));
    assert!(flags_of(&z, "below.sub.example.").contains(Flags::NONAUTH | Flags::EMPTY));
    assert!(flags_of(&z, "deep.below.sub.example.").contains(Flags::NONAUTH));
    assert!(flags_of(&z, "b.c.example.").contains(Flags::EMPTY));
    assert!(flags_of(&z, "c.example.").contains(Flags::EMPTY));
    assert!(flags_of(&z, "*.wild.example.").contains(Flags::WILDCARD));
    assert!(flags_of(&z, "alias.example.").contains(Flags::CNAME));
    assert!(flags_of(&z, "dn.example.").contains(Flags::DNAME));
    assert_eq!(z.serial(), 1);
    assert_eq!(z.denial(), crate::Denial::Unsigned);
}

#[test]
fn wildcard_child_and_parents() {
    let z = rich();
    let wild = z.find(&name("wild.example.")).unwrap();
    let star = z.find(&name("*.wild.example.")).unwrap();
    assert_eq!(z.node(wild).unwrap().wildcard, star);
    assert_eq!(z.node(star).unwrap().parent, wild);
    assert_eq!(z.node(wild).unwrap().parent, APEX);
    assert_eq!(z.node(APEX).unwrap().wildcard, NO_NODE);
}

#[test]
fn lookup_exact_and_closest_encloser() {
    let z = rich();
    assert_eq!(lookup(&z, "EXAMPLE."), Lookup::Found(APEX));
    let Lookup::Found(id) = lookup(&z, "A.b.C.example.") else { panic!() };
    assert_eq!(owner_of(&z, id), "a.b.c.example.");
    let Lookup::Found(id) = lookup(&z, "c.example.") else { panic!() };
    assert!(z.node(id).unwrap().flags.contains(Flags::EMPTY));
    match lookup(&z, "x.y.b.c.example.") {
        Lookup::NotFound { encloser, encloser_labels } => {
            assert_eq!(owner_of(&z, encloser), "b.c.example.");
            assert_eq!(encloser_labels, 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        lookup(&z, "nothing.example."),
        Lookup::NotFound { encloser: APEX, encloser_labels: 1 }
    );
    // The MX target below is a real node; a phantom is never found.
    assert!(matches!(lookup(&z, "mx.example."), Lookup::Found(_)));
}

#[test]
fn cut_above_finds_the_highest_cut_or_dname() {
    let z = rich();
    let sub = z.find(&name("sub.example.")).unwrap();
    let deep = z.find(&name("deep.below.sub.example.")).unwrap();
    assert_eq!(z.cut_above(deep), Some(sub));
    assert_eq!(z.cut_above(sub), Some(sub));
    let dn = z.find(&name("dn.example.")).unwrap();
    assert_eq!(z.cut_above(dn), Some(dn));
    assert_eq!(z.cut_above(APEX), None);
    assert_eq!(z.cut_above(z.find(&name("a.b.c.example.")).unwrap()), None);
}

#[test]
fn targets_reference_nodes_and_phantoms() {
    let z = rich();
    let apex = z.node(APEX).unwrap();
    let ns = apex.rrset(Rtype::NS).unwrap();
    assert_eq!(owner_of(&z, ns.target(0)), "ns1.example.");
    assert_eq!(ns.target(1), NO_NODE, "out-of-zone target");
    let mail = z.node(z.find(&name("mail.example.")).unwrap()).unwrap();
    assert_eq!(owner_of(&z, mail.rrset(Rtype::MX).unwrap().target(0)), "mx.example.");
    let alias = z.node(z.find(&name("alias.example.")).unwrap()).unwrap();
    assert_eq!(owner_of(&z, alias.rrset(Rtype::CNAME).unwrap().target(0)), "a.b.c.example.");
    // A target without data is a phantom: referenced, but not a name of the zone.
    let (z, _) =
        zone("example.", &format!("{}mail.example. 300 MX 10 nohost.example.\n", testutil::APEX));
    let mail = z.node(z.find(&name("mail.example.")).unwrap()).unwrap();
    let target = mail.rrset(Rtype::MX).unwrap().target(0);
    assert!(z.node(target).unwrap().flags.contains(Flags::PHANTOM));
    assert_eq!(z.find(&name("nohost.example.")), None);
    assert_eq!(
        lookup(&z, "nohost.example."),
        Lookup::NotFound { encloser: APEX, encloser_labels: 1 }
    );
}

#[test]
fn rrsets_ttls_and_duplicates() {
    let text = format!(
        "{}www.example. 300 A 192.0.2.1\nwww.example. 200 A 192.0.2.2\nWWW.example. 300 A 192.0.2.1\n\
         other.zone. 300 A 192.0.2.9\nns1.example. 3600 NS Foo.example.\nns1.example. 3600 NS foo.EXAMPLE.\n",
        testutil::APEX
    );
    let (z, report) = zone("example.", &text);
    let www = z.node(z.find(&name("www.example.")).unwrap()).unwrap();
    let a = www.rrset(Rtype::A).unwrap();
    assert_eq!((a.count, a.ttl), (2, 200));
    let warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
    assert!(warnings.iter().any(|w| w.contains("different TTLs")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("duplicate")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("outside the zone")), "{warnings:?}");
    assert_eq!(report.ignored, 3);
    // Names in NS RDATA compare case-insensitively for duplicates.
    let ns1 = z.node(z.find(&name("ns1.example.")).unwrap()).unwrap();
    assert_eq!(ns1.rrset(Rtype::NS).unwrap().count, 1);
    assert_eq!(report.records, 4 + 2 + 1);
}

#[test]
fn semantic_errors_refuse_the_zone() {
    let cases = [
        ("example. 3600 NS ns1.example.\n", "SOA missing"),
        ("example. 3600 SOA a. b. 1 2 3 4 5\n", "NS missing"),
        (
            "example. 3600 SOA a. b. 1 2 3 4 5\nexample. 3600 SOA a. b. 2 2 3 4 5\nexample. 3600 NS a.\n",
            "SOA 2 records",
        ),
    ];
    for (text, what) in cases {
        let report = testutil::refused("example.", text);
        assert!(report.has_errors(), "{what}");
    }
    let errors = |extra: &str| -> Vec<String> {
        let report = testutil::refused("example.", &format!("{}{extra}", testutil::APEX));
        report.errors().map(ToString::to_string).collect()
    };
    let e = errors("x.example. 300 CNAME a.example.\nx.example. 300 A 192.0.2.1\n");
    assert!(e.iter().any(|m| m.contains("CNAME exists beside A")), "{e:?}");
    let e = errors("x.example. 300 CNAME a.example.\nx.example. 300 CNAME b.example.\n");
    assert!(e.iter().any(|m| m.contains("2 records at one name")), "{e:?}");
    let e = errors("d.example. 300 DNAME t.example.\nx.d.example. 300 A 192.0.2.1\n");
    assert!(e.iter().any(|m| m.contains("below a DNAME")), "{e:?}");
    let e = errors("sub.example. 300 SOA a. b. 1 2 3 4 5\n");
    assert!(e.iter().any(|m| m.contains("below the zone apex")), "{e:?}");
    let e = errors("example. 300 OPT \\# 0\n");
    assert!(e.iter().any(|m| m.contains("meta-type")), "{e:?}");
}

#[test]
fn warnings_keep_the_zone() {
    let text = format!(
        "{}sub.example. 300 NS ns.sub.example.\nsub.example. 300 NS ns3.example.\nx.sub.example. 300 MX 1 a.\n\
         plain.example. 300 DS 1 13 2 ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB\n",
        testutil::APEX
    );
    let (_, report) = zone("example.", &text);
    let w: Vec<String> = report.warnings().map(ToString::to_string).collect();
    assert!(
        w.iter().any(|m| m.contains("ns.sub.example. is in the zone but has no glue")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|m| m.contains("ns3.example. is in the zone but has no address records")),
        "{w:?}"
    );
    assert!(w.iter().any(|m| m.contains("x.sub.example. MX is below a zone cut")), "{w:?}");
    assert!(w.iter().any(|m| m.contains("DS at a name that is not a delegation")), "{w:?}");
    assert_eq!(report.delegations, 1);
}

#[test]
fn nsec_zone_order_and_predecessor() {
    let text = format!(
        "{}example. 300 NSEC \\# 19 0161076578616d706c65000006220000000001\na.example. 300 A 192.0.2.1\n\
         a.example. 300 NSEC \\# 21 036e7331076578616d706c65000006400000000001\n\
         ns1.example. 300 NSEC \\# 17 076578616d706c65000006400000000001\n",
        testutil::APEX
    );
    let (z, report) = zone("example.", &text);
    assert!(report.signed);
    assert_eq!(z.denial(), crate::Denial::Nsec);
    let pred = |n: &str| owner_of(&z, z.predecessor(&name(n)).unwrap());
    assert_eq!(pred("b.example."), "a.example.");
    assert_eq!(pred("a.example."), "example.");
    assert_eq!(pred("zzz.example."), "ns1.example.");
    assert_eq!(pred("aa.example."), "a.example.");
    let a = z.find(&name("a.example.")).unwrap();
    assert_eq!(owner_of(&z, z.node(a).unwrap().prev), "example.");
    assert_eq!(owner_of(&z, z.node(APEX).unwrap().prev), "ns1.example.");
}

#[test]
fn records_iterate_soa_first() {
    let z = rich();
    let mut seen = Vec::new();
    z.for_each_record(|owner, rtype, _, _| seen.push(format!("{owner} {rtype}")));
    assert_eq!(seen.first().map(String::as_str), Some("example. SOA"));
    assert_eq!(seen.iter().filter(|s| s.ends_with(" SOA")).count(), 1);
    assert_eq!(seen.len(), z.record_count());
}

#[test]
fn below_by_parent_links_agrees_with_names() {
    let z = rich();
    let id = |n: &str| z.find_hashed(&name(n), crate::hash::name_hash(&name(n))).unwrap();
    let names = [
        "example.",
        "sub.example.",
        "ns.sub.example.",
        "deep.below.sub.example.",
        "below.sub.example.",
        "a.b.c.example.",
        "c.example.",
        "ns1.example.", // a phantom: an NS target without data
        "mx.example.",
    ];
    for a in names {
        for b in names {
            let (ia, ib) = (id(a), id(b));
            let phantom = z.node(ia).unwrap().flags.contains(Flags::PHANTOM);
            let expect = !phantom && name(a).is_below(&name(b));
            assert_eq!(z.is_below_node(ia, ib), expect, "{a} below {b}");
        }
    }
}

/// A DNAME at the apex, beside SOA and NS, is allowed (RFC 6672 §2.3); the names below it
/// are occluded, so data there refuses the zone, as BIND, Knot DNS and NSD refuse it.
#[test]
fn a_dname_at_the_apex_is_accepted_without_data_below_it() {
    let apex = "example. 3600 SOA ns1.other. hm.other. 1 7200 3600 1209600 300\n\
                example. 3600 NS ns1.other.\nexample. 3600 DNAME target.other.\n";
    let (z, report) = zone("example.", apex);
    assert!(!report.has_errors());
    let flags = flags_of(&z, "example.");
    assert!(flags.contains(Flags::APEX | Flags::DNAME) && !flags.contains(Flags::BELOW_DNAME));
    assert_eq!(lookup(&z, "www.example."), Lookup::NotFound { encloser: APEX, encloser_labels: 1 });
    let refused = testutil::refused("example.", &format!("{apex}ns1.example. 3600 A 192.0.2.53\n"));
    assert!(refused.errors().any(|m| m.to_string().contains("below a DNAME")));
}

/// The RDATA of `owner`'s `rtype` records, in the order the zone keeps them.
fn rdata_of(z: &ZoneContents, owner: &str, rtype: Rtype) -> Vec<Vec<u8>> {
    let owner = name(owner);
    let mut out = Vec::new();
    z.for_each_record(|o, t, _, rdata| {
        if t == rtype && o.eq_ignore_case(&owner) {
            out.push(rdata.to_vec());
        }
    });
    out
}

fn apex_builder() -> crate::ZoneBuilder {
    testutil::builder("example.", testutil::APEX)
}

#[test]
fn a_200k_record_rrset_drops_its_duplicates_and_keeps_file_order() {
    // Before, each record was compared with every kept one: 5·10^9 comparisons here.
    let mut b = apex_builder();
    let owner = name("big.example.");
    let address = |i: u32| [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
    for round in 0..4 {
        for i in 0..50_000u32 {
            b.add(&owner, Rtype::A, 300, &address(if round == 0 { i } else { 49_999 - i }));
        }
    }
    // Names compare case-insensitively (RFC 4034 §6.2) in a big RRset too.
    let mx = |target: String| [&[0, 10][..], name(&target).as_wire()].concat();
    for i in 0..100 {
        b.add(&owner, Rtype::MX, 300, &mx(format!("MX{i}.Other.")));
        b.add(&owner, Rtype::MX, 300, &mx(format!("mx{i}.other.")));
    }
    let (z, report) = b.finish().unwrap();
    let a = rdata_of(&z, "big.example.", Rtype::A);
    assert_eq!(a.len(), 50_000);
    assert!(a.iter().enumerate().all(|(i, rd)| rd[..] == address(i as u32)), "file order");
    let mxs = rdata_of(&z, "big.example.", Rtype::MX);
    assert_eq!(mxs.len(), 100);
    assert_eq!(mxs[7], mx("MX7.Other.".into()), "the first spelling is kept");
    assert_eq!(report.ignored, 150_100);
    assert_eq!(report.records, 4 + 50_100);
    let duplicates = report.warnings().filter(|w| w.message.contains("duplicate")).count();
    assert_eq!(duplicates, crate::report::MAX_ISSUES);
    // The rest are counted, with the warning that the A RRset fits in no message.
    assert_eq!(report.suppressed, 150_100 + 1 - crate::report::MAX_ISSUES);
}

#[test]
fn an_rrset_of_more_than_65535_records_refuses_the_zone() {
    // The count used to wrap: 70,000 records stored as 4,464.
    let mut b = apex_builder();
    for i in 0..70_000u32 {
        b.add(
            &name("big.example."),
            Rtype::A,
            300,
            &[10, (i >> 16) as u8, (i >> 8) as u8, i as u8],
        );
    }
    let Err(crate::Error::Semantic(report)) = b.finish() else { panic!("zone accepted") };
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        ["error: big.example. A RRset of 70000 records and 0 signatures: a zone holds at most \
          65535 of each in one RRset (and a DNS message about 5,000)"]
    );
}

#[test]
fn rrsets_too_big_for_any_message_are_warned_about() {
    let mut b = apex_builder();
    let owner = name("txt.example.");
    for i in 0..300u32 {
        let mut rdata = vec![255];
        rdata.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, 251));
        rdata.extend_from_slice(&i.to_be_bytes());
        b.add(&owner, Rtype::TXT, 300, &rdata);
    }
    // 84 KB written out in full, but names in NS RDATA compress (RFC 1035 §4.1.4).
    for i in 0..3000 {
        b.add(&name("ns.example."), Rtype::NS, 300, name(&format!("n{i:04}.example.")).as_wire());
    }
    let (_, report) = b.finish().unwrap();
    let big: Vec<String> = report
        .warnings()
        .filter(|w| w.message.contains("DNS message"))
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        big,
        ["warning: txt.example. TXT RRset of 300 records needs at least 80429 bytes, more \
          than a DNS message holds (65535): it can never be sent whole"]
    );
}
