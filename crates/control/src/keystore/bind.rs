//! BIND's key files, read for import: `K<zone>+<alg>+<tag>.private` (Private-key-format
//! v1.2 and v1.3) and its `.key` (the DNSKEY record). A file from outside: the reader
//! is bounded (size, lines, fields), refuses what it does not know how to use, and says
//! which line is wrong.
//!
//! Algorithms imported: RSASHA256 (8) and RSASHA512 (10) from the CRT fields,
//! ECDSAP256SHA256 (13) and ECDSAP384SHA384 (14) from the private scalar checked
//! against the `.key`'s public key, ED25519 (15) from the seed checked likewise — each
//! turned into PKCS#8 by aws-lc-rs. Keys held in an HSM (`Engine:`, `Label:`) are not.
//! The v1.3 timing fields (`Created`, `Publish`, `Activate`, `Inactive`, `Delete`,
//! `YYYYMMDDHHMMSS` UTC) are kept.

use std::path::Path;

use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::signature::{
    EcdsaKeyPair, Ed25519KeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING,
    ECDSA_P384_SHA384_FIXED_SIGNING,
};
use tern_sign::Algorithm;
use tern_wire::{Dname, Name, Rtype};

use crate::error::{Error, Result};

/// The largest `.private` or `.key` file read.
pub const MAX_SIZE: usize = 64 * 1024;
/// The most lines read from one file.
const MAX_LINES: usize = 200;

/// The RSA fields of a `.private` file, in the order of PKCS#1's RSAPrivateKey
/// (RFC 8017 §A.1.2) after its version.
pub const RSA_FIELDS: [&str; 8] = [
    "Modulus",
    "PublicExponent",
    "PrivateExponent",
    "Prime1",
    "Prime2",
    "Exponent1",
    "Exponent2",
    "Coefficient",
];

/// The timings of a BIND key (seconds since the epoch).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BindTimes {
    /// `Created`.
    pub created: Option<u64>,
    /// `Publish`.
    pub publish: Option<u64>,
    /// `Activate`.
    pub activate: Option<u64>,
    /// `Inactive`.
    pub inactive: Option<u64>,
    /// `Delete`.
    pub delete: Option<u64>,
}

/// A `.private` file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindPrivate {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The key material: `PrivateKey` (ECDSA, Ed25519), or the eight RSA fields in
    /// [`RSA_FIELDS`] order.
    pub material: Vec<Vec<u8>>,
    /// The timings.
    pub times: BindTimes,
}

/// A BIND key as an operator hands it over (`ternctl zone-key-import`, the API): the
/// `.private` file's name (for messages) and both files' text, read by the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindFiles {
    /// The `.private` file's name; the `.key`'s is the same with `.key`.
    pub private_name: std::path::PathBuf,
    /// The `.private` file's text.
    pub private: String,
    /// The `.key` file's text.
    pub key: String,
    /// A KSK (flags 257) is taken as a CSK.
    pub csk: bool,
}

impl BindFiles {
    /// The `.key` file's name.
    pub fn key_name(&self) -> std::path::PathBuf {
        self.private_name.with_extension("key")
    }
}

fn error(file: &Path, line: Option<usize>, why: impl Into<String>) -> Error {
    Error::KeyStore { file: file.to_owned(), line, why: why.into() }
}

/// A `.private` file's `Field: value` lines: (line number, field, value).
type Fields<'a> = Vec<(usize, &'a str, &'a str)>;

/// Splits a `.private` file's text into its fields (bounded; no field twice).
fn read_fields<'a>(file: &Path, text: &'a [u8]) -> Result<Fields<'a>> {
    if text.len() > MAX_SIZE {
        return Err(error(file, None, format!("larger than {MAX_SIZE} bytes")));
    }
    let text = std::str::from_utf8(text).map_err(|_| error(file, None, "not text (UTF-8)"))?;
    let mut fields: Fields<'a> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if number > MAX_LINES {
            return Err(error(file, Some(number), "too many lines for a key file"));
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| error(file, Some(number), "expected `Field: value`"))?;
        if fields.iter().any(|f| f.1 == name) {
            return Err(error(file, Some(number), format!("`{name}` given twice")));
        }
        fields.push((number, name, value.trim()));
    }
    Ok(fields)
}

