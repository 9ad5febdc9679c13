//! Differential test against dnspython: for every record of `testdata/corpus.txt`,
//! dnspython's `from_text(...).to_wire()` and our `parse_text` must give the same bytes,
//! or both refuse. Intentional differences are marked in the corpus and asserted too.
//! Skipped, with a message, when python3 or dnspython is missing.

use std::io::Write;
use std::process::{Command, Stdio};

use super::origin;
use crate::rdata::parse_str;
use crate::types::Rtype;

const CORPUS: &str = include_str!("../testdata/corpus.txt");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/rdata/testdata/dnspython_wire.py");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Same,
    BothReject,
    OnlyOurs,
    OnlyTheirs,
}

#[derive(Debug)]
struct Case {
    line: usize,
    expect: Expect,
    rtype: String,
    text: String,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (i, raw) in CORPUS.lines().enumerate() {
        let raw = raw.trim_end();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let (expect, rest) = if let Some(r) = raw.strip_prefix("! ") {
            (Expect::BothReject, r)
        } else if let Some(r) = raw.strip_prefix("~ours ") {
            (Expect::OnlyOurs, r)
        } else if let Some(r) = raw.strip_prefix("~theirs ") {
            (Expect::OnlyTheirs, r)
        } else {
            (Expect::Same, raw)
        };
        let (rtype, text) = rest.split_once(' ').unwrap_or((rest, ""));
        out.push(Case { line: i + 1, expect, rtype: rtype.to_string(), text: text.to_string() });
    }
    out
}

/// dnspython's answer per case: `Some(hex)` or `None` for a refusal. `None` overall
/// when python3 or dnspython is not available.
fn run_dnspython(cases: &[Case]) -> Option<Vec<Option<String>>> {
    let mut child = Command::new("python3")
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut input = String::new();
    for c in cases {
        input.push_str(&format!("{}\t{}\n", c.rtype, c.text));
    }
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let output = child.wait_with_output().ok()?;
    let stdout = String::from_utf8(output.stdout).ok()?;
    if stdout.starts_with("NO-DNSPYTHON") {
        return None;
    }
    let answers: Vec<Option<String>> = stdout
        .lines()
        .map(|l| if l.starts_with("ERR") { None } else { Some(l.to_string()) })
        .collect();
    assert_eq!(answers.len(), cases.len(), "dnspython script output: {stdout}");
    Some(answers)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn parse_text_matches_dnspython() {
    let cases = cases();
    let Some(theirs) = run_dnspython(&cases) else {
        eprintln!("SKIPPED: python3 with dnspython is not available; differential test not run");
        return;
    };
    let o = origin();
    let mut failures = Vec::new();
    for (case, their) in cases.iter().zip(&theirs) {
        let rtype = Rtype::from_mnemonic(case.rtype.as_bytes()).expect("corpus type");
        let ours = parse_str(rtype, &case.text, Some(&o));
        let ok = match (case.expect, &ours, their) {
            (Expect::Same, Ok(w), Some(t)) => hex(w) == *t,
            (Expect::BothReject, Err(_), None) => true,
            (Expect::OnlyOurs, Ok(_), None) => true,
            (Expect::OnlyTheirs, Err(_), Some(_)) => true,
            _ => false,
        };
        if !ok {
            let ours = ours.as_ref().map(|w| hex(w)).map_err(ToString::to_string);
            failures.push(format!(
                "line {}: {:?} {} {}\n  ours:   {ours:?}\n  theirs: {their:?}",
                case.line, case.expect, case.rtype, case.text
            ));
        }
    }
    eprintln!("dnspython differential: {} records compared", cases.len());
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}
