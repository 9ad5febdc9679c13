//! RFC 9460 Appendix D test vectors, RFC 9461 / RFC 9540 keys, and the wire rules.

use crate::rdata::tests::round_trip;
use crate::rdata::{parse_str, validate, Rdata};
use crate::types::Rtype;

use super::SvcParam;

const FOO_COM: &[u8] = b"\x03foo\x07example\x03com\x00";
const FOO_ORG: &[u8] = b"\x03foo\x07example\x03org\x00";

fn wire(priority: u16, target: &[u8], params: &[u8]) -> Vec<u8> {
    let mut out = priority.to_be_bytes().to_vec();
    out.extend_from_slice(target);
    out.extend_from_slice(params);
    out
}

#[test]
fn d1_alias_mode() {
    let got = round_trip(Rtype::HTTPS, "0 foo.example.com.", "0 foo.example.com.");
    assert_eq!(got, wire(0, FOO_COM, b""));
}

#[test]
fn d2_service_mode() {
    assert_eq!(round_trip(Rtype::SVCB, "1 .", "1 ."), [0, 1, 0]);
    let got = round_trip(Rtype::SVCB, "16 foo.example.com. port=53", "16 foo.example.com. port=53");
    assert_eq!(got, wire(16, FOO_COM, &[0, 3, 0, 2, 0, 0x35]));
    let got = round_trip(
        Rtype::SVCB,
        "1 foo.example.com. key667=hello",
        "1 foo.example.com. key667=\"hello\"",
    );
    assert_eq!(got, wire(1, FOO_COM, b"\x02\x9b\x00\x05hello"));
    let got = round_trip(
        Rtype::SVCB,
        r#"1 foo.example.com. key667="hello\210qoo""#,
        r#"1 foo.example.com. key667="hello\210qoo""#,
    );
    assert_eq!(got, wire(1, FOO_COM, b"\x02\x9b\x00\x09hello\xd2qoo"));
    let got = round_trip(
        Rtype::SVCB,
        r#"1 foo.example.com. ( ipv6hint="2001:db8::1,2001:db8::53:1" )"#,
        "1 foo.example.com. ipv6hint=2001:db8::1,2001:db8::53:1",
    );
    let mut params = vec![0, 6, 0, 32];
    params.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    params.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53, 0, 1]);
    assert_eq!(got, wire(1, FOO_COM, &params));
    let got = round_trip(
        Rtype::SVCB,
        r#"1 example.com. ( ipv6hint="2001:db8:122:344::192.0.2.33" )"#,
        "1 example.com. ipv6hint=2001:db8:122:344::c000:221",
    );
    let params =
        [0, 6, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0x01, 0x22, 0x03, 0x44, 0, 0, 0, 0, 0xc0, 0, 2, 0x21];
    assert_eq!(got, wire(1, b"\x07example\x03com\x00", &params));
}

#[test]
fn d2_sorting_and_escapes() {
    let got = round_trip(
        Rtype::SVCB,
        "16 foo.example.org. ( alpn=h2,h3-19 mandatory=ipv4hint,alpn ipv4hint=192.0.2.1 )",
        "16 foo.example.org. mandatory=alpn,ipv4hint alpn=\"h2,h3-19\" ipv4hint=192.0.2.1",
    );
    let params = b"\x00\x00\x00\x04\x00\x01\x00\x04\
                   \x00\x01\x00\x09\x02h2\x05h3-19\
                   \x00\x04\x00\x04\xc0\x00\x02\x01";
    assert_eq!(got, wire(16, FOO_ORG, params));
    let expected = wire(16, FOO_ORG, b"\x00\x01\x00\x0c\x08f\\oo,bar\x02h2");
    let printed = r#"16 foo.example.org. alpn="f\\\\oo\\,bar,h2""#;
    assert_eq!(round_trip(Rtype::SVCB, printed, printed), expected);
    let alternative = r"16 foo.example.org. alpn=f\\\092oo\092,bar,h2";
    assert_eq!(round_trip(Rtype::SVCB, alternative, printed), expected);
}

#[test]
fn d3_failure_cases() {
    for text in [
        "1 foo.example.com. ( key123=abc key123=def )",
        "1 foo.example.com. mandatory",
        "1 foo.example.com. alpn",
        "1 foo.example.com. port",
        "1 foo.example.com. ipv4hint",
        "1 foo.example.com. ipv6hint",
        "1 foo.example.com. no-default-alpn=abc",
        "1 foo.example.com. mandatory=key123",
        "1 foo.example.com. mandatory=mandatory",
        "1 foo.example.com. ( mandatory=key123,key123 key123=abc )",
    ] {
        for rtype in [Rtype::SVCB, Rtype::HTTPS] {
            assert!(parse_str(rtype, text, None).is_err(), "{rtype} {text}");
        }
    }
}

