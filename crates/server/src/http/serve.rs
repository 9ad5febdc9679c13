//! Serving the router over HTTP/1.1 on the HTTP server's own runtime: two threads of
//! its own (and a small blocking pool for parsing large bodies), never the control
//! plane's — a zone's writer busy with a large change, or every control thread taken,
//! does not stop `/metrics` or the API — and never a UDP worker or the TCP runtime.
//!
//! Each accepted connection is first admitted under the connection caps
//! ([`super::limits`]): over them it is closed at once (and the refusal logged at a
//! bounded rate). An admitted one is served by hyper with `[http] header-timeout`: a
//! request's headers must arrive whole within it, counted from the connection's start
//! or from the previous answer, so a silent, slow or idle connection is closed; headers
//! larger than [`MAX_HEAD`] are answered 431. The client's address is handed to the
//! routes as axum's `ConnectInfo`.
//!
//! A reload changes the caps and the header timeout ([`HttpServer::apply`]): a
//! connection is served with the timeout in force when it was accepted.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tracing::{info, warn};

use super::limits::ConnectionLimits;
use super::refused::Refusals;
use crate::config::HttpConfig;
use crate::error::{Error, Result};

/// Threads of the HTTP server's runtime.
const THREADS: usize = 2;
/// Blocking threads at most (parsing large bodies).
const BLOCKING_THREADS: usize = 2;
/// The largest request head (start line and headers) read, in bytes; also the most a
/// connection buffers.
pub const MAX_HEAD: usize = 64 * 1024;
/// How long to wait after a failed `accept` (out of descriptors, say) before the next.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// How connections are served.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Connections at once, in all.
    pub max_connections: usize,
    /// Connections at once from one client.
    pub max_per_client: usize,
    /// The time a request's headers have to arrive.
    pub header_timeout: Duration,
    /// The nice value of the server's threads (`None`: as the caller's).
    pub nice: Option<i32>,
}

impl Settings {
    /// The settings of `[http]`, the threads at `nice`.
    pub fn of(config: &HttpConfig, nice: Option<i32>) -> Settings {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Settings {
            max_connections: count(config.max_connections),
            max_per_client: count(config.max_connections_per_client),
            header_timeout: config.header_timeout,
            nice,
        }
    }
}

/// The running HTTP server; it stops when dropped.
#[derive(Debug)]
pub struct HttpServer {
    runtime: Option<Runtime>,
    addr: Option<SocketAddr>,
    limits: Arc<ConnectionLimits>,
    header_timeout: Arc<HeaderTimeout>,
}

impl HttpServer {
    /// The address served.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// Applies a reload's caps and header timeout (the threads' nice value stays).
    pub fn apply(&self, settings: &Settings) {
        self.limits.set_caps(settings.max_connections, settings.max_per_client);
        self.header_timeout.set(settings.header_timeout);
    }
}

/// The header timeout of the connections accepted from now on, in nanoseconds.
#[derive(Debug)]
struct HeaderTimeout(AtomicU64);

impl HeaderTimeout {
    fn new(timeout: Duration) -> Arc<HeaderTimeout> {
        let header_timeout = HeaderTimeout(AtomicU64::new(0));
        header_timeout.set(timeout);
        Arc::new(header_timeout)
    }

    fn set(&self, timeout: Duration) {
        self.0.store(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_millis(100));
        }
    }
}

/// Starts serving `app` on `listener` on a runtime of its own (see the module comment).
pub fn start(listener: StdListener, app: Router, settings: Settings) -> Result<HttpServer> {
    let nice = settings.nice;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(THREADS)
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_name("ternd-http")
        .on_thread_start(move || {
            if let Some(nice) = nice {
                if let Err(e) = crate::priority::set_thread_nice(nice) {
                    warn!("an HTTP server thread keeps its priority: {e}");
                }
            }
        })
        .enable_all()
        .build()
        .map_err(|source| Error::Os { doing: "starting the HTTP server", source })?;
    let listener = {
        let _entered = runtime.enter();
        TcpListener::from_std(listener)
            .map_err(|source| Error::Os { doing: "registering the HTTP listener", source })?
    };
    let addr = listener.local_addr().ok();
    let limits = ConnectionLimits::new(settings.max_connections, settings.max_per_client);
    let header_timeout = HeaderTimeout::new(settings.header_timeout);
    runtime.spawn(accept(listener, app, Arc::clone(&limits), Arc::clone(&header_timeout)));
    if let Some(addr) = addr {
        info!(listen = %addr, "HTTP server listening");
    }
    Ok(HttpServer { runtime: Some(runtime), addr, limits, header_timeout })
}

