//! `[http]`: the HTTP listener, which serves the metrics (`GET /metrics`) and, with
//! `api-token-file`, the API (`/api/v1`, [`crate::http::api`]).
//!
//! Off unless `listen` is given. A listen address without a host (`":9153"`, `"9153"`
//! or the number `9153`) listens on loopback only: the metrics say much about the
//! server, so reaching them from elsewhere is a choice to write out. The listener is
//! bound at start, with the DNS sockets; a reload warns that a new `listen` waits for
//! the next restart, and applies the other keys to the running server.
//!
//! The listener defends itself: connections are capped per client and in all
//! (`max-connections-per-client`, `max-connections`), a request's headers must arrive
//! within `header-timeout` (which also closes idle and silent connections), and a body
//! within `body-timeout`.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use super::values;

/// `[http]`: the HTTP listener (see the module comment).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HttpConfig {
    /// Where to listen; `None` (the default): no HTTP server.
    #[serde(default, deserialize_with = "listen")]
    pub listen: Option<SocketAddr>,
    /// Serve the metrics at `/metrics` (on by default once the listener is).
    #[serde(default = "default_true")]
    pub metrics: bool,
    /// The file holding the API's bearer token; the API (`/api/v1`) is off without it.
    #[serde(default)]
    pub api_token_file: Option<std::path::PathBuf>,
    /// Connections open at once, all clients together; more are closed when accepted.
    #[serde(
        default = "default_max_connections",
        deserialize_with = "values::count_in::<_, 1, 100000>"
    )]
    pub max_connections: u64,
    /// Connections open at once from one client (an IPv4 address or an IPv6 /64).
    #[serde(
        default = "default_max_connections_per_client",
        deserialize_with = "values::count_in::<_, 1, 100000>"
    )]
    pub max_connections_per_client: u64,
    /// A request's headers must arrive whole within this time of the connection's
    /// start, or of the previous answer; else the connection is closed.
    #[serde(default = "default_header_timeout", deserialize_with = "positive_duration")]
    pub header_timeout: Duration,
    /// A request's body must arrive whole within this time of its headers (else 408).
    #[serde(default = "default_body_timeout", deserialize_with = "positive_duration")]
    pub body_timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            listen: None,
            metrics: true,
            api_token_file: None,
            max_connections: default_max_connections(),
            max_connections_per_client: default_max_connections_per_client(),
            header_timeout: default_header_timeout(),
            body_timeout: default_body_timeout(),
        }
    }
}

/// 256: far more than the scrapers and scripts of one server need, and few enough
/// that they cannot take the process's file descriptors from DNS over TCP.
fn default_max_connections() -> u64 {
    256
}

/// 32: an eighth of the default `max-connections`, so it takes eight addresses to fill
/// them; a scraper or a script needs one or two.
fn default_max_connections_per_client() -> u64 {
    32
}

fn default_header_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_body_timeout() -> Duration {
    Duration::from_secs(30)
}

/// Parses an HTTP listen address: `host:port`, `[v6]:port`, or a port alone (`:9153`
/// or `9153`), which is on loopback.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    match text.strip_prefix(':').unwrap_or(text).parse::<u16>() {
        Ok(port) => Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port))),
        Err(_) => Err(format!(
            "`{text}` is not an HTTP listen address (expected `127.0.0.1:9153`, `[::1]:9153` or a port, `:9153`)"
        )),
    }
}

/// A listen address as text, or a port as a number.
#[derive(Deserialize)]
#[serde(untagged)]
enum TextOrPort {
    Text(String),
    Port(u16),
}

fn listen<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
    match TextOrPort::deserialize(d)? {
        TextOrPort::Text(text) => parse_listen(&text).map(Some).map_err(de::Error::custom),
        TextOrPort::Port(port) => Ok(Some(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))),
    }
}

/// A duration above zero (a zero timeout would close every connection at once).
fn positive_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let duration = values::duration(d)?;
    if duration.is_zero() {
        return Err(de::Error::custom("a timeout must be above zero (e.g. `10s`)"));
    }
    Ok(duration)
}

fn default_true() -> bool {
    true
}

/// The shortest token accepted.
pub const MIN_TOKEN: usize = 16;

/// Why the token file is not usable.
#[derive(Debug)]
pub enum TokenError {
    /// It cannot be read.
    Read(std::path::PathBuf, std::io::Error),
    /// Its first line is shorter than [`MIN_TOKEN`].
    Short(std::path::PathBuf),
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::Read(path, e) => write!(f, "{}: {e}", path.display()),
            TokenError::Short(path) => write!(
                f,
                "{}: the API token must be at least {MIN_TOKEN} characters (try: head -c 32 /dev/urandom | base64)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TokenError {}

/// Reads the token from `path` (its first line, trimmed); refused when shorter than
/// [`MIN_TOKEN`].
pub fn read_token(path: &std::path::Path) -> Result<String, TokenError> {
    let text = std::fs::read_to_string(path).map_err(|e| TokenError::Read(path.to_owned(), e))?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.len() < MIN_TOKEN {
        return Err(TokenError::Short(path.to_owned()));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    fn read(text: &str) -> Result<Config, String> {
        Config::from_text(text, Path::new("/etc/tern/t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn off_by_default_and_loopback_without_a_host() {
        let off = read("").unwrap();
        assert_eq!((off.http.listen, off.http.metrics), (None, true));
        for text in ["\":9153\"", "\"9153\"", "9153"] {
            let config = read(&format!("[http]\nlisten = {text}\n")).unwrap();
            assert_eq!(config.http.listen, Some("127.0.0.1:9153".parse().unwrap()), "{text}");
        }
        assert_eq!(off.http.max_connections, 256);
        assert_eq!(off.http.max_connections_per_client, 32);
        assert_eq!(off.http.header_timeout, std::time::Duration::from_secs(10));
        assert_eq!(off.http.body_timeout, std::time::Duration::from_secs(30));
        let v6 = read("[http]\nlisten = \"[::]:8080\"\nmetrics = false\n").unwrap();
        assert_eq!(v6.http.listen, Some("[::]:8080".parse().unwrap()));
        assert!(!v6.http.metrics);
    }

    #[test]
    fn mistakes_name_the_line() {
        for (text, needle) in [
            ("[http]\nlisten = \"localhost:80\"\n", "not an HTTP listen address"),
            ("[http]\nlisten = \":99999\"\n", "not an HTTP listen address"),
            ("[http]\nmetrics = \"yes\"\n", "invalid type"),
            ("[http]\nlisen = \":80\"\n", "did you mean `listen`"),
            ("[http]\nmax-connections = 0\n", "out of range"),
            ("[http]\nmax-connections-per-client = 0\n", "out of range"),
            ("[http]\nheader-timeout = \"10\"\n", "not a duration"),
            ("[http]\nbody-timeout = \"0s\"\n", "above zero"),
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(e.contains("t.toml:2"), "{text}: {e}");
        }
    }
}