#[test]
fn other_keys() {
    // RFC 9461 §5 and RFC 9540 §4.
    round_trip(
        Rtype::SVCB,
        r#"1 doh.example.net. alpn=h2 dohpath=/dns-query{?dns}"#,
        r#"1 doh.example.net. alpn="h2" dohpath="/dns-query{?dns}""#,
    );
    let got = round_trip(
        Rtype::HTTPS,
        "1 . alpn=h3 no-default-alpn ohttp port=8443",
        "1 . alpn=\"h3\" no-default-alpn port=8443 ohttp",
    );
    assert_eq!(
        got,
        [0, 1, 0, 0, 1, 0, 3, 2, b'h', b'3', 0, 2, 0, 0, 0, 3, 0, 2, 0x20, 0xfb, 0, 8, 0, 0]
    );
    let got = round_trip(Rtype::HTTPS, "1 . ech=AQID", "1 . ech=AQID");
    assert_eq!(got, [0, 1, 0, 0, 5, 0, 3, 1, 2, 3]);
    // A known key in generic form is checked like the named form and printed by name.
    round_trip(Rtype::SVCB, r#"1 . key3="\000\053""#, "1 . port=53");
    assert!(parse_str(Rtype::SVCB, r#"1 . key3="\000""#, None).is_err());
    // Empty generic values print as the bare key.
    round_trip(Rtype::SVCB, r#"1 . key65000="""#, "1 . key65000");
    round_trip(Rtype::SVCB, "1 . key65000", "1 . key65000");
    // AliasMode with params is accepted (RFC 9460 §2.4.2 says SHOULD NOT).
    round_trip(Rtype::SVCB, "0 . port=1", "0 . port=1");
}

#[test]
fn text_errors() {
    for text in [
        "1 . foo=bar",
        "1 . key65535=x",
        "1 . key01=x",
        "1 . key=x",
        "1 . Alpn=h2",
        "1 . alpn= \"h2\"",
        "1 . \"alpn=h2\"",
        "1 . alpn=h2,,h3",
        "1 . alpn=h2\\\\x",
        "1 . port=65536",
        "1 . ipv4hint=192.0.2.1,::1",
        "1 . ipv6hint=192.0.2.1",
        "1 . ohttp=1",
        "1 . no-default-alpn",
        "1 . mandatory=foo port=1",
        "1 . ech=AQI",
    ] {
        assert!(parse_str(Rtype::SVCB, text, None).is_err(), "{text}");
    }
}

#[test]
fn wire_rules() {
    let ok = |params: &[u8]| validate(Rtype::SVCB, &wire(1, b"\x00", params)).is_ok();
    assert!(ok(b""));
    assert!(ok(&[0, 3, 0, 2, 0, 53]));
    assert!(!ok(&[0, 3, 0, 2, 0, 53, 0, 3, 0, 2, 0, 53]), "duplicate key");
    assert!(!ok(&[0, 4, 0, 4, 1, 2, 3, 4, 0, 3, 0, 2, 0, 53]), "decreasing keys");
    assert!(!ok(&[0, 3, 0, 1, 53]), "port of 1 byte");
    assert!(!ok(&[0, 3, 0, 3, 0, 53]), "length runs past the end");
    assert!(!ok(&[0, 1, 0, 0]), "empty alpn");
    assert!(!ok(&[0, 1, 0, 1, 0]), "empty alpn id");
    assert!(!ok(&[0, 1, 0, 2, 2, b'h']), "alpn id runs past the value");
    assert!(!ok(&[0, 4, 0, 5, 1, 2, 3, 4, 5]), "ipv4hint not a multiple of 4");
    assert!(!ok(&[0, 6, 0, 4, 1, 2, 3, 4]), "ipv6hint not a multiple of 16");
    assert!(!ok(&[0, 0, 0, 2, 0, 3]), "mandatory key missing");
    assert!(ok(&[0, 0, 0, 2, 0, 3, 0, 3, 0, 2, 0, 53]));
    assert!(!ok(&[0, 0, 0, 2, 0, 0]), "mandatory lists itself");
    assert!(
        !ok(&[0, 0, 0, 4, 0, 4, 0, 3, 0, 3, 0, 2, 0, 53, 0, 4, 0, 4, 1, 2, 3, 4]),
        "mandatory unsorted"
    );
    assert!(!ok(&[0, 2, 0, 0]), "no-default-alpn without alpn");
    assert!(!ok(&[0, 8, 0, 1, 0]), "ohttp with a value");
    assert!(!ok(&[0xff, 0xff, 0, 0]), "key 65535");
}

#[test]
fn typed_params() {
    let rdata = Rdata::parse(Rtype::HTTPS, "1 . alpn=h2 port=443", None).unwrap();
    let Rdata::Https(svcb) = &rdata else { panic!("{rdata:?}") };
    assert_eq!(svcb.params.len(), 2);
    assert_eq!(svcb.params[0], SvcParam { key: SvcParam::ALPN, value: b"\x02h2".to_vec() });
    assert_eq!(svcb.params[1], SvcParam { key: SvcParam::PORT, value: vec![1, 0xbb] });
    assert_eq!(rdata.to_string(), "1 . alpn=\"h2\" port=443");
}
