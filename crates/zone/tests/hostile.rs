//! Hostile zone text: every case must end in a clear, located error (or a bounded
//! result) in bounded time and memory — unterminated quotes, huge `$GENERATE` ranges,
//! deep parentheses, NUL bytes and binary noise, names over 255 bytes, a 100 MB line.
//! Recursive `$INCLUDE`s are in `include.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::records_of_text;
use tern_zone::parser::Options;
use tern_zone::Error;

/// Generous: the tests run unoptimised on a shared machine.
const LIMIT: Duration = Duration::from_secs(60);

/// Parses `text`, which must fail; returns the error's text, checked to be short.
fn fails(text: &[u8], options: &Options) -> String {
    let start = Instant::now();
    let result = records_of_text(text, "example.", options);
    let elapsed = start.elapsed();
    assert!(elapsed < LIMIT, "took {elapsed:?}");
    let error = result.expect_err("hostile text must not parse").to_string();
    assert!(
        error.len() < 400 * error.lines().count().max(1),
        "message too long: {} bytes",
        error.len()
    );
    error
}

#[test]
fn unterminated_quotes() {
    let e = fails(b"$TTL 1\nx TXT \"never closed\ny A 192.0.2.1\n", &Options::default());
    assert_eq!(e, "text:2:7: unterminated quoted string");
    let e = fails(b"x 1 TXT \"at the end", &Options::default());
    assert_eq!(e, "text:1:9: unterminated quoted string");
    // Collecting: the next line is read normally.
    let options = Options { collect_errors: true, ..Options::default() };
    let text = b"x 1 TXT \"open\ny 1 A 192.0.2.1\nz 1 A bad\n";
    let e = fails(text, &options);
    assert_eq!(
        e,
        "text:1:9: unterminated quoted string\ntext:3:7: expected an IPv4 address, found 'bad'"
    );
}

#[test]
fn huge_generate_ranges_fail_before_any_work() {
    let e = fails(b"$TTL 1\n$GENERATE 0-2147483647 h$ A 192.0.2.1\n", &Options::default());
    assert!(e.starts_with("text:2:11: $GENERATE would make 2147483648 records"), "{e}");
    // The largest allowed run of the largest templates still ends quickly.
    let owner = format!("{}$", "a".repeat(40));
    let rdata = format!("\"{}\"", "t$ ".repeat(80));
    let text = format!("$TTL 1\n$GENERATE 1-65536 {owner} TXT {rdata}\n");
    let start = Instant::now();
    let (records, report) =
        records_of_text(text.as_bytes(), "example.", &Options::default()).unwrap();
    assert!(start.elapsed() < LIMIT);
    assert_eq!((records.len(), report.records), (65_536, 65_536));
    let e = fails(format!("{text}$GENERATE 1-1 x A 192.0.2.1\n").as_bytes(), &Options::default());
    assert!(e.contains("over the limit of 65536"), "{e}");
    // A template that could expand past the bound is refused up front.
    let wide = format!("$TTL 1\n$GENERATE 1-2 x TXT \"{}\"\n", "${0,255,d}".repeat(20));
    assert!(fails(wide.as_bytes(), &Options::default()).contains("can expand past 4096 bytes"));
}

#[test]
fn ten_thousand_nested_parentheses() {
    let text = format!("x 1 TXT {}\"a\"{}\n", "(".repeat(10_000), ")".repeat(10_000));
    let e = fails(text.as_bytes(), &Options::default());
    assert_eq!(e, "text:1:10: nested '(' (one is already open since line 1)");
    let options = Options { collect_errors: true, ..Options::default() };
    let e = fails(text.as_bytes(), &options);
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn nul_bytes_and_binary_noise() {
    let e = fails(b"\0\0\0 1 A \0\n", &Options::default());
    assert_eq!(e, "text:1:9: expected an IPv4 address, found '\\000'");
    // A megabyte of noise: errors are collected up to the limit, then parsing stops.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let noise: Vec<u8> = (0..1 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect();
    let options = Options { collect_errors: true, max_errors: 100, ..Options::untrusted() };
    let start = Instant::now();
    let err = records_of_text(&noise, "example.", &options).unwrap_err();
    assert!(start.elapsed() < LIMIT);
    let Error::Many(errors) = err else { panic!("expected many errors") };
    assert_eq!(errors.len(), 101);
    assert!(errors[100].to_string().contains("too many errors (100)"));
}

#[test]
fn names_over_255_bytes() {
    let label = "a".repeat(63);
    let long = format!("{label}.{label}.{label}.{label}.example. 1 A 192.0.2.1\n");
    let e = fails(long.as_bytes(), &Options::default());
    assert!(
        e.starts_with("text:1:1: bad name '") && e.ends_with("': name longer than 255 bytes"),
        "{e}"
    );
    let relative = format!("{label}.{label}.{label}.{} 1 A 192.0.2.1\n", "b".repeat(60));
    assert!(fails(relative.as_bytes(), &Options::default()).contains("name longer than 255 bytes"));
    let label64 = format!("{}.example. 1 A 192.0.2.1\n", "c".repeat(64));
    assert!(fails(label64.as_bytes(), &Options::default()).contains("label longer than 63 bytes"));
    let target = format!("x 1 NS {label}.{label}.{label}.{label}.\n");
    assert!(fails(target.as_bytes(), &Options::default()).contains("name longer than 255 bytes"));
}

#[test]
fn a_100_mb_single_line() {
    const SIZE: usize = 100 << 20;
    // One 100 MB token as owner, and as a character string.
    let mut owner = vec![b'a'; SIZE];
    owner.extend_from_slice(b" 1 A 192.0.2.1\n");
    let e = fails(&owner, &Options::default());
    assert!(e.starts_with("text:1:1: bad name 'aaaa") && e.contains("(104857600 bytes)"), "{e}");
    let mut txt = b"x 1 TXT ".to_vec();
    txt.resize(SIZE, b'z');
    let e = fails(&txt, &Options::default());
    assert!(e.contains("longer than 255"), "{e}");
    // A 100 MB line of short tokens, one of them bad: one error, the rest skipped.
    let mut many = b"x 1 A 192.0.2.1 ".to_vec();
    many.extend_from_slice(&b"a ".repeat(SIZE / 2));
    many.extend_from_slice(b"\ny 1 A 192.0.2.2\n");
    let options = Options { collect_errors: true, ..Options::default() };
    let e = fails(&many, &options);
    assert_eq!(e, "text:1:17: unexpected 'a' at the end of the entry");
}
