//! TLS for the encrypted transports: the server's certificate and key read from PEM
//! files, the rustls configuration built from `[tls]`, and key pins ([`pin`]).
//!
//! The configuration is rebuilt from the files by every reload and swapped in for new
//! connections (see [`Acceptor`]); a file that cannot be read keeps the last good one.

pub mod pin;
pub mod pinned;

use std::path::Path;
use std::sync::Arc;

use rustls::server::{ServerConfig, WebPkiClientVerifier};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::{TlsConfig, TlsVersion};
use crate::error::{Error, Result};
pub use pin::Pin;

/// ALPN of DNS over TLS (RFC 7858 §3.2, registered by RFC 9461 as "dot").
pub const ALPN_DOT: &[u8] = b"dot";
/// ALPN of DNS over QUIC (RFC 9250 §4.1.1).
pub const ALPN_DOQ: &[u8] = b"doq";

/// The certificate chain in the PEM file `path`, its first certificate the server's.
pub fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let bad = |why: String| Error::Tls(format!("{}: {why}", path.display()));
    let chain: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(pem_error(e)))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| bad(pem_error(e)))?;
    if chain.is_empty() {
        return Err(bad("no certificate in it (expected `-----BEGIN CERTIFICATE-----`)".into()));
    }
    Ok(chain)
}

/// The private key in the PEM file `path` (PKCS#8, PKCS#1 or SEC1).
pub fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| {
        let why = match e {
            rustls_pki_types::pem::Error::NoItemsFound => {
                "no private key in it (expected `-----BEGIN PRIVATE KEY-----`)".to_owned()
            }
            other => pem_error(other),
        };
        Error::Tls(format!("{}: {why}", path.display()))
    })
}

fn pem_error(e: rustls_pki_types::pem::Error) -> String {
    match e {
        rustls_pki_types::pem::Error::Io(io) => io.to_string(),
        other => format!("not a PEM file that can be used ({other:?})"),
    }
}

/// The crypto provider: aws-lc-rs, as for TSIG and signing.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The rustls server configuration `[tls]` describes, offering `alpn`. Checks that the
/// key belongs to the certificate. With `client_certs`, clients are asked for a
/// certificate (optional for them): verified against `client-ca` when it is set, else
/// taken for its key alone, whose [`Pin`] access rules compare.
pub fn server_config(tls: &TlsConfig, alpn: &[u8], client_certs: bool) -> Result<ServerConfig> {
    let (Some(cert), Some(key)) = (&tls.certificate, &tls.key) else {
        return Err(Error::Tls("[tls]: `certificate` and `key` are needed".into()));
    };
    let chain = read_certificates(cert)?;
    let key = read_key(key)?;
    let versions: &[&rustls::SupportedProtocolVersion] = match tls.min_version {
        TlsVersion::V12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::V13 => &[&rustls::version::TLS13],
    };
    let fail = |e: rustls::Error| Error::Tls(format!("[tls]: {e}"));
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(fail)?;
    let builder = match (&tls.client_ca, client_certs) {
        (Some(ca), _) => builder.with_client_cert_verifier(ca_verifier(ca)?),
        (None, true) => builder.with_client_cert_verifier(Arc::new(clients::AnyKey::new())),
        (None, false) => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        Error::Tls(format!(
            "{} and {}: {e}",
            cert.display(),
            tls.key.as_deref().unwrap_or(cert).display()
        ))
    })?;
    config.alpn_protocols = vec![alpn.to_vec()];
    if tls.session_tickets {
        config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().map_err(fail)?;
        config.send_tls13_tickets = 2;
    }
    Ok(config)
}

/// Verifies client certificates against the CA certificates in `path`; clients
/// without one are still served (DoT clients have none).
fn ca_verifier(path: &Path) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>> {
    let mut roots = RootCertStore::empty();
    for cert in read_certificates(path)? {
        roots.add(cert).map_err(|e| Error::Tls(format!("{}: {e}", path.display())))?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
        .allow_unauthenticated()
        .build()
        .map_err(|e| Error::Tls(format!("{}: {e}", path.display())))
}

mod clients;
