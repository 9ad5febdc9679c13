//! Putting the data plane together: bind every socket (before privileges are dropped;
//! the HTTP listener's too), set up the AF_XDP path when configured, start the UDP and
//! XDP worker threads and the TCP runtime (which also serves DNS over TLS and over
//! QUIC), and stop them again with a drain.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;

use tokio::runtime::Runtime;
use tokio::sync::{mpsc, watch};
use tracing::{error, info};

use crate::config::{Config, QuicConfig, TcpConfig, TlsConfig};
use crate::error::{Error, Result};
use crate::handler::{Handler, Transport};
use crate::io::quic::{self, QuicSettings};
use crate::io::tcp::{self, ConnectionLimits, Shared, TcpSettings};
use crate::io::tls::{self, TlsServing, TlsSettings};
use crate::io::udp::{self, UdpEndpoint, Worker};
use crate::io::xdp::{self, XdpListeners};
use crate::stats::{Stats, StatsSnapshot};

/// Most listen addresses (each UDP worker polls one socket per address).
pub const MAX_LISTEN: usize = udp::MAX_SOCKETS;

/// Every socket the server will use, bound and ready.
#[derive(Debug)]
pub struct Listeners {
    /// Per UDP worker, one socket per listen address.
    udp: Vec<Vec<UdpEndpoint>>,
    tcp: Vec<StdListener>,
    addrs: Vec<SocketAddr>,
    /// The AF_XDP sockets and program, when `[xdp]` names an interface and it worked.
    xdp: Option<XdpListeners>,
    /// The HTTP listener (`[http] listen`), until taken.
    http: Option<StdListener>,
    /// DNS over TLS: the listeners (`[tls] listen`) and what connections take.
    tls: Option<TlsListeners>,
    /// The DNS over QUIC sockets (`[quic] listen`).
    quic: Vec<std::net::UdpSocket>,
}

/// The DoT listeners, their addresses (ports resolved) and the TLS settings.
#[derive(Debug)]
struct TlsListeners {
    listeners: Vec<StdListener>,
    addrs: Vec<SocketAddr>,
    settings: TlsSettings,
}

impl Listeners {
    /// Binds UDP (one socket per worker and address) and TCP on every listen address. A
    /// port of 0 is resolved by the first UDP socket and reused for the rest and TCP
    /// (another one is chosen when that port is taken for them: `bind_address`).
    pub fn bind(config: &Config) -> Result<Listeners> {
        let listen = &config.server.listen;
        if listen.is_empty() || listen.len() > MAX_LISTEN {
            return Err(Error::Config(format!("listen: give 1 to {MAX_LISTEN} addresses")));
        }
        let workers = config.udp_workers();
        let mut udp: Vec<Vec<UdpEndpoint>> = (0..workers).map(|_| Vec::new()).collect();
        let mut tcp = Vec::new();
        let mut addrs = Vec::new();
        for addr in listen {
            let (endpoints, listener, resolved) = bind_address(addr.0, workers, config)?;
            udp.iter_mut().zip(endpoints).for_each(|(sockets, e)| sockets.push(e));
            tcp.push(listener);
            addrs.push(resolved);
        }
        let xdp = open_xdp(config, &addrs);
        let http = config.http.listen.map(super::sockopt::tcp_listener).transpose()?;
        let tls = bind_tls(config)?;
        let quic =
            config.quic.listen.iter().map(|addr| quic::bind(*addr)).collect::<Result<_>>()?;
        Ok(Listeners { udp, tcp, addrs, xdp, http, tls, quic })
    }

    /// The DoT addresses, ports resolved (empty without `[tls] listen`).
    pub fn tls_addrs(&self) -> &[SocketAddr] {
        self.tls.as_ref().map_or(&[], |t| t.addrs.as_slice())
    }

    /// Takes the HTTP listener, when `[http] listen` asked for one.
    pub fn take_http(&mut self) -> Option<StdListener> {
        self.http.take()
    }

