//! TLS for the encrypted transports: the server's certificate and key read from PEM
//! files, the rustls configuration built from `[tls]`, and key pins ([`pin`]).
//!
//! The configuration is rebuilt from the files by every reload and swapped in for new
//! connections (see `crate::io::tls`); a file that cannot be read keeps the last good one.

pub mod pin;
pub mod pinned;

use std::path::Path;
use std::sync::Arc;

use rustls::server::{ServerConfig, WebPkiClientVerifier};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, Result};
pub use pin::{not_after, Pin};

/// ALPN of DNS over TLS (RFC 7858 §3.2, registered by RFC 9461 as "dot").
pub const ALPN_DOT: &[u8] = b"dot";
/// ALPN of DNS over QUIC (RFC 9250 §4.1.1).
pub const ALPN_DOQ: &[u8] = b"doq";

/// The oldest TLS version accepted (`[tls] min-version`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsVersion {
    /// TLS 1.2 (RFC 5246) and 1.3.
    V12,
    /// TLS 1.3 (RFC 8446) only.
    #[default]
    V13,
}

/// What a server's TLS configuration is made of (`[tls]`'s files and settings).
#[derive(Debug, Clone, Copy)]
pub struct ServerTls<'a> {
    /// The certificate chain, PEM.
    pub certificate: &'a Path,
    /// Its private key, PEM.
    pub key: &'a Path,
    /// The oldest version accepted.
    pub min_version: TlsVersion,
    /// CA certificates for client certificates, PEM.
    pub client_ca: Option<&'a Path>,
    /// Offer TLS 1.3 session tickets.
    pub session_tickets: bool,
}

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

/// The crypto provider of the server side: [`provider`] with TLS_AES_128_GCM_SHA256
/// first, which the server picks whatever the client's order ([`server_config`] sets
/// `ignore_client_order`). Its key schedule hashes with SHA-256, which CPUs do in
/// hardware where SHA-384 is done in software: a full handshake costs about a quarter
/// less CPU than with TLS_AES_256_GCM_SHA384, which clients list first (docs/benchmarks.md,
/// "Encrypted transports"). AES-128-GCM is as recommended as AES-256-GCM for TLS 1.3
/// (RFC 8446 §9.1 makes it the one suite every implementation must have).
pub fn server_provider() -> Arc<rustls::crypto::CryptoProvider> {
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    let first = rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256;
    provider.cipher_suites.retain(|s| s.suite() != first.suite());
    provider.cipher_suites.insert(0, first);
    Arc::new(provider)
}

/// The rustls server configuration `tls` describes (`[tls]`'s), offering `alpn`. Checks that the
/// key belongs to the certificate. With `client_certs` or a `client-ca`, clients are
/// asked for a certificate (optional for them) and any that holds a key is taken: its
/// [`Pin`] is what `cert-key` rules compare, and [`ClientCa::verifies`] says after the
/// handshake whether it chained to the client CA, for `client-cert` rules. A
/// self-signed certificate named by its pin is so accepted beside CA-signed ones.
pub fn server_config(tls: &ServerTls<'_>, alpn: &[u8], client_certs: bool) -> Result<Served> {
    let (cert, key_file) = (tls.certificate, tls.key);
    let chain = read_certificates(cert)?;
    let expires = chain.first().and_then(|c| not_after(c));
    warn_of_expiry(cert, expires);
    let key = read_key(key_file)?;
    let versions: &[&rustls::SupportedProtocolVersion] = match tls.min_version {
        TlsVersion::V12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::V13 => &[&rustls::version::TLS13],
    };
    let fail = |e: rustls::Error| Error::Tls(format!("[tls]: {e}"));
    let builder = ServerConfig::builder_with_provider(server_provider())
        .with_protocol_versions(versions)
        .map_err(fail)?;
    let ca = tls.client_ca.map(ClientCa::read).transpose()?;
    let builder = match (&ca, client_certs) {
        (None, false) => builder.with_no_client_auth(),
        _ => builder.with_client_cert_verifier(Arc::new(clients::AnyKey::new())),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| Error::Tls(format!("{} and {}: {e}", cert.display(), key_file.display())))?;
    config.alpn_protocols = vec![alpn.to_vec()];
    config.ignore_client_order = true;
    if tls.session_tickets {
        config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().map_err(fail)?;
        // One ticket: a DoT client resumes one connection at a time.
        config.send_tls13_tickets = 1;
    }
    Ok(Served { config, client_ca: ca, expires })
}

/// What [`server_config`] made.
#[derive(Debug)]
pub struct Served {
    /// The rustls configuration.
    pub config: ServerConfig,
    /// The client CA, with `client-ca`.
    pub client_ca: Option<ClientCa>,
    /// When the certificate stops being valid (seconds since the epoch), if readable.
    pub expires: Option<i64>,
}

/// Days before a certificate's end from which every start and reload warns of it.
const EXPIRY_WARNING_DAYS: i64 = 14;

/// Logs an error when the certificate in `path` has expired (clients that check it
/// refuse the server; opportunistic ones still connect), a warning when it expires
/// within [`EXPIRY_WARNING_DAYS`].
fn warn_of_expiry(path: &Path, expires: Option<i64>) {
    let Some(expires) = expires else { return };
    let now = i64::try_from(tern_control::clock::unix_now()).unwrap_or(i64::MAX);
    let days = (expires - now).div_euclid(86_400);
    let file = path.display();
    if expires <= now {
        tracing::error!(certificate = %file, expired_days_ago = -days, "TLS certificate expired: clients that check it refuse the server; renew it and reload");
    } else if days < EXPIRY_WARNING_DAYS {
        tracing::warn!(certificate = %file, days_left = days, "TLS certificate expires soon: renew it and reload");
    }
}

/// What a handshake told of the client, from the certificate chain it presented (empty:
/// none): the pin of its certificate's key, and whether the chain leads to `client_ca`.
/// DoT and DoQ alike.
pub fn client_identity(
    chain: &[CertificateDer<'_>],
    client_ca: Option<&ClientCa>,
) -> crate::handler::TlsClient {
    let pin = chain.first().and_then(|c| Pin::of_certificate(c)).map(|p| p.0);
    let verified = client_ca.is_some_and(|ca| ca.verifies(chain));
    crate::handler::TlsClient { pin, verified }
}

/// The client CA (`[tls] client-ca`): checks client certificates after the handshake.
#[derive(Debug, Clone)]
pub struct ClientCa {
    verifier: Arc<dyn rustls::server::danger::ClientCertVerifier>,
}

impl ClientCa {
    /// Reads the CA certificates in `path`.
    fn read(path: &Path) -> Result<ClientCa> {
        let mut roots = RootCertStore::empty();
        for cert in read_certificates(path)? {
            roots.add(cert).map_err(|e| Error::Tls(format!("{}: {e}", path.display())))?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .allow_unauthenticated()
            .build()
            .map_err(|e| Error::Tls(format!("{}: {e}", path.display())))?;
        Ok(ClientCa { verifier })
    }

    /// Whether the client's `chain` (its own certificate first) chains to the CA and is
    /// valid now, for a client.
    pub fn verifies(&self, chain: &[CertificateDer<'_>]) -> bool {
        let Some((end, intermediates)) = chain.split_first() else { return false };
        let now = rustls_pki_types::UnixTime::now();
        self.verifier.verify_client_cert(end, intermediates, now).is_ok()
    }
}

mod clients;
