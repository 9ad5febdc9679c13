//! The requests beside plain queries: TSIG-signed queries (RFC 8945 §5.2), NOTIFY
//! (RFC 1996), AXFR (RFC 5936) and IXFR (RFC 1995), with the access rules.

use std::net::IpAddr;
use std::sync::Arc;

use tern_wire::message::{CompressionTable, Flags, MessageReader, MessageWriter, Section};
use tern_wire::tsig::{
    verify_message, Algorithm, Key, SequenceStep, SequenceVerifier, TsigFields, TsigStatus,
};
use tern_wire::{rdata, Class, Name, Opcode, Rcode, Rtype};
use tern_zone::{Changeset, HistoryLimits, RecordData, ZoneContents, ZoneSet, ZoneSlot};

use super::{render, zones, EXAMPLE};
use crate::{
    Access, Action, Config, Engine, Outcome, Prefix, Request, Rule, Transport, ZoneAccess,
};

const NOW: u64 = 1_700_000_000;

fn now() -> u64 {
    NOW
}

fn key() -> Key {
    Key::new("xfr.key.".parse().unwrap(), Algorithm::HmacSha256, b"0123456789abcdef")
}

fn other_key() -> Key {
    Key::new("other.key.".parse().unwrap(), Algorithm::HmacSha256, b"fedcba9876543210")
}

fn origin() -> Name {
    "example.".parse().unwrap()
}

/// An engine whose rules let 127.0.0.1 transfer with the key, and 127.0.0.3 notify.
fn engine() -> Engine {
    let engine = Engine::new(Config::default());
    let rules = vec![
        Rule {
            addresses: vec![Prefix::parse("127.0.0.1").unwrap()],
            keys: vec![key().name().to_name()],
            actions: vec![Action::Transfer],
            ..Rule::default()
        },
        Rule {
            addresses: vec![Prefix::parse("127.0.0.3").unwrap()],
            actions: vec![Action::Notify],
            ..Rule::default()
        },
    ];
    let mut access = Access { keys: vec![key()], ..Access::default() };
    access.zones.insert((origin(), ZoneAccess { rules: rules.into() }));
    engine.set_access(access);
    engine
}

/// A request message; signed with `key` at `time` when given.
fn message(
    qname: &str,
    qtype: Rtype,
    opcode: Opcode,
    authority_serial: Option<u32>,
    key: Option<(&Key, u64)>,
) -> Vec<u8> {
    let mut buf = vec![0u8; 1024];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
    w.set_id(0x4242);
    let mut flags = Flags(0);
    flags.set_opcode(opcode);
    w.set_flags(flags);
    let name: Name = qname.parse().unwrap();
    w.push_question(&name, qtype, Class::IN).unwrap();
    if let Some(serial) = authority_serial {
        let soa = rdata::parse_str(
            Rtype::SOA,
            &format!("ns1.example. h.example. {serial} 1 1 1 1"),
            None,
        )
        .unwrap();
        w.push_record(Section::Authority, &name, Rtype::SOA, Class::IN, 0, &soa).unwrap();
    }
    if let Some((k, time)) = key {
        w.sign_tsig(k, None, &TsigFields::at(time)).unwrap();
    }
    w.finish().to_vec()
}

fn send(
    engine: &Engine,
    set: &ZoneSet,
    msg: &[u8],
    client: &str,
    transport: Transport,
) -> (Outcome, Vec<u8>) {
    let mut out = vec![0u8; 65535];
    let mut table = CompressionTable::new();
    let client: IpAddr = client.parse().unwrap();
    let request = Request { client, clock: now, ..Request::new(msg, transport) };
    let outcome = engine.answer(set, &request, &mut out, &mut table);
    (outcome, out)
}

/// The response, when the outcome is one message.
fn response(outcome: &Outcome, out: &[u8]) -> Vec<u8> {
    match outcome {
        Outcome::Answered { len, .. } | Outcome::Notified { len, .. } => out[..*len].to_vec(),
        other => panic!("not one message: {other:?}"),
    }
}

fn rcode(msg: &[u8]) -> Rcode {
    let reader = MessageReader::new(msg).unwrap();
    Rcode::from_parts(reader.header().flags.rcode_bits(), 0)
}

/// The TSIG error of a response, read with the TSIG record parser.
fn tsig_error(msg: &[u8]) -> Option<Rcode> {
    tern_wire::tsig::TsigRecord::find(msg).unwrap().map(|t| t.error)
}

