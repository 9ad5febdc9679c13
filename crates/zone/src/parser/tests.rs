//! Parser tests over in-memory text: every directive, the inheritance rules, and the
//! error paths. File-based cases ($INCLUDE, BIND comparison, hostile files) are in
//! `crates/zone/tests/`.

use std::path::Path;

use tern_wire::rdata::parse_str;
use tern_wire::{Class, Name, Rtype};

use super::*;

fn origin() -> Name {
    "example.".parse().unwrap()
}

/// Parses `text` with `options`; returns the records printed one per line, or the error.
fn parse_with(text: &str, options: &Options) -> Result<(Vec<String>, Report), Error> {
    let mut lines = Vec::new();
    let mut sink = |r: &Record<'_>| {
        lines.push(r.to_string());
        Ok(())
    };
    let report =
        parse_bytes(text.as_bytes(), Path::new("test.zone"), &origin(), options, &mut sink)?;
    Ok((lines, report))
}

fn parse(text: &str) -> Vec<String> {
    match parse_with(text, &Options::default()) {
        Ok((lines, _)) => lines,
        Err(e) => panic!("{e}\n--- in ---\n{text}"),
    }
}

fn error(text: &str) -> String {
    match parse_with(text, &Options::default()) {
        Ok((lines, _)) => panic!("expected an error, got {lines:?}"),
        Err(e) => e.to_string(),
    }
}

fn warnings(text: &str) -> Vec<String> {
    let (_, report) = parse_with(text, &Options::default()).unwrap();
    report.warnings.iter().map(ToString::to_string).collect()
}

const SOA: &str = "$TTL 300\n@ SOA ns hm 1 2 3 4 5\n";

#[test]
fn rfc1035_section_5_3_example() {
    // The example of RFC 1035 §5.3 (without its $INCLUDE), origin ISI.EDU.
    let text = "\
@   IN  SOA     VENERA      Action\\.domains (
                                 20     ; SERIAL
                                 7200   ; REFRESH
                                 600    ; RETRY
                                 3600000; EXPIRE
                                 60)    ; MINIMUM

        NS      A.ISI.EDU.
        NS      VENERA
        NS      VAXA
        MX      10      VENERA
        MX      20      VAXA

A       A       26.3.0.103

VENERA  A       10.1.0.52
        A       128.9.0.32

VAXA    A       10.2.0.27
        A       128.9.0.33
";
    let mut lines = Vec::new();
    let isi: Name = "ISI.EDU.".parse().unwrap();
    let report =
        parse_bytes(text.as_bytes(), Path::new("isi"), &isi, &Options::default(), &mut |r| {
            lines.push(r.to_string());
            Ok(())
        })
        .unwrap();
    assert_eq!(report.records, 11);
    assert_eq!(
        lines,
        [
            "ISI.EDU.\t3600\tIN\tSOA\tVENERA.ISI.EDU. Action\\.domains.ISI.EDU. 20 7200 600 3600000 60",
            "ISI.EDU.\t3600\tIN\tNS\tA.ISI.EDU.",
            "ISI.EDU.\t3600\tIN\tNS\tVENERA.ISI.EDU.",
            "ISI.EDU.\t3600\tIN\tNS\tVAXA.ISI.EDU.",
            "ISI.EDU.\t3600\tIN\tMX\t10 VENERA.ISI.EDU.",
            "ISI.EDU.\t3600\tIN\tMX\t20 VAXA.ISI.EDU.",
            "A.ISI.EDU.\t3600\tIN\tA\t26.3.0.103",
            "VENERA.ISI.EDU.\t3600\tIN\tA\t10.1.0.52",
            "VENERA.ISI.EDU.\t3600\tIN\tA\t128.9.0.32",
            "VAXA.ISI.EDU.\t3600\tIN\tA\t10.2.0.27",
            "VAXA.ISI.EDU.\t3600\tIN\tA\t128.9.0.33",
        ]
    );
    // No TTL anywhere: one warning, the default TTL.
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].to_string().starts_with("isi:1:9: warning: no TTL"));
}

