//! `ternd --check-config FILE`: the configuration's errors (all of them, each with its
//! line), the files start-up opens besides the zones (`[http] api-token-file`, `[log]
//! file`), then — unless `--skip-zones` — every zone loaded as the server would load
//! it, with each zone's errors and the number of warnings. Exit status 0 only when the
//! configuration, those files and every zone are usable: what start-up refuses, this
//! refuses too.

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
    let unusable = files(&config, &mut text);
    let mut failed = 0;
    if !skip_zones {
        for plan in &config.resolved.zones {
            failed += usize::from(!check_zone(plan, &mut text));
        }
    }
    note_query_stats(&config, &mut text);
    let zones = config.resolved.zones.len();
    let what = if skip_zones { "zones not checked" } else { "zones checked" };
    if unusable > 0 {
        let _ =
            writeln!(text, "{}: {unusable} files start-up needs cannot be used", path.display());
    }
    if failed == 0 && unusable == 0 {
        let _ = writeln!(text, "{}: valid ({zones} zones, {what})", path.display());
    } else if failed > 0 {
        let _ = writeln!(text, "{}: {failed} of {zones} zones cannot be loaded", path.display());
    }
    Ok(Checked { text, ok: failed == 0 && unusable == 0 })
}

/// Notes the zones with `query-stats` beyond `query-stats-max-zones`: served, but not
/// counted (not an error: the server starts, and logs them too).
fn note_query_stats(config: &Config, out: &mut String) {
    let left_out = config.query_stats_left_out();
    let Some(first) = left_out.first() else { return };
    let _ = writeln!(
        out,
        "[server] query-stats-max-zones = {}: {} more zones set query-stats and will not be counted (from {first} on)",
        config.server.query_stats_max_zones,
        left_out.len(),
    );
}

/// Checks the files start-up opens besides the zones, as it opens them; how many
/// cannot be used. Nothing is created: a log file that does not exist yet must be one
/// its directory lets the server create.
fn files(config: &Config, out: &mut String) -> usize {
    let mut unusable = 0;
    if let Some(file) = &config.http.api_token_file {
        if let Err(e) = crate::config::http::read_token(file) {
            let _ = writeln!(out, "[http] api-token-file: {e}");
            unusable += 1;
        }
    }
    if let Some(file) = &config.log.file {
        if let Err(why) = log_file_usable(file) {
            let _ = writeln!(out, "[log] file: {}: {why}", file.display());
            unusable += 1;
        }
    }
    unusable
}

/// Whether the log file can be opened for appending, or created in its directory.
fn log_file_usable(file: &Path) -> Result<(), String> {
    if file.exists() {
        let opened = std::fs::OpenOptions::new().append(true).open(file);
        return opened.map(drop).map_err(|e| format!("cannot be opened for writing: {e}"));
    }
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("its directory {} does not exist", dir.display()));
    }
    let c_dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| "the path holds a NUL byte".to_owned())?;
    // SAFETY: `c_dir` is a NUL-terminated string that outlives the call.
    let writable = unsafe { libc::access(c_dir.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    match writable {
        true => Ok(()),
        false => Err(format!("cannot be created: {}", std::io::Error::last_os_error())),
    }
}

/// Runs a scripted zone's script; false when it does not give a zone.
fn check_script(plan: &ZonePlan, script: &tern_control::script::Script, out: &mut String) -> bool {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    match tern_control::script::run(script, &plan.name, now.map_or(0, |d| d.as_secs())) {
        Ok(_) => true,
        Err(e) => {
            let _ = writeln!(out, "zone {}: {e}", plan.name);
            false
        }
    }
}

/// Loads one zone's file; false when it cannot be served from it.
fn check_zone(plan: &ZonePlan, out: &mut String) -> bool {
    let path = match &plan.source {
        ZoneSource::File(path) => path,
        ZoneSource::Script(script) => return check_script(plan, script, out),
        ZoneSource::Embedded(_) | ZoneSource::Catalog(_) | ZoneSource::Database(_) => return true,
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
