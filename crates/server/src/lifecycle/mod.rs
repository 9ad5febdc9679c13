//! The process lifecycle of `ternd`: bind, detach, write the PID file, drop privileges,
//! start the control plane, the workers and the HTTP server (`[http]`), and react to
//! signals until asked to stop.
//!
//! Order matters: sockets are bound while still root (ports below 1024); the fork of
//! `--daemon` happens before any thread exists; privileges are dropped before zones
//! are read and before workers start. Zones load on the control plane's threads
//! ([`tern_control`]), so the main thread only takes signals and the control socket's
//! requests to change the configuration ([`crate::ctl`]): SIGHUP (or `ternctl reload`)
//! re-reads the configuration, hands it to the control plane and applies its log and
//! HTTP settings ([`live`]); SIGTERM/SIGINT (or
//! `ternctl stop`) stop accepting, drain, and exit with status 0 — within half a
//! second even while zones are loading.

pub mod added;
pub mod catalogs;
pub mod daemon;
pub mod live;
pub mod pidfile;
pub mod plane;
pub mod reload;
pub mod systemd;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_ctl::proto::Reply;
use tern_zone::ZoneDb;
use tracing::{debug, error, info};

use crate::config::{Config, Overrides};
use crate::ctl::listen::{self as ctl_listen, Context};
use crate::ctl::MainRequest;
use crate::dns::EngineHandler;
use crate::error::{Error, Result};
use crate::http::api::{Api, ApiSettings};
use crate::http::metrics::{Metrics, Sources};
use crate::http::HttpState;
use crate::io::server::{self, Listeners, RunningServer};
use crate::logging::LogHandle;
use crate::privileges;
use crate::signals::{self, Signal, SignalSet};
use daemon::Readiness;
use pidfile::PidFile;
use plane::Plane;
pub use reload::ReloadReport;
use std::collections::BTreeMap;
use tern_control::catalog::Listed;
use tern_control::Loading;

/// How often the main thread looks for a signal while zones load at start.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Most time an idle tick of the main thread spends having malloc sort freed heap
/// ([`Steering::sort_freed`]): what a control command arriving meanwhile may wait.
const SORT_BUDGET: Duration = Duration::from_millis(5);

/// Most idle ticks spent sorting after one housekeeping (a second at [`SORT_BUDGET`]).
const SORT_TICKS: u32 = 200;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Detach from the terminal (`--daemon`).
    pub daemon: bool,
    /// The command line's overrides (`--log-*`, `--workers`), applied again at each
    /// reload.
    pub log: Overrides,
}

/// Runs the daemon until SIGTERM or SIGINT: the whole life of `ternd`.
pub fn run(
    config: Config,
    handler: Arc<EngineHandler>,
    db: Arc<ZoneDb>,
    log: &LogHandle,
    options: RunOptions,
) -> Result<()> {
    raise_open_files_limit();
    let listeners = Listeners::bind(&config)?;
    let mut readiness = if options.daemon { Some(daemon::daemonize()?) } else { None };
    let log = (log, options.log);
    let outcome = serve(config, listeners, handler, db, log, &mut readiness);
    if let (Err(e), Some(readiness)) = (&outcome, readiness.as_mut()) {
        readiness.failed(e);
    }
    outcome
}