#[test]
fn owners_origin_and_relative_names() {
    let text = "$ORIGIN example.\n\
                @ 60 IN NS ns\n\
                \x20 IN 60 NS ns2.other.\n\
                www A 192.0.2.1\n\
                $ORIGIN sub\n\
                host A 192.0.2.2\n\
                @ MX 10 host\n\
                $ORIGIN .\n\
                abs.example. A 192.0.2.3\n\
                A A 192.0.2.4\n\
                IN A 192.0.2.5\n";
    assert_eq!(
        parse(text),
        [
            "example.\t60\tIN\tNS\tns.example.",
            "example.\t60\tIN\tNS\tns2.other.",
            "www.example.\t60\tIN\tA\t192.0.2.1",
            "host.sub.example.\t60\tIN\tA\t192.0.2.2",
            "sub.example.\t60\tIN\tMX\t10 host.sub.example.",
            "abs.example.\t60\tIN\tA\t192.0.2.3",
            "A.\t60\tIN\tA\t192.0.2.4",
            "IN.\t60\tIN\tA\t192.0.2.5",
        ]
    );
}

#[test]
fn ttl_and_class_in_either_order_and_generic_forms() {
    let text = "a 10 IN A 192.0.2.1\n\
                b IN 20 A 192.0.2.2\n\
                c CLASS1 TYPE1 192.0.2.3\n\
                d 1h30m TYPE65280 \\# 3 010203\n\
                e 1W A \\# 4 C0000204\n\
                f 0 in a 192.0.2.5\n";
    assert_eq!(
        parse(text),
        [
            "a.example.\t10\tIN\tA\t192.0.2.1",
            "b.example.\t20\tIN\tA\t192.0.2.2",
            "c.example.\t20\tIN\tA\t192.0.2.3",
            "d.example.\t5400\tIN\tTYPE65280\t\\# 3 010203",
            "e.example.\t604800\tIN\tA\t192.0.2.4",
            "f.example.\t0\tIN\tA\t192.0.2.5",
        ]
    );
}

#[test]
fn quoted_strings_escapes_comments_parentheses() {
    let text = "t TXT \"a \\\"quoted\\\" ; not a comment\" plain\\ word ; comment\n\
                t TXT ( \"one\"\n  \"two\" ) ; across lines\n\
                \\064\\.x TXT \"\\255\\000\"\n";
    assert_eq!(
        parse(&format!("$TTL 1\n{text}")),
        [
            "t.example.\t1\tIN\tTXT\t\"a \\\"quoted\\\" ; not a comment\" \"plain word\"",
            "t.example.\t1\tIN\tTXT\t\"one\" \"two\"",
            "\\@\\.x.example.\t1\tIN\tTXT\t\"\\255\\000\"",
        ]
    );
}

#[test]
fn ttl_inheritance() {
    // $TTL wins over the last stated TTL; without $TTL the last stated TTL is used.
    let text = "a 100 A 192.0.2.1\nb A 192.0.2.2\n$TTL 50\nc A 192.0.2.3\nd 70 A 192.0.2.4\ne A 192.0.2.5\n";
    let ttls: Vec<String> =
        parse(text).iter().map(|l| l.split('\t').nth(1).unwrap().to_owned()).collect();
    assert_eq!(ttls, ["100", "100", "50", "70", "50"]);
}

#[test]
fn missing_ttl_uses_the_default_once_warned() {
    let w = warnings("a A 192.0.2.1\nb A 192.0.2.2\n");
    assert_eq!(w, ["test.zone:1:3: warning: no TTL, no $TTL and no earlier TTL: using 3600"]);
    let options = Options { default_ttl: 86400, ..Options::default() };
    let (lines, _) = parse_with("a A 192.0.2.1\n", &options).unwrap();
    assert_eq!(lines, ["a.example.\t86400\tIN\tA\t192.0.2.1"]);
}

#[test]
fn ttls_above_2_31_are_zero_rfc2181() {
    let text =
        "$TTL 2147483648\na A 192.0.2.1\nb 4294967295 A 192.0.2.2\nc 2147483647 A 192.0.2.3\n";
    let (lines, report) = parse_with(text, &Options::default()).unwrap();
    let ttls: Vec<&str> = lines.iter().map(|l| l.split('\t').nth(1).unwrap()).collect();
    assert_eq!(ttls, ["0", "0", "2147483647"]);
    assert_eq!(report.warnings.len(), 2);
    assert!(report.warnings[1].message.contains("RFC 2181"));
    let e = error("a 4294967296 A 192.0.2.1\n");
    assert!(e.starts_with("test.zone:1:3: expected a TTL"), "{e}");
}

