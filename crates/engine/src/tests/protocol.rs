//! Header, EDNS and error handling (RFC 1035 §4.1, RFC 6891, RFC 8906, RFC 2181 §9).

use tern_wire::{Opcode, Rtype};
use tern_zone::{Pins, ZoneSet};

use crate::Lookahead;

use super::*;

#[test]
fn edns_is_echoed_only_when_asked() {
    let z = example();
    let no_edns = Ask { edns: None, ..Ask::default() };
    assert_eq!(
        ask_with(&z, "example.", Rtype::A, no_edns),
        "NOERROR aa rd | an: example. 3600 A 192.0.2.1"
    );
    assert_eq!(
        ask_with(&z, "example.", Rtype::A, dnssec()),
        "NOERROR aa rd | an: example. 3600 A 192.0.2.1 | ad: OPT(1232,do)"
    );
}

#[test]
fn edns_version_1_is_badvers() {
    let z = example();
    let v1 = Ask { edns: Some((1232, 1, false)), ..Ask::default() };
    assert_eq!(ask_with(&z, "example.", Rtype::A, v1), "BADVERS rd | ad: OPT(1232,-)");
}

#[test]
fn unknown_opcode_is_notimp() {
    let z = example();
    let op15 = Ask { opcode: Opcode(15), ..Ask::default() };
    assert_eq!(ask_with(&z, "example.", Rtype::A, op15), "NOTIMP rd | ad: OPT(1232,-)");
}

/// A message of header and body bytes: ID 0x1234, RD, `opcode`, the four counts.
fn message(opcode: u8, counts: [u16; 4], body: &[u8]) -> Vec<u8> {
    let mut m = vec![0x12, 0x34, (opcode << 3) | 1, 0];
    for count in counts {
        m.extend_from_slice(&count.to_be_bytes());
    }
    m.extend_from_slice(body);
    m
}

/// An OPT record: 1232 bytes, EDNS `version`.
fn opt(version: u8) -> Vec<u8> {
    vec![0, 0, 41, 0x04, 0xd0, 0, version, 0, 0, 0, 0]
}

#[test]
fn other_opcodes_are_notimp_with_or_without_a_question() {
    let z = example();
    let send = |m: &[u8]| render(&raw(&z, Config::default(), m, Transport::Udp).unwrap());
    // IQUERY (1), STATUS (2), DSO (6), 15: without a question, NOTIMP (RFC 8490 §5.1.1
    // for DSO), the OPT record echoed when there is one (as Knot DNS and NSD answer).
    for opcode in [1, 2, 6, 15] {
        assert_eq!(send(&message(opcode, [0; 4], &[])), "NOTIMP rd", "opcode {opcode}");
        assert_eq!(
            send(&message(opcode, [0, 0, 0, 1], &opt(0))),
            "NOTIMP rd | ad: OPT(1232,-)",
            "opcode {opcode}"
        );
    }
    // A DSO message proper: TLVs after the header (RFC 8490 §5.4; a Keepalive TLV).
    let keepalive = [0, 1, 0, 8, 0, 0, 0x27, 0x10, 0, 0, 0x27, 0x10];
    assert_eq!(send(&message(6, [0; 4], &keepalive)), "NOTIMP rd");
    // Bodies that do not read as a question: the header alone, as NSD answers.
    let two = query("example.", Rtype::A, Ask { edns: None, ..Ask::default() });
    let question = &two[12..];
    let two = message(6, [2, 0, 0, 0], &[question, question].concat());
    assert_eq!(send(&two), "NOTIMP rd");
    let mut trailing = query("example.", Rtype::A, Ask { opcode: Opcode(1), ..Ask::default() });
    trailing.extend_from_slice(b"garbage");
    assert_eq!(send(&trailing), "NOTIMP rd");
    // A readable body is judged first, as Knot DNS does: EDNS version 1 is BADVERS.
    assert_eq!(send(&message(6, [0, 0, 0, 1], &opt(1))), "BADVERS rd | ad: OPT(1232,-)");
    let v1 = Ask { opcode: Opcode(6), edns: Some((1232, 1, false)), ..Ask::default() };
    assert_eq!(ask_with(&z, "example.", Rtype::A, v1), "BADVERS rd | ad: OPT(1232,-)");
    // QUERY, NOTIFY and UPDATE need their question (zone section): FORMERR.
    for opcode in [0, 4, 5] {
        assert_eq!(send(&message(opcode, [0; 4], &[])), "FORMERR rd", "opcode {opcode}");
    }
    assert_eq!(send(&message(0, [0, 0, 0, 1], &opt(1))), "BADVERS rd | ad: OPT(1232,-)");
}