/// Everything after binding (and detaching).
fn serve(
    config: Config,
    mut listeners: Listeners,
    handler: Arc<EngineHandler>,
    db: Arc<ZoneDb>,
    (log, log_overrides): (&LogHandle, Overrides),
    readiness: &mut Option<Readiness>,
) -> Result<()> {
    let started = Instant::now();
    let pid_file = config.server.pid_file.as_deref().map(PidFile::create).transpose()?;
    let user = config.server.user.as_deref();
    let ids = user.map(|u| privileges::resolve(u, config.server.group.as_deref())).transpose()?;
    let control_socket = ctl_listen::bind(&config.control, ids)?;
    if let (Some(ids), Some(_)) = (ids, &config.path) {
        privileges::make_dir_for(&config.server.storage, ids)?;
    }
    if let (Some(user), Some(ids)) = (user, ids) {
        privileges::drop_to(ids)?;
        info!(user = %user, uid = ids.uid, gid = ids.gid, "privileges dropped");
    }
    let signals = SignalSet::block()?;
    let addrs: Vec<String> = listeners.addrs().iter().map(ToString::to_string).collect();
    let _storage_lock = match config.path {
        Some(_) => Some(plane::prepare_storage(&config.server.storage)?),
        None => None,
    };
    handler.send_late_answers(Arc::new(listeners.replier()?));
    let http = listeners.take_http();
    // Read before any zone loads, so that a bad token fails the start at once.
    let api_token = api_token(http.is_some(), &config)?;
    let (main, requests) = std::sync::mpsc::channel();
    let control = Plane::start(&config, Arc::clone(&db), Arc::clone(&handler), main.clone())?;
    // Every configured zone is known (SERVFAIL until loaded, never REFUSED) before the
    // listeners start; the zones then load while the listeners run, each answering as
    // soon as it is loaded, so one big zone does not hold up the others.
    let loading = control.apply(&config);
    // A thread: after the fork and the signal mask, as every other.
    handler.start_reports();
    let running = server::start(&config, listeners, Arc::clone(&handler))?;
    let steering_main = main.clone();
    let context = Arc::new(Context {
        zones: control.zones(),
        main,
        stats: running.shared_stats(),
        started,
        config: config.path.clone(),
        xdp: running.has_xdp(),
        backup_dir: config.backup_dir(),
    });
    let sources = (&running, &control, Arc::clone(&context));
    let http_server = match start_http(http, api_token, &config, sources, handler, db) {
        Ok(server) => server,
        Err(e) => {
            stop(running, control);
            return Err(e);
        }
    };
    added::log_torn(&config);
    info!(
        listen = %addrs.join(" "),
        udp_workers = config.udp_workers(),
        tcp_workers = config.tcp_workers(),
        "serving"
    );
    if !running.tls_addrs().is_empty() {
        let dot: Vec<String> = running.tls_addrs().iter().map(ToString::to_string).collect();
        info!(listen = %dot.join(" "), "serving DNS over TLS");
    }
    let Some(loading) = first_loads(loading, &signals, log) else {
        stop(running, control);
        drop(pid_file);
        return Ok(());
    };
    if let Err(e) = check_start(&config, &loading) {
        stop(running, control);
        return Err(e);
    }
    if let Some(readiness) = readiness {
        let failed = loading.failures();
        let warnings: Vec<String> = failed
            .iter()
            .map(|(zone, why)| format!("zone {zone} not served: {why} (the others serve)"))
            .collect();
        readiness.ready(&warnings);
    }
    let serving = match control_socket.map(|b| b.serve(&control.handle(), context)).transpose() {
        Ok(serving) => serving,
        Err(e) => {
            stop(running, control);
            return Err(e);
        }
    };
    let notifier = systemd::Notifier::from_env().map(Arc::new);
    let _watchdog = notifier.as_ref().and_then(|n| watchdog(n, &running, &control));
    if let Some(n) = &notifier {
        n.notify(&format!("READY=1\nSTATUS=serving {} zones", loading.report().zones));
    }
    drop(loading); // an outcome per zone: not kept while serving
                   // On a thread of its own: at a million zones the trim and huge-page collapse take
                   // seconds, during which the control socket's first commands would wait.
    let tidy = std::thread::Builder::new().name("ternd-tidy".into());
    if tidy.spawn(reload::housekeeping).is_err() {
        tern_zone::memory::after_load(); // at the main thread's priority
    }
    // Built meanwhile, so that the first zone-add or zone-remove does not build it.
    let mut index = added::IndexSlot::default();
    index.build(&config);
    let mut steering = Steering {
        config,
        main: steering_main,
        control: &control,
        running: &running,
        notifier: notifier.clone(),
        log,
        log_overrides,
        http: http_server.as_ref(),
        consumed: catalogs::Consumed::default(),
        index,
        changed: reload::Zones::default(),
        checking: added::Checking::default(),
        sorted_after: 0,
        sort_ticks: 0,
    };
    steering.run(&signals, &requests);
    if let Some(n) = &notifier {
        n.notify("STOPPING=1");
    }
    drop(serving);
    drop(http_server);
    stop(running, control);
    drop(pid_file);
    Ok(())
}

