//! DNS cookies in responses (RFC 7873, RFC 9018), the short answers rate limiting sends,
//! and the class and tag each answer is reported with.

use std::net::IpAddr;

use tern_wire::edns::{CookieStatus, ServerSecret};
use tern_wire::Rtype;
use tern_zone::Pins;

use super::*;
use crate::{CookieSeen, Cookies, Lookahead, Report, ResponseClass, Schedule, Short};

const SECRET: [u8; 16] = [0xe5; 16];
const CLIENT: [u8; 8] = [0x24, 0x64, 0xc4, 0xab, 0xcf, 0x10, 0xc9, 0x57];
const NOW: u64 = 1_559_731_985;

fn client_ip() -> IpAddr {
    "198.51.100.100".parse().unwrap()
}

fn cookies() -> Cookies {
    Cookies::new(Schedule::Fixed { current: SECRET, previous: Vec::new() })
}

/// A query (EDNS, 1232 bytes) with a COOKIE option of `cookie`; `None` for no option.
fn cookie_query(qname: &str, qtype: Rtype, cookie: Option<&[u8]>) -> Vec<u8> {
    let mut q = query(qname, qtype, Ask::default());
    if let Some(data) = cookie {
        // Append the option to the OPT record ending the message, fixing its RDLENGTH.
        let rdlength_at = q.len() - 2;
        let len = u16::try_from(4 + data.len()).unwrap();
        q[rdlength_at..].copy_from_slice(&len.to_be_bytes());
        q.extend_from_slice(&10u16.to_be_bytes());
        q.extend_from_slice(&u16::try_from(data.len()).unwrap().to_be_bytes());
        q.extend_from_slice(data);
    }
    q
}

/// Answers `message` from `set` as the server does (cookies on unless `off`).
fn answer(set: &ZoneSet, message: &[u8], off: bool) -> (Vec<u8>, Report) {
    let (out, report, _) = answer_told(set, message, off);
    (out, report)
}

/// [`answer`], and what the engine told early, in order ([`Engine::answer_reported`]).
fn answer_told(
    set: &ZoneSet,
    message: &[u8],
    off: bool,
) -> (Vec<u8>, Report, Vec<(ResponseClass, u32)>) {
    let engine = Engine::new(Config::default());
    let jar = cookies();
    let request = Request {
        client: client_ip(),
        clock: || NOW,
        cookies: (!off).then_some(&jar),
        ..Request::new(message, Transport::Udp)
    };
    let (mut out, mut table) = (vec![0u8; 65535], CompressionTable::new());
    let (mut pins, mut ahead) = (Pins::new(), Lookahead::default());
    let mut report = Report::error(CookieSeen::Client);
    let told = std::cell::RefCell::new(Vec::new());
    let early = |class, tag| told.borrow_mut().push((class, tag));
    let outcome = engine.answer_reported(
        set,
        &mut pins,
        &request,
        &mut ahead,
        &mut out,
        &mut table,
        &mut report,
        &early,
    );
    let Outcome::Answered { len, .. } = outcome else { panic!("no answer: {outcome:?}") };
    out.truncate(len);
    (out, report, told.into_inner())
}

/// The COOKIE option of a response, if any.
fn cookie_of(message: &[u8]) -> Option<Vec<u8>> {
    let mut reader = MessageReader::new(message).unwrap();
    while reader.question().unwrap().is_some() {}
    let mut scratch = vec![0u8; 65535];
    while reader.record(&mut scratch).unwrap().is_some() {}
    let edns = reader.edns()?;
    edns.option(tern_wire::edns::OptionCode::COOKIE).map(|o| o.data.to_vec())
}

fn with_server(server: &[u8]) -> Vec<u8> {
    let mut data = CLIENT.to_vec();
    data.extend_from_slice(server);
    data
}