/// The fudge a request names is capped by `Config::tsig_max_fudge` (300 s by default):
/// a query signed an hour ago with a fudge of 65,535 s is BADTIME, unless the cap is
/// raised past an hour.
#[test]
fn a_wide_fudge_is_capped() {
    let set = zones(&[("example.", EXAMPLE)]);
    let mut buf = vec![0u8; 1024];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
    w.push_question(&"www.example.".parse::<Name>().unwrap(), Rtype::A, Class::IN).unwrap();
    let fields = TsigFields { fudge: 65535, ..TsigFields::at(NOW - 3600) };
    w.sign_tsig(&key(), None, &fields).unwrap();
    let msg = w.finish().to_vec();
    let (outcome, out) = send(&engine(), &set, &msg, "192.0.2.1", Transport::Udp);
    let answer = response(&outcome, &out);
    assert_eq!((rcode(&answer), tsig_error(&answer)), (Rcode::NOTAUTH, Some(Rcode::BADTIME)));
    let wide = Engine::new(Config { tsig_max_fudge: 7200, ..Config::default() });
    wide.set_access((*engine().access()).clone());
    let (outcome, out) = send(&wide, &set, &msg, "192.0.2.1", Transport::Udp);
    assert_eq!(rcode(&response(&outcome, &out)), Rcode::NOERROR);
}

#[test]
fn signed_queries_follow_rfc8945_5_2() {
    let (e, set) = (engine(), zones(&[("example.", EXAMPLE)]));
    let keys = [key()];
    let ask = |k: Option<(&Key, u64)>| {
        let msg = message("www.example.", Rtype::A, Opcode::QUERY, None, k);
        let (outcome, out) = send(&e, &set, &msg, "192.0.2.1", Transport::Udp);
        (msg, response(&outcome, &out))
    };
    // A known key: answered as usual, and the answer verifies against the request MAC.
    let (request, answer) = ask(Some((&key(), NOW)));
    assert!(render(&answer).starts_with("NOERROR aa | an: www.example."), "{}", render(&answer));
    let request_mac = verify_message(&request, &[key()][..], None, NOW).unwrap().unwrap().mac;
    let checked =
        verify_message(&answer, &keys[..], Some(request_mac.as_slice()), NOW).unwrap().unwrap();
    assert_eq!(checked.status, TsigStatus::Ok);
    // An unknown key: NOTAUTH, BADKEY, unsigned.
    let (_, answer) = ask(Some((&other_key(), NOW)));
    assert_eq!((rcode(&answer), tsig_error(&answer)), (Rcode::NOTAUTH, Some(Rcode::BADKEY)));
    // A wrong MAC (the key's secret differs): NOTAUTH, BADSIG.
    let forged = Key::new(key().name().to_name(), Algorithm::HmacSha256, b"not the secret!!");
    let (_, answer) = ask(Some((&forged, NOW)));
    assert_eq!((rcode(&answer), tsig_error(&answer)), (Rcode::NOTAUTH, Some(Rcode::BADSIG)));
    // Outside the fudge: NOTAUTH, BADTIME, signed.
    let (request, answer) = ask(Some((&key(), NOW - 3600)));
    assert_eq!((rcode(&answer), tsig_error(&answer)), (Rcode::NOTAUTH, Some(Rcode::BADTIME)));
    let request_mac =
        verify_message(&request, &[key()][..], None, NOW - 3600).unwrap().unwrap().mac;
    // Signed over the request's time (§5.2.3), so it verifies at that time.
    let mac = Some(request_mac.as_slice());
    let checked = verify_message(&answer, &keys[..], mac, NOW - 3600).unwrap().unwrap();
    assert_eq!(checked.status, TsigStatus::Peer(Rcode::BADTIME), "signed BADTIME");
    // A malformed TSIG (MAC size out of range): FORMERR.
    let mut broken = message("www.example.", Rtype::A, Opcode::QUERY, None, Some((&key(), NOW)));
    let at = tern_wire::tsig::TsigRecord::find(&broken).unwrap().unwrap().offset;
    let mac_size_at = at + "\x03xfr\x03key\x00".len() + 10 + "\x0bhmac-sha256\x00".len() + 8;
    broken[mac_size_at..mac_size_at + 2].copy_from_slice(&2u16.to_be_bytes());
    let (outcome, out) = send(&e, &set, &broken, "192.0.2.1", Transport::Udp);
    assert_eq!(rcode(&response(&outcome, &out)), Rcode::FORMERR);
}