/// Loads each of `files` (a new zone and its file) once, as a check: why each one that
/// would not load fails.
fn check_zone_files(files: &[(tern_wire::Name, std::path::PathBuf)]) -> Vec<String> {
    files
        .iter()
        .filter_map(|(zone, file)| {
            let loaded = tern_zone::load_file(file, zone, &Default::default(), &mut |_| {});
            loaded.err().map(|e| format!("zone {zone}: {e}"))
        })
        .collect()
}

/// The answer to a zone-add of which a zone would not load (`failures`).
fn not_added(failures: &[String]) -> Reply {
    Reply::error(format!("nothing added, as a zone would not load:\n{}", failures.join("\n")))
}

/// The main thread once serving: it owns the configuration, and changes it on SIGHUP
/// and on the control socket's requests.
struct Steering<'a> {
    config: Config,
    /// Its own requests' way in, for work done off this thread (a zone-add's checks).
    main: std::sync::mpsc::Sender<MainRequest>,
    control: &'a Plane,
    /// The data plane's sockets and workers (a reload changes TCP's settings).
    running: &'a RunningServer,
    notifier: Option<Arc<systemd::Notifier>>,
    log: &'a LogHandle,
    /// `--log-level`, `--log-format`, `--log-file`, `--workers`: they win over a reloaded
    /// configuration.
    log_overrides: Overrides,
    /// The HTTP server, whose settings a reload changes.
    http: Option<&'a live::Http>,
    /// Consumed catalogs' members.
    consumed: catalogs::Consumed,
    /// The zones served and their files, for zone-add and zone-remove: built on a thread
    /// of its own once a configuration is taken, kept in step by them.
    index: added::IndexSlot,
    /// Zones added and removed since the last memory housekeeping.
    changed: reload::Zones,
    /// Zone-adds whose files are being checked, as prepared.
    checking: added::Checking,
    /// The memory housekeeping after which this thread's freed heap was last sorted
    /// ([`Steering::sort_freed`]), and the ticks spent sorting since.
    sorted_after: u64,
    sort_ticks: u32,
}