#[test]
fn a_client_cookie_is_answered_normally_with_a_server_cookie() {
    let set = example();
    let (plain, _) = answer(&set, &cookie_query("ns1.example.", Rtype::A, None), false);
    let (got, report) = answer(&set, &cookie_query("ns1.example.", Rtype::A, Some(&CLIENT)), false);
    assert_eq!(render(&got), render(&plain), "the same answer");
    assert_eq!(got.len(), plain.len() + 28, "plus the option: 4 + 8 + 16 bytes");
    let cookie = cookie_of(&got).unwrap();
    let made = ServerSecret::new(SECRET).make(&CLIENT, client_ip(), NOW as u32);
    assert_eq!(cookie, with_server(&made), "RFC 9018: version 1, time, SipHash-2-4");
    assert_eq!(report.cookie, CookieSeen::Client);
    // Shown back, it is valid and echoed unchanged.
    let (again, report) =
        answer(&set, &cookie_query("ns1.example.", Rtype::A, Some(&cookie)), false);
    assert_eq!(cookie_of(&again).unwrap(), cookie);
    assert_eq!(report.cookie, CookieSeen::Valid);
    // Negative answers and errors carry it too.
    for name in ["nope.example.", "other.test."] {
        let (got, _) = answer(&set, &cookie_query(name, Rtype::A, Some(&CLIENT)), false);
        assert_eq!(cookie_of(&got).unwrap(), with_server(&made), "{name}");
    }
}

#[test]
fn a_bad_server_cookie_gets_a_new_one_and_counts_as_none() {
    let set = example();
    let mut forged = ServerSecret::new([1; 16]).make(&CLIENT, client_ip(), NOW as u32);
    forged[15] ^= 1;
    let (got, report) =
        answer(&set, &cookie_query("ns1.example.", Rtype::A, Some(&with_server(&forged))), false);
    assert!(render(&got).starts_with("NOERROR aa rd | an: ns1.example."), "{}", render(&got));
    assert_eq!(report.cookie, CookieSeen::Client);
    let cookie = cookie_of(&got).unwrap();
    let check = tern_wire::edns::Cookie::parse(&cookie).unwrap();
    assert_eq!(
        ServerSecret::new(SECRET).check(&check, client_ip(), NOW as u32),
        CookieStatus::Valid
    );
}

#[test]
fn malformed_cookies_are_formerr_and_ignored_when_cookies_are_off() {
    let set = example();
    for bad in [&CLIENT[..5], &with_server(&[0; 4])[..], &with_server(&[0; 33])[..]] {
        let message = cookie_query("ns1.example.", Rtype::A, Some(bad));
        let (got, report) = answer(&set, &message, false);
        assert_eq!(render(&got), "FORMERR rd | ad: OPT(1232,-)", "{} bytes", bad.len());
        assert_eq!(cookie_of(&got), None);
        assert_eq!(report, Report::error(CookieSeen::None));
        let (ignored, _) = answer(&set, &message, true);
        assert!(render(&ignored).starts_with("NOERROR aa rd | an:"), "cookies off");
    }
    let (got, report) = answer(&set, &cookie_query("ns1.example.", Rtype::A, Some(&CLIENT)), true);
    assert_eq!((cookie_of(&got), report.cookie), (None, CookieSeen::None), "cookies off");
}

/// RFC 7873 §5.4: a query without a question but with a cookie gets NOERROR and a server
/// cookie (as BIND answers); without cookies it stays FORMERR.
#[test]
fn a_query_for_a_server_cookie_alone() {
    let set = example();
    let mut message = cookie_query("x.", Rtype::A, Some(&CLIENT));
    message.drain(12..12 + 3 + 4); // the question "x." A IN
    message[5] = 0;
    let (got, report) = answer(&set, &message, false);
    assert_eq!(render(&got), "NOERROR rd | ad: OPT(1232,-)");
    assert!(cookie_of(&got).is_some());
    assert_eq!(report.class, ResponseClass::Error);
    let (off, _) = answer(&set, &message, true);
    assert_eq!(render(&off), "FORMERR rd | ad: OPT(1232,-)");
}

