//! The HTTP API (`/api/v1`, documented in `docs/api.yaml`): the control socket's
//! operations ([`crate::ctl`]) over HTTP, plus reading a zone's records and changing its
//! RRsets, in the spirit of PowerDNS's API. Every request goes through the same
//! [`handle`] as `ternctl`'s, so a change made here is
//! applied by the zone's writer and journaled like any other.
//!
//! Off unless `[http] api-token-file` names a file holding the token (a reload reads it
//! again: [`Api::set`]). Every route is
//! behind [`auth::require_token`]: a request without the token is answered 401 before
//! its body is read. Bodies are then read bounded in size and time ([`super::body`]), and
//! large ones parsed on a blocking thread, so one request cannot hold up `/metrics`.
//! Errors are JSON: `{"error": "why"}`; 400 for a malformed request, 404 for an
//! unknown zone or resource, 409 when the server refuses the operation, 422 for RRset
//! changes a zone's rules forbid ([`super::rrsets`]).

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tern_ctl::proto::{Reply, Request, ZoneOp};
use tern_zone::ZoneDb;

use super::auth;
pub use super::auth::{read_token, MIN_TOKEN};
use super::body::read as read_body;
use super::refused::Refusals;
use super::rrsets::{plan, PatchError};
use crate::ctl::listen::{handle, parse_zone, Context};
use tern_control::commands::ZoneCommand;

impl auth::Guarded for Api {
    fn token(&self) -> Option<Arc<str>> {
        self.settings.load().token.clone()
    }

    fn refusals(&self) -> &Refusals {
        &self.refusals
    }
}

/// What the API serves from.
#[derive(Debug)]
pub struct Api {
    /// The token and the body timeout in force (a reload replaces them).
    settings: ArcSwap<ApiSettings>,
    /// What the control socket's requests use.
    pub context: Arc<Context>,
    /// The served zones (RRset changes are checked against what is served).
    pub db: Arc<ZoneDb>,
    /// The refusals' log.
    pub refusals: Refusals,
}

/// What a reload changes in the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiSettings {
    /// The bearer token (`[http] api-token-file`); `None`: the API is off (404).
    pub token: Option<Arc<str>>,
    /// How long a request's body may take to arrive (`[http] body-timeout`).
    pub body_timeout: Duration,
}

impl Api {
    /// The API with `settings`, answering from `context` and `db`.
    pub fn new(settings: ApiSettings, context: Arc<Context>, db: Arc<ZoneDb>) -> Api {
        let settings = ArcSwap::from_pointee(settings);
        Api { settings, context, db, refusals: Refusals::default() }
    }

    /// The settings in force.
    pub fn settings(&self) -> Arc<ApiSettings> {
        self.settings.load_full()
    }

    /// Replaces the settings (a reload): the requests that arrive after use them.
    pub fn set(&self, settings: ApiSettings) {
        self.settings.store(Arc::new(settings));
    }
}

/// The largest `POST /api/v1/zones` body: room for 100,000 zones with a path each.
pub const MAX_ZONES_BODY: usize = 64 * 1024 * 1024;
/// The largest `PATCH …/rrsets` body: room for about 300,000 short records.
pub const MAX_RRSETS_BODY: usize = 16 * 1024 * 1024;

/// The API's routes, under `/api/v1`, every one behind the token check.
pub fn routes(api: Arc<Api>) -> Router {
    let routes = Router::new()
        .route("/status", get(status))
        .route("/reload", post(reload))
        .route("/zones", get(zones).post(add_zone))
        .route("/zones/{zone}", get(zone).delete(remove_zone))
        .route("/zones/{zone}/records", get(records))
        .route("/zones/{zone}/rrsets", patch(patch_rrsets))
        .route("/zones/{zone}/actions/key-import", post(key_import))
        .route("/zones/{zone}/actions/key-export", post(key_export))
        .route("/zones/{zone}/actions/{action}", post(zone_op))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&api), auth::require_token))
        .with_state(api);
    Router::new().nest("/api/v1", routes)
}

