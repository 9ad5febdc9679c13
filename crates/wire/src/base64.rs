//! Base64 (RFC 4648 §4, with padding) for text outside zone files: TSIG secrets and
//! TLS key pins in the configuration. Zone files use the same coder through the RDATA
//! parsers.

/// Decodes one complete base64 string (white space inside is not allowed).
pub fn decode(text: &str) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::new();
    crate::rdata::encoding::decode_base64(text.as_bytes(), &mut out)?;
    Ok(out)
}

/// Encodes `data` as base64 with padding.
pub fn encode(data: &[u8]) -> String {
    let mut out = String::new();
    crate::rdata::encoding::write_base64(data, &mut out);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        let data = b"\x00\x01tern pin\xff";
        assert_eq!(super::decode(&super::encode(data)).unwrap(), data);
        assert_eq!(super::encode(b"foob"), "Zm9vYg==");
        assert!(super::decode("Zm9v!").is_err());
    }
}
