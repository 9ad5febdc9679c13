//! Checking a signed zone as served: AXFR it with dig into a file, then run two
//! independent validators (`ldns-verify-zone`, BIND's `dnssec-verify`) on that file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs a validator; a missing one fails with the package that has it.
pub fn run(program: &str, package: &str, args: &[&str]) -> (bool, String) {
    let output = Command::new(program).args(args).output().unwrap_or_else(|e| {
        panic!("cannot run {program} ({e}): install the Debian package {package} (scripts/test-all.sh does)")
    });
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// Both validators on the zone file `path` of `zone` (`csk`: every key has the SEP
/// flag, `dnssec-verify -z`).
pub fn validate(path: &Path, zone: &str, csk: bool, what: &str) {
    let file = path.to_str().unwrap();
    let (ok, out) = run("ldns-verify-zone", "ldnsutils", &[file]);
    assert!(
        ok && out.contains("Zone is verified and complete"),
        "ldns-verify-zone, {what}:\n{out}"
    );
    let mut args = vec!["-o", zone, file];
    if csk {
        args.insert(0, "-z");
    }
    let (ok, out) = run("dnssec-verify", "bind9-utils", &args);
    assert!(ok && out.contains("Zone fully signed"), "dnssec-verify, {what}:\n{out}");
}

/// `zone` as AXFR from `addr` gives it, written to `path` for the validators.
pub fn axfr_file(addr: SocketAddr, zone: &str, path: PathBuf) -> PathBuf {
    let out = Command::new("dig")
        .args(["+tries=1", "+time=3", "-p", &addr.port().to_string()])
        .arg(format!("@{}", addr.ip()))
        .args(["+nocmd", "+nostats", "+nocomments", zone, "AXFR"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut records: Vec<&str> = text.lines().filter(|l| !l.starts_with(';')).collect();
    records.retain(|l| !l.trim().is_empty());
    records.dedup(); // the SOA closes the transfer
    std::fs::write(&path, records.join("\n") + "\n").unwrap();
    path
}
