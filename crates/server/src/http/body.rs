//! A request body read with a bound on its size and on its time: larger than the
//! route's limit is 413 (Content Too Large, RFC 9110 §15.5.14) — at once when its
//! `Content-Length` says so, else as soon as more arrives than the limit — and a body
//! that has not arrived whole within `[http] body-timeout` is 408 (Request Timeout,
//! RFC 9110 §15.5.9). Either way the connection is closed after the answer, since the
//! rest of the body is left unread.
//!
//! Only authorised requests reach this: the token is checked before anything of the
//! body is read ([`super::auth`]).

use std::future::poll_fn;
use std::pin::Pin;
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// Larger than the limit (bytes).
    TooLarge(usize),
    /// Not whole within the timeout.
    Timeout(Duration),
    /// The connection failed while reading it.
    Broken(String),
}

impl BodyError {
    /// The answer: 413, 408 or 400, with `Connection: close`.
    pub fn response(&self) -> Response {
        let (status, why) = match self {
            BodyError::TooLarge(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is larger than this request's limit of {limit} bytes"),
            ),
            BodyError::Timeout(timeout) => (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} s (`[http] body-timeout`)",
                    timeout.as_secs_f64()
                ),
            ),
            BodyError::Broken(e) => (StatusCode::BAD_REQUEST, format!("cannot read the body: {e}")),
        };
        let close = [(header::CONNECTION, "close")];
        (status, close, Json(json!({ "error": why }))).into_response()
    }
}

/// Reads `body` whole: at most `limit` bytes, within `timeout`.
pub async fn read(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    timeout: Duration,
) -> Result<Vec<u8>, BodyError> {
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|length| length > limit as u64) {
        return Err(BodyError::TooLarge(limit));
    }
    match tokio::time::timeout(timeout, collect(body, limit)).await {
        Ok(read) => read,
        Err(_) => Err(BodyError::Timeout(timeout)),
    }
}

/// The body's data, refused as soon as it passes `limit`.
async fn collect(mut body: Body, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut data = Vec::new();
    while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
        let Ok(chunk) = frame.into_data() else { continue }; // trailers
        if data.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge(limit));
        }
        data.extend_from_slice(&chunk);
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::task::{Context, Poll};

    use axum::body::Bytes;
    use hyper::body::Frame;

    use super::*;

    /// A body of `chunks`, then its end, or (`stalls`) nothing more ever.
    struct Chunks {
        chunks: VecDeque<&'static str>,
        stalls: bool,
    }

    impl HttpBody for Chunks {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            match self.chunks.pop_front() {
                Some(chunk) => {
                    Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(chunk.as_bytes())))))
                }
                None if self.stalls => Poll::Pending,
                None => Poll::Ready(None),
            }
        }
    }

    fn body(chunks: &[&'static str], stalls: bool) -> Body {
        Body::new(Chunks { chunks: chunks.iter().copied().collect(), stalls })
    }

    fn length(n: usize) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, n.to_string().parse().unwrap());
        headers
    }

    #[tokio::test]
    async fn bodies_are_bounded_in_size() {
        let second = Duration::from_secs(1);
        let whole = read(&length(5), body(&["he", "llo"], false), 5, second).await;
        assert_eq!(whole.unwrap(), b"hello");
        // Announced too large: refused without reading (this body would never end).
        let announced = read(&length(6), body(&[], true), 5, second).await;
        assert_eq!(announced, Err(BodyError::TooLarge(5)));
        // Not announced, and larger: refused once past the limit (never ending either).
        let streamed = read(&HeaderMap::new(), body(&["abc", "def"], true), 5, second).await;
        assert_eq!(streamed, Err(BodyError::TooLarge(5)));
        assert_eq!(BodyError::TooLarge(5).response().status(), StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn a_body_that_stops_coming_times_out() {
        let timeout = Duration::from_millis(50);
        let stalled = read(&HeaderMap::new(), body(&["{"], true), 100, timeout).await;
        assert_eq!(stalled, Err(BodyError::Timeout(timeout)));
        let answer = BodyError::Timeout(timeout).response();
        assert_eq!(answer.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(answer.headers()[header::CONNECTION], "close");
    }
}