    /// Duplicates of one worker's UDP sockets, to send late answers from (updates).
    pub fn replier(&self) -> Result<udp::reply::Replier> {
        let endpoints = self.udp.first().map_or(&[][..], Vec::as_slice);
        udp::reply::Replier::new(endpoints)
            .map_err(|source| Error::Os { doing: "duplicating the UDP sockets", source })
    }

    /// The bound addresses, ports resolved.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Whether the AF_XDP path is set up.
    pub fn has_xdp(&self) -> bool {
        self.xdp.is_some()
    }
}

/// Times a port of 0 is chosen again when the port the kernel gave the first UDP socket
/// is taken for the others or for TCP.
const PORT_ZERO_TRIES: usize = 8;

/// One listen address: a UDP socket per worker, then TCP on the same port. With port 0
/// the first UDP socket picks the port, and the kernel picks it among the free UDP
/// ports only: a TCP socket (a client's, or one in TIME-WAIT) may hold it, so the
/// address is bound again on a new port, a few times, before giving up.
fn bind_address(
    addr: SocketAddr,
    workers: usize,
    config: &Config,
) -> Result<(Vec<UdpEndpoint>, StdListener, SocketAddr)> {
    let mut tries = 0;
    loop {
        let attempt = || -> Result<(Vec<UdpEndpoint>, StdListener, SocketAddr)> {
            let (mut endpoints, mut resolved) = (Vec::with_capacity(workers), addr);
            for _ in 0..workers {
                let endpoint = udp::socket::bind(resolved, udp::WAKE)?;
                resolved = endpoint.local;
                endpoints.push(endpoint);
            }
            Ok((endpoints, tcp::bind(resolved, config.tcp.defer_accept)?, resolved))
        };
        match attempt() {
            Err(Error::Bind { source, .. })
                if addr.port() == 0
                    && source.kind() == std::io::ErrorKind::AddrInUse
                    && tries + 1 < PORT_ZERO_TRIES =>
            {
                tries += 1
            }
            done => return done,
        }
    }
}

/// Binds the DoT listeners and reads the certificate and key (before privileges are
/// dropped, like the sockets), when `[tls] listen` asks for them.
fn bind_tls(config: &Config) -> Result<Option<TlsListeners>> {
    if config.tls.listen.is_empty() {
        return Ok(None);
    }
    let settings = tls_settings(config)?;
    let mut listeners = Vec::new();
    let mut addrs = Vec::new();
    for &addr in &config.tls.listen {
        let listener = tcp::bind(addr, config.tcp.defer_accept)?;
        let local = listener.local_addr().map_err(|source| Error::Bind { addr, source })?;
        listeners.push(listener);
        addrs.push(local);
    }
    Ok(Some(TlsListeners { listeners, addrs, settings }))
}

/// What new DoT connections take under `config`: the certificate and key read again.
pub fn tls_settings(config: &Config) -> Result<TlsSettings> {
    let client_certs = wants_client_certs(config);
    let Some(files) = config.tls.server_tls() else {
        return Err(Error::Tls("[tls]: `certificate` and `key` are needed".into()));
    };
    let served = crate::tls::server_config(&files, crate::tls::ALPN_DOT, client_certs)?;
    Ok(TlsSettings {
        config: Arc::new(served.config),
        client_ca: served.client_ca,
        handshake_timeout: config.tls.handshake_timeout,
        expires: served.expires,
    })
}

/// Whether an `[[acl]]` rule names client certificates (`cert-key`, `client-cert`), so
/// that DoT and DoQ ask clients for theirs.
fn wants_client_certs(config: &Config) -> bool {
    config.tables.acls.iter().any(|a| {
        let acl = a.get_ref();
        !acl.cert_key.is_empty() || acl.client_cert
    })
}

