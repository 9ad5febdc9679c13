//! RFC 2136 against literal zones: every prerequisite and update form, every response
//! code, the serial policies and the access rules per record. Each accepted update's
//! changeset is applied with `ZoneContents::apply` and the result compared with the zone
//! the update should give, written out in full.

use std::net::IpAddr;
use std::sync::Arc;

use tern_wire::message::{CompressionTable, Flags, MessageWriter, Section};
use tern_wire::{rdata, Class, Name, Opcode, Rcode, Rtype};
use tern_zone::{Changeset, ZoneContents};

use super::*;
use crate::access::{Action, OwnerMatch, Owners, Rule, UpdateLimits, ZoneAccess};

const NOW: u64 = 1_700_000_000;

/// The zone every test starts from (the records of `tests/interop/update_cases.py`).
const ZONE: &str = "
@ 3600 SOA ns1 hostmaster 10 7200 3600 1209600 300
@ 3600 NS ns1
@ 3600 NS ns2
@ 3600 MX 10 mail
ns1 3600 A 192.0.2.53
ns2 3600 A 192.0.2.54
mail 3600 A 192.0.2.25
www 300 A 192.0.2.1
www 300 A 192.0.2.2
www 300 TXT \"hello\"
alias 300 CNAME www
host.deep 300 A 192.0.2.9
sub 3600 NS ns.sub
ns.sub 3600 A 192.0.2.99
";

fn zone_of(text: &str) -> Arc<ZoneContents> {
    let set = crate::tests::zones(&[("example.", text)]);
    let zone = set.slots().next().unwrap().contents_full().unwrap();
    zone
}

fn zone() -> Arc<ZoneContents> {
    zone_of(ZONE)
}

/// `ZONE` with lines removed (exactly as written there) and lines added.
fn edited(remove: &[&str], add: &[&str]) -> String {
    let mut lines: Vec<String> = ZONE.lines().map(str::trim).map(String::from).collect();
    for line in remove {
        let at = lines.iter().position(|l| l == line).unwrap_or_else(|| panic!("no {line}"));
        lines.remove(at);
    }
    lines.extend(add.iter().map(|l| l.to_string()));
    lines.join("\n")
}

/// An UPDATE message, built record by record.
struct Msg {
    zone: (String, Rtype, Class),
    zones: usize,
    records: Vec<(Section, String, u32, Class, Rtype, Vec<u8>)>,
}

fn msg() -> Msg {
    Msg { zone: ("example.".into(), Rtype::SOA, Class::IN), zones: 1, records: Vec::new() }
}

fn name(owner: &str) -> Name {
    Name::parse_text(owner.as_bytes(), Some(&"example.".parse::<Name>().unwrap())).unwrap()
}

fn rd(rtype: Rtype, text: &str) -> Vec<u8> {
    if text.is_empty() {
        return Vec::new();
    }
    rdata::parse_str(rtype, text, Some(&"example.".parse::<Name>().unwrap())).unwrap()
}

impl Msg {
    fn zone(mut self, name: &str, rtype: Rtype, class: Class) -> Msg {
        self.zone = (name.into(), rtype, class);
        self
    }

    fn zones(mut self, count: usize) -> Msg {
        self.zones = count;
        self
    }

    fn record(
        mut self,
        section: Section,
        owner: &str,
        ttl: u32,
        class: Class,
        rtype: Rtype,
        data: Vec<u8>,
    ) -> Msg {
        self.records.push((section, owner.into(), ttl, class, rtype, data));
        self
    }

    /// A prerequisite: class ANY or NONE without RDATA, or IN with `data`.
    fn pre(self, owner: &str, class: Class, rtype: Rtype, data: &str) -> Msg {
        let data = rd(rtype, data);
        self.record(Section::Answer, owner, 0, class, rtype, data)
    }

    fn add(self, owner: &str, ttl: u32, rtype: Rtype, data: &str) -> Msg {
        let data = rd(rtype, data);
        self.record(Section::Authority, owner, ttl, Class::IN, rtype, data)
    }

    /// Deletes every RRset of a name (`rtype` ANY), an RRset, or (with `data`) a record.
    fn del(self, owner: &str, rtype: Rtype, data: &str) -> Msg {
        let class = if data.is_empty() { Class::ANY } else { Class::NONE };
        let data = rd(rtype, data);
        self.record(Section::Authority, owner, 0, class, rtype, data)
    }

    fn wire(&self) -> Vec<u8> {
        self.build(None).0
    }

    /// The message with an OPT record, signed with `key` at `NOW`; and its MAC.
    fn signed(&self, key: &tern_wire::tsig::Key) -> (Vec<u8>, tern_wire::tsig::Mac) {
        let (wire, mac) = self.build(Some(key));
        (wire, mac.unwrap())
    }