#[test]
fn classes_must_match_the_zone() {
    assert_eq!(
        error(&format!("{SOA}x CH A 192.0.2.1\n")),
        "test.zone:3:3: class CH in a zone of class IN"
    );
    assert!(error("x CLASS3 A 192.0.2.1\n").contains("class CH in a zone of class IN"));
    assert!(error("x IN IN A 192.0.2.1\n").contains("a second class"));
    assert!(error("x 1 2 A 192.0.2.1\n").contains("a second TTL"));
    let chaos = Options { class: Class::CH, ..Options::default() };
    let (lines, _) = parse_with("version 0 CH TXT \"1\"\n", &chaos).unwrap();
    assert_eq!(lines, ["version.example.\t0\tCH\tTXT\t\"1\""]);
}

#[test]
fn errors_say_where_what_was_expected_and_found() {
    let cases = [
        ("x 1 BOGUS 1\n", "test.zone:1:5: expected a record type (or a TTL or class before it), found 'BOGUS'"),
        ("x 1\n", "test.zone:1:4: expected a record type"),
        ("x 1 A 999.1.1.1\n", "test.zone:1:7: expected an IPv4 address, found '999.1.1.1'"),
        ("x 1 A 192.0.2.1 extra\n", "test.zone:1:17: unexpected 'extra' at the end of the entry"),
        ("x 1 ANY 1\n", "test.zone:1:5: class ANY in a zone of class IN"),
        ("x 1 AXFR 1\n", "test.zone:1:5: AXFR is a query type, not a record type"),
        (" 1 A 192.0.2.1\n", "test.zone:1:1: the line starts with a blank, which means the previous owner, but there is no previous record in this file"),
        ("$FOO bar\n", "test.zone:1:1: unknown directive '$FOO' (expected $ORIGIN, $TTL, $INCLUDE or $GENERATE)"),
        ("x 1 A 192.0.2.1\n  $TTL 5\n", "test.zone:2:3: expected a record type, found '$TTL' (directives start at the beginning of a line)"),
        ("$TTL\n", "test.zone:1:5: expected a TTL after $TTL"),
        ("$TTL 1 2\n", "test.zone:1:8: unexpected '2' at the end of the entry"),
        ("$ORIGIN a..b.\n", "test.zone:1:9: bad name 'a..b.': empty label"),
        ("x 1 TYPE65280 abc\n", "test.zone:1:14: type TYPE65280 has no known presentation format"),
        ("x 1 A \\# 3 010203\n", "test.zone:1:7: generic RDATA is not valid A data"),
        ("x 1 TXT \"open\n", "test.zone:1:9: unterminated quoted string"),
        ("x 1 SOA ( a b 1 2 3 4 5\n", "test.zone:2:1: end of input inside parentheses opened at line 1"),
    ];
    for (text, want) in cases {
        // Messages from the RDATA codecs are checked up to their own wording.
        let got = error(text);
        assert!(got.starts_with(want), "for {text:?}:\n got {got}\nwant {want}");
    }
}

#[test]
fn directive_errors() {
    let cases = [
        ("$ORIGIN\n", "test.zone:1:8: expected a domain name after $ORIGIN"),
        ("$ORIGIN a. b.\n", "test.zone:1:12: unexpected 'b.' at the end of the entry"),
        ("$origin sub\nx 1 A 192.0.2.1\n$Ttl x\n", "test.zone:3:6: expected a TTL"),
        ("$INCLUDE\n", "test.zone:1:9: expected a file name after $INCLUDE"),
        ("$INCLUDE a.zone b. c.\n", "test.zone:1:20: unexpected 'c.' at the end of the entry"),
        ("$INCLUDE a.zone b..\n", "test.zone:1:17: bad name 'b..': empty label"),
        ("$INCLUDE \\255.zone\n", "test.zone:1:10: the $INCLUDE file name is not UTF-8"),
        ("$GENERATE\n", "test.zone:1:10: expected a range (start-stop[/step]) after $GENERATE"),
        ("$GENERATE 1-2\n", "test.zone:1:14: expected an owner name template"),
        (
            "$GENERATE 1-2 x$ A\n",
            "test.zone:1:19: expected an RDATA template (quoted if it has several fields)",
        ),
        ("$GENERATE 1-2 x$ 1 2 A y\n", "test.zone:1:20: a second TTL"),
    ];
    for (text, want) in cases {
        let got = error(text);
        assert!(got.starts_with(want), "for {text:?}:\n got {got}\nwant {want}");
    }
    // A directory is not a zone file. (Relative to the working directory: the source
    // "test.zone" has no directory of its own.)
    let dir = format!("$INCLUDE {}\n", env!("CARGO_MANIFEST_DIR"));
    let got = error(&dir);
    assert!(got.starts_with("test.zone:1:10: cannot read '") && got.contains("directory"), "{got}");
    // A template longer than its bound.
    let long = format!("$TTL 1\n$GENERATE 1-2 {} A 192.0.2.1\n", "x".repeat(5000));
    assert!(error(&long).contains("$GENERATE template longer than 4096 bytes"));
}

