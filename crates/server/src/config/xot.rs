//! A `[[remote]]`'s TLS settings (zone transfers over TLS, RFC 9103, as a secondary):
//! `tls`, `tls-hostname`, `tls-ca`, `cert-key`, `tls-client-certificate` and
//! `tls-client-key`, checked to fit together ([`remote_tls`]) into a [`RemoteTls`].
//!
//! `tls = true` is strict TLS (RFC 9103 §9.3.2): the primary is authenticated by the
//! name its certificate is valid for (chained to `tls-ca`, or to the system's CAs), by
//! the pin of its key, or both; one of them is required. `tls = "opportunistic"`
//! (§9.3.1) encrypts without checking, and takes none of them.
//!
//! The files named are checked to be readable here; the server's client (`client::tls`)
//! reads them when it first connects, and builds its TLS configuration from them then.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, Deserializer};
use serde::Deserialize;

use super::xfr::RemoteConfig;
use crate::tls::Pin;

/// A remote's `tls`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsMode {
    /// `false`: UDP and TCP.
    #[default]
    Off,
    /// `true`: TLS, the primary authenticated (RFC 9103 §9.3.2).
    Strict,
    /// `"opportunistic"`: TLS, the primary not authenticated (RFC 9103 §9.3.1).
    Opportunistic,
}

/// Reads `tls`: `true`, `false` or `"opportunistic"`.
pub fn tls_mode<'de, D: Deserializer<'de>>(d: D) -> Result<TlsMode, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Mode {
        Flag(bool),
        Word(String),
    }
    match Mode::deserialize(d)? {
        Mode::Flag(true) => Ok(TlsMode::Strict),
        Mode::Flag(false) => Ok(TlsMode::Off),
        Mode::Word(word) if word == "opportunistic" => Ok(TlsMode::Opportunistic),
        Mode::Word(word) => {
            Err(de::Error::custom(format!("`{word}`: expected true, false or \"opportunistic\"")))
        }
    }
}

/// How a remote's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Not at all: encrypted only (`tls = "opportunistic"`).
    Opportunistic,
    /// By name and/or key pin (`tls = true`); at least one of them is given.
    Strict {
        /// The name its certificate must be valid for (`tls-hostname`), a valid host
        /// name or IP address, without a final dot.
        hostname: Option<String>,
        /// The CA certificates that name's certificate must chain to (`tls-ca`);
        /// `None`: the system's.
        ca: Option<PathBuf>,
        /// SHA-256 digests of SubjectPublicKeyInfos (`cert-key`), one of which its key
        /// must match.
        pins: Vec<[u8; 32]>,
    },
}

/// A `[[remote]]`'s TLS settings, checked, file names complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTls {
    /// How the remote's certificate is checked.
    pub check: Check,
    /// Tern's own certificate chain and key (mutual TLS, RFC 9103 §9.3.3), PEM files.
    pub client: Option<(PathBuf, PathBuf)>,
}

impl RemoteTls {
    /// What authenticates the remote, in words: `key pin`, `name ns1.example`, `name
    /// ns1.example and key pin`, `opportunistic`.
    pub fn auth(&self) -> String {
        match &self.check {
            Check::Opportunistic => "opportunistic".into(),
            Check::Strict { hostname: Some(name), pins, .. } if pins.is_empty() => {
                format!("name {name}")
            }
            Check::Strict { hostname: Some(name), .. } => format!("name {name} and key pin"),
            Check::Strict { hostname: None, .. } => "key pin".into(),
        }
    }

    /// As the control plane carries it to the network.
    pub fn into_tls(self) -> tern_control::peer::Tls {
        tern_control::peer::Tls::new(self.auth().into(), Arc::new(self))
    }
}

/// A remote's TLS settings, checked and with file names relative to `base`; `None`
/// without `tls`.
pub fn remote_tls(r: &RemoteConfig, base: &Path) -> Result<Option<RemoteTls>, String> {
    let checks = r.tls_hostname.is_some() || r.tls_ca.is_some() || !r.cert_key.is_empty();
    let client = match (&r.tls_client_certificate, &r.tls_client_key) {
        (Some(cert), Some(key)) => Some((readable(base, cert)?, readable(base, key)?)),
        (None, None) => None,
        _ => return Err("`tls-client-certificate` and `tls-client-key` go together".into()),
    };
    let check = match r.tls {
        TlsMode::Off if checks || client.is_some() => {
            return Err("`tls-hostname`, `tls-ca`, `cert-key` and `tls-client-*` are for \
                        transfers over TLS: add `tls = true`"
                .into())
        }
        TlsMode::Off => return Ok(None),
        TlsMode::Opportunistic if checks => {
            return Err("opportunistic TLS checks no certificate: drop `tls-hostname`, \
                        `tls-ca` and `cert-key`, or write `tls = true`"
                .into())
        }
        TlsMode::Opportunistic => Check::Opportunistic,
        TlsMode::Strict => strict_check(r, base)?,
    };
    Ok(Some(RemoteTls { check, client }))
}

/// How `tls = true` checks the primary: by `tls-hostname` (with `tls-ca`), by
/// `cert-key`, or both.
fn strict_check(r: &RemoteConfig, base: &Path) -> Result<Check, String> {
    if r.tls_hostname.is_none() && r.cert_key.is_empty() {
        return Err("`tls = true` needs a way to authenticate the primary: \
                    `tls-hostname = \"ns1.example\"` (the name its certificate must be valid \
                    for, issued by a CA of `tls-ca` or of the system) and/or \
                    `cert-key = [\"<base64 SHA-256 of its key>\"]`; or \
                    `tls = \"opportunistic\"` to encrypt without checking"
            .into());
    }
    if r.tls_ca.is_some() && r.tls_hostname.is_none() {
        return Err("`tls-ca` checks the certificate for `tls-hostname`: give it".into());
    }
    let hostname = r.tls_hostname.as_deref().map(host_name).transpose()?;
    let pins = r.cert_key.iter().map(|pin| Pin::parse(pin).map(|p| p.0));
    let pins = pins.collect::<Result<Vec<_>, _>>()?;
    let ca = r.tls_ca.as_ref().map(|ca| readable(base, ca)).transpose()?;
    Ok(Check::Strict { hostname, ca, pins })
}

/// `tls-hostname`, checked to be a name a certificate can be valid for.
fn host_name(name: &str) -> Result<String, String> {
    let name = name.trim_end_matches('.').to_owned();
    match rustls_pki_types::ServerName::try_from(name.as_str()) {
        Ok(_) => Ok(name),
        Err(_) => Err(format!("tls-hostname `{name}` is not a host name")),
    }
}

/// `file` relative to `base`, if it can be read (its contents are read when used).
fn readable(base: &Path, file: &Path) -> Result<PathBuf, String> {
    let path = base.join(file);
    std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(path)
}