    fn build(&self, key: Option<&tern_wire::tsig::Key>) -> (Vec<u8>, Option<tern_wire::tsig::Mac>) {
        let mut buf = vec![0u8; 65535];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, 65535, &mut table).unwrap();
        w.set_id(0x2136);
        let mut flags = Flags(0);
        flags.set_opcode(Opcode::UPDATE);
        w.set_flags(flags);
        for _ in 0..self.zones {
            w.push_question(&name(&self.zone.0), self.zone.1, self.zone.2).unwrap();
        }
        for (section, owner, ttl, class, rtype, data) in &self.records {
            w.push_record(*section, &name(owner), *rtype, *class, *ttl, data).unwrap();
        }
        let mut mac = None;
        if let Some(key) = key {
            w.push_opt(1232, 0, 0).unwrap();
            let fields = tern_wire::tsig::TsigFields::at(NOW);
            mac = Some(w.sign_tsig(key, None, &fields).unwrap());
        }
        (w.finish().to_vec(), mac)
    }
}

/// Rules letting anyone update anything in `example.`.
fn open_access() -> Access {
    access(vec![Rule { actions: vec![Action::Update], ..Rule::default() }])
}

fn access(rules: Vec<Rule>) -> Access {
    let mut access = Access::default();
    access.zones.insert(("example.".parse().unwrap(), ZoneAccess { rules: rules.into() }));
    access
}

fn client() -> IpAddr {
    "192.0.2.200".parse().unwrap()
}

fn run_with(
    zone: &ZoneContents,
    m: &Msg,
    access: &Access,
    key: Option<&Name>,
) -> Result<Changeset, UpdateRefusal> {
    let requester = Requester { access, client: client(), key: key.map(|k| &**k), tls: None };
    update(zone, &m.wire(), &requester, &UpdatePolicy::default(), NOW)
}

fn run(m: &Msg) -> Result<Changeset, UpdateRefusal> {
    run_with(&zone(), m, &open_access(), None)
}

/// The response code of a refused update.
fn refused(m: &Msg) -> Rcode {
    match run(m) {
        Err(refusal) => refusal.rcode,
        Ok(changes) => panic!("accepted: {changes:?}"),
    }
}

/// Every record of a zone, as sorted text.
fn records(zone: &ZoneContents) -> Vec<String> {
    let mut out = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, data| {
        let owner = owner.to_string().to_ascii_lowercase();
        out.push(format!("{owner} {ttl} {rtype} {}", rdata::to_text(rtype, data)));
    });
    out.sort();
    out
}

/// Runs the update, applies its changeset, and compares the zone with `expected` (the
/// SOA serial `serial`); returns the changeset.
fn gives(m: &Msg, expected: &str, serial: u32) -> Changeset {
    let before = zone();
    let changes = run(m).unwrap_or_else(|r| panic!("refused: {r}"));
    let (after, _) = before.apply(&changes).unwrap();
    let expected = expected.replacen(" 10 7200", &format!(" {serial} 7200"), 1);
    assert_eq!(records(&after), records(&zone_of(&expected)));
    assert_eq!(after.serial(), serial);
    changes
}

/// The update changes nothing: an empty changeset, the serial stays.
fn no_change(m: &Msg) {
    let changes = run(m).unwrap_or_else(|r| panic!("refused: {r}"));
    assert!(changes.is_empty(), "{changes:?}");
}

// §3.1: the zone section.