#[test]
fn origin_change_is_seen_by_a_repeated_owner() {
    let text = "$TTL 1\nwww A 192.0.2.1\n$ORIGIN sub.example.\nwww A 192.0.2.2\n";
    assert_eq!(
        parse(text),
        ["www.example.\t1\tIN\tA\t192.0.2.1", "www.sub.example.\t1\tIN\tA\t192.0.2.2"]
    );
}

#[test]
fn collecting_errors_reports_all_and_keeps_going() {
    let text = "a 1 A 192.0.2.1\nb 1 A bad\nc 1 BOGUS x\n\"open\nd 1 A 192.0.2.4\ne 1 TXT ( ( x\nf 1 A 192.0.2.6\n";
    let options = Options { collect_errors: true, ..Options::default() };
    let mut owners = Vec::new();
    let result = parse_bytes(text.as_bytes(), Path::new("c.zone"), &origin(), &options, &mut |r| {
        owners.push(r.owner.to_string());
        Ok(())
    });
    let Err(Error::Many(errors)) = result else { panic!("expected several errors: {result:?}") };
    let lines: Vec<u32> = errors.iter().map(|e| e.position().unwrap().line).collect();
    assert_eq!(lines, [2, 3, 4, 6]);
    assert_eq!(owners, ["a.example.", "d.example.", "f.example."]);
}

#[test]
fn owners_of_any_length_follow_each_other_and_a_bad_one_keeps_the_last() {
    // The owner's buffer is reused: a shorter name after a longer one must not keep the
    // longer one's tail, and an owner that fails leaves the previous one for blank lines.
    let text =
        "longer.name.example. 1 A 192.0.2.1\nx 1 A 192.0.2.2\na..b 1 A 192.0.2.3\n 1 A 192.0.2.4\n";
    let options = Options { collect_errors: true, ..Options::default() };
    let mut owners = Vec::new();
    let result = parse_bytes(text.as_bytes(), Path::new("o.zone"), &origin(), &options, &mut |r| {
        owners.push(r.owner.to_string());
        Ok(())
    });
    let Err(error) = result else { panic!("expected the bad owner's error") };
    assert!(error.to_string().contains("o.zone:3:1: bad name 'a..b': empty label"), "{error}");
    assert_eq!(owners, ["longer.name.example.", "x.example.", "x.example."]);
}

#[test]
fn collecting_stops_at_max_errors() {
    let text = "bad\n".repeat(10_000);
    let options = Options { collect_errors: true, max_errors: 5, ..Options::default() };
    let err = parse_with(&text, &options).unwrap_err();
    assert_eq!(err.errors().len(), 6);
    assert!(err.errors()[5].to_string().contains("too many errors (5)"));
}

#[test]
fn sink_errors_are_located() {
    let text = "a 1 A 192.0.2.1\nb 1 A 192.0.2.2\n";
    let mut sink = |r: &Record<'_>| {
        if r.owner.to_string() == "b.example." {
            return Err(Error::Record("out of zone".into()));
        }
        Ok(())
    };
    let err = parse_bytes(
        text.as_bytes(),
        Path::new("s.zone"),
        &origin(),
        &Options::default(),
        &mut sink,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "s.zone:2:1: out of zone");
    assert!(matches!(err, Error::Rejected { .. }));
}

#[test]
fn messages_escape_file_bytes_and_cut_long_tokens() {
    // A NUL and a terminal escape sequence come out as zone-file escapes.
    let e = error("x 1 A \x1b[2J\0\n");
    assert_eq!(e, "test.zone:1:7: expected an IPv4 address, found '\\027[2J\\000'");
    // A long token is quoted by its first 40 bytes only.
    let secret = format!("{}-END", "AKIAIOSFODNN7EXAMPLEwJalrXUtnFEMIK7MDENG".repeat(3));
    let e = error(&format!("password {secret}\n"));
    assert!(e.contains("found 'AKIAIOSFODNN7EXAMPLEwJalrXUtnFEMIK7MDENG… (124 bytes)'"), "{e}");
    assert!(!e.contains("-END"), "{e}");
}

