//! Signing keys: generated or loaded from PKCS#8, with their DNSKEY RDATA, key tag and
//! DS, and the signature of a block of bytes in the form RRSIG records carry.
//!
//! Public keys in DNSKEY form: ECDSA the point's X and Y without the uncompressed-point
//! prefix (RFC 6605 §4), Ed25519 the 32 raw bytes (RFC 8080 §3), RSA the exponent and
//! modulus (RFC 3110 §2). Signatures: ECDSA r and s, each at the curve's size (RFC 6605
//! §4), Ed25519 the 64 raw bytes (RFC 8080 §4), RSA PKCS#1 v1.5 (RFC 5702 §3).

use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::{KeySize, PublicKeyComponents};
use aws_lc_rs::signature::{
    EcdsaKeyPair, EcdsaSigningAlgorithm, Ed25519KeyPair, KeyPair, RsaEncoding, RsaKeyPair,
    ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, RSA_PKCS1_SHA256,
    RSA_PKCS1_SHA512,
};
use tern_wire::Dname;

use crate::algorithm::Algorithm;
use crate::dnskey::{dnskey_rdata, ds_rdata, key_tag, DigestType, FLAGS_KSK, FLAGS_ZSK};
use crate::error::{Error, Result};

/// What a key signs in a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyRole {
    /// Key signing key: signs the DNSKEY RRset (and CDS/CDNSKEY); flags 257.
    Ksk,
    /// Zone signing key: signs every other RRset; flags 256.
    Zsk,
    /// Combined signing key: signs everything; flags 257.
    Csk,
}

impl KeyRole {
    /// The DNSKEY flags (RFC 4034 §2.1.1, the SEP bit of RFC 3757 for KSK and CSK).
    pub fn flags(self) -> u16 {
        match self {
            KeyRole::Zsk => FLAGS_ZSK,
            KeyRole::Ksk | KeyRole::Csk => FLAGS_KSK,
        }
    }

    /// True when the key signs the apex key RRsets (DNSKEY, CDS, CDNSKEY).
    pub fn signs_keys(self) -> bool {
        matches!(self, KeyRole::Ksk | KeyRole::Csk)
    }

    /// True when the key signs the zone's other RRsets.
    pub fn signs_zone(self) -> bool {
        matches!(self, KeyRole::Zsk | KeyRole::Csk)
    }
}