/// Sets up the AF_XDP path when configured. A failure is logged and the socket path
/// serves alone: XDP is an accelerator, not a requirement.
fn open_xdp(config: &Config, addrs: &[SocketAddr]) -> Option<XdpListeners> {
    let interface = config.xdp.interface.as_deref()?;
    match XdpListeners::open(&config.xdp, addrs) {
        Ok(xdp) => {
            let zero_copy = xdp.sockets.iter().filter(|s| s.zero_copy).count();
            info!(
                interface,
                mode = %xdp.attachment.mode,
                queues = xdp.sockets.len(),
                zero_copy_queues = zero_copy,
                mtu = xdp.mtu,
                "XDP attached: UDP to the listen addresses is served through AF_XDP"
            );
            Some(xdp)
        }
        Err(e) => {
            error!("{e}; UDP is served through the sockets");
            None
        }
    }
}

/// A running server; dropping it stops it (see [`RunningServer::shutdown`]).
#[derive(Debug)]
pub struct RunningServer {
    addrs: Vec<SocketAddr>,
    stop: Arc<AtomicBool>,
    udp_threads: Vec<JoinHandle<()>>,
    runtime: Option<Runtime>,
    stopping: watch::Sender<bool>,
    alive: mpsc::Receiver<()>,
    limits: Arc<ConnectionLimits>,
    /// What new TCP connections take (a reload may change it).
    tcp_settings: Arc<ArcSwap<TcpSettings>>,
    stats: Arc<Stats>,
    drain_timeout: Duration,
    /// The attached XDP program, detached (dropped) once the workers are stopped.
    xdp: Option<xdp::Attachment>,
    /// DoT: its addresses, connection limits and settings, when it listens.
    tls: Option<TlsRunning>,
    /// The DNS over QUIC addresses, ports resolved, and its connections.
    quic: QuicStarted,
}

/// The DoT side of a running server.
#[derive(Debug)]
struct TlsRunning {
    addrs: Vec<SocketAddr>,
    limits: Arc<ConnectionLimits>,
    serving: TlsServing,
}

/// Starts the UDP workers and the TCP runtime on `listeners`, answering with `handler`.
pub fn start<H: Handler>(
    config: &Config,
    listeners: Listeners,
    handler: Arc<H>,
) -> Result<RunningServer> {
    let stats = Arc::new(Stats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (stopping, stopping_rx) = watch::channel(false);
    let (alive_tx, alive) = mpsc::channel(1);
    let tcp =
        start_tcp(config, listeners.tcp, Arc::clone(&handler), &stats, &stopping_rx, &alive_tx)?;
    let quic = start_quic(
        config,
        listeners.quic,
        (&tcp.runtime, Arc::clone(&handler), &stats),
        (&stopping_rx, &alive_tx),
    )?;
    let mut server = RunningServer {
        addrs: listeners.addrs,
        stop,
        udp_threads: Vec::new(),
        runtime: Some(tcp.runtime),
        stopping,
        alive,
        limits: tcp.limits,
        tcp_settings: tcp.settings,
        stats,
        drain_timeout: config.tcp.io_timeout + Duration::from_secs(1),
        xdp: None,
        tls: None,
        quic,
    };
    if let Some(tls) = listeners.tls {
        server.tls = Some(start_tls(config, tls, &handler, &server, &stopping_rx, &alive_tx)?);
    }
    let max_response = usize::try_from(config.server.udp_payload_max).unwrap_or(1232);
    for (n, endpoints) in listeners.udp.into_iter().enumerate() {
        let worker = Worker {
            endpoints,
            handler: Arc::clone(&handler),
            max_response,
            stop: Arc::clone(&server.stop),
            stats: Arc::clone(&server.stats),
        };
        let thread =
            std::thread::Builder::new().name(format!("ternd-udp-{n}")).spawn(move || worker.run());
        // On failure, dropping `server` stops what was started.
        let thread =
            thread.map_err(|source| Error::Os { doing: "starting a UDP worker", source })?;
        server.udp_threads.push(thread);
    }
    if let Some(listeners) = listeners.xdp {
        start_xdp(&mut server, listeners, &handler, max_response)?;
    }
    Ok(server)
}

/// Starts one XDP worker per socket; their threads are joined with the UDP workers'.
fn start_xdp<H: Handler>(
    server: &mut RunningServer,
    listeners: XdpListeners,
    handler: &Arc<H>,
    max_response: usize,
) -> Result<()> {
    server.xdp = Some(listeners.attachment);
    for socket in listeners.sockets {
        let queue = socket.queue;
        let worker = xdp::Worker {
            socket,
            handler: Arc::clone(handler),
            max_response,
            mtu: listeners.mtu,
            stop: Arc::clone(&server.stop),
            stats: Arc::clone(&server.stats),
        };
        let thread = std::thread::Builder::new()
            .name(format!("ternd-xdp-{queue}"))
            .spawn(move || worker.run())
            .map_err(|source| Error::Os { doing: "starting an XDP worker", source })?;
        server.udp_threads.push(thread);
    }
    Ok(())
}

/// The TCP side once started.
struct TcpStarted {
    runtime: Runtime,
    limits: Arc<ConnectionLimits>,
    settings: Arc<ArcSwap<TcpSettings>>,
}

/// Builds the TCP runtime and spawns one accept loop per listener.
fn start_tcp<H: Handler>(
    config: &Config,
    listeners: Vec<StdListener>,
    handler: Arc<H>,
    stats: &Arc<Stats>,
    stopping: &watch::Receiver<bool>,
    alive: &mpsc::Sender<()>,
) -> Result<TcpStarted> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.tcp_workers())
        .thread_name("ternd-tcp")
        .enable_io()
        .enable_time()
        .build()
        .map_err(|source| Error::Os { doing: "starting the TCP runtime", source })?;
    let tcp = &config.tcp;
    let settings = Arc::new(ArcSwap::from_pointee(tcp_settings(tcp)));
    let shared = Arc::new(Shared {
        transport: Transport::Tcp,
        handler,
        settings: Arc::clone(&settings),
        stats: Arc::clone(stats),
    });
    let (max_total, max_per_client) = connection_caps(tcp);
    let limits = ConnectionLimits::new(max_total, max_per_client);
    for listener in listeners {
        let _guard = runtime.enter();
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|source| Error::Os { doing: "registering a TCP listener", source })?;
        let shared = Arc::clone(&shared);
        let task = tcp::accept_loop(
            listener,
            shared,
            Arc::clone(&limits),
            stopping.clone(),
            alive.clone(),
        );
        runtime.spawn(task);
    }
    Ok(TcpStarted { runtime, limits, settings })
}

