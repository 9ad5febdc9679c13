//! Build script: the commit and the build date `ternctl --version` and `ternd --version`
//! print (`ternd` takes both from this crate, so the two always agree).
//!
//! The commit is `git rev-parse --short=12 HEAD` (uncommitted changes are not noted), or
//! "unknown commit" outside a git checkout; the date is UTC, taken
//! from `SOURCE_DATE_EPOCH` when set (reproducible builds), else from the clock.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Sets `TERN_COMMIT` and `TERN_BUILD_DATE` for the crate being built.
pub fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    if let Some(file) = git(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={file}");
    }
    if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(file) = git(&["rev-parse", "--git-path", &reference]) {
            println!("cargo:rerun-if-changed={file}");
        }
    }
    println!("cargo:rustc-env=TERN_COMMIT={}", commit());
    println!("cargo:rustc-env=TERN_BUILD_DATE={}", build_date());
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn commit() -> String {
    git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown commit".to_owned())
}

/// YYYY-MM-DD (UTC) of `SOURCE_DATE_EPOCH` or now.
fn build_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
    let (year, month, day) = civil_from_days(secs / 86_400);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (the days-to-civil algorithm
/// over 400-year eras).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}