#[test]
fn malformed_queries_get_formerr_and_responses_are_dropped() {
    let z = example();
    let mut two = query("example.", Rtype::A, Ask::default());
    two[5] = 2; // QDCOUNT = 2
    assert_eq!(render(&raw(&z, Config::default(), &two, Transport::Udp).unwrap()), "FORMERR rd");
    let mut qr = query("example.", Rtype::A, Ask::default());
    qr[2] |= 0x80;
    assert_eq!(raw(&z, Config::default(), &qr, Transport::Udp), None);
    assert_eq!(raw(&z, Config::default(), &[1, 2, 3], Transport::Udp), None);
    let truncated = query("example.", Rtype::A, Ask::default());
    let cut = &truncated[..truncated.len() - 3];
    assert!(
        render(&raw(&z, Config::default(), cut, Transport::Udp).unwrap()).starts_with("FORMERR")
    );
}

#[test]
fn chaos_identity_is_refused_unless_configured() {
    let z = example();
    let ch = Ask { class: Class::CH, ..Ask::default() };
    assert_eq!(ask_with(&z, "version.bind.", Rtype::TXT, ch), "REFUSED rd | ad: OPT(1232,-)");
    let config = Config { version: Some("tern 0.1".into()), ..Config::default() };
    let answer = raw(&z, config, &query("VERSION.BIND.", Rtype::TXT, ch), Transport::Udp).unwrap();
    assert_eq!(
        render(&answer),
        "NOERROR aa rd | an: VERSION.BIND. 0 TXT \"tern 0.1\" | ad: OPT(1232,-)"
    );
}

#[test]
fn large_answers_truncate_whole_rrsets() {
    let mut text = String::from(EXAMPLE);
    for i in 0..40 {
        text.push_str(&format!("big 300 TXT \"{}\"\n", format!("{i:02}").repeat(20)));
    }
    let z = zones(&[("example.", &text)]);
    let small = Ask { edns: None, ..Ask::default() };
    assert_eq!(ask_with(&z, "big.example.", Rtype::TXT, small), "NOERROR aa tc rd");
    let r = ask_with(&z, "big.example.", Rtype::TXT, Ask { transport: Transport::Tcp, ..small });
    assert_eq!(r.matches("TXT").count(), 40);
    // A 1232-byte EDNS buffer still truncates; the OPT record survives.
    assert_eq!(
        ask_with(&z, "big.example.", Rtype::TXT, Ask::default()),
        "NOERROR aa tc rd | ad: OPT(1232,-)"
    );
}

#[test]
fn required_glue_truncates_instead_of_being_dropped() {
    let mut text = String::from(EXAMPLE);
    // 16 NS records fit in 512 bytes; their 16 AAAA glue records do not.
    for i in 0..16 {
        text.push_str(&format!("big 300 NS ns{i}.big\nns{i}.big 300 AAAA 2001:db8::{i}\n"));
    }
    let z = zones(&[("example.", &text)]);
    let r = ask_with(&z, "big.example.", Rtype::A, Ask { edns: None, ..Ask::default() });
    assert!(r.starts_with("NOERROR tc rd | au: big.example. 300 NS"), "{r}");
}

#[test]
fn trailing_bytes_are_formerr_with_the_question_echoed() {
    let z = example();
    let mut q = query("example.", Rtype::A, Ask { edns: None, ..Ask::default() });
    q.extend_from_slice(&[1, 2, 3]);
    let answer = raw(&z, Config::default(), &q, Transport::Udp).unwrap();
    assert_eq!(render(&answer), "FORMERR rd");
    assert_eq!(&answer[4..6], &[0, 1], "the question is echoed");
}

#[test]
fn rd_is_copied_cd_is_cleared_ad_never_set() {
    let z = example();
    let mut q = query("example.", Rtype::A, Ask::default());
    q[3] |= 0x30; // AD and CD
    let answer = raw(&z, Config::default(), &q, Transport::Udp).unwrap();
    let flags = u16::from_be_bytes([answer[2], answer[3]]);
    assert_eq!(flags & 0x0100, 0x0100, "RD copied");
    assert_eq!(flags & 0x0030, 0, "AD and CD clear (RFC 4035 §3.1.6)");
}