#[test]
fn notify_is_accepted_only_from_allowed_senders() {
    let (e, set) = (engine(), zones(&[("example.", EXAMPLE)]));
    let msg = message("example.", Rtype::SOA, Opcode::NOTIFY, None, None);
    let (outcome, out) = send(&e, &set, &msg, "127.0.0.3", Transport::Udp);
    let answer = response(&outcome, &out);
    assert!(matches!(&outcome, Outcome::Notified { notice, .. } if notice.zone == origin()));
    let reader = MessageReader::new(&answer).unwrap();
    assert_eq!(reader.header().flags.opcode(), Opcode::NOTIFY);
    assert!(reader.header().flags.has(Flags::AA) && reader.header().flags.has(Flags::QR));
    assert_eq!(rcode(&answer), Rcode::NOERROR);
    let (outcome, out) = send(&e, &set, &msg, "127.0.0.9", Transport::Udp);
    assert_eq!(rcode(&response(&outcome, &out)), Rcode::REFUSED);
    let other = message("other.", Rtype::SOA, Opcode::NOTIFY, None, None);
    let (outcome, out) = send(&e, &set, &other, "127.0.0.3", Transport::Udp);
    assert_eq!(rcode(&response(&outcome, &out)), Rcode::NOTAUTH);
}

/// Streams a transfer to the end; returns the messages.
fn stream(outcome: Outcome) -> Vec<Vec<u8>> {
    let Outcome::Transfer(mut transfer) = outcome else { panic!("not a transfer: {outcome:?}") };
    let (mut out, mut table, mut messages) =
        (vec![0u8; 65535], CompressionTable::new(), Vec::new());
    while let Some(len) = transfer.next_message(&mut out, &mut table) {
        messages.push(out[..len].to_vec());
        assert!(messages.len() < 10_000, "runaway transfer");
    }
    messages
}

/// Every answer record of a stream as text, in order.
fn records(messages: &[Vec<u8>]) -> Vec<String> {
    let mut all = Vec::new();
    let mut scratch = vec![0u8; 65535];
    for msg in messages {
        let mut reader = MessageReader::new(msg).unwrap();
        while let Some(rr) = reader.record(&mut scratch).unwrap() {
            if rr.section == Section::Answer {
                all.push(format!(
                    "{} {} {} {}",
                    rr.owner,
                    rr.ttl,
                    rr.rtype,
                    rdata::to_text(rr.rtype, rr.rdata)
                ));
            }
        }
    }
    all
}

/// The zone's records as text (what an AXFR must carry), SOA once.
fn zone_records(zone: &ZoneContents) -> Vec<String> {
    let mut all = Vec::new();
    zone.for_each_record(|owner, rtype, ttl, rd| {
        all.push(format!("{owner} {ttl} {rtype} {}", rdata::to_text(rtype, rd)))
    });
    all
}

#[test]
fn axfr_streams_the_whole_zone_signed_and_only_when_allowed() {
    let (e, set) = (engine(), zones(&[("example.", EXAMPLE)]));
    let request = message("example.", Rtype::AXFR, Opcode::QUERY, None, Some((&key(), NOW)));
    let (outcome, _) = send(&e, &set, &request, "127.0.0.1", Transport::Tcp);
    let messages = stream(outcome);
    let got = records(&messages);
    let zone = set.get(&origin()).unwrap().contents_full().unwrap();
    let mut want = zone_records(&zone);
    assert_eq!(got.first(), want.first(), "SOA first");
    assert_eq!(got.last(), want.first(), "SOA last");
    let mut body = got[..got.len() - 1].to_vec();
    body.sort();
    want.sort();
    assert_eq!(body, want);
    // Every message verifies as a TSIG sequence.
    let request_mac = verify_message(&request, &[key()][..], None, NOW).unwrap().unwrap().mac;
    let mut verifier = SequenceVerifier::new(&key(), request_mac.as_slice());
    for msg in &messages {
        assert_eq!(verifier.verify(msg, NOW).unwrap(), SequenceStep::Signed(TsigStatus::Ok));
    }
    // Refusals: unsigned, another address, UDP, a zone not ours, not an apex.
    let unsigned = message("example.", Rtype::AXFR, Opcode::QUERY, None, None);
    for (msg, client, transport, expected) in [
        (&unsigned, "127.0.0.1", Transport::Tcp, Rcode::REFUSED),
        (&request, "127.0.0.2", Transport::Tcp, Rcode::REFUSED),
        (&request, "127.0.0.1", Transport::Udp, Rcode::NOTIMP),
        (
            &message("other.", Rtype::AXFR, Opcode::QUERY, None, Some((&key(), NOW))),
            "127.0.0.1",
            Transport::Tcp,
            Rcode::NOTAUTH,
        ),
        (
            &message("www.example.", Rtype::AXFR, Opcode::QUERY, None, Some((&key(), NOW))),
            "127.0.0.1",
            Transport::Tcp,
            Rcode::NOTAUTH,
        ),
    ] {
        let (outcome, out) = send(&e, &set, msg, client, transport);
        assert_eq!(rcode(&response(&outcome, &out)), expected, "{client} {transport:?}");
    }
}