/// The private half, as the crypto library holds it.
enum Pair {
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
    Rsa(RsaKeyPair, &'static dyn RsaEncoding),
}

/// A key that signs: its algorithm, role, DNSKEY RDATA and key tag. `Debug` shows no
/// private material.
pub struct SigningKey {
    algorithm: Algorithm,
    role: KeyRole,
    pair: Pair,
    dnskey: Vec<u8>,
    key_tag: u16,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm)
            .field("role", &self.role)
            .field("key_tag", &self.key_tag)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A new key (RSA: 2048 bits, exponent 65537).
    pub fn generate(algorithm: Algorithm, role: KeyRole) -> Result<SigningKey> {
        let failed = |_| Error::Crypto("key generation failed");
        let pair = match algorithm {
            Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
                Pair::Ecdsa(EcdsaKeyPair::generate(ecdsa(algorithm)).map_err(failed)?)
            }
            Algorithm::Ed25519 => Pair::Ed25519(Ed25519KeyPair::generate().map_err(failed)?),
            Algorithm::RsaSha256 | Algorithm::RsaSha512 => Pair::Rsa(
                RsaKeyPair::generate(KeySize::Rsa2048).map_err(failed)?,
                rsa_encoding(algorithm),
            ),
        };
        SigningKey::new(algorithm, role, pair)
    }

    /// The key in `pkcs8` (unencrypted PKCS#8 DER, v1 or v2), for `algorithm`.
    pub fn from_pkcs8(algorithm: Algorithm, role: KeyRole, pkcs8: &[u8]) -> Result<SigningKey> {
        let rejected = |e: aws_lc_rs::error::KeyRejected| Error::KeyRejected {
            algorithm: algorithm.number(),
            reason: e.description_(),
        };
        let pair = match algorithm {
            Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
                Pair::Ecdsa(EcdsaKeyPair::from_pkcs8(ecdsa(algorithm), pkcs8).map_err(rejected)?)
            }
            Algorithm::Ed25519 => {
                Pair::Ed25519(Ed25519KeyPair::from_pkcs8(pkcs8).map_err(rejected)?)
            }
            Algorithm::RsaSha256 | Algorithm::RsaSha512 => {
                Pair::Rsa(RsaKeyPair::from_pkcs8(pkcs8).map_err(rejected)?, rsa_encoding(algorithm))
            }
        };
        SigningKey::new(algorithm, role, pair)
    }

    fn new(algorithm: Algorithm, role: KeyRole, pair: Pair) -> Result<SigningKey> {
        let public = public_key(&pair)?;
        let dnskey = dnskey_rdata(role.flags(), algorithm.number(), &public);
        let key_tag = key_tag(&dnskey);
        Ok(SigningKey { algorithm, role, pair, dnskey, key_tag })
    }

    /// The private key as unencrypted PKCS#8 v1 DER, for a key store.
    pub fn to_pkcs8(&self) -> Result<Vec<u8>> {
        let failed = |_| Error::Crypto("key export failed");
        Ok(match &self.pair {
            Pair::Ecdsa(p) => p.to_pkcs8v1().map_err(failed)?.as_ref().to_vec(),
            Pair::Ed25519(p) => p.to_pkcs8v1().map_err(failed)?.as_ref().to_vec(),
            Pair::Rsa(p, _) => {
                let der: Pkcs8V1Der<'static> = p.as_der().map_err(failed)?;
                der.as_ref().to_vec()
            }
        })
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The role.
    pub fn role(&self) -> KeyRole {
        self.role
    }

    /// The DNSKEY RDATA (flags from the role, protocol 3, algorithm, public key).
    pub fn dnskey(&self) -> &[u8] {
        &self.dnskey
    }

    /// The public key in DNSKEY form.
    pub fn public_key(&self) -> &[u8] {
        self.dnskey.get(4..).unwrap_or(&[])
    }

    /// The key tag (RFC 4034 Appendix B).
    pub fn key_tag(&self) -> u16 {
        self.key_tag
    }

    /// DS RDATA for this key at the zone's apex `owner`.
    pub fn ds(&self, owner: &Dname, digest_type: DigestType) -> Result<Vec<u8>> {
        ds_rdata(owner, &self.dnskey, digest_type)
    }

    /// Signs `data` (RRSIG's signed data, RFC 4034 §3.1.8.1): the signature field.
    pub fn sign(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.signature_len());
        self.sign_into(data, &mut out)?;
        Ok(out)
    }

    /// Appends the signature of `data` (see [`sign`](Self::sign)) to `out`: an RRSIG's
    /// RDATA is made in one buffer, without a copy of the signature. Never inlined, so
    /// that a profile of a zone's signing tells the crypto from the rest (a call per
    /// signature costs nothing beside it).
    #[inline(never)]
    pub fn sign_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let failed = |_| Error::Crypto("signing failed");
        match &self.pair {
            Pair::Ecdsa(p) => {
                out.extend_from_slice(p.sign(&SystemRandom::new(), data).map_err(failed)?.as_ref())
            }
            Pair::Ed25519(p) => out.extend_from_slice(p.sign(data).as_ref()),
            Pair::Rsa(p, encoding) => {
                let start = out.len();
                out.resize(start + p.public_modulus_len(), 0);
                let room = out.get_mut(start..).unwrap_or_default();
                if let Err(e) = p.sign(*encoding, &SystemRandom::new(), data, room) {
                    out.truncate(start);
                    return Err(failed(e));
                }
            }
        }
        Ok(())
    }

    /// The length of the key's signatures in bytes.
    pub fn signature_len(&self) -> usize {
        match &self.pair {
            Pair::Ecdsa(_) if self.algorithm == Algorithm::EcdsaP384Sha384 => 96,
            Pair::Ecdsa(_) | Pair::Ed25519(_) => 64,
            Pair::Rsa(p, _) => p.public_modulus_len(),
        }
    }
}

fn ecdsa(algorithm: Algorithm) -> &'static EcdsaSigningAlgorithm {
    match algorithm {
        Algorithm::EcdsaP384Sha384 => &ECDSA_P384_SHA384_FIXED_SIGNING,
        _ => &ECDSA_P256_SHA256_FIXED_SIGNING,
    }
}

fn rsa_encoding(algorithm: Algorithm) -> &'static dyn RsaEncoding {
    match algorithm {
        Algorithm::RsaSha512 => &RSA_PKCS1_SHA512,
        _ => &RSA_PKCS1_SHA256,
    }
}

/// The public key in DNSKEY form (see the module docs).
fn public_key(pair: &Pair) -> Result<Vec<u8>> {
    match pair {
        Pair::Ecdsa(p) => match p.public_key().as_ref().split_first() {
            Some((0x04, point)) => Ok(point.to_vec()),
            _ => Err(Error::Crypto("ECDSA public key is not an uncompressed point")),
        },
        Pair::Ed25519(p) => Ok(p.public_key().as_ref().to_vec()),
        Pair::Rsa(p, _) => crate::rsa_public::dnskey_form(p.public_key().as_ref()),
    }
}