/// A JSON error with `status`.
fn error(status: StatusCode, why: impl Into<String>) -> Response {
    (status, Json(json!({ "error": why.into() }))).into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such resource (see docs/api.yaml)")
}

/// A method the resource does not take (RFC 9110 §15.5.6), said in the body too.
async fn not_allowed(
    method: axum::http::Method,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let why = format!("{method} is not allowed on {} (see docs/api.yaml)", uri.path());
    error(StatusCode::METHOD_NOT_ALLOWED, why)
}

/// The control socket's reply as an HTTP answer.
fn answer(reply: Reply) -> Response {
    match reply {
        Reply::Error { error: why } if why.contains("not served here") => {
            error(StatusCode::NOT_FOUND, why)
        }
        Reply::Error { error: why } => error(StatusCode::CONFLICT, why),
        Reply::Done { message } => Json(json!({ "message": message })).into_response(),
        Reply::Status(status) => Json(status).into_response(),
        Reply::Zones { zones } => Json(zones).into_response(),
        Reply::Text { text } => Json(json!({ "text": text })).into_response(),
        Reply::PerZone { results } => {
            let failed = results.iter().any(|r| r.outcome.is_err());
            let body: Vec<Value> = results
                .into_iter()
                .map(|r| match r.outcome {
                    Ok(done) => json!({ "zone": r.zone, "message": done }),
                    Err(why) => json!({ "zone": r.zone, "error": why }),
                })
                .collect();
            let status = if failed { StatusCode::CONFLICT } else { StatusCode::OK };
            (status, Json(Value::Array(body))).into_response()
        }
    }
}

async fn ask(api: &Api, request: Request) -> Response {
    answer(handle(request, &api.context).await)
}

/// Runs `work` (parsing a large body) on a blocking thread, off the HTTP server's own.
async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, format!("the request failed: {e}")))
}

async fn status(State(api): State<Arc<Api>>) -> Response {
    ask(&api, Request::Status).await
}

async fn reload(State(api): State<Arc<Api>>) -> Response {
    ask(&api, Request::Reload).await
}

async fn zones(State(api): State<Arc<Api>>) -> Response {
    ask(&api, Request::ZoneList).await
}

async fn zone(State(api): State<Arc<Api>>, Path(zone): Path<String>) -> Response {
    match ask(&api, Request::ZoneStatus { zones: vec![zone] }).await {
        // One zone: the object, not a list of one.
        response if response.status() == StatusCode::OK => first_of(response).await,
        other => other,
    }
}

/// The first element of a JSON list answer.
async fn first_of(response: Response) -> Response {
    let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
    let list: Vec<Value> = serde_json::from_slice(&body).unwrap_or_default();
    match list.into_iter().next() {
        Some(first) => Json(first).into_response(),
        None => error(StatusCode::NOT_FOUND, "no such zone"),
    }
}

async fn remove_zone(State(api): State<Arc<Api>>, Path(zone): Path<String>) -> Response {
    ask(&api, Request::ZoneRemove { zones: vec![zone] }).await
}

/// A zone to add at run time (`POST /api/v1/zones`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewZone {
    name: String,
    #[serde(default)]
    file: Option<std::path::PathBuf>,
    #[serde(default)]
    primary: Vec<String>,
    #[serde(default)]
    template: Option<String>,
    /// Other zone keys, as in the configuration file.
    #[serde(default)]
    settings: serde_json::Map<String, Value>,
}

/// `POST /api/v1/zones`: one zone (an object) or many (a list of them), added in one
/// step, all or none.
async fn add_zone(State(api): State<Arc<Api>>, headers: HeaderMap, body: Body) -> Response {
    let body = match read_body(&headers, body, MAX_ZONES_BODY, api.settings().body_timeout).await {
        Ok(body) => body,
        Err(e) => return e.response(),
    };
    let tables = match off_thread(move || zone_tables(&body)).await {
        Ok(tables) => tables,
        Err(failed) => return failed,
    };
    match tables {
        Ok(tables) => ask(&api, Request::ZoneAdd { tables }).await,
        Err(why) => error(StatusCode::BAD_REQUEST, why),
    }
}