#[test]
fn axfr_of_a_large_zone_takes_many_messages_within_the_limit() {
    let mut text = String::from(EXAMPLE);
    // Names with several RRsets, so that messages end between a name's RRsets.
    for i in 0..8_000 {
        text.push_str(&format!("host{i} 300 A 10.{}.{}.{}\n", i >> 16, (i >> 8) & 255, i & 255));
        text.push_str(&format!("host{i} 300 AAAA 2001:db8::{i:x}\n"));
        text.push_str(&format!("host{i} 300 TXT \"host number {i}\"\n"));
    }
    // One RRset too big for any message: split record by record.
    for i in 0..5_000 {
        text.push_str(&format!("big 300 TXT \"record number {i} of a very large RRset\"\n"));
    }
    let (e, set) = (engine(), zones(&[("example.", &text)]));
    let request = message("example.", Rtype::AXFR, Opcode::QUERY, None, Some((&key(), NOW)));
    let (outcome, _) = send(&e, &set, &request, "127.0.0.1", Transport::Tcp);
    let messages = stream(outcome);
    assert!(messages.len() > 5, "{} messages", messages.len());
    assert!(messages.iter().all(|m| m.len() <= crate::xfr::MESSAGE_LIMIT));
    // Messages are filled: the last of each can be short, not many in a row.
    let bytes: usize = messages.iter().map(Vec::len).sum();
    assert!(
        messages.len() <= bytes / (crate::xfr::MESSAGE_LIMIT * 9 / 10) + 2,
        "{} messages for {bytes} bytes",
        messages.len()
    );
    // Every record as the zone has it: nothing lost, nothing garbled across messages.
    let zone = set.get(&origin()).unwrap().contents_full().unwrap();
    let mut got = records(&messages);
    got.pop(); // the closing SOA
    got.sort();
    let mut want = zone_records(&zone);
    want.sort();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the transfer differs from the zone");
    let request_mac = verify_message(&request, &[key()][..], None, NOW).unwrap().unwrap().mac;
    let mut verifier = SequenceVerifier::new(&key(), request_mac.as_slice());
    for msg in &messages {
        assert_eq!(verifier.verify(msg, NOW).unwrap(), SequenceStep::Signed(TsigStatus::Ok));
    }
}

fn soa(serial: u32) -> RecordData {
    let rdata = rdata::parse_str(
        Rtype::SOA,
        &format!("ns1.example. hostmaster.example. {serial} 7200 3600 1209600 300"),
        None,
    )
    .unwrap();
    RecordData { owner: origin(), rtype: Rtype::SOA, ttl: 3600, rdata }
}

fn a(owner: &str, ip: &str) -> RecordData {
    RecordData {
        owner: owner.parse().unwrap(),
        rtype: Rtype::A,
        ttl: 300,
        rdata: rdata::parse_str(Rtype::A, ip, None).unwrap(),
    }
}

/// The example zone at serial 3 with a history from 1.
fn changed() -> ZoneSet {
    let set = zones(&[("example.", EXAMPLE)]);
    let slot = set.get(&origin()).unwrap();
    let mut zone = (*slot.contents_full().unwrap()).clone();
    let limits = HistoryLimits::default();
    for (from, removed, added) in [
        (1, vec![], vec![a("n1.example.", "192.0.2.11")]),
        (2, vec![a("n1.example.", "192.0.2.11")], vec![a("n2.example.", "192.0.2.12")]),
    ] {
        let change = Changeset { removed, added, ..Changeset::between(soa(from), soa(from + 1)) };
        let (mut next, _) = zone.apply(&change).unwrap();
        next.set_history(Arc::new(zone.history().push(Arc::new(change), limits)));
        zone = next;
    }
    let slot = Arc::new(ZoneSlot::new(&origin()));
    slot.publish(Arc::new(zone));
    ZoneSet::new(vec![slot])
}