#[test]
fn record_locations_point_at_the_entry() {
    let text = "a 1 A 192.0.2.1\n\n; comment\nb 1 TXT (\n \"x\" )\n  TXT y\n";
    let mut seen = Vec::new();
    parse_bytes(text.as_bytes(), Path::new("l.zone"), &origin(), &Options::default(), &mut |r| {
        seen.push((r.location.file.to_owned(), r.location.line));
        Ok(())
    })
    .unwrap();
    let lines: Vec<u32> = seen.iter().map(|s| s.1).collect();
    assert_eq!(lines, [1, 4, 6]);
    assert_eq!(seen[0].0, Path::new("l.zone"));
}

#[test]
fn include_can_be_turned_off() {
    let err = parse_with("$INCLUDE /etc/passwd\n", &Options::untrusted()).unwrap_err();
    assert_eq!(err.to_string(), "test.zone:1:1: $INCLUDE is not allowed for this zone text");
    assert!(matches!(err, Error::Include { .. }));
    let none = Options { max_include_depth: 0, ..Options::default() };
    let err = parse_with("$INCLUDE x.zone\n", &none).unwrap_err();
    assert!(err.to_string().contains("deeper than 0 files"), "{err}");
}

#[test]
fn generate_bind_arm_examples() {
    // The examples of the BIND 9 ARM, "The $GENERATE Directive".
    let text = "$TTL 1\n$ORIGIN 0.0.192.IN-ADDR.ARPA.\n\
                $GENERATE 1-2 @ NS SERVER$.EXAMPLE.\n\
                $GENERATE 1-127 $ CNAME $.0\n";
    let lines = parse(text);
    assert_eq!(lines.len(), 129);
    assert_eq!(lines[0], "0.0.192.IN-ADDR.ARPA.\t1\tIN\tNS\tSERVER1.EXAMPLE.");
    assert_eq!(lines[1], "0.0.192.IN-ADDR.ARPA.\t1\tIN\tNS\tSERVER2.EXAMPLE.");
    assert_eq!(lines[2], "1.0.0.192.IN-ADDR.ARPA.\t1\tIN\tCNAME\t1.0.0.0.192.IN-ADDR.ARPA.");
    assert_eq!(lines[128], "127.0.0.192.IN-ADDR.ARPA.\t1\tIN\tCNAME\t127.0.0.0.192.IN-ADDR.ARPA.");

    let text = "$TTL 1\n$ORIGIN EXAMPLE.\n\
                $GENERATE 1-127 HOST-$ A 1.2.3.$\n\
                $GENERATE 1-127 HOST-$ MX \"0 .\"\n";
    let lines = parse(text);
    assert_eq!(lines.len(), 254);
    assert_eq!(lines[0], "HOST-1.EXAMPLE.\t1\tIN\tA\t1.2.3.1");
    assert_eq!(lines[126], "HOST-127.EXAMPLE.\t1\tIN\tA\t1.2.3.127");
    assert_eq!(lines[127], "HOST-1.EXAMPLE.\t1\tIN\tMX\t0 .");
}

#[test]
fn generate_ttl_class_step_and_owner() {
    let text = "$TTL 300\nns A 192.0.2.1\n\
                $GENERATE 0-4/2 s$ 60 IN TXT x\n\
                $GENERATE 3-3 t${0,3,d} IN 70 MX \"10 mx$\"\n\
                \x20 A 192.0.2.9\n\
                $GENERATE 26-26 ${0,0,n} TXT \"${0,4,n} ${0,8,N}\"\n";
    assert_eq!(
        parse(text),
        [
            "ns.example.\t300\tIN\tA\t192.0.2.1",
            "s0.example.\t60\tIN\tTXT\t\"x\"",
            "s2.example.\t60\tIN\tTXT\t\"x\"",
            "s4.example.\t60\tIN\tTXT\t\"x\"",
            "t003.example.\t70\tIN\tMX\t10 mx3.example.",
            // $GENERATE does not change the previous owner.
            "ns.example.\t300\tIN\tA\t192.0.2.9",
            "a.1.example.\t300\tIN\tTXT\t\"a.1.\" \"A.1.0.0.\"",
        ]
    );
}