/// Reads a `.private` file's text (`file` names it in errors).
pub fn parse_private(file: &Path, text: &[u8]) -> Result<BindPrivate> {
    let fields = read_fields(file, text)?;
    let field = |name: &str| fields.iter().find(|f| f.1 == name).map(|f| (f.0, f.2));
    match fields.first() {
        Some((_, "Private-key-format", "v1.2" | "v1.3")) => {}
        Some((n, "Private-key-format", v)) => {
            return Err(error(file, Some(*n), format!("format {v}: only v1.2 and v1.3 are read")))
        }
        _ => return Err(error(file, Some(1), "not a BIND private key (no Private-key-format)")),
    }
    if let Some((n, _)) = field("Engine").or(field("Label")) {
        return Err(error(file, Some(n), "a key held in an HSM (Engine/Label) cannot be imported"));
    }
    let (n, alg) = field("Algorithm").ok_or_else(|| error(file, None, "no Algorithm"))?;
    let number = alg.split_whitespace().next().and_then(|a| a.parse::<u8>().ok());
    let algorithm = number
        .and_then(|a| Algorithm::from_number(a).ok())
        .ok_or_else(|| error(file, Some(n), format!("algorithm `{alg}` is not imported")))?;
    let names: &[&str] = if algorithm.is_rsa() { &RSA_FIELDS } else { &["PrivateKey"] };
    let mut material = Vec::with_capacity(names.len());
    for name in names {
        let (n, value) = field(name).ok_or_else(|| error(file, None, format!("no {name}")))?;
        let bytes = tern_wire::base64::decode(value)
            .map_err(|why| error(file, Some(n), format!("{name}: {why}")))?;
        material.push(bytes);
    }
    let time = |name: &str| -> Result<Option<u64>> {
        let Some((n, value)) = field(name) else { return Ok(None) };
        parse_time(value)
            .map(Some)
            .ok_or_else(|| error(file, Some(n), format!("{name}: `{value}` is not YYYYMMDDHHMMSS")))
    };
    let times = BindTimes {
        created: time("Created")?,
        publish: time("Publish")?,
        activate: time("Activate")?,
        inactive: time("Inactive")?,
        delete: time("Delete")?,
    };
    Ok(BindPrivate { algorithm, material, times })
}