#[test]
fn ixfr_sends_the_condensed_difference_or_falls_back() {
    let (e, set) = (engine(), changed());
    let ixfr = |serial: u32, transport| {
        let msg =
            message("example.", Rtype::IXFR, Opcode::QUERY, Some(serial), Some((&key(), NOW)));
        send(&e, &set, &msg, "127.0.0.1", transport)
    };
    // From 1 over TCP: SOA 3, SOA 1, (nothing removed: n1 came and went), SOA 3, n2, SOA 3.
    let got = records(&stream(ixfr(1, Transport::Tcp).0));
    let serials: Vec<bool> = got.iter().map(|r| r.contains(" SOA ")).collect();
    assert_eq!(serials, [true, true, true, false, true], "{got:?}");
    assert!(got[1].contains(" 1 7200") && got[3].starts_with("n2.example."), "{got:?}");
    // Up to date: the SOA alone.
    let (outcome, out) = ixfr(3, Transport::Tcp);
    let answer = response(&outcome, &out);
    assert_eq!(records(&[answer]).len(), 1);
    // Over UDP the difference fits in one message.
    let (outcome, out) = ixfr(2, Transport::Udp);
    assert_eq!(records(&[response(&outcome, &out)]).len(), 6, "SOA 3, SOA 2, n1, SOA 3, n2, SOA 3");
    // Not in the history: the whole zone over TCP, the SOA alone over UDP.
    let full = records(&stream(ixfr(0, Transport::Tcp).0));
    assert!(full.len() > 20);
    let (outcome, out) = ixfr(0, Transport::Udp);
    assert_eq!(records(&[response(&outcome, &out)]).len(), 1);
    // No SOA in the authority section: FORMERR.
    let bare = message("example.", Rtype::IXFR, Opcode::QUERY, None, Some((&key(), NOW)));
    let (outcome, out) = send(&e, &set, &bare, "127.0.0.1", Transport::Tcp);
    assert_eq!(rcode(&response(&outcome, &out)), Rcode::FORMERR);
}

/// An UPDATE of `zone` (zone section `ztype`/`zclass`) adding `n.example. A`; signed
/// with `key` at `time` when given.
fn update_message(zone: &str, ztype: Rtype, zclass: Class, key: Option<(&Key, u64)>) -> Vec<u8> {
    let mut buf = vec![0u8; 1024];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
    w.set_id(0x2136);
    let mut flags = Flags(0);
    flags.set_opcode(Opcode::UPDATE);
    w.set_flags(flags);
    w.push_question(&zone.parse::<Name>().unwrap(), ztype, zclass).unwrap();
    let owner: Name = "n.example.".parse().unwrap();
    w.push_record(Section::Authority, &owner, Rtype::A, Class::IN, 300, &[192, 0, 2, 7]).unwrap();
    if let Some((k, time)) = key {
        w.sign_tsig(k, None, &TsigFields::at(time)).unwrap();
    }
    w.finish().to_vec()
}

/// `engine()`'s rules, and updates of `example.` from 127.0.0.1 with the key.
fn update_engine() -> Engine {
    let e = engine();
    let mut access = (*e.access()).clone();
    let zone = &mut access.zones.get_mut(&origin()).unwrap().1;
    let mut rules = zone.rules.to_vec();
    rules.push(Rule {
        addresses: vec![Prefix::parse("127.0.0.1").unwrap()],
        keys: vec![key().name().to_name()],
        actions: vec![Action::Update],
        ..Rule::default()
    });
    zone.rules = rules.into();
    e.set_access(access);
    e
}

