//! The process lifecycle of `ternd`: bind, detach, write the PID file, drop privileges,
//! load zones, serve, and react to signals until asked to stop.
//!
//! Order matters: sockets are bound while still root (ports below 1024); the fork of
//! `--daemon` happens before any thread exists; privileges are dropped before zones
//! are read and before workers start. SIGHUP re-reads the configuration and runs the
//! reload hook while workers keep answering; SIGTERM/SIGINT stop accepting, drain, and
//! exit with status 0.

pub mod daemon;
pub mod pidfile;
pub mod privileges;
pub mod reload;
pub mod signals;

use std::sync::Arc;

use tracing::{error, info};

use crate::config::Config;
use crate::error::Result;
use crate::handler::Handler;
use crate::logging::LogHandle;
use crate::server::{self, Listeners};
use daemon::Readiness;
use pidfile::PidFile;
pub use reload::{Reload, ReloadReport};
use signals::{Signal, SignalSet};

/// How to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Detach from the terminal (`--daemon`).
    pub daemon: bool,
}

/// Runs the daemon until SIGTERM or SIGINT: the whole life of `ternd`.
pub fn run<H: Handler>(
    config: Config,
    handler: Arc<H>,
    hook: &dyn Reload,
    log: &LogHandle,
    options: RunOptions,
) -> Result<()> {
    let listeners = Listeners::bind(&config)?;
    let mut readiness = if options.daemon { Some(daemon::daemonize()?) } else { None };
    let outcome = serve(config, listeners, handler, hook, log, &mut readiness);
    if let (Err(e), Some(readiness)) = (&outcome, readiness.as_mut()) {
        readiness.failed(e);
    }
    outcome
}

/// Everything after binding (and detaching).
fn serve<H: Handler>(
    mut config: Config,
    listeners: Listeners,
    handler: Arc<H>,
    hook: &dyn Reload,
    log: &LogHandle,
    readiness: &mut Option<Readiness>,
) -> Result<()> {
    let pid_file = config.server.pid_file.as_deref().map(PidFile::create).transpose()?;
    if let Some(user) = &config.server.user {
        let ids = privileges::resolve(user, config.server.group.as_deref())?;
        privileges::drop_to(ids)?;
        info!(user = %user, uid = ids.uid, gid = ids.gid, "privileges dropped");
    }
    let signals = SignalSet::block()?;
    let addrs: Vec<String> = listeners.addrs().iter().map(ToString::to_string).collect();
    hook.prepare(&config);
    let running = server::start(&config, listeners, handler)?;
    info!(
        listen = %addrs.join(" "),
        udp_workers = config.udp_workers(),
        tcp_workers = config.tcp_workers(),
        "serving"
    );
    // Zones load while the listeners run: each zone answers as soon as it is loaded
    // (SERVFAIL before, as `prepare` made every configured zone known), so one big zone
    // does not hold up the others.
    let _ = reload::run_and_log(hook, &config, "load");
    if let Some(readiness) = readiness {
        readiness.ready();
    }
    while signals.wait() == Signal::Reload {
        info!("SIGHUP: reloading");
        if let Ok(next) = reload::reload(&config, hook) {
            log.set_level(next.log.level);
            config = next;
        }
    }
    info!("stopping: no new connections, answering what has arrived");
    let report = running.shutdown();
    if report.tcp_cut > 0 {
        error!(connections = report.tcp_cut, "TCP connections cut at the end of the drain");
    }
    let stats = report.stats;
    info!(
        udp_queries = stats.udp_received,
        udp_answers = stats.udp_sent,
        tcp_connections = stats.tcp_accepted,
        tcp_queries = stats.tcp_queries,
        "stopped"
    );
    drop(pid_file);
    Ok(())
}
