//! The HTTP API (`/api/v1`, documented in `docs/api.yaml`): the control socket's
//! operations ([`crate::ctl`]) over HTTP, plus reading a zone's records and changing its
//! RRsets, in the spirit of PowerDNS's API. Every request goes through the same
//! [`handle`] as `ternctl`'s, so a change made here is
//! applied by the zone's writer and journaled like any other.
//!
//! Off unless `[http] api-token-file` names a file holding the token: each request must
//! carry `Authorization: Bearer <token>` (compared in constant time); any other is
//! refused with 401 and logged. Errors are JSON: `{"error": "why"}`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tracing::warn;

use crate::control::commands::ZoneCommand;
use crate::ctl::listen::{handle, parse_zone, Context};
use crate::ctl::proto::{Reply, Request, TxnStep, ZoneOp};

/// What the API serves from.
#[derive(Debug)]
pub struct Api {
    /// The bearer token.
    pub token: String,
    /// What the control socket's requests use.
    pub context: Arc<Context>,
}

/// The shortest token accepted.
pub const MIN_TOKEN: usize = 16;

/// Reads the token from `path` (its first line, trimmed); refused when shorter than
/// [`MIN_TOKEN`].
pub fn read_token(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.len() < MIN_TOKEN {
        return Err(format!(
            "{}: the API token must be at least {MIN_TOKEN} characters (try: head -c 32 /dev/urandom | base64)",
            path.display()
        ));
    }
    Ok(token)
}

/// The largest `POST /api/v1/zones` body: room for 100,000 zones with a path each
/// (other requests keep axum's 2 MiB).
const MAX_ZONES_BODY: usize = 64 * 1024 * 1024;

/// The API's routes, under `/api/v1`.
pub fn routes(api: Arc<Api>) -> Router {
    Router::new()
        .route("/api/v1/status", get(status))
        .route("/api/v1/reload", post(reload))
        .route(
            "/api/v1/zones",
            get(zones).post(add_zone).layer(DefaultBodyLimit::max(MAX_ZONES_BODY)),
        )
        .route("/api/v1/zones/{zone}", get(zone).delete(remove_zone))
        .route("/api/v1/zones/{zone}/records", get(records))
        .route("/api/v1/zones/{zone}/rrsets", axum::routing::patch(rrsets))
        .route("/api/v1/zones/{zone}/actions/{action}", post(zone_op))
        .fallback(not_found)
        .with_state(api)
}

/// A JSON error with `status`.
fn error(status: StatusCode, why: impl Into<String>) -> Response {
    (status, Json(json!({ "error": why.into() }))).into_response()
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such resource (see docs/api.yaml)")
}

/// Whether the request carries the token; one that does not is logged.
fn authorized(api: &Api, headers: &HeaderMap) -> bool {
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let matches = given.is_some_and(|g| {
        aws_lc_rs::constant_time::verify_slices_are_equal(g.as_bytes(), api.token.as_bytes())
            .is_ok()
    });
    if !matches {
        warn!(
            token_given = given.is_some(),
            "HTTP API: request refused (no or wrong bearer token)"
        );
    }
    matches
}