#[test]
fn generate_errors() {
    let cases = [
        ("$GENERATE 5-1 $ A 1.2.3.$\n", "test.zone:1:11: range '5-1' is empty"),
        (
            "$GENERATE 1-2 x$ MX 10 mx$\n",
            "test.zone:1:24: unexpected 'mx$' at the end of the entry",
        ),
        (
            "$GENERATE 1-2 x$ MX 10\n",
            "test.zone:1:21: generated RDATA '10': expected a domain name",
        ),
        (
            "$GENERATE 1-300 x$ A 1.2.3.$\n",
            "test.zone:1:22: generated RDATA '1.2.3.256': expected an IPv4 address",
        ),
        ("$GENERATE 1-2 x${1 A 1.2.3.4\n", "test.zone:1:15: '${' without a closing '}'"),
        (
            "$GENERATE 1-2 ${-2} A 1.2.3.4\n",
            "test.zone:1:15: iterator 1 with offset -2 is negative",
        ),
        (
            "$GENERATE 1-2 a..$ A 1.2.3.4\n",
            "test.zone:1:15: generated owner 'a..1' is not a name: empty label",
        ),
        ("$GENERATE 1-2 x$ CH A 1.2.3.4\n", "test.zone:1:18: class CH in a zone of class IN"),
        (
            "$GENERATE 0-2147483647 x$ A 1.2.3.4\n",
            "test.zone:1:11: $GENERATE would make 2147483648 records",
        ),
    ];
    for (text, want) in cases {
        let got = error(&format!("$TTL 1\n{text}")).replacen("test.zone:2:", "test.zone:1:", 1);
        assert!(got.starts_with(want), "for {text:?}:\n got {got}\nwant {want}");
    }
}

#[test]
fn generate_limit_counts_all_directives() {
    let options = Options { max_generated_records: 100, ..Options::default() };
    let ok = "$TTL 1\n$GENERATE 1-50 a$ A 1.2.3.4\n$GENERATE 1-50 b$ A 1.2.3.4\n";
    assert_eq!(parse_with(ok, &options).unwrap().1.records, 100);
    let over = format!("{ok}$GENERATE 1-1 c$ A 1.2.3.4\n");
    let err = parse_with(&over, &options).unwrap_err().to_string();
    assert!(err.contains("would make 1 records, 101 in all, over the limit of 100"), "{err}");
}

#[test]
fn printed_records_parse_back_the_same() {
    let text = "$TTL 300\n@ SOA ns hm ( 1 2 3 4 5 )\n@ NS ns\nns A 192.0.2.1\nns AAAA 2001:db8::1\n\
                @ MX 10 mail\n\\(odd\\)\\;name\\\\ TXT \"semi;colon\" \"quote\\\"\" \"\\007\"\n\
                x HINFO \"a b\" c\nu TYPE65280 \\# 0\nv TYPE65281 \\# 2 abcd\n$ORIGIN .\n. NS a.root.\n";
    let first = parse(text);
    let again = parse(&first.join("\n"));
    assert_eq!(first, again);
    assert_eq!(first.len(), 10);
}

#[test]
fn hostile_text_fails_cleanly() {
    // Deep parentheses, NUL bytes and noise, a name over 255 bytes.
    let deep = format!("x 1 TXT {}a\n", "(".repeat(10_000));
    assert!(error(&deep).starts_with("test.zone:1:10: nested '('"));
    let e = error("x\0y 1 A 192.0.2.1\n\0\0\0\n");
    assert_eq!(e, "test.zone:2:4: expected a record type");
    let long = format!("{}.x 1 A 192.0.2.1\n", vec!["a".repeat(63); 4].join("."));
    assert!(error(&long).contains("name longer than 255 bytes"));
    let noise: Vec<u8> =
        (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let options = Options { collect_errors: true, ..Options::untrusted() };
    let result = parse_bytes(&noise, Path::new("noise"), &origin(), &options, &mut |_| Ok(()));
    assert!(result.is_err());
}

#[test]
fn record_bufs_and_wire_rdata() {
    let mut records = Vec::new();
    parse_bytes(b"mx 5 MX 10 mail\n", Path::new("b"), &origin(), &Options::default(), &mut |r| {
        records.push(r.to_buf());
        Ok(())
    })
    .unwrap();
    let want = RecordBuf {
        owner: "mx.example.".parse().unwrap(),
        class: Class::IN,
        rtype: Rtype::MX,
        ttl: 5,
        rdata: parse_str(Rtype::MX, "10 mail.example.", None).unwrap(),
    };
    assert_eq!(records, [want]);
    assert_eq!(records[0].to_string(), "mx.example.\t5\tIN\tMX\t10 mail.example.");
}