/// The zones of a `POST /api/v1/zones` body as configuration tables.
fn zone_tables(body: &[u8]) -> Result<Vec<String>, String> {
    let zones = match body.trim_ascii_start().first() {
        Some(b'[') => serde_json::from_slice::<Vec<NewZone>>(body),
        _ => serde_json::from_slice::<NewZone>(body).map(|zone| vec![zone]),
    };
    let zones = zones.map_err(|e| format!("not a zone: {e}"))?;
    zones.iter().map(new_zone_table).collect()
}

/// The configuration table of `new`.
fn new_zone_table(new: &NewZone) -> Result<String, String> {
    let settings: Vec<String> =
        new.settings.iter().map(|(key, value)| setting(key, value)).collect::<Result<_, _>>()?;
    tern_ctl::cli::zone_table(
        &new.name,
        new.file.as_deref(),
        &new.primary,
        new.template.as_deref(),
        &settings,
    )
}

/// A JSON setting as `key=value` in TOML.
fn setting(key: &str, value: &Value) -> Result<String, String> {
    let toml: toml::Value = serde_json::from_value(value.clone())
        .map_err(|e| format!("settings.{key}: not a configuration value: {e}"))?;
    Ok(format!("{key}={toml}"))
}

async fn zone_op(
    State(api): State<Arc<Api>>,
    Path((zone, op)): Path<(String, String)>,
) -> Response {
    let op = match op.as_str() {
        "reload" => ZoneOp::Reload,
        "refresh" => ZoneOp::Refresh,
        "retransfer" => ZoneOp::Retransfer,
        "notify" => ZoneOp::Notify,
        "flush" => ZoneOp::Flush,
        "freeze" => ZoneOp::Freeze,
        "thaw" => ZoneOp::Thaw,
        "keys" => ZoneOp::Keys,
        "sign" => ZoneOp::Sign,
        "ksk-submitted" => ZoneOp::KskSubmitted,
        other => return error(StatusCode::NOT_FOUND, format!("no action `{other}`")),
    };
    ask(&api, Request::Zone { op, zones: vec![zone] }).await
}

/// The largest `key-import` body: two BIND key files of at most 64 KiB, escaped.
pub const MAX_KEY_BODY: usize = 512 * 1024;

/// A `key-import` body: BIND's two key files' text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyImport {
    /// The `.private` file's name, for messages.
    #[serde(default = "private_file")]
    file: String,
    /// The `.private` file's text.
    private: String,
    /// The `.key` file's text.
    key: String,
    /// A KSK taken as a CSK.
    #[serde(default)]
    csk: bool,
}

fn private_file() -> String {
    "key.private".into()
}

/// `POST …/actions/key-import`: what `ternctl zone-key-import` does.
async fn key_import(
    State(api): State<Arc<Api>>,
    Path(zone): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match read_body(&headers, body, MAX_KEY_BODY, api.settings().body_timeout).await {
        Ok(body) => body,
        Err(e) => return e.response(),
    };
    match serde_json::from_slice::<KeyImport>(&body) {
        Ok(KeyImport { file, private, key, csk }) => {
            ask(&api, Request::ZoneKeyImport { zone, file, private, key, csk }).await
        }
        Err(e) => error(StatusCode::BAD_REQUEST, format!("not a key import: {e}")),
    }
}

/// `?key=` of `POST …/actions/key-export`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyChoice {
    key: Option<u32>,
}

/// `POST …/actions/key-export`: what `ternctl zone-key-export` prints, as `{"text"}`.
async fn key_export(
    State(api): State<Arc<Api>>,
    Path(zone): Path<String>,
    Query(choice): Query<KeyChoice>,
) -> Response {
    ask(&api, Request::ZoneKeyExport { zone, key: choice.key }).await
}

/// `?name=&type=` of `GET …/records`.
#[derive(Debug, Deserialize)]
struct Filter {
    name: Option<String>,
    #[serde(rename = "type")]
    rtype: Option<String>,
}