#[test]
fn short_answers_echo_the_question_and_the_cookie() {
    let engine = Engine::new(Config::default());
    let jar = cookies();
    let (mut out, mut table) = (vec![0u8; 65535], CompressionTable::new());
    let mut short = |message: &[u8], kind: Short| {
        let request = Request {
            client: client_ip(),
            clock: || NOW,
            cookies: Some(&jar),
            ..Request::new(message, Transport::Udp)
        };
        let Outcome::Answered { len, .. } =
            engine.answer_short(&request, kind, &mut out, &mut table)
        else {
            panic!("no short answer")
        };
        out[..len].to_vec()
    };
    let with = cookie_query("www.example.", Rtype::A, Some(&CLIENT));
    let bad = short(&with, Short::BadCookie);
    assert_eq!(render(&bad), "BADCOOKIE rd | ad: OPT(1232,-)");
    // As Knot DNS sends it: header, question, OPT with the cookie (12 + 17 + 11 + 28).
    assert_eq!(bad.len(), 68);
    let made = ServerSecret::new(SECRET).make(&CLIENT, client_ip(), NOW as u32);
    assert_eq!(cookie_of(&bad).unwrap(), with_server(&made));
    let slip = short(&with, Short::Truncated);
    assert_eq!(render(&slip), "NOERROR tc rd | ad: OPT(1232,-)");
    assert!(cookie_of(&slip).is_some());
    let without = query("www.example.", Rtype::A, Ask { edns: None, ..Ask::default() });
    assert_eq!(render(&short(&without, Short::BadCookie)), "NOERROR tc rd", "no cookie: TCP");
}

/// Each answer is reported with its class and the name it is counted under: random
/// names cannot spread NXDOMAIN, NODATA, wildcard or referral answers over counters.
#[test]
fn answers_are_classed_and_tagged() {
    let set = example();
    let report =
        |name: &str, rtype: Rtype| answer(&set, &query(name, rtype, Ask::default()), false).1;
    let class_of = |name: &str, rtype: Rtype| report(name, rtype).class;
    assert_eq!(class_of("ns1.example.", Rtype::A), ResponseClass::Positive);
    assert_eq!(class_of("www.example.", Rtype::A), ResponseClass::Positive, "via a CNAME");
    assert_ne!(report("ns1.example.", Rtype::A).tag, report("ns1.example.", Rtype::AAAA).tag);
    assert_ne!(report("ns1.example.", Rtype::A).tag, report("mail.example.", Rtype::A).tag);
    assert_eq!(report("ns1.example.", Rtype::A), report("NS1.example.", Rtype::A), "case");

    let nx = report("nope.example.", Rtype::A);
    assert_eq!(nx.class, ResponseClass::NxDomain);
    assert_eq!(nx, report("other.nope.example.", Rtype::TXT), "one counter per zone");
    let nodata = report("mail.example.", Rtype::AAAA);
    assert_eq!((nodata.class, nodata.tag), (ResponseClass::NoData, nx.tag));
    assert_eq!(nodata, report("ns1.example.", Rtype::MX));

    let wild = report("a.wild.example.", Rtype::A);
    assert_eq!(wild.class, ResponseClass::Wildcard);
    assert_eq!(wild, report("b.wild.example.", Rtype::A), "one counter per wildcard");
    assert_ne!(wild.tag, nx.tag);

    let referral = report("deep.below.sub.example.", Rtype::A);
    assert_eq!(referral.class, ResponseClass::Referral);
    assert_eq!(referral, report("x.sub.example.", Rtype::MX), "one counter per cut");
    assert_ne!(referral.tag, report("x.secure.example.", Rtype::A).tag);

    for (name, rtype) in [("other.test.", Rtype::A), ("version.bind.", Rtype::AXFR)] {
        assert_eq!(report(name, rtype), Report::error(CookieSeen::None), "{name}");
    }
}

/// Referrals and positive answers (wildcards too) are told early, with the class and tag
/// they are then reported with; NXDOMAIN, NODATA and errors are not (their counters are
/// the zone's few).
#[test]
fn the_caller_is_told_early_what_it_will_judge() {
    let set = example();
    for (name, rtype) in [
        ("ns1.example.", Rtype::A),
        ("www.example.", Rtype::A),
        ("a.wild.example.", Rtype::A),
        ("deep.below.sub.example.", Rtype::A),
    ] {
        let (_, report, told) = answer_told(&set, &query(name, rtype, Ask::default()), false);
        assert_eq!(told.last(), Some(&(report.class, report.tag)), "{name} {rtype}");
    }
    for (name, rtype) in
        [("nope.example.", Rtype::A), ("mail.example.", Rtype::AAAA), ("other.test.", Rtype::A)]
    {
        let (_, _, told) = answer_told(&set, &query(name, rtype, Ask::default()), false);
        assert_eq!(told, [], "{name} {rtype}");
    }
}