/// Spawns one TLS accept loop per DoT listener on the TCP runtime, with connection
/// settings shared with TCP (a reload of `[tcp]` applies to both) and caps of its own.
fn start_tls<H: Handler>(
    config: &Config,
    tls: TlsListeners,
    handler: &Arc<H>,
    server: &RunningServer,
    stopping: &watch::Receiver<bool>,
    alive: &mpsc::Sender<()>,
) -> Result<TlsRunning> {
    let runtime = server.runtime.as_ref().ok_or(Error::Os {
        doing: "starting DNS over TLS",
        source: std::io::Error::other("no runtime"),
    })?;
    let shared = Arc::new(Shared {
        transport: Transport::Tls,
        handler: Arc::clone(handler),
        settings: Arc::clone(&server.tcp_settings),
        stats: Arc::clone(&server.stats),
    });
    let (max_total, max_per_client) = tls_caps(&config.tls);
    let limits = ConnectionLimits::new(max_total, max_per_client);
    let serving: TlsServing = Arc::new(ArcSwap::from_pointee(tls.settings));
    for listener in tls.listeners {
        let _guard = runtime.enter();
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|source| Error::Os { doing: "registering a TLS listener", source })?;
        runtime.spawn(tls::accept_loop(
            listener,
            Arc::clone(&shared),
            Arc::clone(&serving),
            Arc::clone(&limits),
            stopping.clone(),
            alive.clone(),
        ));
    }
    Ok(TlsRunning { addrs: tls.addrs, limits, serving })
}

/// The TLS connection caps `[tls]` gives: in all, and per client.
fn tls_caps(tls: &TlsConfig) -> (usize, usize) {
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    (count(tls.max_connections), count(tls.max_connections_per_client))
}

