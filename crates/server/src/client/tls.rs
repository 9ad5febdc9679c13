//! Zone transfers over TLS as a secondary (RFC 9103, "XoT"): the TLS client
//! configuration of a `[[remote]]` with `tls` (made from its settings,
//! [`crate::config::xot`], at its first connection and kept until a reload), and the
//! TLS stream that SOA queries, transfers and forwarded updates to it go over
//! ([`connect`]).
//!
//! Only TLS 1.3 is offered (RFC 9103 §7.2), with ALPN "dot", which the primary must
//! select (§7.1). The primary is authenticated as the remote says (§9.3): by its
//! certificate's name, chained to `tls-ca` or to the system's CAs (strict TLS); by the
//! pin of its key (`cert-key`); by both; or not at all (opportunistic TLS, §9.3.1).
//! With `tls-client-certificate`, Tern presents a certificate of its own (mutual TLS,
//! §9.3.3). One client configuration serves every connection to the remote, so a
//! transfer resumes the TLS session of the SOA query before it.
//!
//! The stream reads the socket once per read at most, so the deadline of a transfer
//! (`max-time-in`, `idle-timeout-in`) binds a primary that trickles TLS records as it
//! binds one that trickles TCP bytes.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::ServerCertVerifier;
use rustls::client::{ResolvesClientCert, WebPkiServerVerifier};
use rustls::pki_types::ServerName;
use rustls::sign::CertifiedKey;
use rustls::{
    AlertDescription, CertificateError, ClientConfig, ClientConnection, RootCertStore,
    SignatureScheme,
};

use super::stream::{is_timeout, Connection};
use super::ClientError;
use crate::config::xot::{Check, RemoteTls};
use crate::tls::pinned::{self, Expected, PinnedServer};
use crate::tls::{Pin, ALPN_DOT};

/// What [`prepare`] makes of a remote's settings, kept in its
/// [`tern_control::peer::Tls`] for the connections that follow.
#[derive(Debug)]
struct Client {
    config: Arc<ClientConfig>,
    /// Whether `config` presents a client certificate.
    presents: bool,
    /// The name checked (`tls-hostname`), also sent as SNI; `None`: the remote's
    /// address stands for it (no SNI).
    hostname: Option<ServerName<'static>>,
}

/// The client configuration of `tls`: made at its first connection, then kept.
fn client(tls: &tern_control::peer::Tls) -> Result<Arc<Client>, ClientError> {
    let prepared = match tls.prepared.get() {
        Some(prepared) => Arc::clone(prepared),
        None => {
            let remote = tls.settings.downcast_ref::<RemoteTls>().ok_or_else(|| {
                ClientError::Tls("the remote's TLS settings are not the configuration's".into())
            })?;
            let made = Arc::new(prepare(remote).map_err(ClientError::Tls)?);
            Arc::clone(tls.prepared.get_or_init(|| made))
        }
    };
    prepared
        .downcast::<Client>()
        .map_err(|_| ClientError::Tls("TLS settings of another kind".into()))
}

