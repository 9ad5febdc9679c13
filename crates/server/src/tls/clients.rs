//! Asking clients for a certificate: any certificate holding a key is taken, for that
//! key, which access rules name by its [`Pin`]; whether it also chained to the client CA
//! is asked after the handshake ([`super::ClientCa::verifies`]). The handshake still
//! proves the client holds the key (its CertificateVerify signature is checked here),
//! so a pin authenticates the client as RFC 9103 §9.3.3 needs.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};

use super::Pin;

/// Accepts any client certificate that holds a key; see the module comment.
///
/// No CA names are sent as hints: a client (GnuTLS's, for one) then holds back a
/// certificate the names do not cover, and a self-signed one named by its pin would
/// never come.
#[derive(Debug)]
pub struct AnyKey {
    algorithms: WebPkiSupportedAlgorithms,
}

impl AnyKey {
    /// With the signature algorithms of the crypto provider.
    pub fn new() -> AnyKey {
        AnyKey { algorithms: super::provider().signature_verification_algorithms }
    }
}

impl ClientCertVerifier for AnyKey {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        match Pin::of_certificate(end_entity) {
            Some(_) => Ok(ClientCertVerified::assertion()),
            None => Err(rustls::Error::InvalidCertificate(CertificateError::BadEncoding)),
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