/// The DNS over QUIC side once started.
#[derive(Debug)]
struct QuicStarted {
    addrs: Vec<SocketAddr>,
    limits: Arc<ConnectionLimits>,
    /// The endpoints (handles), to give a reload's certificate to.
    endpoints: Vec<quinn::Endpoint>,
    /// `[quic]` as started (a reload's waits for a restart).
    config: QuicConfig,
    /// The client CA the connections check certificates against (a reload's taken).
    client_ca: Arc<arc_swap::ArcSwapOption<crate::tls::ClientCa>>,
}

/// Starts a quinn endpoint on each DoQ socket, on the TCP runtime, each with its accept
/// loop; the TLS material is read here (the caps and settings are `[quic]`'s).
fn start_quic<H: Handler>(
    config: &Config,
    sockets: Vec<std::net::UdpSocket>,
    (runtime, handler, stats): (&Runtime, Arc<H>, &Arc<Stats>),
    (stopping, alive): (&watch::Receiver<bool>, &mpsc::Sender<()>),
) -> Result<QuicStarted> {
    let quic = &config.quic;
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let client_ca = Arc::new(arc_swap::ArcSwapOption::empty());
    let limits =
        ConnectionLimits::new(count(quic.max_connections), count(quic.max_connections_per_client));
    let (mut addrs, mut endpoints) = (Vec::new(), Vec::new());
    if sockets.is_empty() {
        return Ok(QuicStarted { addrs, limits, endpoints, config: quic.clone(), client_ca });
    }
    let (server_config, ca) =
        quic::server_config(&config.tls, &config.quic, wants_client_certs(config))?;
    client_ca.store(ca.map(Arc::new));
    let shared = Arc::new(quic::Shared {
        handler,
        settings: QuicSettings::of(config),
        stats: Arc::clone(stats),
        limits: Arc::clone(&limits),
        handshakes: Arc::default(),
        client_ca: Arc::clone(&client_ca),
    });
    let _guard = runtime.enter();
    for socket in sockets {
        let endpoint = quic::endpoint(socket, server_config.clone())?;
        endpoints.push(endpoint.clone());
        addrs.push(
            endpoint
                .local_addr()
                .map_err(|source| Error::Os { doing: "reading a QUIC address", source })?,
        );
        runtime.spawn(quic::accept_loop(
            endpoint,
            Arc::clone(&shared),
            stopping.clone(),
            alive.clone(),
        ));
    }
    Ok(QuicStarted { addrs, limits, endpoints, config: quic.clone(), client_ca })
}

/// A connection's timeouts and query cap as `[tcp]` says.
fn tcp_settings(tcp: &TcpConfig) -> TcpSettings {
    TcpSettings {
        idle_timeout: tcp.idle_timeout,
        io_timeout: tcp.io_timeout,
        max_queries: tcp.max_queries_per_connection,
    }
}

/// The connection caps `[tcp]` gives: in all, and per client.
fn connection_caps(tcp: &TcpConfig) -> (usize, usize) {
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    (count(tcp.max_connections), count(tcp.max_connections_per_client))
}

/// What stopping found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// TCP connections still open when the drain timeout passed (closed hard).
    pub tcp_cut: usize,
    /// DNS over TLS connections still open then (handshakes included).
    pub tls_cut: usize,
    /// DNS over QUIC connections still open then (handshakes included).
    pub quic_cut: usize,
    /// The final counters.
    pub stats: StatsSnapshot,
}

impl RunningServer {
    /// The addresses served, ports resolved.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Whether the AF_XDP data plane is attached and its workers run.
    pub fn has_xdp(&self) -> bool {
        self.xdp.is_some()
    }

    /// The counters themselves, shared (the watchdog reads the workers' heartbeat).
    pub fn shared_stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    /// The counters as they are now.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// The TCP connection limits, which know the connections open.
    pub fn connection_limits(&self) -> Arc<ConnectionLimits> {
        Arc::clone(&self.limits)
    }

