//! The control plane ([`tern_control`]) as the server runs it: started with the server's
//! sockets ([`Sockets`]), the machine's clock, its threads' priority and a way to report
//! consumed catalogs to the main thread; wired to the data plane (NOTIFYs and updates
//! it accepts); and applied from the configuration, the engine's access rules swapped
//! in before the zones load.

use std::sync::Arc;

use tern_control::clock::SystemClock;
use tern_control::peer::Limits;
use tern_control::plan::ZonePlan;
use tern_control::{CatalogSink, Control, Loading, Options, Zones};
use tern_engine::{Access, ZoneAccess};
use tern_wire::Name;
use tracing::warn;

use crate::client::Sockets;
use crate::config::Config;
use crate::ctl::MainRequest;
use crate::dns::EngineHandler;
use crate::error::{Error, Result};

/// The control plane and the handler whose access rules it keeps in step.
#[derive(Debug)]
pub struct Plane {
    control: Control,
    handler: Arc<EngineHandler>,
    /// The followers of the databases zones are read from.
    followers: tern_control::database_follow::Followers,
}

impl Plane {
    /// Starts the control plane for `config`, takes the NOTIFYs and updates `handler`
    /// accepts, and reports consumed catalogs' members to `main`.
    pub fn start(
        config: &Config,
        db: Arc<tern_zone::ZoneDb>,
        handler: Arc<EngineHandler>,
        main: std::sync::mpsc::Sender<MainRequest>,
    ) -> Result<Plane> {
        // A catalog that cannot be read is logged by its writer, and changes nothing.
        let catalogs_listed = CatalogSink(Arc::new(move |catalog, members| {
            if let Ok(members) = members {
                let _ = main.send(MainRequest::Catalog { catalog, members });
                crate::signals::wake();
            }
        }));
        let control = Control::start(Options {
            db,
            max_incoming: usize::try_from(config.transfer.max_incoming).unwrap_or(usize::MAX),
            limits: limits(config),
            storage: config.path.as_ref().map(|_| config.server.storage.clone()),
            network: Arc::new(Sockets),
            clock: Arc::new(SystemClock),
            catalogs_listed: Some(catalogs_listed),
            on_thread_start: thread_start(config),
            query_stats_rows: config.query_stats_rows(),
        })
        .map_err(|e| Error::Config(e.to_string()))?;
        handler.forward_notices(control.notices());
        handler.forward_updates(control.update_sink());
        Ok(Plane { control, handler, followers: Default::default() })
    }

    /// Brings the served zones in line with `config`, every zone reloaded.
    pub fn apply(&self, config: &Config) -> Loading {
        self.apply_with(config, &[], true)
    }

    /// [`apply`](Self::apply) with `extra` zones beside the configuration's (consumed
    /// catalogs' members); without `reload`, only new zones and produced catalogs load.
    pub fn apply_with(&self, config: &Config, extra: &[Arc<ZonePlan>], reload: bool) -> Loading {
        let plans: Vec<Arc<ZonePlan>> =
            config.resolved.zones.iter().chain(extra).cloned().collect();
        self.handler.set_access(access(config, &plans));
        let loading = self.control.apply(&plans, limits(config), reload);
        self.followers.follow(&plans, &self.control.zones(), &self.control.handle());
        loading
    }

    /// Adds the zones of `added` (their plans, resolved in `config`) and stops serving
    /// `removed`, the other zones untouched: the access rules and the control plane
    /// change by these zones only ([`Control::change`]), so the cost follows the change.
    pub fn change(&self, config: &Config, added: &[Arc<ZonePlan>], removed: &[Name]) -> Loading {
        let mut access = Access::clone(&self.handler.access());
        for name in removed {
            access.zones.remove(name);
        }
        for plan in added {
            admit(&mut access, plan);
        }
        self.handler.set_access(access);
        self.control.change(added, removed, limits(config))
    }

    /// Applies what a reload changed of `old` in `new` beyond zones, keys and rules:
    /// the data plane's live settings ([`EngineHandler::reconfigure`]) and the transfer
    /// limits.
    pub fn reconfigure(&self, old: &Config, new: &Config) {
        self.handler.reconfigure(old, new);
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let (a, b) = (&old.transfer, &new.transfer);
        self.control.resize_incoming(count(a.max_incoming), count(b.max_incoming));
        let runtime = self.handle();
        self.handler.resize_outgoing(count(a.max_outgoing), count(b.max_outgoing), &runtime);
    }

    /// The zones' writers, for the control socket and the API.
    pub fn zones(&self) -> Zones {
        self.control.zones()
    }

    /// The control plane's runtime.
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.control.handle()
    }

    /// Stops every writer and the runtime.
    pub fn shutdown(self) {
        self.control.shutdown();
    }
}

/// What each of the control plane's threads does first: take the nice value
/// `control-nice` above the one the server was started with (`tern_control::priority`).
fn thread_start(config: &Config) -> Arc<dyn Fn() + Send + Sync> {
    // A thread started by one of the runtime's own threads already has it: it is set,
    // not added to.
    let base = tern_control::priority::thread_nice().unwrap_or(0);
    let nice = base + i32::try_from(config.server.control_nice).unwrap_or(0);
    Arc::new(move || {
        if let Err(e) = tern_control::priority::set_thread_nice(nice) {
            warn!("a control plane thread keeps its priority: {e}");
        }
    })
}

/// The engine's keys and rules from the configuration and the zones' plans.
fn access(config: &Config, plans: &[Arc<ZonePlan>]) -> Access {
    let mut access = Access { keys: config.resolved.keys.clone(), ..Access::default() };
    for plan in plans {
        admit(&mut access, plan);
    }
    access
}

/// Enters `plan`'s zone in the access rules. A zone without rules has no entry: that
/// allows nothing, as its empty list would, and a server of many zones that allow
/// nothing (transfers, NOTIFY and UPDATE are denied until configured) keeps no entry
/// for them.
fn admit(access: &mut Access, plan: &ZonePlan) {
    if !plan.rules.is_empty() {
        access.zones.insert((plan.name.clone(), ZoneAccess { rules: plan.rules.clone() }));
    }
}

/// Timeouts and sizes for talking to remotes (`[transfer]`).
fn limits(config: &Config) -> Limits {
    let transfer = &config.transfer;
    Limits {
        timeout: transfer.timeout,
        max_size: transfer.max_zone_size,
        max_time: transfer.max_time_in,
        idle: transfer.idle_in(),
    }
}

/// Creates the storage directory and takes its lock for the server's life (one server
/// per storage directory: two would append to the same journals). A directory that
/// cannot be made, written or locked stops the start, as one another server holds
/// does: a server without its lock could no longer keep a second one out, nor journal
/// a change.
pub fn prepare_storage(path: &std::path::Path) -> Result<std::fs::File> {
    tern_journal::lock_dir(path).map_err(|e| match e {
        tern_journal::Error::Busy(_) => Error::Config(format!(
            "{}: the storage directory is in use by another ternd (set another `[server] storage`)",
            path.display()
        )),
        e => Error::Config(format!(
            "cannot use the storage directory ({e}): the server's user must be able to create and write it (`[server] storage`, and `user`)"
        )),
    })
}
