//! Shared test helpers and cross-type tests: the generic form of RFC 3597, fallback
//! printing, canonical form, the typed API, and property tests over every type.

use super::*;
use crate::name::Name;

pub(crate) fn origin() -> Name {
    "example.com.".parse().unwrap()
}

/// The full round trip every type must pass. Parses `text` (origin `example.com.`) and
/// checks: the wire is valid; it prints as `printed`; `printed` parses back to the same
/// wire; the typed value re-encodes to the same wire and displays as `printed`; the
/// generic form of the wire parses back to it. Returns the wire bytes.
pub(crate) fn round_trip(rtype: Rtype, text: &str, printed: &str) -> Vec<u8> {
    let o = origin();
    let wire = parse_str(rtype, text, Some(&o)).unwrap_or_else(|e| panic!("{rtype} {text}: {e}"));
    validate(rtype, &wire).unwrap_or_else(|e| panic!("{rtype} {text}: invalid wire: {e}"));
    assert_eq!(to_text(rtype, &wire), printed, "{rtype} {text}");
    let again =
        parse_str(rtype, printed, None).unwrap_or_else(|e| panic!("reparse {printed}: {e}"));
    assert_eq!(again, wire, "reparse of {printed}");
    let typed = Rdata::from_wire(rtype, &wire).unwrap_or_else(|e| panic!("{rtype} {text}: {e}"));
    assert_eq!(typed.rtype(), rtype);
    assert!(!matches!(typed, Rdata::Unknown { .. }), "{rtype} decoded as Unknown");
    assert_eq!(typed.to_wire_vec(), wire, "typed re-encoding of {text}");
    assert_eq!(typed.to_string(), printed);
    assert_eq!(Rdata::parse(rtype, printed, None).unwrap(), typed);
    let mut generic = String::new();
    generic::write(&wire, &mut generic);
    assert_eq!(parse_str(rtype, &generic, None).unwrap(), wire, "generic form {generic}");
    wire
}

