//! `[http]`: the HTTP listener, which serves the metrics (`GET /metrics`) and, with
//! `api-token-file`, the API (`/api/v1`, [`crate::http::api`]).
//!
//! Off unless `listen` is given. A listen address without a host (`":9153"`, `"9153"`
//! or the number `9153`) listens on loopback only: the metrics say much about the
//! server, so reaching them from elsewhere is a choice to write out. The listener is
//! bound at start, with the DNS sockets; a reload warns that a change waits for the
//! next restart.

use std::net::{Ipv4Addr, SocketAddr};

use serde::de::{self, Deserializer};
use serde::Deserialize;

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
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig { listen: None, metrics: true, api_token_file: None }
    }
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

fn default_true() -> bool {
    true
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
        ] {
            let e = read(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(e.contains("t.toml:2"), "{text}: {e}");
        }
    }
}