/// Answers through [`Engine::look_ahead`] and [`Engine::answer_with`] are the plain
/// answers, whether the look-ahead was for the same question, another one (the same
/// name in other case or with another type), or none, and whether it was made with the
/// same pins or another batch's; a used look-ahead is not reused.
#[test]
fn look_ahead_answers_equal_plain_answers() {
    let set = example();
    let asked = [
        ("www.example.", Rtype::A),
        ("WWW.example.", Rtype::A),
        ("www.example.", Rtype::AAAA),
        ("nope.example.", Rtype::A),
        ("sub.example.", Rtype::DS),
        ("other.test.", Rtype::A),
    ];
    let messages: Vec<Vec<u8>> = asked.iter().map(|&(n, t)| query(n, t, Ask::default())).collect();
    let mut pins = Pins::new();
    for (i, message) in messages.iter().enumerate() {
        let plain = raw(&set, Config::default(), message, Transport::Udp).unwrap();
        for looked in [Some(message), messages.get((i + 1) % messages.len()), None] {
            for stale in [false, true] {
                let got = looking_ahead(&set, &mut pins, message, looked, stale);
                let case = format!("{:?} after {looked:?}, stale {stale}", asked[i]);
                assert_eq!(render(&got), render(&plain), "{case}");
            }
        }
    }
}

/// Answers `message` after looking ahead at `looked` (with other pins when `stale`).
fn looking_ahead(
    set: &ZoneSet,
    pins: &mut Pins,
    message: &[u8],
    looked: Option<&Vec<u8>>,
    stale: bool,
) -> Vec<u8> {
    let engine = Engine::new(Config::default());
    let mut table = CompressionTable::new();
    let mut out = vec![0u8; 65535];
    let mut ahead = crate::Lookahead::default();
    let mut other = Pins::new();
    if let Some(m) = looked {
        let at = if stale { &mut other } else { &mut *pins };
        engine.look_ahead(set, at, m, &mut ahead);
        ahead.advance(at);
    }
    let request = Request::new(message, Transport::Udp);
    let Outcome::Answered { len, .. } =
        engine.answer_with(set, pins, &request, &mut ahead, &mut out, &mut table)
    else {
        panic!("dropped")
    };
    out.truncate(len);
    out
}

/// A batch that needs more zones than [`Pins`] holds answers the rest from guards of
/// their own, and every answer comes from its own zone.
#[test]
fn more_zones_than_pins() {
    let names = ["a.", "b.", "c.", "d.", "e.", "f."];
    let texts: Vec<String> = names
        .iter()
        .map(|n| {
            format!(
                "@ 300 SOA ns1 h 1 2 3 4 5\n@ 300 NS ns.x.\n@ 300 A 192.0.2.{}",
                n.as_bytes()[0]
            )
        })
        .collect();
    let list: Vec<(&str, &str)> = names.iter().zip(&texts).map(|(n, t)| (*n, t.as_str())).collect();
    let set = zones(&list);
    let mut pins = Pins::new();
    for round in 0..2 {
        for (name, _) in &list {
            let message = query(name, Rtype::A, Ask::default());
            let got = looking_ahead(&set, &mut pins, &message, Some(&message), false);
            let plain = raw(&set, Config::default(), &message, Transport::Udp).unwrap();
            assert_eq!(render(&got), render(&plain), "{name}, round {round}");
            assert!(render(&got).contains(&format!("192.0.2.{}", name.as_bytes()[0])));
        }
    }
    assert_eq!(pins.len(), tern_zone::pins::PINS);
}

/// A look-ahead that holds its zone's contents itself (the pins were full) lets go of
/// them when cleared: contents replaced since are freed then, not when the look-ahead is
/// next used (a worker keeps its look-aheads from batch to batch).
#[test]
fn cleared_look_ahead_lets_go_of_contents() {
    let names = ["a.", "b.", "c.", "d.", "e."];
    let text = "@ 300 SOA ns1 h 1 2 3 4 5\n@ 300 NS ns.x.\n@ 300 A 192.0.2.1";
    let list: Vec<(&str, &str)> = names.iter().map(|n| (*n, text)).collect();
    let set = zones(&list);
    let engine = Engine::new(Config::default());
    let mut pins = Pins::new();
    let mut ahead = Lookahead::default();
    for name in names {
        engine.look_ahead(&set, &mut pins, &query(name, Rtype::A, Ask::default()), &mut ahead);
    }
    assert_eq!(pins.len(), tern_zone::pins::PINS, "e. is held by the look-ahead itself");
    let slot = set.get(&"e.".parse::<Name>().unwrap()).unwrap();
    let old = Arc::downgrade(&slot.contents_full().unwrap());
    let fresh = zones(&[("e.", text)]);
    slot.publish(fresh.slots().next().unwrap().contents_full().unwrap());
    assert!(old.upgrade().is_some(), "the look-ahead's guard keeps the old contents");
    ahead.clear();
    assert!(old.upgrade().is_none(), "cleared, the old contents are freed");
}