/// Verifies `signature` over `data` with DNSKEY RDATA `dnskey` (tests and tools; a
/// validator needs more than this).
pub fn verify(dnskey: &[u8], data: &[u8], signature: &[u8]) -> Result<()> {
    use aws_lc_rs::signature::{
        UnparsedPublicKey, ECDSA_P256_SHA256_FIXED, ECDSA_P384_SHA384_FIXED, ED25519,
        RSA_PKCS1_2048_8192_SHA256, RSA_PKCS1_2048_8192_SHA512,
    };
    let algorithm = Algorithm::from_number(dnskey.get(3).copied().unwrap_or(0))?;
    let public = dnskey.get(4..).unwrap_or(&[]);
    let bad = |_| Error::Crypto("signature does not verify");
    match algorithm {
        Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
            let point = [&[0x04], public].concat();
            let alg = match algorithm {
                Algorithm::EcdsaP384Sha384 => &ECDSA_P384_SHA384_FIXED,
                _ => &ECDSA_P256_SHA256_FIXED,
            };
            UnparsedPublicKey::new(alg, point).verify(data, signature).map_err(bad)
        }
        Algorithm::Ed25519 => {
            UnparsedPublicKey::new(&ED25519, public).verify(data, signature).map_err(bad)
        }
        Algorithm::RsaSha256 | Algorithm::RsaSha512 => {
            let (n, e) = crate::rsa_public::split_dnskey_form(public)
                .ok_or(Error::Crypto("malformed RSA public key"))?;
            let alg = match algorithm {
                Algorithm::RsaSha512 => &RSA_PKCS1_2048_8192_SHA512,
                _ => &RSA_PKCS1_2048_8192_SHA256,
            };
            PublicKeyComponents { n, e }.verify(alg, data, signature).map_err(bad)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn algorithms() -> impl Iterator<Item = Algorithm> {
        Algorithm::ALL.into_iter()
    }

    #[test]
    fn generated_keys_sign_verifiably_and_survive_pkcs8() {
        for algorithm in algorithms() {
            let key = SigningKey::generate(algorithm, KeyRole::Zsk).unwrap();
            let sig = key.sign(b"data to sign").unwrap();
            verify(key.dnskey(), b"data to sign", &sig).unwrap();
            assert!(verify(key.dnskey(), b"other data", &sig).is_err(), "{algorithm}");
            let again = SigningKey::from_pkcs8(algorithm, KeyRole::Ksk, &key.to_pkcs8().unwrap());
            let again = again.unwrap();
            assert_eq!(again.public_key(), key.public_key(), "{algorithm}");
            assert_eq!(&again.dnskey()[..4], [1, 1, 3, algorithm.number()]);
            assert_eq!(&key.dnskey()[..4], [1, 0, 3, algorithm.number()]);
            verify(key.dnskey(), b"x", &again.sign(b"x").unwrap()).unwrap();
        }
    }

    #[test]
    fn key_and_signature_sizes() {
        let sizes = [
            (Algorithm::EcdsaP256Sha256, 64, 64),
            (Algorithm::EcdsaP384Sha384, 96, 96),
            (Algorithm::Ed25519, 32, 64),
            (Algorithm::RsaSha256, 1 + 3 + 256, 256),
        ];
        for (algorithm, public, signature) in sizes {
            let key = SigningKey::generate(algorithm, KeyRole::Csk).unwrap();
            assert_eq!(key.public_key().len(), public, "{algorithm}");
            assert_eq!(key.sign(b"x").unwrap().len(), signature, "{algorithm}");
            assert_eq!(key.signature_len(), signature, "{algorithm}");
            assert_eq!(key.key_tag(), key_tag(key.dnskey()));
        }
    }

    #[test]
    fn wrong_algorithm_or_bytes_are_refused() {
        let ed = SigningKey::generate(Algorithm::Ed25519, KeyRole::Zsk).unwrap();
        let pkcs8 = ed.to_pkcs8().unwrap();
        let err = SigningKey::from_pkcs8(Algorithm::EcdsaP256Sha256, KeyRole::Zsk, &pkcs8);
        assert!(matches!(err, Err(Error::KeyRejected { algorithm: 13, .. })));
        assert!(SigningKey::from_pkcs8(Algorithm::Ed25519, KeyRole::Zsk, b"junk").is_err());
        assert!(!format!("{ed:?}").contains("pair"), "no private material in Debug");
    }

    #[test]
    fn roles() {
        assert_eq!(KeyRole::Zsk.flags(), 256);
        assert_eq!((KeyRole::Ksk.flags(), KeyRole::Csk.flags()), (257, 257));
        assert!(KeyRole::Csk.signs_keys() && KeyRole::Csk.signs_zone());
        assert!(!KeyRole::Ksk.signs_zone() && !KeyRole::Zsk.signs_keys());
    }
}