#[test]
fn generic_form_rfc3597() {
    // RFC 3597 §5 examples.
    let o = origin();
    assert_eq!(
        parse_str(Rtype(731), r"\# 6 abcd ef 012345", Some(&o)).unwrap(),
        [0xab, 0xcd, 0xef, 1, 0x23, 0x45]
    );
    assert_eq!(parse_str(Rtype(62347), r"\# 0", Some(&o)).unwrap(), b"");
    assert_eq!(parse_str(Rtype::A, r"\# 4 0A000001", Some(&o)).unwrap(), [10, 0, 0, 1]);
    assert_eq!(parse_str(Rtype(731), r"\# 3 abc def", Some(&o)).unwrap(), [0xab, 0xcd, 0xef]);
    assert_eq!(to_text(Rtype(731), &[0xab, 0xcd]), r"\# 2 ABCD");
    assert_eq!(to_text(Rtype(731), &[]), r"\# 0");
    // Known type in generic form must be valid for the type.
    assert!(parse_str(Rtype::A, r"\# 3 0A0000", Some(&o)).is_err());
    // Length must match.
    assert!(parse_str(Rtype(731), r"\# 3 0A00", Some(&o)).is_err());
    assert!(parse_str(Rtype(731), r"\# 1 0", Some(&o)).is_err());
    // Unknown type without the generic form is an error naming the fix.
    let err = parse_str(Rtype(731), "abc", Some(&o)).unwrap_err().to_string();
    assert!(err.contains("generic form"), "{err}");
    // A quoted "\#" is a TXT string, not the generic form.
    assert_eq!(parse_str(Rtype::TXT, r#""\#""#, None).unwrap(), b"\x01#");
}

#[test]
fn malformed_wire_prints_generically() {
    assert_eq!(to_text(Rtype::A, &[1, 2, 3]), r"\# 3 010203");
    assert_eq!(to_text(Rtype::NS, b"\x03abc"), r"\# 4 03616263");
    assert!(validate(Rtype::MX, b"\x00\x0a\x00").is_ok());
    assert!(validate(Rtype::MX, b"\x00\x0a\x00\x00").is_err());
    assert!(validate(Rtype(731), &[0; 70_000]).is_err());
}

#[test]
fn errors_name_what_was_expected() {
    let o = origin();
    let err = parse_str(Rtype::MX, "10", Some(&o)).unwrap_err().to_string();
    assert!(err.contains("expected a domain name"), "{err}");
    let err = parse_str(Rtype::A, "192.0.2.300", Some(&o)).unwrap_err().to_string();
    assert!(err.starts_with("1:1: expected an IPv4 address"), "{err}");
    let err = parse_str(Rtype::A, "192.0.2.1 extra", Some(&o)).unwrap_err().to_string();
    assert!(err.starts_with("1:11: unexpected 'extra'"), "{err}");
    let err = parse_str(Rtype::DS, "1 2 3 XYZ", Some(&o)).unwrap_err().to_string();
    assert!(err.starts_with("1:7: expected hex digits"), "{err}");
}

#[test]
fn parse_failure_leaves_buffer_alone() {
    let mut out = vec![1, 2, 3];
    let mut lx = Lexer::for_fields(b"10 mail.example. extra");
    assert!(parse_text(Rtype::MX, &mut lx, None, &mut out).is_err());
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn rdata_longer_than_65535_is_refused() {
    let strings = vec![format!("\"{}\"", "x".repeat(255)); 257].join(" ");
    assert!(parse_str(Rtype::TXT, &strings, None).is_err());
    let strings = vec![format!("\"{}\"", "x".repeat(255)); 255].join(" ");
    assert_eq!(parse_str(Rtype::TXT, &strings, None).unwrap().len(), 255 * 256);
}

#[test]
fn canonical_form_lowercases_listed_types_only() {
    let o = origin();
    let canon = |rtype: Rtype, text: &str| {
        let wire = parse_str(rtype, text, Some(&o)).unwrap();
        let mut out = vec![0xEE];
        canonical_wire(rtype, &wire, &mut out).unwrap();
        out.remove(0);
        out
    };
    assert_eq!(canon(Rtype::MX, "10 Mail.EXAMPLE."), b"\x00\x0a\x04mail\x07example\x00");
    assert_eq!(
        canon(Rtype::SOA, "NS.Example. Host.Master. 1 2 3 4 5")[..25],
        *b"\x02ns\x07example\x00\x04host\x06master\x00"
    );
    assert_eq!(canon(Rtype::SRV, "1 2 3 Target.Example.")[6..], *b"\x06target\x07example\x00");
    let naptr = canon(Rtype::NAPTR, r#"1 2 "S" "SIP+D2U" "" _Sip._Udp.Example."#);
    assert!(naptr.ends_with(b"\x04_sip\x04_udp\x07example\x00"));
    assert!(naptr.windows(7).any(|w| w == b"SIP+D2U"), "strings keep their case");
    let rrsig = canon(Rtype::RRSIG, "A 8 2 300 20250101000000 20240101000000 1 Example.COM. AQID");
    assert!(rrsig.ends_with(b"\x07example\x03com\x00\x01\x02\x03"));
    // Not in the list: NSEC (RFC 6840 §5.1), SVCB, unknown types.
    assert_eq!(canon(Rtype::NSEC, "Next.Example. A"), b"\x04Next\x07Example\x00\x00\x01\x40");
    assert_eq!(canon(Rtype::SVCB, "1 Foo.Example."), b"\x00\x01\x03Foo\x07Example\x00");
    let mut out = Vec::new();
    assert!(canonical_wire(Rtype::MX, b"\x00\x0a\x03abc", &mut out).is_err());
    assert!(out.is_empty());
}

#[test]
fn typed_api() {
    let o = origin();
    let mx = Rdata::parse(Rtype::MX, "10 mail", Some(&o)).unwrap();
    let Rdata::Mx(Exchange { preference, exchange }) = &mx else { panic!("{mx:?}") };
    assert_eq!(*preference, 10);
    assert_eq!(exchange.to_string(), "mail.example.com.");
    assert_eq!(mx.rtype(), Rtype::MX);
    assert_eq!(mx.to_string(), "10 mail.example.com.");

    let built = Rdata::Cname(Target { target: "www.example.".parse().unwrap() });
    assert_eq!(built.to_wire_vec(), b"\x03www\x07example\x00");
    assert_eq!(built.to_string(), "www.example.");

    let unknown = Rdata::from_wire(Rtype(65280), &[1, 2]).unwrap();
    assert_eq!(unknown, Rdata::Unknown { rtype: Rtype(65280), data: vec![1, 2] });
    assert_eq!(unknown.to_string(), r"\# 2 0102");
    assert!(Rdata::from_wire(Rtype::A, &[1, 2]).is_err());
    assert!(Rdata::from_wire(Rtype::A, &[1, 2, 3, 4, 5]).is_err());
    assert!(is_known(Rtype::HTTPS) && !is_known(Rtype::NULL));

    // A hand-built NSEC with unsorted, repeated types encodes canonically.
    let nsec = Rdata::Nsec(Nsec {
        next: "b.example.".parse().unwrap(),
        types: vec![Rtype::RRSIG, Rtype::A, Rtype::A, Rtype::NSEC],
    });
    assert_eq!(nsec.to_string(), "b.example. A RRSIG NSEC");
}

mod props;

mod dnspython;

/// One string is one record's data: a second line, which the lexer would take for the
/// next record (silently dropped before), is refused; parentheses and comments are
/// not. `not_one_record` refuses line breaks and comments too, for one-line interfaces.
#[test]
fn parse_str_takes_exactly_one_record() {
    assert!(parse_str(Rtype::A, "192.0.2.1", None).is_ok());
    assert!(parse_str(Rtype::A, "192.0.2.1 ; comment\n", None).is_ok());
    assert!(parse_str(Rtype::TXT, "( \"a\"\n \"b\" )", None).is_ok());
    for text in ["192.0.2.1\n192.0.2.2", "192.0.2.1\r\nx"] {
        let why = parse_str(Rtype::A, text, None).unwrap_err().to_string();
        assert!(why.contains("more than one record"), "{text:?}: {why}");
    }
    assert!(not_one_record("\"a;b\" c\\;d").is_none(), "quoted or escaped");
    for text in ["192.0.2.1\n", "192.0.2.1 ; comment", "192.0.2.1\r"] {
        assert!(not_one_record(text).is_some(), "{text:?}");
    }
}