/// Accepts connections until the runtime stops.
async fn accept(
    listener: TcpListener,
    app: Router,
    limits: Arc<ConnectionLimits>,
    header_timeout: Arc<HeaderTimeout>,
) {
    let refusals = Refusals::default();
    loop {
        let (stream, client) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                refusals.accept_failed(&e);
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        match limits.admit(client.ip()) {
            Ok(permit) => {
                let (app, header_timeout) = (app.clone(), header_timeout.get());
                tokio::spawn(async move {
                    serve(stream, client, app, header_timeout).await;
                    drop(permit);
                });
            }
            Err(refusal) => {
                refusals.connection(client, refusal.why());
                drop(stream);
            }
        }
    }
}

/// Serves one connection until it closes or times out.
async fn serve(stream: TcpStream, client: SocketAddr, app: Router, header_timeout: Duration) {
    let _ = stream.set_nodelay(true);
    let routes = TowerToHyperService::new(app);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(client));
        routes.call(request)
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_buf_size(MAX_HEAD)
        .keep_alive(true);
    // An error is the client's doing (it went away, timed out, or sent garbage).
    let _ = builder.serve_connection(TokioIo::new(stream), service).await;
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    fn settings(max_per_client: usize, header_timeout: Duration) -> Settings {
        Settings { max_connections: 100, max_per_client, header_timeout, nice: None }
    }

    /// A server answering `/` with "ok".
    fn server(settings: Settings) -> HttpServer {
        let listener = crate::io::sockopt::tcp_listener("127.0.0.1:0".parse().unwrap()).unwrap();
        let app = Router::new().route("/", axum::routing::get(|| async { "ok" }));
        start(listener, app, settings).unwrap()
    }

    fn connect(server: &HttpServer) -> std::net::TcpStream {
        let stream = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        stream
    }

    #[test]
    fn a_client_over_its_cap_is_closed_at_once() {
        let server = server(settings(2, Duration::from_secs(10)));
        let _held: Vec<_> = (0..2).map(|_| connect(&server)).collect();
        std::thread::sleep(Duration::from_millis(100));
        let mut over = connect(&server);
        assert_eq!(over.read(&mut [0u8; 16]).unwrap_or(0), 0, "closed at once");
    }

    #[test]
    fn headers_must_arrive_within_the_timeout() {
        let server = server(settings(10, Duration::from_millis(300)));
        let mut slow = connect(&server);
        slow.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n").unwrap();
        let started = std::time::Instant::now();
        let mut answer = Vec::new();
        let _ = slow.read_to_end(&mut answer);
        assert!(started.elapsed() < Duration::from_secs(2), "cut after {:?}", started.elapsed());
        // A whole request is answered, then the connection idles until the timeout.
        let mut quick = connect(&server);
        quick.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        let _ = quick.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"), "{answer}");
    }

    #[test]
    fn applied_settings_hold_for_the_connections_accepted_after() {
        let server = server(settings(1, Duration::from_secs(10)));
        let _held = connect(&server);
        std::thread::sleep(Duration::from_millis(100));
        server.apply(&settings(2, Duration::from_millis(300)));
        let mut slow = connect(&server);
        slow.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n").unwrap();
        let started = std::time::Instant::now();
        let mut answer = Vec::new();
        let _ = slow.read_to_end(&mut answer);
        let took = started.elapsed();
        assert!(took > Duration::from_millis(200), "admitted under the raised cap: {took:?}");
        assert!(took < Duration::from_secs(2), "cut at the new timeout after {took:?}");
    }
}