impl Steering<'_> {
    /// Takes signals and requests until told to stop.
    fn run(&mut self, signals: &SignalSet, requests: &std::sync::mpsc::Receiver<MainRequest>) {
        loop {
            match signals.wait_for(SIGNAL_POLL) {
                Some(Signal::Stop) => return,
                Some(Signal::Reload) => {
                    info!("SIGHUP: reloading");
                    self.reload(None);
                }
                Some(Signal::ReopenLog) => drop(reopen_log(self.log, "SIGUSR1")),
                None => self.sort_freed(),
            }
            while let Ok(request) = requests.try_recv() {
                if self.take(request) {
                    return;
                }
            }
        }
    }

    /// On an idle tick after a memory housekeeping (the start's, a reload's): has malloc
    /// sort what this thread's heap freed, a few milliseconds a tick, so that the next
    /// changes do not (`tern_zone::memory::sort_freed`). After the housekeeping, whose
    /// trim merges the freed blocks at the lowest priority: sorted before it, the first
    /// step merged them on this thread (660 ms at a million zones).
    ///
    /// Gives up after [`SORT_TICKS`] ticks (a second of this thread's time), should the
    /// steps never come back quick (a machine so loaded that every step is preempted).
    fn sort_freed(&mut self) {
        let housekeeping = tern_zone::memory::housekeeping_done();
        if self.sorted_after == housekeeping {
            return;
        }
        self.sort_ticks += 1;
        let sorted = tern_zone::memory::sort_freed(SORT_BUDGET);
        if sorted || self.sort_ticks >= SORT_TICKS {
            debug!(
                sorted,
                ticks = self.sort_ticks,
                "freed heap sorted after the memory housekeeping"
            );
            self.sorted_after = housekeeping;
            self.sort_ticks = 0;
        }
    }

    /// Carries out one request; true when it asks to stop.
    fn take(&mut self, request: MainRequest) -> bool {
        match request {
            MainRequest::Stop { reply } => {
                info!("stop requested on the control socket");
                let _ = reply.send(Reply::done("stopping"));
                return true;
            }
            MainRequest::Reload { reply } => {
                info!("reload requested on the control socket");
                self.reload(Some(reply));
            }
            MainRequest::ZoneAdd { tables, reply } => self.zone_add(tables, reply),
            MainRequest::ZoneAddChecked { tables, ticket, failures, reply } => {
                self.zone_add_checked(&tables, ticket, &failures, reply);
            }
            MainRequest::ZoneRemove { zones, reply } => self.zone_remove(&zones, reply),
            MainRequest::ZonePurge { zones, reply } => drop(reply.send(self.zone_purge(&zones))),
            MainRequest::LogReopen { reply } => {
                let _ = reply.send(reopen_log(self.log, "on the control socket"));
            }
            MainRequest::Catalog { catalog, members } => self.catalog(&catalog, members),
        }
        false
    }

    /// Adds zones for good (see [`added`]), all or none: the new primary zones' files
    /// are loaded first, here when they are small ([`added::Prepared::checked_here`]),
    /// else on a thread of their own (this one keeps taking signals and requests), the
    /// add going on when they all load ([`Self::zone_add_checked`]).
    fn zone_add(&mut self, tables: Vec<String>, reply: tokio::sync::oneshot::Sender<Reply>) {
        let index = self.index.in_step(&self.config);
        let prepared = match added::prepare(&self.config, index, &tables) {
            Ok(prepared) => prepared,
            Err(why) => return drop(reply.send(Reply::error(why))),
        };
        let files = prepared.new_zone_files();
        if prepared.checked_here() {
            let failures = check_zone_files(&files);
            if !failures.is_empty() {
                return drop(reply.send(not_added(&failures)));
            }
            let change = added::commit(&mut self.config, index, prepared);
            return self.take_change(change, "zone-add", reply);
        }
        let ticket = self.checking.keep(prepared);
        let main = self.main.clone();
        let check = move || {
            let failures = check_zone_files(&files);
            let _ = main.send(MainRequest::ZoneAddChecked { tables, ticket, failures, reply });
            signals::wake();
        };
        if let Err(e) = std::thread::Builder::new().name("ternd-zone-add".into()).spawn(check) {
            self.checking.take(ticket);
            error!("zone-add: cannot start the thread that checks the zone files: {e}");
        }
    }

    /// A zone-add whose files were checked on a thread of their own: nothing is added
    /// when one failed; otherwise the zones are kept and applied as prepared (prepared
    /// again if the configuration changed meanwhile), told once they are loaded.
    fn zone_add_checked(
        &mut self,
        tables: &[String],
        ticket: u64,
        failures: &[String],
        reply: tokio::sync::oneshot::Sender<Reply>,
    ) {
        let prepared = self.checking.take(ticket);
        if !failures.is_empty() {
            return drop(reply.send(not_added(failures)));
        }
        let index = self.index.in_step(&self.config);
        let change = match prepared {
            Some(prepared) => added::commit(&mut self.config, index, prepared),
            None => added::add(&mut self.config, index, tables),
        };
        self.take_change(change, "zone-add", reply);
    }

    /// Removes zones added at run time.
    fn zone_remove(&mut self, zones: &[String], reply: tokio::sync::oneshot::Sender<Reply>) {
        let index = self.index.in_step(&self.config);
        let change = added::remove(&mut self.config, index, zones);
        self.take_change(change, "zone-remove", reply);
    }

    /// Applies what zone-add or zone-remove changed.
    fn take_change(
        &mut self,
        change: std::result::Result<added::Change, String>,
        what: &'static str,
        reply: tokio::sync::oneshot::Sender<Reply>,
    ) {
        self.checking.changed();
        match change {
            Ok(added::Change::Zones(added, removed)) => {
                self.apply_change(&added, &removed, what, reply);
            }
            Ok(added::Change::Whole(next)) => {
                self.apply(*next, what, reply);
                self.index.build(&self.config);
            }
            Err(why) => drop(reply.send(Reply::error(why))),
        }
    }

    /// Deletes what storage keeps of zones no longer served (`ternctl zone-purge`): their
    /// journal, kept copy and timers. All or none: a zone still served is refused.
    fn zone_purge(&self, zones: &[String]) -> Reply {
        if self.config.path.is_none() {
            return Reply::error("no storage: the server runs without a configuration file");
        }
        let names: Result<Vec<tern_wire::Name>, String> =
            zones.iter().map(|z| crate::ctl::listen::parse_zone(z)).collect();
        let names = match names {
            Ok(names) => names,
            Err(why) => return Reply::error(why),
        };
        let served = self.control.zones().names();
        if let Some(zone) = names.iter().find(|n| served.contains(n)) {
            return Reply::error(format!(
                "zone {zone} is served: remove it from the configuration (or zone-remove it) first; nothing purged"
            ));
        }
        let storage = &self.config.server.storage;
        let lines: Vec<String> = names
            .iter()
            .map(|zone| match catalogs::purge(storage, zone).as_slice() {
                [] => format!("{zone}: nothing kept in {}", storage.display()),
                removed => {
                    let files: Vec<String> =
                        removed.iter().map(|p| p.display().to_string()).collect();
                    format!("{zone}: removed {}", files.join(", "))
                }
            })
            .collect();
        info!(zones = zones.len(), "zone-purge done");
        Reply::done(lines.join("\n"))
    }

    /// Applies `next` as a reload does, telling `reply` once the loads are done.
    fn apply(
        &mut self,
        next: Config,
        what: &'static str,
        reply: tokio::sync::oneshot::Sender<Reply>,
    ) {
        info!("{what}: applying the zone set");
        let members = self.consumed.plans(&next, &[]);
        let loading = self.control.apply_with(&next, &members, false);
        self.serve_when_loaded(next, loading, what, reply);
    }

    /// Applies the configuration served, which was changed in place by the zones `added`
    /// and `removed` only: those change, the others are untouched ([`Plane::change`]),
    /// so the cost follows the change, not the zones served. `reply` is told once the
    /// new zones are loaded.
    fn apply_change(
        &mut self,
        added: &[Arc<tern_control::plan::ZonePlan>],
        removed: &[tern_wire::Name],
        what: &'static str,
        reply: tokio::sync::oneshot::Sender<Reply>,
    ) {
        info!(added = added.len(), removed = removed.len(), "{what}: changing the zone set");
        let loading = self.control.change(&self.config, added, removed);
        let tidy = self.changed.changed(added.len() + removed.len());
        let said = (what, reload::Said::default(), tidy);
        let level = self.config.log.level;
        reload::log_when_done(loading, said, self.log.clone(), level, Some(reply));
    }

    /// Takes `next` as the configuration served, and tells `reply` (and the log) once
    /// `loading` is done.
    fn serve_when_loaded(
        &mut self,
        next: Config,
        loading: Loading,
        what: &'static str,
        reply: tokio::sync::oneshot::Sender<Reply>,
    ) {
        let said = (what, reload::Said::default(), reload::Tidy::After);
        reload::log_when_done(loading, said, self.log.clone(), next.log.level, Some(reply));
        self.config = next;
    }

    /// A consumed catalog changed: members added, removed or reset (see [`catalogs`]).
    /// Only those members are stopped and started ([`Plane::change`]): the other zones
    /// served, and the other members, are not touched.
    fn catalog(&mut self, catalog: &tern_wire::Name, members: BTreeMap<tern_wire::Name, Listed>) {
        let changed = self.consumed.update(catalog, members, &self.config);
        if !changed.purge.is_empty() {
            // Stopped first, then their files go, then the reset ones start afresh.
            drop(self.control.change(&self.config, &[], &changed.purge));
            if self.config.path.is_some() {
                for zone in &changed.purge {
                    catalogs::purge(&self.config.server.storage, zone);
                }
            }
        }
        if changed.start.is_empty() {
            return;
        }
        let started = self.consumed.plans_of(&self.config, &changed.start);
        let loading = self.control.change(&self.config, &started, &[]);
        let level = self.config.log.level;
        reload::log_when_done(
            loading,
            ("catalog change", reload::Said::default(), reload::Tidy::After),
            self.log.clone(),
            level,
            None,
        );
    }

    /// Re-reads and applies the configuration; `reply` is told once the loads are done.
    fn reload(&mut self, reply: Option<tokio::sync::oneshot::Sender<Reply>>) {
        self.checking.changed();
        if let Some(n) = &self.notifier {
            n.reloading();
        }
        let done = reload::reload(
            &self.config,
            (self.control, self.running),
            &self.log_overrides,
            &mut self.consumed,
        );
        match done {
            Ok((next, loading, notes)) => {
                let problems = live::apply(&next, self.log, self.http, self.running);
                let said = reload::Said { notes, problems };
                let level = next.log.level;
                let said = ("reload", said, reload::Tidy::After);
                reload::log_when_done(loading, said, self.log.clone(), level, reply);
                self.config = next;
                self.index.build(&self.config);
            }
            Err(e) => {
                if let Some(reply) = reply {
                    let _ = reply.send(Reply::error(format!("configuration not reloaded:\n{e}")));
                }
            }
        }
        if let Some(n) = &self.notifier {
            n.notify("READY=1");
        }
    }
}