/// `YYYYMMDDHHMMSS` (UTC) in seconds since the epoch; `None` when it is not one, or
/// before 1970.
pub fn parse_time(text: &str) -> Option<u64> {
    if text.len() != 14 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let part = |from: usize, to: usize| text.get(from..to)?.parse::<i64>().ok();
    let (year, month, day) = (part(0, 4)?, part(4, 6)?, part(6, 8)?);
    let (hour, minute, second) = (part(8, 10)?, part(10, 12)?, part(12, 14)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let days = tern_wire::rdata::days_from_civil(year, month, day);
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

/// A `.key` file's DNSKEY record: its owner and RDATA (the first DNSKEY line; comments
/// and the rest ignored).
pub fn parse_key(file: &Path, text: &[u8]) -> Result<(Name, Vec<u8>)> {
    if text.len() > MAX_SIZE {
        return Err(error(file, None, format!("larger than {MAX_SIZE} bytes")));
    }
    let text = std::str::from_utf8(text).map_err(|_| error(file, None, "not text (UTF-8)"))?;
    for (index, line) in text.lines().enumerate().take(MAX_LINES) {
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let n = Some(index + 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| w.eq_ignore_ascii_case("DNSKEY"));
        let at = at.ok_or_else(|| error(file, n, "expected a DNSKEY record"))?;
        let owner = words.first().copied().unwrap_or_default();
        let owner: Name =
            owner.parse().map_err(|e| error(file, n, format!("owner `{owner}`: {e}")))?;
        let rdata = words.get(at + 1..).unwrap_or_default().join(" ");
        let rdata = tern_wire::rdata::parse_str(Rtype::DNSKEY, &rdata, None)
            .map_err(|e| error(file, n, format!("DNSKEY: {e}")))?;
        return Ok((owner, rdata));
    }
    Err(error(file, None, "no DNSKEY record"))
}

/// The key in `private` as PKCS#8 DER, checked against the public key `public` (the
/// DNSKEY's key field).
pub fn to_pkcs8(file: &Path, private: &BindPrivate, public: &[u8]) -> Result<Vec<u8>> {
    let rejected = |e: aws_lc_rs::error::KeyRejected| {
        error(file, None, format!("the key does not load: {}", e.description_()))
    };
    let failed = |_| error(file, None, "the key does not export as PKCS#8");
    let first = private.material.first().map(Vec::as_slice).unwrap_or_default();
    match private.algorithm {
        Algorithm::EcdsaP256Sha256 | Algorithm::EcdsaP384Sha384 => {
            let alg = if private.algorithm == Algorithm::EcdsaP256Sha256 {
                &ECDSA_P256_SHA256_FIXED_SIGNING
            } else {
                &ECDSA_P384_SHA384_FIXED_SIGNING
            };
            let point = [&[0x04], public].concat();
            let pair = EcdsaKeyPair::from_private_key_and_public_key(alg, first, &point)
                .map_err(rejected)?;
            Ok(pair.to_pkcs8v1().map_err(failed)?.as_ref().to_vec())
        }
        Algorithm::Ed25519 => {
            let pair = Ed25519KeyPair::from_seed_and_public_key(first, public).map_err(rejected)?;
            Ok(pair.to_pkcs8v1().map_err(failed)?.as_ref().to_vec())
        }
        Algorithm::RsaSha256 | Algorithm::RsaSha512 => {
            let pair =
                RsaKeyPair::from_der(&rsa_private_key_der(&private.material)).map_err(rejected)?;
            let der: Pkcs8V1Der<'static> = pair.as_der().map_err(failed)?;
            Ok(der.as_ref().to_vec())
        }
    }
}

/// PKCS#1 RSAPrivateKey DER (RFC 8017 §A.1.2): version 0 and the eight integers.
fn rsa_private_key_der(fields: &[Vec<u8>]) -> Vec<u8> {
    let mut body = Vec::new();
    der_integer(&[0], &mut body);
    fields.iter().for_each(|f| der_integer(f, &mut body));
    let mut out = vec![0x30];
    der_length(body.len(), &mut out);
    out.extend_from_slice(&body);
    out
}

/// A DER INTEGER of the unsigned big-endian `value` (minimal, a zero byte before a high
/// bit).
fn der_integer(value: &[u8], out: &mut Vec<u8>) {
    let start = value.iter().position(|&b| b != 0).unwrap_or(value.len());
    let value = value.get(start..).unwrap_or_default();
    let pad = value.first().is_none_or(|&b| b & 0x80 != 0);
    out.push(0x02);
    der_length(value.len() + usize::from(pad), out);
    if pad {
        out.push(0);
    }
    out.extend_from_slice(value);
}

fn der_length(len: usize, out: &mut Vec<u8>) {
    if len < 0x80 {
        out.push(len as u8);
        return;
    }
    let bytes = len.to_be_bytes();
    let skip = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len() - 1);
    let bytes = bytes.get(skip..).unwrap_or_default();
    out.push(0x80 | bytes.len() as u8);
    out.extend_from_slice(bytes);
}

/// Checks that a `.key` file's owner is `zone`.
pub fn check_owner(file: &Path, owner: &Dname, zone: &Dname) -> Result<()> {
    if owner.as_wire().eq_ignore_ascii_case(zone.as_wire()) {
        Ok(())
    } else {
        Err(error(file, None, format!("the key is for {owner}, not {zone}")))
    }
}
