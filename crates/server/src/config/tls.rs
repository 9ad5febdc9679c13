//! `[tls]`: DNS over TLS (RFC 7858) and the certificate every encrypted transport
//! presents.
//!
//! Off unless `listen` is given. A listen address without a port gets port 853 (RFC
//! 7858 §3.1). Connections follow `[tcp]`'s idle timeout, I/O timeout and query cap, as
//! RFC 7766 asks of every stream transport, and are capped on their own
//! (`max-connections`, `max-connections-per-client`), so that handshakes, which cost
//! far more CPU than a TCP accept, never take the plain TCP clients' places. A handshake
//! must end within `handshake-timeout`.
//!
//! The certificate and key are read at start and again by every reload: a new
//! certificate serves new connections, established ones keep theirs.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use super::values;
pub use crate::tls::TlsVersion;

/// The DoT port (RFC 7858 §3.1).
pub const DOT_PORT: u16 = 853;

/// `[tls]`: see the module comment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TlsConfig {
    /// Addresses to serve DNS over TLS on; none (the default): no DoT.
    #[serde(default, deserialize_with = "listen")]
    pub listen: Vec<SocketAddr>,
    /// The certificate chain, PEM, the server's own certificate first.
    #[serde(default)]
    pub certificate: Option<PathBuf>,
    /// The private key of the certificate, PEM (PKCS#8, PKCS#1 or SEC1).
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// The oldest TLS version accepted: `1.3` (the default) or `1.2`.
    #[serde(default, deserialize_with = "version")]
    pub min_version: TlsVersion,
    /// CA certificates, PEM, for mutual TLS: access rules with `client-cert = true`
    /// allow only clients whose certificate chained to one of them (clients without a
    /// certificate, or with another, are still served, and named by their key's pin).
    #[serde(default)]
    pub client_ca: Option<PathBuf>,
    /// A handshake must complete within this time of the connection's start.
    #[serde(default = "default_handshake_timeout", deserialize_with = "values::duration")]
    pub handshake_timeout: Duration,
    /// TLS connections open at once, all clients together (handshakes included).
    #[serde(
        default = "default_max_connections",
        deserialize_with = "values::count_in::<_, 1, 1000000>"
    )]
    pub max_connections: u64,
    /// TLS connections open at once from one client (an IPv4 address or an IPv6 /64;
    /// 0: no limit).
    #[serde(
        default = "default_max_connections_per_client",
        deserialize_with = "values::count_in::<_, 0, 1000000>"
    )]
    pub max_connections_per_client: u64,
    /// Offer session tickets (RFC 8446 §4.6.1), so a returning client resumes without
    /// the full handshake.
    #[serde(default = "default_true")]
    pub session_tickets: bool,
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig {
            listen: Vec::new(),
            certificate: None,
            key: None,
            min_version: TlsVersion::default(),
            client_ca: None,
            handshake_timeout: default_handshake_timeout(),
            max_connections: default_max_connections(),
            max_connections_per_client: default_max_connections_per_client(),
            session_tickets: true,
        }
    }
}

impl TlsConfig {
    /// What the TLS layer needs to build its configuration: `None` without a
    /// certificate and key.
    pub fn server_tls(&self) -> Option<crate::tls::ServerTls<'_>> {
        Some(crate::tls::ServerTls {
            certificate: self.certificate.as_deref()?,
            key: self.key.as_deref()?,
            min_version: self.min_version,
            client_ca: self.client_ca.as_deref(),
            session_tickets: self.session_tickets,
        })
    }

    /// What is missing for the listeners asked for: a certificate and key are needed
    /// once any encrypted transport listens (`quic` says whether DoQ does).
    pub fn check(&self, quic: bool) -> Result<(), String> {
        if self.listen.is_empty() && !quic {
            return Ok(());
        }
        match (&self.certificate, &self.key) {
            (Some(_), Some(_)) => Ok(()),
            _ => Err("[tls]: encrypted transports need `certificate` and `key` (PEM files)".into()),
        }
    }
}

fn version<'de, D: Deserializer<'de>>(d: D) -> Result<TlsVersion, D::Error> {
    match String::deserialize(d)?.as_str() {
        "1.2" => Ok(TlsVersion::V12),
        "1.3" => Ok(TlsVersion::V13),
        other => Err(de::Error::custom(format!("`{other}`: expected \"1.2\" or \"1.3\""))),
    }
}

/// Reads DoT and DoQ listen addresses: `IP:PORT`, `[IPv6]:PORT` or an IP (port 853:
/// RFC 7858 §3.1, RFC 9250 §4.1.1).
pub(super) fn listen<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<SocketAddr>, D::Error> {
    let texts = super::xfr::string_or_list(d)?;
    texts
        .iter()
        .map(|text| {
            text.parse::<SocketAddr>()
                .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, DOT_PORT)))
                .map_err(|_| {
                    de::Error::custom(format!(
                        "`{text}` is not a listen address (expected `127.0.0.1:853`, \
                         `[::1]:853` or an IP)"
                    ))
                })
        })
        .collect()
}

fn default_handshake_timeout() -> Duration {
    Duration::from_secs(5)
}

fn default_max_connections() -> u64 {
    1024
}

fn default_max_connections_per_client() -> u64 {
    64
}

fn default_true() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<TlsConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_forms() {
        let tls = read("listen = [\"127.0.0.1\", \"[::1]:8853\"]").unwrap();
        assert_eq!(tls.listen[0].port(), DOT_PORT);
        assert_eq!(tls.listen[1].port(), 8853);
        assert_eq!(tls.min_version, TlsVersion::V13);
        assert!(tls.session_tickets);
        assert!(tls.check(false).unwrap_err().contains("certificate"));
        assert!(TlsConfig::default().check(false).is_ok());
        assert!(TlsConfig::default().check(true).is_err(), "DoQ needs a certificate too");
        assert!(read("min-version = \"1.1\"").unwrap_err().contains("1.2"));
        assert!(read("listen = \"localhost\"").unwrap_err().contains("listen address"));
    }
}
