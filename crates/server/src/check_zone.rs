//! `ternd check-zone FILE [ORIGIN]`: loads a zone file the way the server would and reports
//! every syntax error (`file:line:column: …`), semantic error and warning (`file:line: …`,
//! the record's line or its name's first), then a summary —
//! records, names, delegations, whether and how the zone is signed, its serial. Exits 1
//! when the zone could not be served. Without ORIGIN, the file's SOA owner (or its first
//! `$ORIGIN`) is the zone's name.

use std::fmt::Write as _;
use std::path::Path;

use tern_wire::Name;
use tern_zone::{Denial, Error as ZoneError, Loaded, Options, Report};

/// The outcome of a check: the text to print and whether the zone is usable.
#[derive(Debug)]
pub struct Checked {
    /// What to print, one finding per line, then the summary.
    pub text: String,
    /// True when the zone loads (warnings allowed).
    pub ok: bool,
}

/// Checks the zone `origin` in the file at `path`; without `origin`, the zone the file
/// says it holds: its SOA's owner, or its first `$ORIGIN`
/// ([`tern_zone::parser::find_origin`]).
pub fn check(path: &Path, origin: Option<&Name>) -> Checked {
    let options = Options { collect_errors: true, ..Options::default() };
    let found;
    let origin = match origin {
        Some(origin) => origin,
        None => match tern_zone::parser::find_origin(path, &options) {
            Ok(name) => {
                found = name;
                &found
            }
            Err(e) => {
                let file = tern_zone::error::shown_path(path);
                let text = format!("{e}\n{file}: not loadable: no origin\n");
                return Checked { text, ok: false };
            }
        },
    };
    let mut text = String::new();
    match tern_zone::load_file(path, origin, &options, &mut |_| {}) {
        Ok(loaded) => {
            findings(&mut text, &loaded);
            summary(&mut text, origin, &loaded);
            Checked { text, ok: true }
        }
        Err(ZoneError::Semantic(report)) => {
            issues(&mut text, &report);
            let errors = report.errors().count();
            let _ = writeln!(text, "{origin}: not loadable: {errors} semantic error(s)");
            Checked { text, ok: false }
        }
        Err(e) => {
            let errors = e.errors().len();
            for error in e.errors() {
                let _ = writeln!(text, "{error}");
            }
            let _ = writeln!(text, "{origin}: not loadable: {errors} error(s)");
            Checked { text, ok: false }
        }
    }
}

fn findings(text: &mut String, loaded: &Loaded) {
    for w in &loaded.parse.warnings {
        let _ = writeln!(text, "{w}");
    }
    if loaded.parse.warnings_dropped > 0 {
        let _ = writeln!(text, "({} more zone-file warnings)", loaded.parse.warnings_dropped);
    }
    issues(text, &loaded.report);
}

fn issues(text: &mut String, report: &Report) {
    for issue in report.issues() {
        let _ = writeln!(text, "{issue}");
    }
    if report.suppressed > 0 {
        let _ = writeln!(text, "({} more findings)", report.suppressed);
    }
}

fn summary(text: &mut String, origin: &Name, loaded: &Loaded) {
    let zone = &loaded.contents;
    let report = &loaded.report;
    let signed = match zone.denial() {
        Denial::Unsigned => "unsigned",
        Denial::Nsec => "signed (NSEC)",
        Denial::Nsec3 => "signed (NSEC3)",
    };
    let _ = writeln!(
        text,
        "{origin}: loaded serial {}: {} records, {} names, {} delegations, {signed}, {} warnings, {:.2} s",
        zone.serial(),
        zone.record_count(),
        report.names,
        report.delegations,
        loaded.parse.warnings.len() + report.warnings().count(),
        loaded.elapsed,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(zone: &str) -> Checked {
        run_with(zone, Some("example."))
    }

    fn run_with(zone: &str, origin: Option<&str>) -> Checked {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.zone");
        std::fs::write(&path, zone).unwrap();
        let origin: Option<Name> = origin.map(|o| o.parse().unwrap());
        let mut checked = check(&path, origin.as_ref());
        checked.text = checked.text.replace(&format!("{}/", dir.path().display()), "");
        checked
    }

    #[test]
    fn without_an_origin_the_file_says_it() {
        // From the SOA's owner (BIND's dumps start with `$ORIGIN .`).
        let c = run_with(
            "$ORIGIN .\n$TTL 60\nexample IN SOA ns.example. hm.example. 7 1 1 1 1\n\
             \tNS ns.example.\n$ORIGIN example.\nns A 192.0.2.1\n",
            None,
        );
        assert!(c.ok, "{}", c.text);
        assert!(c.text.starts_with("example.: loaded serial 7: 3 records"), "{}", c.text);
        // From the first $ORIGIN when the first record is not the SOA.
        let c = run_with(
            "$ORIGIN example.\n$TTL 60\nns A 192.0.2.1\n@ SOA ns hm 7 1 1 1 1\n@ NS ns\n",
            None,
        );
        assert!(c.ok, "{}", c.text);
        assert!(c.text.starts_with("example.: loaded serial 7: 3 records"), "{}", c.text);
        // Neither: a clear error, and the zone is not loadable.
        let c = run_with("$TTL 60\n@ SOA ns hm 7 1 1 1 1\n", None);
        assert!(!c.ok);
        assert_eq!(
            c.text,
            "z.zone:2: cannot tell the zone's origin: the SOA's owner '@' is relative, and no \
             $ORIGIN comes before it (give the origin)\nz.zone: not loadable: no origin\n"
        );
    }

    #[test]
    fn a_good_zone_gets_a_summary_and_its_warnings() {
        let c = run("$TTL 60\n@ SOA ns hm 7 1 1 1 1\n@ NS ns\nns A 192.0.2.1\nsub NS ns.sub\nx.other. A 192.0.2.9\n");
        assert!(c.ok, "{}", c.text);
        assert!(
            c.text.contains("z.zone:6: warning: x.other. A is outside the zone: ignored"),
            "{}",
            c.text
        );
        assert!(
            c.text.contains(
                "z.zone:5: warning: sub.example. NS target ns.sub.example. is in the zone but has no glue"
            ),
            "{}",
            c.text
        );
        assert!(
            c.text.contains("example.: loaded serial 7: 4 records, 3 names, 1 delegations, unsigned, 2 warnings"),
            "{}",
            c.text
        );
    }

    #[test]
    fn every_syntax_error_is_listed_with_its_line() {
        let c = run("$TTL 60\n@ SOA ns hm 7 1 1 1 1\n@ NS ns\nns A 192.0.2.300\nmx MX ten mail\n");
        assert!(!c.ok);
        assert!(c.text.contains("z.zone:4:"), "{}", c.text);
        assert!(c.text.contains("z.zone:5:"), "{}", c.text);
        assert!(c.text.contains("not loadable: 2 error(s)"), "{}", c.text);
    }

    #[test]
    fn semantic_errors_refuse_the_zone() {
        let c = run("$TTL 60\n@ SOA ns hm 7 1 1 1 1\nns A 192.0.2.1\nw CNAME ns\nw TXT x\n");
        assert!(!c.ok);
        assert!(
            c.text.contains("z.zone:2: error: example. NS missing at the zone apex"),
            "{}",
            c.text
        );
        assert!(
            c.text.contains("z.zone:4: error: w.example. CNAME exists beside TXT data"),
            "{}",
            c.text
        );
    }
}
