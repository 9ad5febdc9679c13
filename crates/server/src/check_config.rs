//! `ternd --check-config FILE`: the configuration's errors (all of them, each with its
//! line), then — unless `--skip-zones` — every zone loaded as the server would load it,
//! with each zone's errors and the number of warnings. Exit status 0 only when the
//! configuration and every zone are usable.

use std::fmt::Write;
use std::path::Path;

use crate::config::{Config, Role, ZonePlan, ZoneSource};

/// What checking found, ready to print.
#[derive(Debug)]
pub struct Checked {
    /// The report.
    pub text: String,
    /// True when everything is usable.
    pub ok: bool,
}

/// Checks the configuration at `path` (its errors are the `Err`), and its zones unless
/// `skip_zones`.
pub fn check(path: &Path, skip_zones: bool) -> crate::Result<Checked> {
    let config = Config::from_file(path)?;
    let mut text = String::new();
    let mut failed = 0;
    if !skip_zones {
        for plan in &config.resolved.zones {
            failed += usize::from(!check_zone(plan, &mut text));
        }
    }
    let zones = config.zones.len();
    let what = if skip_zones { "zones not checked" } else { "zones checked" };
    if failed == 0 {
        let _ = writeln!(text, "{}: valid ({zones} zones, {what})", path.display());
    } else {
        let _ = writeln!(text, "{}: {failed} of {zones} zones cannot be loaded", path.display());
    }
    Ok(Checked { text, ok: failed == 0 })
}

/// Loads one zone's file; false when it cannot be served from it.
fn check_zone(plan: &ZonePlan, out: &mut String) -> bool {
    let path = match &plan.source {
        ZoneSource::File(path) => path,
        ZoneSource::Embedded(_) | ZoneSource::Catalog(_) => return true,
    };
    let secondary = matches!(plan.role, Role::Secondary(_));
    if secondary && !path.exists() {
        let _ = writeln!(
            out,
            "zone {}: no copy kept yet at {} (it will be transferred)",
            plan.name,
            path.display()
        );
        return true;
    }
    match tern_zone::load_file(path, &plan.name, &Default::default(), &mut |_| {}) {
        Ok(loaded) => {
            let warnings = loaded.parse.warnings.len() + loaded.report.warnings().count();
            if warnings > 0 {
                let _ = writeln!(
                    out,
                    "zone {}: loads, with {warnings} warnings (ternd check-zone {} {} lists them)",
                    plan.name,
                    path.display(),
                    plan.name
                );
            }
            true
        }
        Err(e) => {
            let _ = writeln!(out, "zone {}: {e}", plan.name);
            false
        }
    }
}
