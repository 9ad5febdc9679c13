//! The HMAC behind each TSIG algorithm: `aws-lc-rs` for the SHA family, and the
//! RustCrypto `hmac` and `md-5` crates for HMAC-MD5, which `aws-lc-rs` does not offer but
//! old peers still use (RFC 8945 §6: "HMAC-MD5.SIG-ALG.REG.INT", optional).

use ::hmac::Mac as _;
use aws_lc_rs::hmac as aws;

use crate::tsig::{Algorithm, MAX_MAC_LEN};

/// A keyed HMAC, ready to start digests.
#[derive(Clone)]
pub(crate) enum HmacKey {
    Aws(Box<aws::Key>),
    Md5(::hmac::Hmac<md5::Md5>),
}

/// One digest in progress. It lives on the stack for one message; the size difference
/// between the variants costs nothing there, where boxing would allocate per message.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub(crate) enum Context {
    Aws(aws::Context),
    Md5(::hmac::Hmac<md5::Md5>),
}

/// A finished MAC (at most [`MAX_MAC_LEN`] bytes).
pub(crate) struct Tag {
    len: usize,
    bytes: [u8; MAX_MAC_LEN],
}

impl HmacKey {
    /// Keys `algorithm` with `secret` (any length: HMAC hashes long keys, RFC 2104 §2).
    pub(crate) fn new(algorithm: Algorithm, secret: &[u8]) -> HmacKey {
        let sha = match algorithm {
            Algorithm::HmacMd5 => {
                // `new_from_slice` accepts keys of every length for HMAC.
                return match hmac::Hmac::<md5::Md5>::new_from_slice(secret) {
                    Ok(mac) => HmacKey::Md5(mac),
                    Err(_) => HmacKey::Aws(Box::new(aws::Key::new(aws::HMAC_SHA256, secret))),
                };
            }
            Algorithm::HmacSha1 => aws::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
            Algorithm::HmacSha224 => aws::HMAC_SHA224,
            Algorithm::HmacSha256 => aws::HMAC_SHA256,
            Algorithm::HmacSha384 => aws::HMAC_SHA384,
            Algorithm::HmacSha512 => aws::HMAC_SHA512,
        };
        HmacKey::Aws(Box::new(aws::Key::new(sha, secret)))
    }

    /// Starts a digest.
    pub(crate) fn context(&self) -> Context {
        match self {
            HmacKey::Aws(key) => Context::Aws(aws::Context::with_key(key)),
            HmacKey::Md5(mac) => Context::Md5(mac.clone()),
        }
    }
}

impl Context {
    /// Digests `data`.
    pub(crate) fn update(&mut self, data: &[u8]) {
        match self {
            Context::Aws(ctx) => ctx.update(data),
            Context::Md5(mac) => mac.update(data),
        }
    }

    /// Finishes the digest.
    pub(crate) fn sign(self) -> Tag {
        let mut tag = Tag { len: 0, bytes: [0; MAX_MAC_LEN] };
        let mut put = |mac: &[u8]| {
            let len = mac.len().min(MAX_MAC_LEN);
            if let (Some(dst), Some(src)) = (tag.bytes.get_mut(..len), mac.get(..len)) {
                dst.copy_from_slice(src);
                tag.len = len;
            }
        };
        match self {
            Context::Aws(ctx) => put(ctx.sign().as_ref()),
            Context::Md5(mac) => put(&mac.finalize().into_bytes()),
        }
        tag
    }
}

impl AsRef<[u8]> for Tag {
    fn as_ref(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn mac(algorithm: Algorithm, key: &[u8], data: &[u8]) -> String {
        let mut ctx = HmacKey::new(algorithm, key).context();
        ctx.update(data);
        hex(ctx.sign().as_ref())
    }

    /// RFC 2202 §2 test case 2 (HMAC-MD5) and RFC 4231 §4.3 test case 2 (HMAC-SHA-224).
    #[test]
    fn published_vectors() {
        let data = b"what do ya want for nothing?";
        assert_eq!(mac(Algorithm::HmacMd5, b"Jefe", data), "750c783e6ab0b503eaa86e310a5db738");
        assert_eq!(
            mac(Algorithm::HmacSha224, b"Jefe", data),
            "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44"
        );
    }

    /// Feeding in pieces gives the digest of the whole.
    #[test]
    fn pieces_equal_whole() {
        for algorithm in Algorithm::ALL {
            let key = HmacKey::new(algorithm, b"secret");
            let mut a = key.context();
            a.update(b"hello world");
            let mut b = key.context();
            b.update(b"hello ");
            b.update(b"world");
            assert_eq!(a.sign().as_ref(), b.sign().as_ref(), "{algorithm}");
        }
    }
}
