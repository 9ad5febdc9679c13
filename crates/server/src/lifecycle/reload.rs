//! SIGHUP: re-read the configuration and apply it through the control plane, and how
//! the outcome of loads is logged.
//!
//! Applying returns at once: each zone's writer loads on the control plane's threads
//! while the workers keep answering from the data they have, and a new version is
//! published in one step (an `arc_swap` store), so a reload never drops a query and
//! never holds up the signal loop.

use std::time::{Duration, Instant};

use tern_ctl::proto::Reply;
use tokio::sync::oneshot;
use tracing::level_filters::LevelFilter;
use tracing::{error, info, warn};

use super::catalogs::Consumed;
use super::plane::Plane;
use crate::config::{Config, Overrides};
use crate::error::Result;
use crate::io::server::RunningServer;
use crate::logging::LogHandle;
use tern_control::Loading;

pub use tern_control::ReloadReport;

/// Logs the outcome of the loads of one apply; `what` is "load" or "reload".
pub fn log_report(loading: &Loading, what: &str, elapsed: Duration) {
    let report = loading.report();
    let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let (zones, records, waiting) = (report.zones, report.records, report.waiting);
    if report.failed == 0 {
        info!(zones, records, waiting, elapsed_ms, "{what} done");
        return;
    }
    for (zone, why) in loading.failures() {
        error!(zone = %zone, "not loaded: {why}");
    }
    warn!(
        zones,
        failed = report.failed,
        records,
        waiting,
        elapsed_ms,
        "{what} done, with failed zones"
    );
}

/// Re-reads the configuration file of `current` (the same configuration for built-in
/// ones), applies it — zones, keys and rules, and the settings the data plane takes
/// live (`live_changes`) — and warns about changes that need a restart. Returns the
/// configuration now in force, the loads to wait for, and a line per changed setting
/// (applied, or waiting for a restart) for `ternctl reload`'s answer.
pub fn reload(
    current: &Config,
    (control, data): (&Plane, &RunningServer),
    overrides: &Overrides,
    consumed: &mut Consumed,
) -> Result<(Config, Loading, Vec<String>)> {
    let mut next = match &current.path {
        Some(path) => Config::from_file(path).inspect_err(|e| {
            error!("configuration not reloaded, keeping the running one:\n{e}");
        })?,
        None => current.clone(),
    };
    overrides.apply(&mut next);
    let mut notes = Vec::new();
    control.reconfigure(current, &next);
    data.reconfigure_tcp(&next.tcp);
    for key in live_changes(current, &next) {
        info!("`{key}` changed: applied");
        notes.push(format!("`{key}` changed: applied"));
    }
    for key in restart_only_changes(current, &next) {
        warn!("`{key}` changed: it takes effect at the next restart");
        notes.push(format!("`{key}` changed: it takes effect at the next restart"));
    }
    for zone in consumed.retain(&next) {
        info!(member = %zone, "catalog member removed: its catalog is not consumed any more");
    }
    let members = consumed.plans(&next, &[]);
    let loading = control.apply_with(&next, &members, true);
    Ok((next, loading, notes))
}

/// What `ternctl reload` is told beside its zones' outcome: a line per changed setting
/// before it ([`reload`]'s), and the settings that could not be applied after it
/// ([`super::live::apply`]'s), which make the answer an error.
#[derive(Debug, Default)]
pub struct Said {
    /// Each changed setting: applied, or waiting for a restart.
    pub notes: Vec<String>,
    /// Each setting not applied, and why.
    pub problems: Vec<String>,
}

impl Said {
    /// `reply` with the notes before its text and the problems after it.
    fn told(&self, reply: Reply) -> Reply {
        with_problems(with_notes(reply, &self.notes), &self.problems)
    }
}

/// Whether the memory housekeeping ([`tern_zone::memory::after_load`]) follows a change's loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tidy {
    /// It does (reloads, whole-set changes, large zone changes).
    After,
    /// It does not: the change freed too little to be worth a walk of the whole heap.
    Skip,
}

/// Zones added or removed at run time after which the memory housekeeping runs again
/// ([`Zones`]). A walk of the heap and of `/proc/self/smaps` costs what the zones
/// served take (most of a second at 1M zones) and holds the allocator's lock while it
/// trims, at the lowest priority, where the next change may wait for it. One zone frees
/// a few kilobytes, which the next zones added reuse.
pub const TIDY_AFTER_ZONES: usize = 10_000;

/// Counts the zones added and removed since the last housekeeping.
#[derive(Debug, Default)]
pub struct Zones {
    changed: usize,
}

