//! `[quic]`: DNS over QUIC (RFC 9250).
//!
//! Off unless `listen` is given. A listen address without a port gets port 853 (RFC 9250
//! §4.1.1). The certificate and key are `[tls]`'s, and a handshake must end within
//! `[tls] handshake-timeout`; a query must arrive in full within `[tcp] io-timeout` of
//! its stream's start. QUIC connections are capped on their own (`max-connections`,
//! `max-connections-per-client`), each may carry `max-streams-per-connection` queries at
//! once, and one without a query for `idle-timeout` is closed. Once `retry-above`
//! handshakes are in progress, a new client must prove its address with a Retry packet
//! (RFC 9000 §8.1) before the server spends a handshake on it.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

use super::values;

/// The DoQ port (RFC 9250 §4.1.1).
pub const DOQ_PORT: u16 = 853;

/// `[quic]`: see the module comment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct QuicConfig {
    /// UDP addresses to serve DNS over QUIC on; none (the default): no DoQ.
    #[serde(default, deserialize_with = "super::tls::listen")]
    pub listen: Vec<SocketAddr>,
    /// QUIC connections open at once, all clients together (handshakes included).
    #[serde(
        default = "default_max_connections",
        deserialize_with = "values::count_in::<_, 1, 1000000>"
    )]
    pub max_connections: u64,
    /// QUIC connections open at once from one client (an IPv4 address or an IPv6 /64;
    /// 0: no limit).
    #[serde(
        default = "default_max_connections_per_client",
        deserialize_with = "values::count_in::<_, 0, 1000000>"
    )]
    pub max_connections_per_client: u64,
    /// Streams (queries) a client may have open at once on one connection: the QUIC
    /// `initial_max_streams_bidi` the server grants (RFC 9000 §4.6).
    #[serde(default = "default_max_streams", deserialize_with = "values::count_in::<_, 1, 65535>")]
    pub max_streams_per_connection: u64,
    /// A connection without a query in progress for this long is closed (also QUIC's
    /// `max_idle_timeout`, RFC 9000 §10.1).
    #[serde(default = "default_idle_timeout", deserialize_with = "values::duration")]
    pub idle_timeout: Duration,
    /// Handshakes in progress from which on a new client must first prove its address
    /// with a Retry packet (RFC 9000 §8.1); 0: always.
    #[serde(
        default = "default_retry_above",
        deserialize_with = "values::count_in::<_, 0, 1000000>"
    )]
    pub retry_above: u64,
}

impl Default for QuicConfig {
    fn default() -> Self {
        QuicConfig {
            listen: Vec::new(),
            max_connections: default_max_connections(),
            max_connections_per_client: default_max_connections_per_client(),
            max_streams_per_connection: default_max_streams(),
            idle_timeout: default_idle_timeout(),
            retry_above: default_retry_above(),
        }
    }
}

fn default_max_connections() -> u64 {
    1024
}

fn default_max_connections_per_client() -> u64 {
    64
}

/// As HTTP/3 asks of its servers (RFC 9114 §6.1: at least 100 streams).
fn default_max_streams() -> u64 {
    100
}

fn default_idle_timeout() -> Duration {
    Duration::from_secs(10)
}

fn default_retry_above() -> u64 {
    128
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<QuicConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_forms() {
        let quic = read("listen = [\"127.0.0.1\", \"[::1]:8853\"]").unwrap();
        assert_eq!(quic.listen[0], "127.0.0.1:853".parse().unwrap());
        assert_eq!(quic.listen[1].port(), 8853);
        assert_eq!(quic, QuicConfig { listen: quic.listen.clone(), ..QuicConfig::default() });
        assert_eq!(read("").unwrap(), QuicConfig::default());
        let quic = read("listen = \"::1\"\nretry-above = 0\nidle-timeout = \"3s\"").unwrap();
        assert_eq!((quic.retry_above, quic.idle_timeout), (0, Duration::from_secs(3)));
        assert!(read("listen = \"localhost\"").unwrap_err().contains("listen address"));
        assert!(read("max-streams-per-connection = 0").is_err());
        assert!(read("max-streams = 5").unwrap_err().contains("unknown field"));
    }
}
