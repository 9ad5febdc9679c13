//! What a reload changes in the running server beside its zones, keys and access rules
//! (those are the control plane's, [`super::plane`]): the log's format and destination
//! ([`LogHandle::apply`]), every `[http]` key but `listen` — metrics on or off, the
//! API's token read again from its file, the body and header timeouts, the connection
//! caps — and every `[tls]` key but `listen`, with the certificate and key read again
//! (renewed files are taken by a reload even when the configuration is unchanged).
//!
//! A setting that cannot be applied (a log file that cannot be opened, a token file
//! missing, unreadable or too short) is kept as it was: the error is logged, and
//! `ternctl reload` is told it and exits 1. The log level is applied once the zones are
//! loaded ([`super::reload::log_when_done`]); what needs a restart is warned about by
//! [`super::reload::reload`].

use std::sync::Arc;

use tracing::{error, info};

use crate::config::{Config, HttpConfig};
use crate::http::api::{read_token, Api, ApiSettings};
use crate::http::{HttpServer, HttpState, Settings};
use crate::io::server::{tls_settings, RunningServer};
use crate::logging::LogHandle;

/// The running HTTP server, and what its routes serve from.
#[derive(Debug)]
pub struct Http {
    /// The server: its caps and header timeout.
    pub server: HttpServer,
    /// The routes' state: metrics on or off, the API.
    pub state: Arc<HttpState>,
}

/// Applies `next`'s `[log]` format and file and its `[http]` keys (the HTTP server's,
/// when it runs); what could not be applied, a line each (empty: all of it was).
pub fn apply(
    next: &Config,
    log: &LogHandle,
    http: Option<&Http>,
    data: &RunningServer,
) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = log.apply(&next.log) {
        error!("[log] format and file not applied, lines go on as before: {e}");
        problems.push(format!("[log] format and file not applied, lines go on as before: {e}"));
    }
    if let Some(problem) = http.and_then(|http| apply_http(&next.http, http)) {
        problems.push(problem);
    }
    if let Some(problem) = apply_tls(next, data) {
        problems.push(problem);
    }
    if let Some(problem) = apply_quic(next, data) {
        problems.push(problem);
    }
    problems
}

/// Reads the certificate and key again for DoQ when it listens (its other settings
/// wait for a restart); why they were kept, if they were.
fn apply_quic(next: &Config, data: &RunningServer) -> Option<String> {
    match data.reconfigure_quic(next) {
        Ok(()) => None,
        Err(e) => {
            let why = format!(
                "[tls] not applied to DoQ, new connections get the certificate in force: {e}"
            );
            error!("{why}");
            Some(why)
        }
    }
}

/// Reads the certificate and key again and hands them, with `[tls]`'s caps and
/// handshake timeout, to DoT when it listens; why they were kept, if they were.
fn apply_tls(next: &Config, data: &RunningServer) -> Option<String> {
    if data.tls_addrs().is_empty() {
        return None;
    }
    match tls_settings(next) {
        Ok(settings) => {
            data.reconfigure_tls(&next.tls, settings);
            None
        }
        Err(e) => {
            let why =
                format!("[tls] not applied, new connections get the certificate in force: {e}");
            error!("{why}");
            Some(why)
        }
    }
}

/// Applies `[http]` but `listen` to the running server; why the token was kept, if it
/// was.
fn apply_http(config: &HttpConfig, http: &Http) -> Option<String> {
    http.server.apply(&Settings::of(config, None));
    if http.state.set_metrics(config.metrics) {
        match config.metrics {
            true => info!("[http] metrics on: /metrics is served"),
            false => info!("[http] metrics off: /metrics answers 404"),
        }
    }
    let api = http.state.api.as_ref()?;
    let (settings, problem) = api_settings(config, api);
    api.set(settings);
    problem
}

/// The API's settings from `config`: the token read again from its file, or the one in
/// force when that fails (and why).
fn api_settings(config: &HttpConfig, api: &Api) -> (ApiSettings, Option<String>) {
    let old = api.settings().token.clone();
    let (token, problem) = match config.api_token_file.as_deref().map(read_token) {
        None => (None, None),
        Some(Ok(token)) => (Some(Arc::from(token)), None),
        Some(Err(e)) => {
            let kept = if old.is_some() { "keeps its token" } else { "stays off" };
            error!("[http] api-token-file not applied, the API {kept}: {e}");
            let why = format!("[http] api-token-file not applied, the API {kept}: {e}");
            (old.clone(), Some(why))
        }
    };
    match (&old, &token) {
        (None, Some(_)) => info!("[http] API on: /api/v1 takes requests with the token"),
        (Some(_), None) => info!("[http] API off: /api/v1 answers 404"),
        (Some(old), Some(new)) if old != new => {
            info!("[http] API token replaced: the old one is refused from now on")
        }
        _ => {}
    }
    (ApiSettings { token, body_timeout: config.body_timeout }, problem)
}