impl Zones {
    /// Counts a change of `count` zones: [`Tidy::After`] once [`TIDY_AFTER_ZONES`] have
    /// changed since the last housekeeping.
    pub fn changed(&mut self, count: usize) -> Tidy {
        self.changed = self.changed.saturating_add(count);
        if self.changed < TIDY_AFTER_ZONES {
            return Tidy::Skip;
        }
        self.changed = 0;
        Tidy::After
    }
}

/// Waits for `loading` on a thread of its own, then logs it, applies the new log level
/// (so the reload's outcome is logged at the level in force when it began) and, with
/// [`Tidy::After`], gives freed memory back; the signal loop is not held up.
/// `reply`, when given, is told the outcome too (`ternctl reload`), with what was `said`.
/// A change with nothing to wait for and no housekeeping after it (a `zone-remove`) is
/// told here, without a thread.
pub fn log_when_done(
    mut loading: Loading,
    (what, said, tidy): (&'static str, Said, Tidy),
    log: LogHandle,
    level: LevelFilter,
    reply: Option<oneshot::Sender<Reply>>,
) {
    let started = Instant::now();
    if tidy == Tidy::Skip && loading.wait(Duration::ZERO) {
        return tell(&loading, (what, &said, started), &log, level, reply);
    }
    let _ = std::thread::Builder::new().name("ternd-reload".into()).spawn(move || {
        while !loading.wait(Duration::from_secs(1)) {}
        tell(&loading, (what, &said, started), &log, level, reply);
        if tidy == Tidy::After {
            housekeeping();
        }
    });
}

/// Logs the outcome of `loading`, done, applies `level` and tells `reply`.
fn tell(
    loading: &Loading,
    (what, said, started): (&'static str, &Said, Instant),
    log: &LogHandle,
    level: LevelFilter,
    reply: Option<oneshot::Sender<Reply>>,
) {
    log_report(loading, what, started.elapsed());
    log.set_level(level);
    if let Some(reply) = reply {
        let _ = reply.send(said.told(outcome(loading, what)));
    }
}

/// The memory housekeeping after the start or a reload
/// ([`tern_zone::memory::after_load`]), at the lowest priority: nobody waits for it, and at the server's own priority it held off
/// the control plane (nice 10) as it sent the NOTIFYs and served the IXFRs of the change
/// just published (a 1M zone's trim and collapse take most of a second; a one-record
/// change reached a secondary in 28 ms instead of 11). The calling thread keeps that
/// priority: it is the reload's own, or one started for it.
pub(super) fn housekeeping() {
    if let Err(e) = crate::priority::set_thread_nice(crate::priority::LOWEST_NICE) {
        warn!("the memory housekeeping after a reload keeps its priority: {e}");
    }
    tern_zone::memory::after_load();
}

/// What a reload did, as the control socket tells it.
fn outcome(loading: &Loading, what: &str) -> Reply {
    let report = loading.report();
    let summary = format!(
        "{} zones loaded ({} records, {} waiting for a transfer)",
        report.zones, report.records, report.waiting
    );
    if report.failed == 0 && report.zones == 0 {
        return Reply::done(format!("{what} done"));
    }
    if report.failed == 0 {
        return Reply::done(format!("{what} done: {summary}"));
    }
    let failures: Vec<String> =
        loading.failures().iter().map(|(zone, why)| format!("{zone}: {why}")).collect();
    Reply::error(format!(
        "{what} done with {} failed zones ({summary}):\n{}",
        report.failed,
        failures.join("\n")
    ))
}

/// `reply` with `notes` before its text.
fn with_notes(reply: Reply, notes: &[String]) -> Reply {
    if notes.is_empty() {
        return reply;
    }
    let notes = notes.join("\n");
    match reply {
        Reply::Done { message } => Reply::done(format!("{notes}\n{message}")),
        Reply::Error { error } => Reply::error(format!("{notes}\n{error}")),
        other => other,
    }
}

/// A reload's `outcome` with `problems` after it, as an error.
fn with_problems(outcome: Reply, problems: &[String]) -> Reply {
    if problems.is_empty() {
        return outcome;
    }
    let problems = problems.join("\n");
    match outcome {
        Reply::Done { message } => {
            Reply::error(format!("{message}; settings not applied:\n{problems}"))
        }
        Reply::Error { error } => {
            Reply::error(format!("{error}\nsettings not applied:\n{problems}"))
        }
        _ => Reply::error(format!("settings not applied:\n{problems}")),
    }
}

/// The settings beyond zones, keys and rules that a reload applies at once
/// ([`Plane::reconfigure`]): answering takes them from its next batch of queries.
fn live_changes(old: &Config, new: &Config) -> Vec<&'static str> {
    let (a, b) = (&old.server, &new.server);
    let tcp = |t: &crate::config::TcpConfig| crate::config::TcpConfig {
        defer_accept: false,
        ..t.clone()
    };
    let tls =
        |t: &crate::config::TlsConfig| crate::config::TlsConfig { listen: Vec::new(), ..t.clone() };
    let checks: [(&'static str, bool); 8] = [
        ("identity", old.identity != new.identity),
        ("tls", tls(&old.tls) != tls(&new.tls)),
        ("tcp", tcp(&old.tcp) != tcp(&new.tcp)),
        ("server.tsig-max-fudge", a.tsig_max_fudge != b.tsig_max_fudge),
        ("transfer.max-incoming", old.transfer.max_incoming != new.transfer.max_incoming),
        ("transfer.max-outgoing", old.transfer.max_outgoing != new.transfer.max_outgoing),
        ("rrl", old.rrl != new.rrl),
        ("cookies", old.cookies != new.cookies),
    ];
    checks.into_iter().filter(|(_, differs)| *differs).map(|(key, _)| key).collect()
}

/// The keys whose change a reload cannot apply (sockets, workers, privileges, the
/// control plane's threads and storage). `[log]` and `[http]` but `listen` are applied
/// by [`super::live`], and say so themselves.
fn restart_only_changes(old: &Config, new: &Config) -> Vec<&'static str> {
    let (a, b) = (&old.server, &new.server);
    let mut changed = Vec::new();
    let checks: [(&'static str, bool); 16] = [
        ("tls.listen", old.tls.listen != new.tls.listen),
        ("server.listen", a.listen != b.listen),
        ("server.query-stats-max-zones", a.query_stats_max_zones != b.query_stats_max_zones),
        ("server.udp-payload-max", a.udp_payload_max != b.udp_payload_max),
        ("server.udp-workers", a.udp_workers != b.udp_workers),
        ("server.tcp-workers", a.tcp_workers != b.tcp_workers),
        ("server.user", a.user != b.user || a.group != b.group),
        ("server.pid-file", a.pid_file != b.pid_file),
        ("server.storage", a.storage != b.storage),
        ("server.backup-dir", old.backup_dir() != new.backup_dir()),
        ("server.control-nice", a.control_nice != b.control_nice),
        ("tcp.defer-accept", old.tcp.defer_accept != new.tcp.defer_accept),
        ("control", old.control != new.control),
        ("xdp", old.xdp != new.xdp),
        ("http.listen", old.http.listen != new.http.listen),
        ("quic", old.quic != new.quic),
    ];
    for (key, differs) in checks {
        if differs {
            changed.push(key);
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_turn_a_done_reload_into_an_error_that_says_them() {
        let problems = ["[http] api-token-file not applied: token: too short".to_owned()];
        let Reply::Error { error } = with_problems(Reply::done("reload done"), &problems) else {
            panic!("not an error")
        };
        assert_eq!(error, "reload done; settings not applied:\n[http] api-token-file not applied: token: too short");
        let Reply::Error { error } = with_problems(Reply::error("1 failed zone"), &problems) else {
            panic!("not an error")
        };
        assert!(error.starts_with("1 failed zone\nsettings not applied:\n[http]"), "{error}");
    }

    #[test]
    fn the_reply_is_told_the_problems_after_the_outcome() {
        let said = Said { notes: Vec::new(), problems: vec!["a problem".into()] };
        let answer = said.told(Reply::done("reload done"));
        assert!(
            matches!(&answer, Reply::Error { error } if error.ends_with("a problem")),
            "{answer:?}"
        );
        let answer = Said::default().told(Reply::done("reload done"));
        assert!(
            matches!(&answer, Reply::Done { message } if message == "reload done"),
            "as it was"
        );
    }

    #[test]
    fn housekeeping_follows_only_every_so_many_zones_changed() {
        let mut zones = Zones::default();
        assert_eq!(zones.changed(1), Tidy::Skip, "one zone");
        assert_eq!(zones.changed(TIDY_AFTER_ZONES - 2), Tidy::Skip);
        assert_eq!(zones.changed(1), Tidy::After, "the count reached");
        assert_eq!(zones.changed(1), Tidy::Skip, "counted from zero again");
        assert_eq!(zones.changed(25_000), Tidy::After, "a large batch at once");
    }

    #[test]
    fn the_housekeeping_after_a_reload_runs_at_the_lowest_priority() {
        let nice = std::thread::spawn(|| {
            housekeeping();
            crate::priority::thread_nice().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(nice, crate::priority::LOWEST_NICE);
    }
}