/// Reads the files `remote` names and builds its client configuration.
fn prepare(remote: &RemoteTls) -> Result<Client, String> {
    let verifier = verifier(&remote.check)?;
    let hostname = match &remote.check {
        Check::Strict { hostname: Some(name), .. } => Some(
            ServerName::try_from(name.clone())
                .map_err(|_| format!("tls-hostname `{name}` is not a host name"))?,
        ),
        _ => None,
    };
    let fail = |e: rustls::Error| e.to_string();
    let builder = ClientConfig::builder_with_provider(crate::tls::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(fail)?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match &remote.client {
        Some((cert, key)) => {
            let chain = crate::tls::read_certificates(cert).map_err(|e| e.to_string())?;
            let key_der = crate::tls::read_key(key).map_err(|e| e.to_string())?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("{} and {}: {e}", cert.display(), key.display()))?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![ALPN_DOT.to_vec()];
    Ok(Client { config: Arc::new(config), presents: remote.client.is_some(), hostname })
}

/// The verifier `check` asks for.
fn verifier(check: &Check) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let Check::Strict { hostname, ca, pins } = check else {
        return Ok(Arc::new(PinnedServer::new(Expected::Any, None)));
    };
    let chain = match hostname {
        Some(_) => Some(chain_verifier(ca.as_deref())?),
        None => None,
    };
    Ok(match chain {
        Some(chain) if pins.is_empty() => chain,
        chain => {
            let pins = pins.iter().map(|digest| Pin(*digest)).collect();
            Arc::new(PinnedServer::new(Expected::Pins(pins), chain))
        }
    })
}

/// Checks a certificate's chain to the CAs in `ca` (else the system's) and its name.
fn chain_verifier(ca: Option<&std::path::Path>) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let mut roots = RootCertStore::empty();
    match ca {
        Some(path) => {
            for cert in crate::tls::read_certificates(path).map_err(|e| e.to_string())? {
                roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err("no CA certificates found on this system (/etc/ssl/certs): \
                            give `tls-ca`"
                    .into());
            }
        }
    }
    let verifier =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), crate::tls::provider())
            .build()
            .map_err(|e| e.to_string())?;
    Ok(verifier)
}

/// A TLS connection to a primary; reads as the module comment says.
#[derive(Debug)]
pub struct TlsStream {
    tls: ClientConnection,
    tcp: TcpStream,
    /// The name checked, or the address: what errors name.
    name: ServerName<'static>,
    /// Without a client certificate: whether the primary asked for one.
    asked: Option<Arc<NoCertificate>>,
    /// Whether the primary has sent any data.
    answered: bool,
}

/// Tern has no client certificate to give, and notes whether the primary asked for
/// one: a primary that requires one may close the connection after the handshake
/// without saying why (BIND does), and the error then says what is missing.
#[derive(Debug, Default)]
struct NoCertificate {
    asked: AtomicBool,
}

impl ResolvesClientCert for NoCertificate {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.asked.store(true, Ordering::Relaxed);
        None
    }

    fn has_certs(&self) -> bool {
        false
    }
}

/// Starts TLS on `tcp` to `addr` as `tls` says; the handshake must end by `deadline`,
/// and the primary must have selected ALPN "dot".
pub fn connect(
    tcp: TcpStream,
    addr: SocketAddr,
    tls: &tern_control::peer::Tls,
    deadline: Instant,
) -> Result<TlsStream, ClientError> {
    let client = client(tls)?;
    let name = client.hostname.clone().unwrap_or_else(|| ServerName::IpAddress(addr.ip().into()));
    let (config, asked) = match client.presents {
        true => (Arc::clone(&client.config), None),
        false => {
            // Its own resolver, to know what this connection was asked; the TLS
            // session store stays shared.
            let asked = Arc::new(NoCertificate::default());
            let mut config = ClientConfig::clone(&client.config);
            config.client_auth_cert_resolver = Arc::clone(&asked) as Arc<dyn ResolvesClientCert>;
            (Arc::new(config), Some(asked))
        }
    };
    let connection =
        ClientConnection::new(config, name.clone()).map_err(|e| ClientError::Tls(e.to_string()))?;
    let mut stream = TlsStream { tls: connection, tcp, name, asked, answered: false };
    stream.handshake(deadline)?;
    if stream.tls.alpn_protocol() != Some(ALPN_DOT) {
        return Err(ClientError::Tls(
            "ALPN refused: the primary did not select \"dot\" (RFC 9103 §7.1)".into(),
        ));
    }
    Ok(stream)
}

impl TlsStream {
    /// Runs the handshake, each read waiting at most until `deadline`.
    fn handshake(&mut self, deadline: Instant) -> Result<(), ClientError> {
        let started = Instant::now();
        while self.tls.is_handshaking() {
            self.flush_tls()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(handshake_timeout(deadline - started));
            }
            self.tcp.set_read_timeout(Some(left))?;
            match self.tls.read_tls(&mut self.tcp) {
                Ok(0) => {
                    return Err(ClientError::Tls(
                        "the primary closed the connection during the handshake".into(),
                    ))
                }
                Ok(_) => {}
                Err(e) if is_timeout(&e) => return Err(handshake_timeout(deadline - started)),
                Err(e) => return Err(e.into()),
            }
            if let Err(e) = self.tls.process_new_packets() {
                let _ = self.flush_tls(); // the alert saying why, if the primary listens
                return Err(ClientError::Tls(describe(&e, &self.name)));
            }
        }
        Ok(self.flush_tls()?)
    }

    /// Writes out what TLS has to send.
    fn flush_tls(&mut self) -> std::io::Result<()> {
        while self.tls.wants_write() {
            if self.tls.write_tls(&mut self.tcp)? == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }
}