    /// Takes a reloaded `[tcp]`: connections accepted from now on have its timeouts
    /// and query cap, and are admitted under its caps (`defer-accept`, a socket option
    /// set at bind, waits for a restart).
    pub fn reconfigure_tcp(&self, tcp: &TcpConfig) {
        self.tcp_settings.store(Arc::new(tcp_settings(tcp)));
        let (max_total, max_per_client) = connection_caps(tcp);
        self.limits.set_caps(max_total, max_per_client);
    }

    /// TCP connections open now.
    pub fn tcp_connections(&self) -> usize {
        self.limits.open()
    }

    /// The DoT addresses, ports resolved (empty when DoT is off).
    pub fn tls_addrs(&self) -> &[SocketAddr] {
        self.tls.as_ref().map_or(&[], |t| t.addrs.as_slice())
    }

    /// The TLS connection limits, when DoT listens.
    pub fn tls_connection_limits(&self) -> Option<Arc<ConnectionLimits>> {
        self.tls.as_ref().map(|t| Arc::clone(&t.limits))
    }

    /// The DoT settings in force, shared (the metrics read the certificate's end).
    pub fn tls_serving(&self) -> Option<TlsServing> {
        self.tls.as_ref().map(|t| Arc::clone(&t.serving))
    }

    /// TLS connections open now (handshakes included).
    pub fn tls_connections(&self) -> usize {
        self.tls.as_ref().map_or(0, |t| t.limits.open())
    }

    /// Takes a reloaded `[tls]`, with the certificate and key read again into
    /// `settings`: connections accepted from now on get them, under the new caps.
    /// Nothing changes when DoT is off (`listen` waits for a restart).
    pub fn reconfigure_tls(&self, tls: &TlsConfig, settings: TlsSettings) {
        if let Some(running) = &self.tls {
            running.serving.store(Arc::new(settings));
            let (max_total, max_per_client) = tls_caps(tls);
            running.limits.set_caps(max_total, max_per_client);
        }
    }

    /// The DNS over QUIC addresses, ports resolved (none without `[quic] listen`).
    pub fn quic_addrs(&self) -> &[SocketAddr] {
        &self.quic.addrs
    }

    /// Reads a reloaded `[tls]`'s certificate and key again for DNS over QUIC, with
    /// `[quic]` as started: new connections get them, established ones keep theirs.
    /// Nothing changes when DoQ is off, or when they cannot be used (the error says why).
    pub fn reconfigure_quic(&self, config: &Config) -> Result<()> {
        if self.quic.endpoints.is_empty() {
            return Ok(());
        }
        let (server, ca) =
            quic::server_config(&config.tls, &self.quic.config, wants_client_certs(config))?;
        self.quic.client_ca.store(ca.map(Arc::new));
        for endpoint in &self.quic.endpoints {
            endpoint.set_server_config(Some(server.clone()));
        }
        Ok(())
    }

    /// DNS over QUIC connections open now (handshakes included).
    pub fn quic_connections(&self) -> usize {
        self.quic.limits.open()
    }

    /// Stops accepting, lets UDP workers answer what is queued and TCP connections
    /// answer what they have received (up to the I/O timeout plus a second), then stops.
    pub fn shutdown(mut self) -> ShutdownReport {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> ShutdownReport {
        let _ = self.stopping.send(true);
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.udp_threads.drain(..) {
            let _ = thread.join();
        }
        // Detached now: from here on the kernel answers what comes in (nothing listens).
        self.xdp = None;
        let (mut tcp_cut, mut tls_cut, mut quic_cut) = (0, 0, 0);
        if let Some(runtime) = self.runtime.take() {
            let alive = &mut self.alive;
            let drained = runtime.block_on(async {
                tokio::time::timeout(self.drain_timeout, alive.recv()).await.is_ok()
            });
            if !drained {
                tcp_cut = self.limits.open();
                tls_cut = self.tls_connections();
                quic_cut = self.quic_connections();
            }
            runtime.shutdown_timeout(Duration::from_millis(100));
        }
        ShutdownReport { tcp_cut, tls_cut, quic_cut, stats: self.stats.snapshot() }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if self.runtime.is_some() || !self.udp_threads.is_empty() {
            self.stop_and_join();
        }
    }
}