/// Raises the soft limit on open files to the hard one, as Knot DNS and NSD do: TCP
/// clients, zone files being read and transfers all take descriptors.
fn raise_open_files_limit() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit with a valid rlimit on the stack.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                tracing::warn!(
                    "cannot raise the open files limit: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
    }
}

/// Serves HTTP on `listener` (when `[http] listen` gave one) on its own runtime, its
/// threads at the control plane's nice value, from the running server's counters. The
/// metrics and the API are there even when off, for a reload to turn them on.
fn start_http(
    listener: Option<std::net::TcpListener>,
    api_token: Option<String>,
    config: &Config,
    (running, _control, context): (&RunningServer, &Plane, Arc<Context>),
    handler: Arc<EngineHandler>,
    zones: Arc<ZoneDb>,
) -> Result<Option<live::Http>> {
    let Some(listener) = listener else { return Ok(None) };
    let api =
        ApiSettings { token: api_token.map(Arc::from), body_timeout: config.http.body_timeout };
    let api = Arc::new(Api::new(api, context, Arc::clone(&zones)));
    let metrics = Metrics::new(Sources {
        stats: running.shared_stats(),
        connections: running.connection_limits(),
        tls_connections: running.tls_connection_limits(),
        tls_serving: running.tls_serving(),
        handler,
        zones,
    });
    let state = Arc::new(HttpState {
        metrics: Some(metrics),
        metrics_on: config.http.metrics.into(),
        api: Some(api),
    });
    let base = crate::priority::thread_nice().unwrap_or(0);
    let nice = base + i32::try_from(config.server.control_nice).unwrap_or(0);
    let settings = crate::http::Settings::of(&config.http, Some(nice));
    let server = crate::http::spawn(listener, Arc::clone(&state), settings)?;
    Ok(Some(live::Http { server, state }))
}