impl Read for TlsStream {
    /// Plaintext when there is some; else one read of the socket, then plaintext if
    /// that brought a whole record, else `Interrupted` so that the caller looks at its
    /// deadline before reading again.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut socket_read = false;
        loop {
            match self.tls.reader().read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Ok(n) if n > 0 => {
                    self.answered = true;
                    return Ok(n);
                }
                Ok(_) => return self.closed(std::io::ErrorKind::UnexpectedEof.into()),
                Err(e) => return self.closed(e),
            }
            if socket_read {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            socket_read = true;
            self.tls.read_tls(&mut self.tcp)?;
            let processed = self.tls.process_new_packets();
            self.flush_tls()?;
            if let Err(e) = processed {
                let why = format!("TLS: {}", describe(&e, &self.name));
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
            }
        }
    }
}

impl TlsStream {
    /// The primary closed the connection (`e`): said as what it likely means when it
    /// had asked for the client certificate Tern does not have, and answered nothing.
    fn closed(&self, e: std::io::Error) -> std::io::Result<usize> {
        let asked = self.asked.as_ref().is_some_and(|a| a.asked.load(Ordering::Relaxed));
        if asked && !self.answered && e.kind() == std::io::ErrorKind::UnexpectedEof {
            let why = "TLS: the primary asked for a client certificate and closed the connection: \
                       it requires one (`tls-client-certificate`)";
            return Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, why));
        }
        Err(e)
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.tls.writer().write(buf)?;
        self.flush_tls()?;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tls.writer().flush()?;
        self.flush_tls()
    }
}

impl Connection for TlsStream {
    fn set_read_timeout(&mut self, wait: Duration) -> std::io::Result<()> {
        self.tcp.set_read_timeout(Some(wait))
    }
}

impl Drop for TlsStream {
    /// Says goodbye (close_notify) when it can do so at once.
    fn drop(&mut self) {
        self.tls.send_close_notify();
        let _ = self.tcp.set_nonblocking(true).and_then(|()| self.flush_tls());
    }
}

fn handshake_timeout(limit: Duration) -> ClientError {
    ClientError::Tls(format!(
        "no TLS handshake within `[transfer] timeout` ({} ms)",
        limit.as_millis()
    ))
}

/// A handshake failure in words: what failed, and for which name.
pub fn describe(error: &rustls::Error, name: &ServerName<'_>) -> String {
    if let Some(mismatch) = pinned::pin_mismatch(error) {
        return mismatch.to_string();
    }
    let name = name.to_str();
    match error {
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!("certificate for {name} not valid for that name ({error})"),
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "certificate for {name} not issued by a CA of `tls-ca` (or of the system without it)"
        ),
        rustls::Error::InvalidCertificate(_) => format!("certificate for {name}: {error}"),
        rustls::Error::AlertReceived(AlertDescription::NoApplicationProtocol) => {
            "ALPN refused: the primary does not speak \"dot\" (RFC 9103 §7.1)".into()
        }
        rustls::Error::AlertReceived(AlertDescription::CertificateRequired) => {
            "the primary requires a client certificate (`tls-client-certificate`)".into()
        }
        rustls::Error::AlertReceived(
            AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown,
        ) => format!("the primary refused Tern's client certificate ({error})"),
        rustls::Error::AlertReceived(AlertDescription::ProtocolVersion) => {
            "the primary does not speak TLS 1.3 (RFC 9103 §7.2 requires it)".into()
        }
        rustls::Error::AlertReceived(alert) => {
            format!("the primary refused the handshake ({alert:?})")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
