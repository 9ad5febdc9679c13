//! What a reload changes in the running server beside its zones, keys and access rules
//! (those are the control plane's, [`super::plane`]): the log's format and destination
//! ([`LogHandle::apply`]), and every `[http]` key but `listen` — metrics on or off, the
//! API's token read again from its file, the body and header timeouts, the connection
//! caps.
//!
//! A setting that cannot be applied (a log file that cannot be opened, a token file
//! missing, unreadable or too short) is kept as it was: the error is logged, and
//! `ternctl reload` is told it and exits 1. The log level is applied once the zones are
//! loaded ([`super::reload::log_when_done`]); what needs a restart is warned about by
//! [`super::reload::reload`].

use std::sync::Arc;

use tern_ctl::proto::Reply;
use tokio::sync::oneshot;
use tracing::{error, info};

use crate::config::{Config, HttpConfig};
use crate::http::api::{read_token, Api, ApiSettings};
use crate::http::{HttpServer, HttpState, Settings};
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
pub fn apply(next: &Config, log: &LogHandle, http: Option<&Http>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = log.apply(&next.log) {
        error!("[log] format and file not applied, lines go on as before: {e}");
        problems.push(format!("[log] format and file not applied, lines go on as before: {e}"));
    }
    if let Some(problem) = http.and_then(|http| apply_http(&next.http, http)) {
        problems.push(problem);
    }
    problems
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

/// `reply`, told `problems` after the reload's own outcome, on `runtime`: the reply is
/// an error when there are any.
pub fn telling(
    reply: Option<oneshot::Sender<Reply>>,
    problems: Vec<String>,
    runtime: &tokio::runtime::Handle,
) -> Option<oneshot::Sender<Reply>> {
    if problems.is_empty() {
        return reply;
    }
    let reply = reply?;
    let (told, outcome) = oneshot::channel();
    runtime.spawn(async move {
        if let Ok(outcome) = outcome.await {
            let _ = reply.send(with_problems(outcome, &problems));
        }
    });
    Some(told)
}

/// A reload's `outcome` with `problems` after it, as an error.
fn with_problems(outcome: Reply, problems: &[String]) -> Reply {
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
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (reply, answer) = oneshot::channel();
        let told = telling(Some(reply), vec!["a problem".into()], runtime.handle()).unwrap();
        told.send(Reply::done("reload done")).unwrap();
        let answer = runtime.block_on(answer).unwrap();
        assert!(
            matches!(&answer, Reply::Error { error } if error.ends_with("a problem")),
            "{answer:?}"
        );
        let (reply, _answer) = oneshot::channel();
        assert!(telling(Some(reply), Vec::new(), runtime.handle()).is_some(), "as it was");
    }
}
