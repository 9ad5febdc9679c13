//! Reading a zone file in chunks gives exactly what reading it whole gives: the same
//! records, warnings and errors (with the same lines), whatever the chunk size, for
//! entries with parentheses over many lines, comments, quoted strings, blank owners,
//! directives, `$INCLUDE`s and lines longer than the buffer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io::Read;
use std::path::Path;

use common::{data, name};
use tern_zone::parser::{parse_bytes, parse_reader, Options};

/// What a parse produced, printed: records, then warnings, or the error.
fn outcome(
    result: Result<tern_zone::parser::Report, tern_zone::Error>,
    records: &[String],
) -> String {
    let mut out = records.join("\n");
    match result {
        Ok(report) => {
            for w in &report.warnings {
                out.push_str(&format!("\nwarning: {w}"));
            }
            out.push_str(&format!("\nrecords: {}", report.records));
        }
        Err(e) => out.push_str(&format!("\nerror: {e}")),
    }
    out
}

/// A reader handing out at most `step` bytes per call, to vary where reads end.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(out.len()).min(self.data.len());
        let (head, tail) = self.data.split_at(n);
        out[..n].copy_from_slice(head);
        self.data = tail;
        Ok(n)
    }
}

fn whole(text: &[u8], source: &Path, origin: &str, options: &Options) -> String {
    let mut records = Vec::new();
    let result = parse_bytes(text, source, &name(origin), options, &mut |r| {
        records.push(r.to_string());
        Ok(())
    });
    outcome(result, &records)
}

fn chunked(text: &[u8], source: &Path, origin: &str, options: &Options, chunk: usize) -> String {
    let mut records = Vec::new();
    let reader = Trickle { data: text, step: 1 + chunk % 7 };
    let result = parse_reader(reader, source, &name(origin), options, chunk, &mut |r| {
        records.push(r.to_string());
        Ok(())
    });
    outcome(result, &records)
}

/// Checks every chunk size from 1 byte to past the text's length.
fn same_for_every_chunk_size(text: &[u8], source: &Path, origin: &str, options: &Options) {
    let want = whole(text, source, origin, options);
    for chunk in (1..=text.len() + 8).step_by(if text.len() > 3000 { 7 } else { 1 }) {
        let got = chunked(text, source, origin, options, chunk);
        assert_eq!(got, want, "chunk of {chunk} bytes differs");
    }
}

const TRICKY: &str = "\
; no TTL yet: the first record warns, once
first A (
  192.0.2.1 )
$TTL 300
@ IN SOA ns hostmaster ( 1 ; serial
        7200   ; refresh (a comment inside the parentheses)
        900 604800
        60 )
@ NS ns
  NS ns2 ; a blank owner: the apex again
ns A 192.0.2.53
txt TXT ( \"quoted ; not a comment\" \"two\"
   \"three (not a paren)\" )
$ORIGIN sub.example.
www 60 IN A 192.0.2.2
    AAAA 2001:db8::2
key DNSKEY 257 3 13 (
        mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+
        KkxLbxILfDLUT0rAK9iUzy1L53eKGQ== )
$GENERATE 1-3 host$ A ( 192.0.2.$ )
big 1 2 A 192.0.2.9
";

#[test]
fn tricky_entries_read_the_same_in_every_chunk_size() {
    let mut text = TRICKY.to_owned();
    text.push_str(&format!("long TXT \"{}\"\n", "y".repeat(250)));
    text.push_str("last ( A\n\n\n 192.0.2.10 )");
    let source = Path::new("tricky.zone");
    let want = whole(text.as_bytes(), source, "example.", &Options::default());
    assert!(want.contains("error: tricky.zone:21:"), "the stray TTL is an error:\n{want}");
    same_for_every_chunk_size(text.as_bytes(), source, "example.", &Options::default());
    let collect = Options { collect_errors: true, ..Options::default() };
    let want = whole(text.as_bytes(), source, "example.", &collect);
    assert!(want.contains("last.sub.example."), "reading went on to the end:\n{want}");
    same_for_every_chunk_size(text.as_bytes(), source, "example.", &collect);
}

#[test]
fn errors_at_the_end_read_the_same() {
    let options = Options::default();
    for text in ["a A 192.0.2.1\nb A (\n192.0.2.2\n", "a A 192.0.2.1\nb TXT \"open\n", "a ( A\n"] {
        same_for_every_chunk_size(text.as_bytes(), Path::new("end.zone"), "example.", &options);
    }
}

#[test]
fn entries_failing_before_a_chunk_end_are_skipped_the_same() {
    // An entry that fails on an early token and goes on over several lines must be
    // skipped to its end in the next chunk too, not read from the middle.
    let collect = Options { collect_errors: true, ..Options::default() };
    for text in [
        "$TTL 60\na A 192.0.2.1\nb Bad ( 1\n   2 ; comment\n   3 )\nc A 192.0.2.3\n",
        "$TTL 60\nb A ( 192.0.2.1\n ( 2 )\nc A 192.0.2.3\nd A 192.0.2.4\n",
        "$TTL 60\n@ Idomains (\n     20 ; SERIAL\n     ES.TXT\n",
        // A lexical error inside parentheses: skipping goes on from the error, over the
        // following lines, up to the next error or closing parenthesis (found by fuzzing).
        "$TTL 60\nlong TXT ( \"first\"\n   \"open\n  IN A 192.0.2.1\n  IN AAAA 2001:db8::1\n  \"also open\nh3 A 192.0.2.13\n",
    ] {
        let want = whole(text.as_bytes(), Path::new("bad.zone"), "example.", &collect);
        same_for_every_chunk_size(text.as_bytes(), Path::new("bad.zone"), "example.", &collect);
        assert!(want.contains("error:"), "{want}");
    }
}

#[test]
fn test_zones_read_the_same_in_every_chunk_size() {
    for (file, origin) in [
        ("example.zone", "example."),
        ("types.zone", "example."),
        ("generate.zone", "example."),
        ("rfc1035/isi.edu.zone", "ISI.EDU."),
        ("include/main.zone", "example."),
        ("include/nested.zone", "example."),
        ("include/bad-inner.zone", "example."),
    ] {
        let path = data(file);
        let text = std::fs::read(&path).unwrap();
        let options = Options { default_ttl: 60, ..Options::default() };
        same_for_every_chunk_size(&text, &path, origin, &options);
    }
}