/// The answered outcome carries what the server counts: the type asked for and DO.
#[test]
fn answers_report_their_question_type_and_do() {
    let set = example();
    let engine = Engine::new(Config::default());
    let mut out = vec![0u8; 65535];
    let mut table = tern_wire::message::CompressionTable::new();
    for (qtype, ask, dnssec_ok) in
        [(Rtype::AAAA, dnssec(), true), (Rtype::MX, Ask::default(), false)]
    {
        let message = query("example.com.", qtype, ask);
        let request = Request::new(&message, Transport::Udp);
        let outcome = engine.answer(&set, &request, &mut out, &mut table);
        let Outcome::Answered { qtype: seen, dnssec_ok: seen_do, .. } = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!((seen, seen_do), (qtype, dnssec_ok));
    }
}

/// A look-ahead tells which [`tern_zone::StatsTicket`] the answer's zone counts under:
/// its zone's, whether it was located ahead or afresh; none for a name in no zone of
/// ours, or for a query without a question (whatever was looked ahead before).
#[test]
fn look_ahead_tells_the_zone_stats_ticket() {
    use tern_zone::StatsTicket;
    let set =
        zones(&[("example.", EXAMPLE), ("quiet.", "@ 300 SOA ns1 h 1 2 3 4 5\n@ 300 NS ns.x.")]);
    let ticket = StatsTicket::new(3, 1);
    set.get(&"example.".parse::<Name>().unwrap()).unwrap().set_stats_ticket(ticket);
    let engine = Engine::new(Config::default());
    let (mut pins, mut ahead) = (Pins::new(), Lookahead::default());
    let (mut out, mut table) = (vec![0u8; 65535], CompressionTable::new());
    let counted = query("www.example.", Rtype::A, Ask::default());
    let no_question = message(0, [0, 0, 0, 0], &[]);
    let cases = [
        (counted.clone(), Some(&counted), ticket),
        (counted.clone(), None, ticket),
        (query("www.quiet.", Rtype::A, Ask::default()), None, StatsTicket::NONE),
        (query("other.test.", Rtype::A, Ask::default()), Some(&counted), StatsTicket::NONE),
        (no_question.clone(), Some(&counted), StatsTicket::NONE),
    ];
    for (i, (message, looked, want)) in cases.iter().enumerate() {
        if let Some(m) = looked {
            engine.look_ahead(&set, &mut pins, m, &mut ahead);
        }
        let request = Request::new(message, Transport::Udp);
        let outcome =
            engine.answer_with(&set, &mut pins, &request, &mut ahead, &mut out, &mut table);
        assert!(matches!(outcome, Outcome::Answered { .. }), "case {i}: {outcome:?}");
        assert_eq!(ahead.stats_ticket(), *want, "case {i}");
    }
    ahead.clear();
    assert_eq!(ahead.stats_ticket(), StatsTicket::NONE);
}

/// RFC 8467 §4.1: on an encrypted transport, responses to queries with EDNS are padded
/// to a multiple of 468 bytes; never on plain transports, never without EDNS.
#[test]
fn responses_are_padded_on_encrypted_transports_only() {
    use tern_wire::edns::OptionCode;
    use tern_wire::message::MessageReader;

    let z = example();
    let engine = Engine::new(Config::default());
    let tls = crate::TlsClient::default();
    let answer = |message: &[u8], tls| {
        let mut out = vec![0u8; 65535];
        let mut table = CompressionTable::new();
        let request = Request { tls, ..Request::new(message, Transport::Tcp) };
        let Outcome::Answered { len, .. } = engine.answer(&z, &request, &mut out, &mut table)
        else {
            panic!("not answered")
        };
        out.truncate(len);
        out
    };
    let padding = |response: &[u8]| {
        let mut reader = MessageReader::new(response).unwrap();
        reader.finish().unwrap();
        let edns = reader.edns()?;
        edns.option(OptionCode::PADDING).map(|o| o.data.len())
    };
    let with_edns = query("example.", Rtype::A, Ask::default());
    let padded = answer(&with_edns, Some(&tls));
    assert_eq!(padded.len(), 468, "one block");
    assert!(padding(&padded).is_some());
    let plain = answer(&with_edns, None);
    assert!(plain.len() < 100 && padding(&plain).is_none(), "not padded over TCP");
    let no_edns = query("example.", Rtype::A, Ask { edns: None, ..Ask::default() });
    assert!(answer(&no_edns, Some(&tls)).len() < 100, "no EDNS, no padding (RFC 7830 §3)");
}