/// The API's token, when the HTTP server listens and has one (`[http] api-token-file`).
fn api_token(listening: bool, config: &Config) -> Result<Option<String>> {
    let Some(file) = config.http.api_token_file.as_deref().filter(|_| listening) else {
        return Ok(None);
    };
    crate::http::api::read_token(file).map(Some).map_err(|e| Error::Config(e.to_string()))
}

/// Starts pinging systemd's watchdog when the unit asks for one (`WatchdogSec=`): while
/// the UDP workers beat and the control plane runs a task within half the period.
fn watchdog(
    notifier: &Arc<systemd::Notifier>,
    running: &RunningServer,
    control: &Plane,
) -> Option<systemd::Watchdog> {
    let period = systemd::watchdog_period()?;
    let handle = control.handle();
    let control_alive = move |within: Duration| {
        let (tx, rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            let _ = tx.send(());
        });
        rx.recv_timeout(within).is_ok()
    };
    let stats = running.shared_stats();
    match systemd::Watchdog::start(Arc::clone(notifier), period, stats, control_alive) {
        Ok(watchdog) => {
            info!(period_ms = period.as_millis() as u64, "systemd watchdog on");
            Some(watchdog)
        }
        Err(e) => {
            error!("the systemd watchdog cannot start: {e}");
            None
        }
    }
}

