//! The API's bearer token (RFC 6750): read from `[http] api-token-file` at start
//! ([`read_token`], with the configuration, so `--check-config` reads it the same way), and
//! checked on every API request *before* anything else — a request without it is
//! answered 401 with its body left unread, so an unauthorised client costs the server
//! the headers only.
//!
//! The scheme is case-insensitive (`Bearer`, `bearer`…; RFC 9110 §11.1), followed by
//! one or more spaces and the token. Tokens are compared in constant time, through
//! their SHA-256 digests, so not even the length of the token is told by the timing.
//! Refusals are logged at a bounded rate ([`super::refused`]). The token is read anew
//! at each reload ([`Guarded::token`] gives the one in force), so rotating it needs no
//! restart.

use std::net::SocketAddr;
use std::sync::Arc;

use aws_lc_rs::digest::{digest, SHA256};
use axum::extract::{ConnectInfo, OriginalUri, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::refused::Refusals;
pub use crate::config::http::{read_token, TokenError, MIN_TOKEN};

/// Why a request is not authorised (for the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// No `Authorization` header, or not a bearer one.
    NoToken,
    /// A bearer token, not the right one.
    WrongToken,
}

impl Denied {
    fn why(self) -> &'static str {
        match self {
            Denied::NoToken => "no bearer token",
            Denied::WrongToken => "wrong bearer token",
        }
    }
}

/// The credentials of an `Authorization: Bearer <token>` value, the scheme in any case.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    let token = rest.trim_start_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether `headers` carry `token` (compared in constant time).
pub fn check(token: &str, headers: &HeaderMap) -> Result<(), Denied> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .ok_or(Denied::NoToken)?;
    let (given, expected) = (digest(&SHA256, given.as_bytes()), digest(&SHA256, token.as_bytes()));
    aws_lc_rs::constant_time::verify_slices_are_equal(given.as_ref(), expected.as_ref())
        .map_err(|_| Denied::WrongToken)
}

/// What the token check needs of the routes' state: the token, and where refusals
/// are logged.
pub trait Guarded: Send + Sync + 'static {
    /// The bearer token now (a reload may replace it); `None` while the routes are off.
    fn token(&self) -> Option<Arc<str>>;
    /// The refusals' log.
    fn refusals(&self) -> &Refusals;
}

/// The middleware in front of every API route: the token first; without it, 401 (and
/// a log line) and the body is never read. While the routes have no token, 404, as
/// for any path not served.
pub async fn require_token<A: Guarded>(
    State(api): State<Arc<A>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = api.token() else { return StatusCode::NOT_FOUND.into_response() };
    match check(&token, request.headers()) {
        Ok(()) => next.run(request).await,
        Err(denied) => {
            let client = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
            // The whole path (a nested router's own URI lacks the `/api/v1` prefix).
            let uri = request.extensions().get::<OriginalUri>().map_or(request.uri(), |o| &o.0);
            api.refusals().request(client, uri.path(), denied.why());
            unauthorized()
        }
    }
}

/// 401, with the challenge RFC 9110 §11.6.1 asks for, closing the connection (the body,
/// if any, is left unread).
fn unauthorized() -> Response {
    let headers = [(header::WWW_AUTHENTICATE, "Bearer"), (header::CONNECTION, "close")];
    let body = Json(json!({ "error": "a valid bearer token is required" }));
    (StatusCode::UNAUTHORIZED, headers, body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123";

    fn with(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, value.parse().unwrap());
        headers
    }

    #[test]
    fn the_scheme_is_case_insensitive_and_the_token_exact() {
        for value in ["Bearer ", "bearer ", "BEARER ", "Bearer   "] {
            assert_eq!(check(TOKEN, &with(&format!("{value}{TOKEN}"))), Ok(()), "{value}");
        }
        assert_eq!(check(TOKEN, &HeaderMap::new()), Err(Denied::NoToken));
        for value in [format!("Basic {TOKEN}"), format!("Bearer{TOKEN}"), "Bearer ".into()] {
            assert_eq!(check(TOKEN, &with(&value)), Err(Denied::NoToken), "{value}");
        }
        for value in
            [format!("Bearer {TOKEN}x"), "Bearer 0123".into(), format!("bearer {}", &TOKEN[1..])]
        {
            assert_eq!(check(TOKEN, &with(&value)), Err(Denied::WrongToken), "{value}");
        }
    }

    #[test]
    fn short_tokens_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "short\n").unwrap();
        assert!(read_token(&path).unwrap_err().to_string().contains("at least 16"));
        std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
        assert_eq!(read_token(&path).unwrap(), "0123456789abcdef0123");
        assert!(matches!(read_token(&dir.path().join("none")), Err(TokenError::Read(..))));
    }
}
