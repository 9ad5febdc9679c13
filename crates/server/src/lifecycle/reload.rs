//! The reload hook: how the lifecycle asks for zones to be (re)loaded, at start and on
//! SIGHUP, and how the outcome is logged.
//!
//! The hook runs on the control thread while the workers keep answering from the data
//! they have; it publishes new data in one step (an `arc_swap` store), so a reload never
//! drops a query.

use std::time::Instant;

use tracing::{error, info, warn};

use crate::config::Config;
use crate::error::{Error, Result};

/// Loads the zones of a configuration and publishes them to the handler.
pub trait Reload: Send + Sync {
    /// Brings the served zones in line with `config`: loads new and changed zones,
    /// drops removed ones. A zone that fails keeps its previous data (and counts in
    /// [`ReloadReport::failed`]); an `Err` means nothing was applied.
    fn reload(&self, config: &Config) -> Result<ReloadReport>;

    /// Called once before the listeners start, so that what is served from the first
    /// query on already matches `config`'s list of zones (loaded or not). Nothing by
    /// default.
    fn prepare(&self, _config: &Config) {}
}

/// What a reload did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Zones served after the reload.
    pub zones: usize,
    /// Zones that failed to load (served from their previous data, if any).
    pub failed: usize,
    /// Records served after the reload.
    pub records: u64,
}

/// Runs `hook` for `config` and logs the outcome; `what` is "load" or "reload".
pub fn run_and_log(hook: &dyn Reload, config: &Config, what: &str) -> Result<ReloadReport> {
    let started = Instant::now();
    let outcome = hook.reload(config);
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match &outcome {
        Ok(report) if report.failed == 0 => {
            info!(zones = report.zones, records = report.records, elapsed_ms, "{what} done");
        }
        Ok(report) => {
            warn!(
                zones = report.zones,
                failed = report.failed,
                records = report.records,
                elapsed_ms,
                "{what} done, with failed zones"
            );
        }
        Err(e) => error!(elapsed_ms, "{what} failed, serving the previous data: {e}"),
    }
    outcome
}

/// Re-reads the configuration file of `current` (the same configuration for built-in
/// ones), warns about changes that need a restart, and runs the hook. Returns the
/// configuration now in force.
pub fn reload(current: &Config, hook: &dyn Reload) -> Result<Config> {
    let next = match &current.path {
        Some(path) => Config::from_file(path).inspect_err(|e| {
            error!("configuration not reloaded, keeping the running one:\n{e}");
        })?,
        None => current.clone(),
    };
    for key in restart_only_changes(current, &next) {
        warn!("`{key}` changed: it takes effect at the next restart");
    }
    run_and_log(hook, &next, "reload")?;
    Ok(next)
}

/// The keys whose change a reload cannot apply (sockets, workers, privileges).
fn restart_only_changes(old: &Config, new: &Config) -> Vec<&'static str> {
    let (a, b) = (&old.server, &new.server);
    let mut changed = Vec::new();
    let checks: [(&'static str, bool); 8] = [
        ("server.listen", a.listen != b.listen),
        ("server.udp-workers", a.udp_workers != b.udp_workers),
        ("server.tcp-workers", a.tcp_workers != b.tcp_workers),
        ("server.udp-payload-max", a.udp_payload_max != b.udp_payload_max),
        ("server.user", a.user != b.user || a.group != b.group),
        ("server.pid-file", a.pid_file != b.pid_file),
        ("tcp", old.tcp != new.tcp),
        ("log.format", old.log.format != new.log.format || old.log.file != new.log.file),
    ];
    for (key, differs) in checks {
        if differs {
            changed.push(key);
        }
    }
    changed
}

impl<F> Reload for F
where
    F: Fn(&Config) -> Result<ReloadReport> + Send + Sync,
{
    fn reload(&self, config: &Config) -> Result<ReloadReport> {
        self(config)
    }
}

/// Reports a failed hook as [`Error::Reload`].
pub fn failed(why: impl std::fmt::Display) -> Error {
    Error::Reload(why.to_string())
}