/// Waits for the zones' first loads, taking signals meanwhile; `None` when asked to stop.
fn first_loads(mut loading: Loading, signals: &SignalSet, log: &LogHandle) -> Option<Loading> {
    let started = Instant::now();
    while !loading.wait(SIGNAL_POLL) {
        match signals.wait_for(Duration::ZERO) {
            Some(Signal::Stop) => return None,
            Some(Signal::Reload) => {
                info!("SIGHUP while the zones load: ignored (send it again once they are loaded)")
            }
            Some(Signal::ReopenLog) => drop(reopen_log(log, "SIGUSR1")),
            None => {}
        }
    }
    reload::log_report(&loading, "load", started.elapsed());
    Some(loading)
}

/// Reopens the log file (`why` asked for it), logging the outcome in the file it now
/// writes to; the reply for `ternctl log-reopen`.
fn reopen_log(log: &LogHandle, why: &str) -> Reply {
    match log.reopen() {
        Ok(Some(path)) => {
            info!(file = %path.display(), "log file reopened ({why})");
            Reply::done(format!("log file {} reopened", path.display()))
        }
        Ok(None) => {
            info!("log reopen asked ({why}): no [log] file is set, nothing to reopen");
            Reply::done("no [log] file is set: nothing to reopen")
        }
        Err(e) => {
            error!("log reopen ({why}) failed, lines go on to the file open before: {e}");
            Reply::error(format!("log file not reopened: {e}"))
        }
    }
}

/// A start-up fails when every zone failed to load, or any did with `strict-start`;
/// otherwise the others are served, as Knot DNS and NSD do.
fn check_start(config: &Config, loading: &Loading) -> Result<()> {
    let report = loading.report();
    let all_failed = report.failed > 0 && report.failed == report.zones;
    if all_failed || (config.server.strict_start && report.failed > 0) {
        let failures: Vec<String> = loading
            .failures()
            .iter()
            .map(|(zone, why)| format!("zone {zone} not loaded: {why}"))
            .collect();
        let which = if all_failed { "no zone loaded" } else { "strict-start, and a zone failed" };
        return Err(Error::Start(format!("{which}: {}", failures.join("; "))));
    }
    Ok(())
}

/// Stops the workers (answering what has arrived) and the control plane.
fn stop(running: RunningServer, control: Plane) {
    info!("stopping: no new connections, answering what has arrived");
    control.shutdown();
    let report = running.shutdown();
    for (transport, cut) in
        [("tcp", report.tcp_cut), ("tls", report.tls_cut), ("quic", report.quic_cut)]
    {
        if cut > 0 {
            error!(transport, connections = cut, "connections cut at the end of the drain");
        }
    }
    let stats = report.stats;
    info!(
        udp_queries = stats.udp_received,
        udp_answers = stats.udp_sent,
        xdp_queries = stats.xdp_received,
        xdp_answers = stats.xdp_sent,
        tcp_connections = stats.tcp_accepted,
        tcp_queries = stats.tcp_queries,
        "stopped"
    );
}