async fn records(
    State(api): State<Arc<Api>>,
    Path(zone): Path<String>,
    Query(filter): Query<Filter>,
) -> Response {
    let request = Request::ZoneRead { zone, owner: filter.name, rtype: filter.rtype };
    match ask(&api, request).await {
        response if response.status() == StatusCode::OK => as_records(response).await,
        other => other,
    }
}

/// Zone-file lines (`owner ttl IN type data`) as JSON records.
async fn as_records(response: Response) -> Response {
    let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
    let text = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("text").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let records: Vec<Value> = text
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(5, ' ');
            let (name, ttl, _class, rtype) =
                (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
            let ttl: u32 = ttl.parse().ok()?;
            Some(json!({ "name": name, "ttl": ttl, "type": rtype, "data": fields.next().unwrap_or("") }))
        })
        .collect();
    Json(json!({ "records": records })).into_response()
}

/// `PATCH …/rrsets`: the changes checked against the zone served
/// ([`super::rrsets::plan`]), then carried out by the zone's writer as one change.
async fn patch_rrsets(
    State(api): State<Arc<Api>>,
    Path(zone): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match read_body(&headers, body, MAX_RRSETS_BODY, api.settings().body_timeout).await {
        Ok(body) => body,
        Err(e) => return e.response(),
    };
    let zone = match parse_zone(&zone) {
        Ok(zone) => zone,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let Some(slot) = api.db.load().get(&zone).cloned() else {
        return error(StatusCode::NOT_FOUND, format!("{zone} is not served here"));
    };
    let Some(contents) = slot.contents_full() else {
        return error(StatusCode::CONFLICT, format!("{zone}: nothing is served yet"));
    };
    let plan = match off_thread(move || plan(&body, &contents)).await {
        Ok(plan) => plan,
        Err(failed) => return failed,
    };
    let steps = match plan {
        Ok(plan) => plan.txn_steps(),
        Err(PatchError::Malformed(why)) => return error(StatusCode::BAD_REQUEST, why),
        Err(PatchError::Rule(why)) => return error(StatusCode::UNPROCESSABLE_ENTITY, why),
    };
    match api.context.zones.command(&zone, ZoneCommand::Apply(steps)).await {
        Ok(message) => Json(json!({ "message": message })).into_response(),
        Err(why @ tern_control::Error::NotServed(_)) => {
            error(StatusCode::NOT_FOUND, why.to_string())
        }
        Err(why) => error(StatusCode::CONFLICT, why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_written_as_toml() {
        assert_eq!(setting("notify-ns", &json!(true)).unwrap(), "notify-ns=true");
        assert_eq!(setting("notify", &json!(["a", "b"])).unwrap(), "notify=[\"a\", \"b\"]");
        assert!(setting("x", &Value::Null).is_err());
    }

    /// Every route is in the OpenAPI document, and the document names no other.
    #[test]
    fn the_openapi_document_lists_the_routes() {
        let doc = include_str!("../../../../docs/api.yaml");
        let routes = [
            "/api/v1/status",
            "/api/v1/reload",
            "/api/v1/zones",
            "/api/v1/zones/{zone}",
            "/api/v1/zones/{zone}/records",
            "/api/v1/zones/{zone}/rrsets",
            "/api/v1/zones/{zone}/actions/key-import",
            "/api/v1/zones/{zone}/actions/key-export",
            "/api/v1/zones/{zone}/actions/{action}",
        ];
        for route in routes {
            assert!(doc.contains(&format!("\n  {route}:\n")), "{route} is not documented");
        }
        let documented = doc.lines().filter(|l| l.starts_with("  /api/")).count();
        assert_eq!(documented, routes.len());
    }

    #[test]
    fn zone_bodies_become_tables() {
        let one = zone_tables(br#"{"name":"a.example","settings":{"notify-ns":true}}"#).unwrap();
        assert_eq!(one.len(), 1);
        assert!(one[0].contains("notify-ns = true"), "{one:?}");
        let many = zone_tables(br#" [{"name":"a.example"},{"name":"b.example"}]"#).unwrap();
        assert_eq!(many.len(), 2);
        assert!(zone_tables(br#"{"name":"x.example","bogus":1}"#)
            .unwrap_err()
            .contains("not a zone"));
    }
}
