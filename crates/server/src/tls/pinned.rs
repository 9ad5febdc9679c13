//! Checking a primary's certificate when Tern fetches a zone over TLS (RFC 9103 §9.3),
//! other than by a CA and a name alone: by the pin of its key (strict TLS by key,
//! RFC 7858 §4.2's SPKI pin), by a name and a pin together, or not at all
//! (opportunistic TLS, RFC 9103 §9.3.1: encrypted against eavesdroppers, not against
//! an active attacker).
//!
//! In every case the handshake's signature is checked with the certificate's key, so a
//! pin proves the primary holds the pinned key. A pin mismatch is an error that says
//! which key was seen and which were expected ([`PinMismatch`]).

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, SignatureScheme};

use super::Pin;

/// What a primary's key must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// One of these pins.
    Pins(Vec<Pin>),
    /// Any key (opportunistic TLS).
    Any,
}

/// A primary's certificate checked by its key's pin, after a CA and name check when
/// one is given; see the module comment.
#[derive(Debug)]
pub struct PinnedServer {
    expected: Expected,
    /// The CA-and-name check that comes first, if any.
    chain: Option<Arc<dyn ServerCertVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedServer {
    /// Checks `expected` after `chain` (a CA-and-name verifier) when given.
    pub fn new(expected: Expected, chain: Option<Arc<dyn ServerCertVerifier>>) -> PinnedServer {
        PinnedServer {
            expected,
            chain,
            algorithms: super::provider().signature_verification_algorithms,
        }
    }
}

/// The primary's key is not one of the pinned keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinMismatch {
    /// The pin of the key the primary presented.
    pub got: Pin,
    /// The pins the remote's `cert-key` lists.
    pub expected: Vec<Pin>,
}

impl fmt::Display for PinMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key pin mismatch: got {}, expected one of ", self.got)?;
        for (i, pin) in self.expected.iter().enumerate() {
            write!(f, "{}{pin}", if i == 0 { "" } else { ", " })?;
        }
        Ok(())
    }
}

impl std::error::Error for PinMismatch {}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(chain) = &self.chain {
            chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)?;
        }
        let Some(got) = Pin::of_certificate(end_entity) else {
            return Err(rustls::Error::InvalidCertificate(CertificateError::BadEncoding));
        };
        match &self.expected {
            Expected::Any => Ok(ServerCertVerified::assertion()),
            Expected::Pins(pins) if pins.contains(&got) => Ok(ServerCertVerified::assertion()),
            Expected::Pins(pins) => {
                let mismatch = PinMismatch { got, expected: pins.clone() };
                Err(rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(
                    Arc::new(mismatch),
                ))))
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The [`PinMismatch`] inside a handshake error, if that is what it is.
pub fn pin_mismatch(error: &rustls::Error) -> Option<&PinMismatch> {
    match error {
        rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(inner))) => {
            inner.downcast_ref::<PinMismatch>()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls_pki_types::pem::PemObject;

    const NS1: &str = include_str!("testdata/ns1.pem");
    const NS1_PIN: &str = include_str!("testdata/ns1.pin");
    const OTHER_PIN: &str = include_str!("testdata/cert.pin");

    fn ns1() -> CertificateDer<'static> {
        CertificateDer::from_pem_slice(NS1.as_bytes()).unwrap()
    }

    fn verify(expected: Expected) -> Result<ServerCertVerified, rustls::Error> {
        let name = ServerName::try_from("ns1.example").unwrap();
        PinnedServer::new(expected, None).verify_server_cert(
            &ns1(),
            &[],
            &name,
            &[],
            UnixTime::now(),
        )
    }

    #[test]
    fn the_pinned_key_is_accepted() {
        let pins = vec![Pin::parse(OTHER_PIN).unwrap(), Pin::parse(NS1_PIN).unwrap()];
        assert!(verify(Expected::Pins(pins)).is_ok());
        assert!(verify(Expected::Any).is_ok(), "opportunistic: any key");
    }

    #[test]
    fn another_key_is_refused_saying_which() {
        let other = Pin::parse(OTHER_PIN).unwrap();
        let error = verify(Expected::Pins(vec![other])).unwrap_err();
        let mismatch = pin_mismatch(&error).expect("a pin mismatch");
        assert_eq!(mismatch.got, Pin::parse(NS1_PIN).unwrap());
        assert_eq!(
            mismatch.to_string(),
            format!(
                "key pin mismatch: got {}, expected one of {}",
                NS1_PIN.trim(),
                OTHER_PIN.trim()
            )
        );
    }

    #[test]
    fn a_certificate_that_is_no_certificate_is_refused() {
        let name = ServerName::try_from("ns1.example").unwrap();
        let garbage = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x01]);
        let verifier = PinnedServer::new(Expected::Any, None);
        let error =
            verifier.verify_server_cert(&garbage, &[], &name, &[], UnixTime::now()).unwrap_err();
        assert_eq!(error, rustls::Error::InvalidCertificate(CertificateError::BadEncoding));
    }
}
