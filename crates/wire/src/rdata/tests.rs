//! Round trips text → wire → text for the types of this module family, plus the generic
//! form of RFC 3597.

use super::*;
use crate::name::Name;

fn origin() -> Name {
    "example.com.".parse().unwrap()
}

/// Parses `text`, checks the wire bytes, prints, and checks the printed text.
fn round_trip(rtype: Rtype, text: &str, wire: &[u8], printed: &str) {
    let o = origin();
    let got = parse_str(rtype, text, Some(&o)).unwrap_or_else(|e| panic!("{rtype} {text}: {e}"));
    assert_eq!(got, wire, "{rtype} {text}");
    assert_eq!(to_text(rtype, &got), printed);
    let again = parse_str(rtype, printed, None).unwrap();
    assert_eq!(again, wire, "reparse of {printed}");
}

#[test]
fn basic_types() {
    round_trip(Rtype::A, "192.0.2.1", &[192, 0, 2, 1], "192.0.2.1");
    let mut v6 = [0u8; 16];
    v6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    v6[15] = 1;
    round_trip(Rtype::AAAA, "2001:DB8::1", &v6, "2001:db8::1");
    round_trip(Rtype::NS, "ns1", b"\x03ns1\x07example\x03com\x00", "ns1.example.com.");
    round_trip(Rtype::MX, "10 @", b"\x00\x0a\x07example\x03com\x00", "10 example.com.");
    round_trip(
        Rtype::TXT,
        r#""v=spf1 -all" plain "q\"\\" "\009""#,
        b"\x0bv=spf1 -all\x05plain\x03q\"\\\x01\x09",
        r#""v=spf1 -all" "plain" "q\"\\" "\009""#,
    );
    round_trip(Rtype::HINFO, "PDP-11 UNIX", b"\x06PDP-11\x04UNIX", r#""PDP-11" "UNIX""#);
}

#[test]
fn soa_accepts_units_across_lines() {
    let o = origin();
    let text = "ns hostmaster ( 2026112201 ; serial\n 2h 1h 2w 1h )";
    let wire = parse_str(Rtype::SOA, text, Some(&o)).unwrap();
    assert_eq!(
        to_text(Rtype::SOA, &wire),
        "ns.example.com. hostmaster.example.com. 2026112201 7200 3600 1209600 3600"
    );
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
    assert_eq!(to_text(Rtype(731), &[0xab, 0xcd]), r"\# 2 ABCD");
    assert_eq!(to_text(Rtype(731), &[]), r"\# 0");
    // Known type in generic form must be valid for the type.
    assert!(parse_str(Rtype::A, r"\# 3 0A0000", Some(&o)).is_err());
    // Length must match.
    assert!(parse_str(Rtype(731), r"\# 3 0A00", Some(&o)).is_err());
    // Unknown type without the generic form is an error naming the fix.
    let err = parse_str(Rtype(731), "abc", Some(&o)).unwrap_err().to_string();
    assert!(err.contains("generic form"), "{err}");
}

#[test]
fn malformed_wire_prints_generically() {
    assert_eq!(to_text(Rtype::A, &[1, 2, 3]), r"\# 3 010203");
    assert_eq!(to_text(Rtype::NS, b"\x03abc"), r"\# 4 03616263");
    assert!(validate(Rtype::MX, b"\x00\x0a\x00").is_ok());
    assert!(validate(Rtype::MX, b"\x00\x0a\x00\x00").is_err());
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
    let long = format!("\"{}\"", "x".repeat(256));
    assert!(parse_str(Rtype::TXT, &long, Some(&o)).is_err());
}