#[test]
fn the_zone_section_names_one_zone_of_type_soa_and_class_in() {
    let add = || msg().add("n", 300, Rtype::A, "192.0.2.7");
    assert_eq!(refused(&add().zones(0)), Rcode::FORMERR);
    assert_eq!(refused(&add().zones(2)), Rcode::FORMERR);
    assert_eq!(refused(&add().zone("example.", Rtype::A, Class::IN)), Rcode::FORMERR);
    assert_eq!(refused(&add().zone("example.", Rtype::SOA, Class::CH)), Rcode::NOTIMP);
    assert_eq!(refused(&add().zone("www", Rtype::SOA, Class::IN)), Rcode::NOTAUTH);
    assert_eq!(refused(&add().zone("other.", Rtype::SOA, Class::IN)), Rcode::NOTAUTH);
    gives(&add().zone("EXAMPLE.", Rtype::SOA, Class::IN), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
}

#[test]
fn a_message_of_another_opcode_or_malformed_is_formerr() {
    let mut wire = msg().add("n", 300, Rtype::A, "192.0.2.7").wire();
    let requester = Requester { access: &open_access(), client: client(), key: None, tls: None };
    let mut query = wire.clone();
    query[2] &= !0x78; // opcode QUERY
    let policy = UpdatePolicy::default();
    assert_eq!(
        update(&zone(), &query, &requester, &policy, NOW).unwrap_err().rcode,
        Rcode::FORMERR
    );
    wire.truncate(wire.len() - 2);
    assert_eq!(update(&zone(), &wire, &requester, &policy, NOW).unwrap_err().rcode, Rcode::FORMERR);
}

// §2.4, §3.2: the prerequisites.

#[test]
fn name_in_use() {
    let m = |owner: &str| {
        msg().pre(owner, Class::ANY, Rtype::ANY, "").add("n", 300, Rtype::A, "192.0.2.7")
    };
    gives(&m("www"), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    gives(&m("sub"), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    assert_eq!(refused(&m("nothing")), Rcode::NXDOMAIN);
    assert_eq!(refused(&m("deep")), Rcode::NXDOMAIN, "an empty non-terminal is not in use");
}

#[test]
fn name_not_in_use() {
    let m = |owner: &str| {
        msg().pre(owner, Class::NONE, Rtype::ANY, "").add("n", 300, Rtype::A, "192.0.2.7")
    };
    gives(&m("nothing"), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    gives(&m("deep"), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    assert_eq!(refused(&m("www")), Rcode::YXDOMAIN);
    assert_eq!(refused(&m("@")), Rcode::YXDOMAIN);
}

#[test]
fn rrset_exists_value_independent() {
    let m = |owner: &str, t: Rtype| {
        msg().pre(owner, Class::ANY, t, "").add("n", 300, Rtype::A, "192.0.2.7")
    };
    gives(&m("www", Rtype::TXT), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    assert_eq!(refused(&m("www", Rtype::MX)), Rcode::NXRRSET);
    assert_eq!(refused(&m("nothing", Rtype::A)), Rcode::NXRRSET);
}

#[test]
fn rrset_does_not_exist() {
    let m = |owner: &str, t: Rtype| {
        msg().pre(owner, Class::NONE, t, "").add("n", 300, Rtype::A, "192.0.2.7")
    };
    gives(&m("www", Rtype::MX), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    gives(&m("nothing", Rtype::A), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    assert_eq!(refused(&m("www", Rtype::A)), Rcode::YXRRSET);
}

#[test]
fn rrset_exists_value_dependent() {
    let add = |m: Msg| m.add("n", 300, Rtype::A, "192.0.2.7");
    let both = msg().pre("www", Class::IN, Rtype::A, "192.0.2.2").pre(
        "WWW",
        Class::IN,
        Rtype::A,
        "192.0.2.1",
    );
    gives(&add(both), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    let twice = msg()
        .pre("www", Class::IN, Rtype::A, "192.0.2.2")
        .pre("www", Class::IN, Rtype::A, "192.0.2.2")
        .pre("www", Class::IN, Rtype::A, "192.0.2.1");
    gives(&add(twice), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    let case = msg().pre("alias", Class::IN, Rtype::CNAME, "WWW");
    gives(&add(case), &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    let subset = msg().pre("www", Class::IN, Rtype::A, "192.0.2.1");
    assert_eq!(refused(&add(subset)), Rcode::NXRRSET);
    let superset = msg()
        .pre("www", Class::IN, Rtype::A, "192.0.2.1")
        .pre("www", Class::IN, Rtype::A, "192.0.2.2")
        .pre("www", Class::IN, Rtype::A, "192.0.2.3");
    assert_eq!(refused(&add(superset)), Rcode::NXRRSET);
    assert_eq!(
        refused(&add(msg().pre("nothing", Class::IN, Rtype::A, "192.0.2.1"))),
        Rcode::NXRRSET
    );
    // Checked after every other prerequisite (§3.2.3): a later FORMERR comes first.
    let late = msg()
        .pre("www", Class::IN, Rtype::A, "192.0.2.1")
        .pre("www", Class::ANY, Rtype::A, "")
        .record(Section::Answer, "www", 300, Class::ANY, Rtype::A, vec![]);
    assert_eq!(refused(&late), Rcode::FORMERR);
}

#[test]
fn malformed_prerequisites() {
    let pre = |ttl: u32, class: Class, rtype: Rtype, data: Vec<u8>| {
        msg().record(Section::Answer, "www", ttl, class, rtype, data)
    };
    assert_eq!(refused(&pre(300, Class::ANY, Rtype::A, vec![])), Rcode::FORMERR, "TTL not 0");
    assert_eq!(refused(&pre(0, Class::ANY, Rtype::A, vec![192, 0, 2, 1])), Rcode::FORMERR);
    assert_eq!(refused(&pre(0, Class::NONE, Rtype::A, vec![192, 0, 2, 1])), Rcode::FORMERR);
    assert_eq!(refused(&pre(0, Class::CH, Rtype::A, vec![])), Rcode::FORMERR);
    assert_eq!(refused(&pre(0, Class::IN, Rtype::A, vec![192, 0, 2])), Rcode::FORMERR, "bad RDATA");
    assert_eq!(refused(&pre(0, Class::IN, Rtype::ANY, vec![])), Rcode::FORMERR, "meta-type");
    let outside = msg().pre("www.elsewhere.", Class::ANY, Rtype::ANY, "");
    assert_eq!(refused(&outside), Rcode::NOTZONE);
}

#[test]
fn prerequisites_are_checked_before_the_update_section() {
    // RFC 2136 §3.2 before §3.4.1, as Knot DNS answers (BIND prescans first: FORMERR).
    let m = msg().pre("nothing", Class::ANY, Rtype::ANY, "").record(
        Section::Authority,
        "www",
        300,
        Class::ANY,
        Rtype::A,
        vec![],
    );
    assert_eq!(refused(&m), Rcode::NXDOMAIN);
}

// §3.4.1: the update section's prescan.

#[test]
fn prescan() {
    let up = |owner: &str, ttl: u32, class: Class, rtype: Rtype, data: Vec<u8>| {
        msg().record(Section::Authority, owner, ttl, class, rtype, data)
    };
    let a = vec![192, 0, 2, 1];
    assert_eq!(refused(&up("www.elsewhere.", 300, Class::IN, Rtype::A, a.clone())), Rcode::NOTZONE);
    assert_eq!(refused(&up("n", 300, Class::CH, Rtype::A, a.clone())), Rcode::FORMERR);
    assert_eq!(refused(&up("n", 300, Class::IN, Rtype::ANY, vec![])), Rcode::FORMERR);
    assert_eq!(refused(&up("n", 300, Class::IN, Rtype::AXFR, vec![])), Rcode::FORMERR);
    assert_eq!(refused(&up("n", 300, Class::IN, Rtype::MAILA, vec![])), Rcode::FORMERR);
    assert_eq!(refused(&up("www", 300, Class::ANY, Rtype::A, vec![])), Rcode::FORMERR, "TTL");
    assert_eq!(refused(&up("www", 0, Class::ANY, Rtype::A, a.clone())), Rcode::FORMERR, "RDATA");
    assert_eq!(refused(&up("www", 0, Class::ANY, Rtype::AXFR, vec![])), Rcode::FORMERR);
    assert_eq!(refused(&up("www", 300, Class::NONE, Rtype::A, a.clone())), Rcode::FORMERR, "TTL");
    assert_eq!(refused(&up("www", 0, Class::NONE, Rtype::ANY, vec![])), Rcode::FORMERR);
    assert_eq!(refused(&up("n", 300, Class::IN, Rtype::A, vec![1, 2])), Rcode::FORMERR, "RDATA");
    assert_eq!(refused(&up("n", 0, Class::NONE, Rtype::A, vec![])), Rcode::FORMERR, "RDATA");
    // All or nothing: a good record before a bad one changes nothing.
    let m =
        msg().add("n", 300, Rtype::A, "192.0.2.7").add("x.elsewhere.", 300, Rtype::A, "192.0.2.1");
    assert_eq!(refused(&m), Rcode::NOTZONE);
}

#[test]
fn dnssec_records_are_left_to_a_signer() {
    let key = "257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==";
    assert_eq!(refused(&msg().add("@", 3600, Rtype::DNSKEY, key)), Rcode::REFUSED);
    assert_eq!(refused(&msg().add("www", 300, Rtype::NSEC, "zzz.example. A")), Rcode::REFUSED);
    assert_eq!(refused(&msg().del("www", Rtype::RRSIG, "")), Rcode::REFUSED);
    let signed = zone_of(&format!("{ZONE}\n@ 3600 DNSKEY {key}"));
    let m = msg().add("n", 300, Rtype::A, "192.0.2.7");
    let refusal = run_with(&signed, &m, &open_access(), None).unwrap_err();
    assert_eq!(refusal.rcode, Rcode::REFUSED);
    assert!(refusal.reason.contains("signed"), "{}", refusal.reason);
}

// §3.4.2: the updates.

#[test]
fn adding_records() {
    gives(
        &msg().add("new", 300, Rtype::A, "192.0.2.7"),
        &edited(&[], &["new 300 A 192.0.2.7"]),
        11,
    );
    gives(
        &msg().add("a.b.deep", 300, Rtype::A, "192.0.2.7"),
        &edited(&[], &["a.b.deep 300 A 192.0.2.7"]),
        11,
    );
    gives(
        &msg().add("www", 300, Rtype::A, "192.0.2.3"),
        &edited(&[], &["www 300 A 192.0.2.3"]),
        11,
    );
    gives(
        &msg().add("*.wild", 60, Rtype::TXT, "\"w\""),
        &edited(&[], &["*.wild 60 TXT \"w\""]),
        11,
    );
    gives(
        &msg().add("x.sub", 300, Rtype::A, "192.0.2.8"),
        &edited(&[], &["x.sub 300 A 192.0.2.8"]),
        11,
    );
    // Twice in one message: added once.
    let twice = msg().add("n", 300, Rtype::A, "192.0.2.7").add("N", 300, Rtype::A, "192.0.2.7");
    gives(&twice, &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    // TXT is not a name: case counts.
    gives(
        &msg().add("www", 300, Rtype::TXT, "\"HELLO\""),
        &edited(&[], &["www 300 TXT \"HELLO\""]),
        11,
    );
}

#[test]
fn an_added_record_gives_its_rrset_its_ttl() {
    // RFC 2136 §3.4.2.2 with RFC 2181 §5.2: one TTL per RRset, the added record's.
    let m = msg().add("www", 60, Rtype::A, "192.0.2.3");
    let expected = edited(
        &["www 300 A 192.0.2.1", "www 300 A 192.0.2.2"],
        &["www 60 A 192.0.2.1", "www 60 A 192.0.2.2", "www 60 A 192.0.2.3"],
    );
    let changes = gives(&m, &expected, 11);
    assert_eq!((changes.removed.len(), changes.added.len()), (2, 3), "the whole RRset, as a diff");
    // A record already there replaces the zone's: its TTL only (as BIND; Knot DNS ignores it).
    let m = msg().add("www", 60, Rtype::A, "192.0.2.1");
    gives(
        &m,
        &edited(
            &["www 300 A 192.0.2.1", "www 300 A 192.0.2.2"],
            &["www 60 A 192.0.2.1", "www 60 A 192.0.2.2"],
        ),
        11,
    );
}

/// RFC 2181 §8: a TTL with its top bit set is read as 0, as the zone-file parser reads it
/// (it was served as sent, then as 0 once the zone file was read again).
#[test]
fn a_ttl_with_the_top_bit_set_is_read_as_zero() {
    let m = msg().add("new", u32::MAX, Rtype::A, "192.0.2.7").add(
        "www",
        0x8000_0000,
        Rtype::A,
        "192.0.2.1",
    );
    let changes = run(&m).unwrap();
    let ttls: Vec<(String, u32)> =
        changes.added.iter().map(|r| (r.owner.to_string(), r.ttl)).collect();
    assert!(ttls.contains(&("new.example.".into(), 0)), "{ttls:?}");
    assert!(ttls.contains(&("www.example.".into(), 0)), "the RRset takes it: {ttls:?}");
}

#[test]
fn adding_what_is_there_changes_nothing() {
    no_change(&msg().add("www", 300, Rtype::A, "192.0.2.1"));
    no_change(&msg().add("@", 3600, Rtype::NS, "NS1"));
    no_change(&msg());
    no_change(&msg().add("n", 300, Rtype::A, "192.0.2.7").del("n", Rtype::A, "192.0.2.7"));
    no_change(&msg().del("www", Rtype::A, "").add("www", 300, Rtype::A, "192.0.2.1").add(
        "www",
        300,
        Rtype::A,
        "192.0.2.2",
    ));
}

#[test]
fn cname_and_other_data_exclude_each_other() {
    no_change(&msg().add("www", 300, Rtype::CNAME, "mail"));
    no_change(&msg().add("alias", 300, Rtype::A, "192.0.2.4"));
    no_change(&msg().add("@", 300, Rtype::CNAME, "mail"));
    // A CNAME replaces the name's CNAME.
    gives(
        &msg().add("alias", 600, Rtype::CNAME, "mail"),
        &edited(&["alias 300 CNAME www"], &["alias 600 CNAME mail"]),
        11,
    );
    // Sequential: once the other data is gone, the CNAME goes in.
    let m = msg().del("www", Rtype::ANY, "").add("www", 300, Rtype::CNAME, "mail");
    let expected = edited(
        &["www 300 A 192.0.2.1", "www 300 A 192.0.2.2", "www 300 TXT \"hello\""],
        &["www 300 CNAME mail"],
    );
    gives(&m, &expected, 11);
}

#[test]
fn soa_is_replaced_only_by_a_higher_serial() {
    let soa = |serial: u32| format!("ns1 hostmaster {serial} 7200 3600 1209600 300");
    let changes = gives(&msg().add("@", 3600, Rtype::SOA, &soa(20)), ZONE, 20);
    assert!(changes.removed.is_empty() && changes.added.is_empty());
    no_change(&msg().add("@", 3600, Rtype::SOA, &soa(5)));
    no_change(&msg().add("@", 3600, Rtype::SOA, "ns1 hostmaster 10 1 1 1 1"));
    no_change(&msg().add("www", 3600, Rtype::SOA, &soa(20)));
    // With other changes, the update's serial stands (not one more).
    let m = msg().add("@", 3600, Rtype::SOA, &soa(20)).add("n", 300, Rtype::A, "192.0.2.7");
    gives(&m, &edited(&[], &["n 300 A 192.0.2.7"]), 20);
    // A lower SOA with other changes: ignored, the serial rises by the policy.
    let m = msg().add("@", 3600, Rtype::SOA, &soa(5)).add("n", 300, Rtype::A, "192.0.2.7");
    gives(&m, &edited(&[], &["n 300 A 192.0.2.7"]), 11);
    // Other SOA fields and TTL come with the update's SOA.
    let m = msg().add("@", 60, Rtype::SOA, "ns2 admin 11 1 2 3 4");
    let expected = edited(
        &["@ 3600 SOA ns1 hostmaster 10 7200 3600 1209600 300"],
        &["@ 60 SOA ns2 admin 11 1 2 3 4"],
    );
    let changes = run(&m).unwrap();
    let (after, _) = zone().apply(&changes).unwrap();
    assert_eq!(records(&after), records(&zone_of(&expected)));
}

#[test]
fn the_soa_is_never_deleted() {
    no_change(&msg().del("@", Rtype::SOA, "ns1 hostmaster 10 7200 3600 1209600 300"));
    no_change(&msg().del("@", Rtype::SOA, ""));
}

#[test]
fn deleting_at_the_apex_keeps_the_soa_and_ns() {
    no_change(&msg().del("@", Rtype::NS, ""));
    gives(&msg().del("@", Rtype::ANY, ""), &edited(&["@ 3600 MX 10 mail"], &[]), 11);
    gives(&msg().del("@", Rtype::NS, "ns1"), &edited(&["@ 3600 NS ns1"], &[]), 11);
    // The last apex NS stays.
    let both = msg().del("@", Rtype::NS, "ns1").del("@", Rtype::NS, "ns2");
    gives(&both, &edited(&["@ 3600 NS ns1"], &[]), 11);
    // Replacing the apex NS one by one works.
    let m = msg().add("@", 3600, Rtype::NS, "ns3").del("@", Rtype::NS, "ns1").del(
        "@",
        Rtype::NS,
        "ns2",
    );
    gives(&m, &edited(&["@ 3600 NS ns1", "@ 3600 NS ns2"], &["@ 3600 NS ns3"]), 11);
}

#[test]
fn deleting() {
    let www = ["www 300 A 192.0.2.1", "www 300 A 192.0.2.2", "www 300 TXT \"hello\""];
    gives(&msg().del("www", Rtype::ANY, ""), &edited(&www, &[]), 11);
    gives(&msg().del("www", Rtype::A, ""), &edited(&www[..2], &[]), 11);
    gives(&msg().del("www", Rtype::A, "192.0.2.1"), &edited(&www[..1], &[]), 11);
    gives(&msg().del("sub", Rtype::NS, ""), &edited(&["sub 3600 NS ns.sub"], &[]), 11);
    gives(
        &msg().del("host.deep", Rtype::ANY, ""),
        &edited(&["host.deep 300 A 192.0.2.9"], &[]),
        11,
    );
    no_change(&msg().del("www", Rtype::A, "192.0.2.99"));
    no_change(&msg().del("www", Rtype::MX, ""));
    no_change(&msg().del("nothing", Rtype::ANY, ""));
    no_change(&msg().del("deep", Rtype::ANY, ""));
}

#[test]
fn wks_duplicates_are_the_same_address_and_protocol() {
    let zone = format!("{ZONE}\nsvc 300 WKS 192.0.2.5 6 25");
    let m = msg().add("svc", 300, Rtype::WKS, "192.0.2.5 6 25 80");
    let changes = run_with(&zone_of(&zone), &m, &open_access(), None).unwrap();
    let (after, _) = zone_of(&zone).apply(&changes).unwrap();
    let expected =
        format!("{}\nsvc 300 WKS 192.0.2.5 6 25 80", ZONE.replacen(" 10 7200", " 11 7200", 1));
    assert_eq!(records(&after), records(&zone_of(&expected)));
}

#[test]
fn a_change_the_zone_cannot_hold_is_refused_when_applied() {
    // Two DNAMEs at one name are a semantic error of the zone (RFC 6672 §2.4): the
    // update is computed, and `apply` refuses it.
    let m = msg().add("dn", 300, Rtype::DNAME, "a").add("dn", 300, Rtype::DNAME, "b");
    let changes = run(&m).unwrap();
    let error = zone().apply(&changes).unwrap_err();
    assert_eq!(UpdateRefusal::from_apply(&error).rcode, Rcode::REFUSED);
    let stale = Changeset { soa_from: changes.soa_to.clone(), ..changes };
    let error = zone().apply(&stale).unwrap_err();
    assert_eq!(UpdateRefusal::from_apply(&error).rcode, Rcode::SERVFAIL);
}

#[test]
fn sequences_of_updates() {
    // An update, applied; then one whose prerequisite the first made true.
    let z1 = zone();
    let first = msg().add("n", 300, Rtype::A, "192.0.2.7");
    let changes = run_with(&z1, &first, &open_access(), None).unwrap();
    let (z2, _) = z1.apply(&changes).unwrap();
    let second = msg().pre("n", Class::IN, Rtype::A, "192.0.2.7").del("n", Rtype::A, "");
    assert_eq!(run_with(&z1, &second, &open_access(), None).unwrap_err().rcode, Rcode::NXRRSET);
    let changes = run_with(&z2, &second, &open_access(), None).unwrap();
    assert_eq!((changes.from_serial(), changes.to_serial()), (Some(11), Some(12)));
    let (z3, _) = z2.apply(&changes).unwrap();
    assert_eq!(records(&z3), records(&zone_of(&ZONE.replacen(" 10 7200", " 12 7200", 1))));
}

#[test]
fn the_serial_follows_the_policy() {
    let m = msg().add("n", 300, Rtype::A, "192.0.2.7");
    let requester = Requester { access: &open_access(), client: client(), key: None, tls: None };
    let serial = |policy: SerialPolicy| {
        let policy = UpdatePolicy { serial: policy, ..UpdatePolicy::default() };
        update(&zone(), &m.wire(), &requester, &policy, NOW).unwrap().to_serial()
    };
    assert_eq!(serial(SerialPolicy::Increment), Some(11));
    assert_eq!(serial(SerialPolicy::UnixTime), Some(1_700_000_000));
    assert_eq!(serial(SerialPolicy::DateSerial), Some(2023_11_14_00));
}

// §3.3: who may update, record by record.

fn key_name(text: &str) -> Name {
    text.parse().unwrap()
}

fn update_rule(keys: &[&str], limits: UpdateLimits) -> Rule {
    Rule {
        keys: keys.iter().map(|k| key_name(k)).collect(),
        actions: vec![Action::Update],
        update: limits,
        ..Rule::default()
    }
}

/// The response code of `m` under `rules` with `key`, or NOERROR when accepted.
fn verdict(rules: &[Rule], key: Option<&str>, m: &Msg) -> Rcode {
    let access = access(rules.to_vec());
    let key = key.map(key_name);
    match run_with(&zone(), m, &access, key.as_ref()) {
        Ok(_) => Rcode::NOERROR,
        Err(refusal) => refusal.rcode,
    }
}

#[test]
fn updates_are_denied_without_a_rule() {
    let m = msg().add("n", 300, Rtype::A, "192.0.2.7");
    assert_eq!(verdict(&[], None, &m), Rcode::REFUSED);
    let transfer_only = Rule { actions: vec![Action::Transfer], ..Rule::default() };
    assert_eq!(verdict(&[transfer_only], None, &m), Rcode::REFUSED);
    let keyed = update_rule(&["upd.key."], UpdateLimits::default());
    assert_eq!(verdict(std::slice::from_ref(&keyed), None, &m), Rcode::REFUSED, "unsigned");
    assert_eq!(verdict(std::slice::from_ref(&keyed), Some("other.key."), &m), Rcode::REFUSED);
    assert_eq!(verdict(&[keyed], Some("upd.key."), &m), Rcode::NOERROR);
    let elsewhere = Rule {
        addresses: vec![crate::Prefix::parse("10.0.0.0/8").unwrap()],
        ..update_rule(&[], UpdateLimits::default())
    };
    assert_eq!(verdict(&[elsewhere], None, &m), Rcode::REFUSED, "another address");
}

#[test]
fn an_acme_key_may_touch_only_its_challenge_txt() {
    let acme = UpdateLimits {
        owners: Owners::Names(vec![key_name("_acme-challenge.www.example.")]),
        owner_match: OwnerMatch::Equal,
        types: vec![Rtype::TXT],
    };
    let rules = [update_rule(&["acme.key."], acme)];
    let v = |m: &Msg| verdict(&rules, Some("acme.key."), m);
    let challenge = "_acme-challenge.www";
    assert_eq!(v(&msg().add(challenge, 60, Rtype::TXT, "\"token\"")), Rcode::NOERROR);
    assert_eq!(v(&msg().del(challenge, Rtype::TXT, "")), Rcode::NOERROR);
    assert_eq!(v(&msg().del(challenge, Rtype::TXT, "\"token\"")), Rcode::NOERROR);
    assert_eq!(v(&msg().del(challenge, Rtype::ANY, "")), Rcode::NOERROR, "nothing there");
    assert_eq!(v(&msg().add(challenge, 60, Rtype::A, "192.0.2.1")), Rcode::REFUSED, "type");
    assert_eq!(v(&msg().add("www", 60, Rtype::TXT, "\"x\"")), Rcode::REFUSED, "owner");
    assert_eq!(
        v(&msg().add("x._acme-challenge.www", 60, Rtype::TXT, "\"x\"")),
        Rcode::REFUSED,
        "below"
    );
    // Every record must be allowed: one outside the limits refuses the whole update.
    let mixed =
        msg().add(challenge, 60, Rtype::TXT, "\"token\"").add("www", 60, Rtype::A, "192.0.2.9");
    assert_eq!(v(&mixed), Rcode::REFUSED);
    // Deleting every RRset of a name is checked against each type it holds.
    let zone_with = format!("{ZONE}\n{challenge} 60 TXT \"old\"\n{challenge} 60 A 192.0.2.1");
    let access = access(rules.to_vec());
    let key = key_name("acme.key.");
    let m = msg().del(challenge, Rtype::ANY, "");
    assert_eq!(
        run_with(&zone_of(&zone_with), &m, &access, Some(&key)).unwrap_err().rcode,
        Rcode::REFUSED
    );
    let zone_with = format!("{ZONE}\n{challenge} 60 TXT \"old\"");
    assert!(run_with(&zone_of(&zone_with), &m, &access, Some(&key)).is_ok());
}

#[test]
fn owner_limits_key_zone_and_subtrees() {
    let limits = |owners: Owners, owner_match: OwnerMatch| UpdateLimits {
        owners,
        owner_match,
        types: vec![],
    };
    let add = |owner: &str| msg().add(owner, 60, Rtype::A, "192.0.2.1");
    // The key's own name (a host updating itself), and below it.
    let own = [update_rule(&["host.example."], limits(Owners::Key, OwnerMatch::SubOrEqual))];
    assert_eq!(verdict(&own, Some("host.example."), &add("host")), Rcode::NOERROR);
    assert_eq!(verdict(&own, Some("host.example."), &add("a.host")), Rcode::NOERROR);
    assert_eq!(verdict(&own, Some("host.example."), &add("other")), Rcode::REFUSED);
    let open_key = [update_rule(&[], limits(Owners::Key, OwnerMatch::Equal))];
    assert_eq!(verdict(&open_key, None, &add("host")), Rcode::REFUSED, "unsigned: no key name");
    // The apex only, or everything but the apex.
    let apex = [update_rule(&[], limits(Owners::Zone, OwnerMatch::Equal))];
    assert_eq!(verdict(&apex, None, &msg().add("@", 60, Rtype::TXT, "\"v\"")), Rcode::NOERROR);
    assert_eq!(verdict(&apex, None, &add("www")), Rcode::REFUSED);
    let below = [update_rule(&[], limits(Owners::Zone, OwnerMatch::Sub))];
    assert_eq!(verdict(&below, None, &add("www")), Rcode::NOERROR);
    assert_eq!(verdict(&below, None, &msg().add("@", 60, Rtype::TXT, "\"v\"")), Rcode::REFUSED);
    // A subtree (BIND's `wildcard *.dyn.example.`).
    let dyn_names = Owners::Names(vec![key_name("dyn.example.")]);
    let subtree = [update_rule(&[], limits(dyn_names, OwnerMatch::Sub))];
    assert_eq!(verdict(&subtree, None, &add("a.dyn")), Rcode::NOERROR);
    assert_eq!(verdict(&subtree, None, &add("b.a.dyn")), Rcode::NOERROR);
    assert_eq!(verdict(&subtree, None, &add("dyn")), Rcode::REFUSED);
}

#[test]
fn records_are_decided_by_the_first_matching_rule() {
    let types = |t: &[Rtype]| UpdateLimits { types: t.to_vec(), ..UpdateLimits::default() };
    let deny_ns = Rule { deny: true, ..update_rule(&[], types(&[Rtype::NS])) };
    let rules = [deny_ns, update_rule(&[], UpdateLimits::default())];
    assert_eq!(verdict(&rules, None, &msg().add("www", 60, Rtype::A, "192.0.2.1")), Rcode::NOERROR);
    assert_eq!(verdict(&rules, None, &msg().add("x", 60, Rtype::NS, "ns1")), Rcode::REFUSED);
    // Two narrow rules together allow an update touching both.
    let txt = update_rule(
        &[],
        UpdateLimits {
            owners: Owners::Names(vec![key_name("t.example.")]),
            types: vec![Rtype::TXT],
            ..UpdateLimits::default()
        },
    );
    let a = update_rule(
        &[],
        UpdateLimits {
            owners: Owners::Names(vec![key_name("a.example.")]),
            types: vec![Rtype::A],
            ..UpdateLimits::default()
        },
    );
    let both = msg().add("t", 60, Rtype::TXT, "\"x\"").add("a", 60, Rtype::A, "192.0.2.1");
    assert_eq!(verdict(&[txt, a], None, &both), Rcode::NOERROR);
}

// The request the special path hands over, and its answer.

#[test]
fn a_request_computes_against_the_given_version_and_answers_signed() {
    use tern_wire::tsig::{verify_message, Algorithm, Key, TsigStatus};
    let key = Key::new(key_name("upd.key."), Algorithm::HmacSha256, b"0123456789abcdef");
    let (wire, request_mac) = msg().add("n", 300, Rtype::A, "192.0.2.7").signed(&key);
    let access = Arc::new(open_access());
    let read = UpdateMessage::read(&wire).unwrap();
    assert_eq!(read.update_count(), 1);
    let origin: Name = "example.".parse().unwrap();
    let request = UpdateRequest::new(Accepted {
        origin: &origin,
        message: read,
        access: Arc::clone(&access),
        tls: None,
        client: client(),
        transport: Transport::Tcp,
        key: Some(&key),
        request_mac: request_mac.as_slice(),
        signed_at: (NOW, 300),
        raw: &wire,
        id: 0x2136,
        rd: false,
        edns: Some(false),
        udp_payload: 1232,
        limit: 65535,
    });
    assert_eq!(request.key_name().map(ToString::to_string).as_deref(), Some("upd.key."));
    assert_eq!(request.bytes(), wire.as_slice(), "kept as received, for forwarding");
    let signature = request.signature().unwrap();
    assert_eq!((signature.time_signed, signature.window), (NOW, 300));
    assert_eq!(
        (signature.key.to_string(), signature.mac),
        ("upd.key.".into(), request_mac.as_slice())
    );
    let changes = request.changes(&zone(), &UpdatePolicy::default(), NOW).unwrap();
    assert_eq!(changes.to_serial(), Some(11));
    let unnumbered = request.changes_unnumbered(&zone(), &UpdatePolicy::default()).unwrap();
    assert_eq!((unnumbered.soa_from, unnumbered.soa_to), (None, None), "the batch numbers it");
    assert_eq!((unnumbered.added, unnumbered.removed), (changes.added, changes.removed));
    let other =
        crate::tests::zones(&[("other.", ZONE)]).slots().next().unwrap().contents_full().unwrap();
    assert_eq!(
        request.changes(&other, &UpdatePolicy::default(), NOW).unwrap_err().rcode,
        Rcode::SERVFAIL
    );
    let mut out = vec![0u8; 65535];
    let len = request.answer(Rcode::NXRRSET, &mut out, NOW).unwrap();
    let answer = &out[..len];
    let rendered = crate::tests::render(answer);
    assert!(rendered.starts_with("NXRRSET  | ad: OPT(1232,-)"), "{rendered}");
    let reader = tern_wire::message::MessageReader::new(answer).unwrap();
    let header = reader.header();
    assert_eq!((header.id, header.flags.opcode()), (0x2136, Opcode::UPDATE));
    assert!(header.flags.has(Flags::QR));
    assert_eq!(header.count(Section::Question), 1, "the zone section is echoed");
    let keys = [key.clone()];
    let checked =
        verify_message(answer, &keys[..], Some(request_mac.as_slice()), NOW).unwrap().unwrap();
    assert_eq!(checked.status, TsigStatus::Ok);
    // Too small a buffer: no answer rather than a broken one.
    assert_eq!(request.answer(Rcode::NOERROR, &mut out[..40], NOW), None);
}