#[test]
fn update_is_handed_over_when_signed_by_an_allowed_key() {
    let (e, set) = (update_engine(), zones(&[("example.", EXAMPLE)]));
    let signed = update_message("example.", Rtype::SOA, Class::IN, Some((&key(), NOW)));
    let (outcome, _) = send(&e, &set, &signed, "127.0.0.1", Transport::Tcp);
    let Outcome::Update(request) = outcome else { panic!("not handed over: {outcome:?}") };
    assert_eq!(request.zone().to_string(), "example.");
    assert_eq!(request.key_name().map(ToString::to_string).as_deref(), Some("xfr.key."));
    assert_eq!(request.transport(), Transport::Tcp);
    // The writer computes the change against its version, and answers signed.
    let zone = set.get(&origin()).unwrap().contents_full().unwrap();
    let changes = request.changes(&zone, &crate::UpdatePolicy::default(), NOW).unwrap();
    let (after, _) = zone.apply(&changes).unwrap();
    assert!(zone_records(&after).contains(&"n.example. 300 A 192.0.2.7".to_string()));
    let mut out = vec![0u8; 512];
    let len = request.answer(Rcode::NOERROR, &mut out, NOW).unwrap();
    let request_mac = verify_message(&signed, &[key()][..], None, NOW).unwrap().unwrap().mac;
    let keys = [key()];
    let checked =
        verify_message(&out[..len], &keys[..], Some(request_mac.as_slice()), NOW).unwrap().unwrap();
    assert_eq!(checked.status, TsigStatus::Ok);
    assert_eq!(rcode(&out[..len]), Rcode::NOERROR);
}

#[test]
fn update_checks_that_need_no_zone_data_are_answered_at_once() {
    let (e, set) = (update_engine(), zones(&[("example.", EXAMPLE)]));
    let ask = |msg: &[u8], client: &str| {
        let (outcome, out) = send(&e, &set, msg, client, Transport::Udp);
        let answer = response(&outcome, &out);
        let header = *MessageReader::new(&answer).unwrap().header();
        assert_eq!(header.flags.opcode(), Opcode::UPDATE);
        (rcode(&answer), tsig_error(&answer))
    };
    let signed = |zone: &str, t: Rtype, c: Class| update_message(zone, t, c, Some((&key(), NOW)));
    // Not allowed: unsigned, from another address, or signed with another key.
    let unsigned = update_message("example.", Rtype::SOA, Class::IN, None);
    assert_eq!(ask(&unsigned, "127.0.0.1"), (Rcode::REFUSED, None));
    let from_elsewhere = signed("example.", Rtype::SOA, Class::IN);
    assert_eq!(ask(&from_elsewhere, "127.0.0.2").0, Rcode::REFUSED);
    let forged = Key::new(key().name().to_name(), Algorithm::HmacSha256, b"not the secret!!");
    let bad_mac = update_message("example.", Rtype::SOA, Class::IN, Some((&forged, NOW)));
    assert_eq!(ask(&bad_mac, "127.0.0.1"), (Rcode::NOTAUTH, Some(Rcode::BADSIG)));
    // The zone section (RFC 2136 §3.1).
    assert_eq!(ask(&signed("example.", Rtype::A, Class::IN), "127.0.0.1").0, Rcode::FORMERR);
    assert_eq!(ask(&signed("example.", Rtype::SOA, Class::CH), "127.0.0.1").0, Rcode::NOTIMP);
    assert_eq!(ask(&signed("www.example.", Rtype::SOA, Class::IN), "127.0.0.1").0, Rcode::NOTAUTH);
    assert_eq!(ask(&signed("other.", Rtype::SOA, Class::IN), "127.0.0.1").0, Rcode::NOTAUTH);
    // A zone without data yet.
    let empty = ZoneSet::new(vec![Arc::new(ZoneSlot::new(&origin()))]);
    let (outcome, out) =
        send(&e, &empty, &signed("example.", Rtype::SOA, Class::IN), "127.0.0.1", Transport::Udp);
    assert_eq!(rcode(&response(&outcome, &out)), Rcode::SERVFAIL);
}

#[test]
fn only_notify_and_update_of_the_opcodes_leave_the_query_path() {
    for (opcode, special) in [
        (Opcode::QUERY, false),
        (Opcode::IQUERY, false),
        (Opcode::STATUS, false),
        (Opcode(3), false),
        (Opcode::NOTIFY, true),
        (Opcode::UPDATE, true),
        (Opcode::DSO, false),
        (Opcode(12), false),
        (Opcode(13), false),
    ] {
        let msg = message("example.", Rtype::A, opcode, None, None);
        let mut scratch = None;
        let query = crate::query::parse(&msg, &mut scratch).unwrap();
        assert_eq!(query.is_special(), special, "{opcode}");
    }
}