/// 401, for a request without the token.
fn unauthorized() -> Response {
    error(StatusCode::UNAUTHORIZED, "a valid bearer token is required")
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

async fn ask(api: &Api, headers: &HeaderMap, request: Request) -> Response {
    if !authorized(api, headers) {
        return unauthorized();
    }
    answer(handle(request, &api.context).await)
}

async fn status(State(api): State<Arc<Api>>, headers: HeaderMap) -> Response {
    ask(&api, &headers, Request::Status).await
}

async fn reload(State(api): State<Arc<Api>>, headers: HeaderMap) -> Response {
    ask(&api, &headers, Request::Reload).await
}

async fn zones(State(api): State<Arc<Api>>, headers: HeaderMap) -> Response {
    ask(&api, &headers, Request::ZoneList).await
}

async fn zone(
    State(api): State<Arc<Api>>,
    headers: HeaderMap,
    Path(zone): Path<String>,
) -> Response {
    match ask(&api, &headers, Request::ZoneStatus { zones: vec![zone] }).await {
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

async fn remove_zone(
    State(api): State<Arc<Api>>,
    headers: HeaderMap,
    Path(zone): Path<String>,
) -> Response {
    ask(&api, &headers, Request::ZoneRemove { zones: vec![zone] }).await
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
async fn add_zone(State(api): State<Arc<Api>>, headers: HeaderMap, body: Bytes) -> Response {
    if !authorized(&api, &headers) {
        return unauthorized();
    }
    let zones = match body.trim_ascii_start().first() {
        Some(b'[') => serde_json::from_slice::<Vec<NewZone>>(&body),
        _ => serde_json::from_slice::<NewZone>(&body).map(|zone| vec![zone]),
    };
    let zones = match zones {
        Ok(zones) => zones,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("not a zone: {e}")),
    };
    match zones.iter().map(new_zone_table).collect() {
        Ok(tables) => answer(handle(Request::ZoneAdd { tables }, &api.context).await),
        Err(why) => error(StatusCode::BAD_REQUEST, why),
    }
}

/// The configuration table of `new`.
fn new_zone_table(new: &NewZone) -> Result<String, String> {
    let settings: Vec<String> =
        new.settings.iter().map(|(key, value)| setting(key, value)).collect::<Result<_, _>>()?;
    crate::ctl::ternctl::zone_table(
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
    headers: HeaderMap,
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
        other => return error(StatusCode::NOT_FOUND, format!("no action `{other}`")),
    };
    ask(&api, &headers, Request::Zone { op, zones: vec![zone] }).await
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
    headers: HeaderMap,
    Path(zone): Path<String>,
    Query(filter): Query<Filter>,
) -> Response {
    let request = Request::ZoneRead { zone, owner: filter.name, rtype: filter.rtype };
    match ask(&api, &headers, request).await {
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

/// One RRset change of `PATCH …/rrsets`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RrsetChange {
    name: String,
    #[serde(rename = "type")]
    rtype: String,
    /// `replace` (the RRset becomes `records`) or `delete`.
    changetype: String,
    #[serde(default)]
    ttl: Option<u32>,
    #[serde(default)]
    records: Vec<String>,
}

/// The body of `PATCH …/rrsets`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RrsetChanges {
    rrsets: Vec<RrsetChange>,
}

async fn rrsets(
    State(api): State<Arc<Api>>,
    headers: HeaderMap,
    Path(zone): Path<String>,
    body: Bytes,
) -> Response {
    if !authorized(&api, &headers) {
        return unauthorized();
    }
    let changes: RrsetChanges = match serde_json::from_slice(&body) {
        Ok(changes) => changes,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("not RRset changes: {e}")),
    };
    let steps = match steps_of(changes) {
        Ok(steps) => steps,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let zone = match parse_zone(&zone) {
        Ok(zone) => zone,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    match api.context.zones.command(&zone, ZoneCommand::Apply(steps)).await {
        Ok(message) => Json(json!({ "message": message })).into_response(),
        Err(why) if why.contains("not served here") => error(StatusCode::NOT_FOUND, why),
        Err(why) => error(StatusCode::CONFLICT, why),
    }
}

/// RRset changes as a transaction's steps: each RRset removed, then (`replace`) its
/// records added.
fn steps_of(changes: RrsetChanges) -> Result<Vec<TxnStep>, String> {
    let mut steps = Vec::new();
    for change in changes.rrsets {
        let unset = TxnStep::Unset {
            owner: change.name.clone(),
            rtype: Some(change.rtype.clone()),
            rdata: None,
        };
        match change.changetype.to_ascii_lowercase().as_str() {
            "delete" => steps.push(unset),
            "replace" if change.records.is_empty() => {
                return Err(format!("{} {}: replace needs records", change.name, change.rtype))
            }
            "replace" => {
                steps.push(unset);
                steps.extend(change.records.iter().map(|rdata| TxnStep::Set {
                    owner: change.name.clone(),
                    ttl: change.ttl,
                    rtype: change.rtype.clone(),
                    rdata: rdata.clone(),
                }));
            }
            other => return Err(format!("changetype `{other}`: expected replace or delete")),
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrset_changes_become_unsets_and_sets() {
        let changes: RrsetChanges = serde_json::from_str(
            r#"{"rrsets":[{"name":"www","type":"A","changetype":"REPLACE","ttl":60,"records":["192.0.2.1","192.0.2.2"]},
                          {"name":"old","type":"TXT","changetype":"delete"}]}"#,
        )
        .unwrap();
        let steps = steps_of(changes).unwrap();
        assert_eq!(steps.len(), 4);
        assert!(matches!(&steps[0], TxnStep::Unset { rdata: None, .. }));
        assert!(
            matches!(&steps[2], TxnStep::Set { ttl: Some(60), rdata, .. } if rdata == "192.0.2.2")
        );
        let bad: RrsetChanges =
            serde_json::from_str(r#"{"rrsets":[{"name":"a","type":"A","changetype":"add"}]}"#)
                .unwrap();
        assert!(steps_of(bad).unwrap_err().contains("expected replace or delete"));
        assert!(serde_json::from_str::<RrsetChanges>(r#"{"rrsets":[],"x":1}"#).is_err());
    }

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
            "/api/v1/zones/{zone}/actions/{action}",
        ];
        for route in routes {
            assert!(doc.contains(&format!("\n  {route}:\n")), "{route} is not documented");
        }
        let documented = doc.lines().filter(|l| l.starts_with("  /api/")).count();
        assert_eq!(documented, routes.len());
    }

    #[test]
    fn short_tokens_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "short\n").unwrap();
        assert!(read_token(&path).unwrap_err().contains("at least 16"));
        std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
        assert_eq!(read_token(&path).unwrap(), "0123456789abcdef0123");
    }
}
