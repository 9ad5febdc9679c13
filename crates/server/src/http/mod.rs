//! The HTTP server (`[http]`): one listener, an axum router, on a small runtime of its
//! own ([`serve`]) — not the control plane's, whose threads a large change may keep
//! busy, and never a UDP worker or the TCP runtime, so a scrape never competes with
//! answering.
//!
//! [`router`] builds the routes from an [`HttpState`]: `GET /metrics` ([`metrics`])
//! when `metrics = true`, the API ([`api`], behind [`auth`]) with `api-token-file`.
//! The listener is bound at start with the DNS sockets ([`crate::io::tcp::bind`]), before privileges
//! are dropped, and served by [`spawn`] once the server runs, with the connection caps
//! ([`limits`]) and timeouts of `[http]`; refusals are logged at a bounded rate
//! ([`refused`]).
//!
//! A reload changes every key but `listen` while the server runs: `metrics` turns the
//! route on and off ([`HttpState::set_metrics`]), the API's token and body timeout are
//! replaced ([`api::Api::set`]; without a token the API answers 404), and the caps and
//! the header timeout hold for the connections accepted after ([`HttpServer::apply`]).

pub mod api;
pub mod auth;
pub mod body;
pub mod limits;
pub mod metrics;
pub mod refused;
pub mod rrsets;
pub mod serve;

use std::net::TcpListener as StdListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::error::Result;
pub use serve::{HttpServer, Settings};

/// What the routes serve from.
#[derive(Debug, Default)]
pub struct HttpState {
    /// The metrics, served while `metrics_on`.
    pub metrics: Option<metrics::Metrics>,
    /// Whether `/metrics` is served (`metrics = true`); a reload changes it.
    pub metrics_on: AtomicBool,
    /// The API, served while it has a token (`api-token-file`).
    pub api: Option<Arc<api::Api>>,
}

impl HttpState {
    /// Serves `/metrics` or stops (404); whether that changed anything.
    pub fn set_metrics(&self, on: bool) -> bool {
        self.metrics_on.swap(on, Ordering::Relaxed) != on
    }
}

/// The routes: `GET /metrics` when the state has metrics (404 while they are off),
/// `/api/v1` when it has the API; anything else is 404.
pub fn router(state: Arc<HttpState>) -> Router {
    let mut router = Router::new();
    if state.metrics.is_some() {
        router = router.route("/metrics", get(serve_metrics));
    }
    let api = state.api.clone();
    let router = router.with_state(state);
    match api {
        Some(api) => router.merge(api::routes(api)),
        None => router,
    }
}

/// `GET /metrics`: the Prometheus text format.
async fn serve_metrics(State(state): State<Arc<HttpState>>) -> Response {
    let metrics = state.metrics.as_ref().filter(|_| state.metrics_on.load(Ordering::Relaxed));
    let Some(metrics) = metrics else { return StatusCode::NOT_FOUND.into_response() };
    match metrics.render() {
        Ok(text) => ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Serves `router(state)` on `listener` with `settings`, until the returned server is
/// dropped.
pub fn spawn(
    listener: StdListener,
    state: Arc<HttpState>,
    settings: Settings,
) -> Result<HttpServer> {
    serve::start(listener, router(state), settings)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::SocketAddr;

    use super::*;

    /// Sends a GET for `path` and returns the whole answer.
    fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn only_the_routes_the_state_has_are_served() {
        let listener = crate::io::sockopt::tcp_listener("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let settings = Settings::of(&crate::config::HttpConfig::default(), None);
        let _server = spawn(listener, Arc::new(HttpState::default()), settings).unwrap();
        assert!(get(addr, "/metrics").starts_with("HTTP/1.1 404"));
        assert!(get(addr, "/").starts_with("HTTP/1.1 404"));
    }
}
