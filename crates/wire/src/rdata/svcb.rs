//! SVCB and HTTPS (RFC 9460): priority, target name, and a list of SvcParams.
//!
//! Keys: mandatory, alpn, no-default-alpn, port, ipv4hint, ech, ipv6hint (RFC 9460 §7),
//! dohpath (RFC 9461 §5), ohttp (RFC 9540 §4), and `keyNNNNN` for any key, whose value
//! is then the raw wire value.
//!
//! Presentation values are character strings (Appendix A), quoted or not; `key="…"` must
//! have no blank after `=`. List values (mandatory, alpn, the hints) are split at commas
//! after character-string unescaping, with `\,` and `\\` escaping a comma or backslash
//! inside an item (Appendix A.1). Params may come in any order in text; on the wire they
//! are sorted by key.
//!
//! One set of rules serves both directions: parsed text is checked by the wire checker.
//! Keys strictly increasing and never 65535 (§14.3.2); mandatory non-empty, sorted,
//! without itself, listing only keys present (§8); alpn ids non-empty and the list
//! non-empty (§7.1.1); no-default-alpn and ohttp empty, and no-default-alpn only beside
//! alpn (§7.1.1, "self-consistent", §2.4.3); port 2 bytes; hints non-empty multiples of
//! 4 and 16 bytes; ech non-empty. AliasMode records with params are accepted: RFC 9460
//! §2.4.2 says SHOULD NOT, and recipients ignore them.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::encoding;
use super::fields::{self, RdataReader};
use super::format::{rdata_format, FieldKind};
use super::kinds::{NameKind, U16};
use super::{bad, push_fmt};
use crate::error::{Error, Result};
use crate::name::{Dname, Name};
use crate::text::{excerpt, Lexer, Token};

/// One SvcParam: a key and its raw wire value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SvcParam {
    /// The SvcParamKey.
    pub key: u16,
    /// The value in wire form.
    pub value: Vec<u8>,
}

impl SvcParam {
    /// Keys the server must understand (RFC 9460 §8).
    pub const MANDATORY: u16 = 0;
    /// ALPN protocol ids (§7.1).
    pub const ALPN: u16 = 1;
    /// The default ALPN is not supported (§7.1).
    pub const NO_DEFAULT_ALPN: u16 = 2;
    /// TCP or UDP port (§7.2).
    pub const PORT: u16 = 3;
    /// IPv4 address hints (§7.3).
    pub const IPV4HINT: u16 = 4;
    /// Encrypted ClientHello configuration (§7.1 of the ECH spec; RFC 9460 §14.3.2).
    pub const ECH: u16 = 5;
    /// IPv6 address hints (§7.3).
    pub const IPV6HINT: u16 = 6;
    /// DNS over HTTPS path template (RFC 9461 §5).
    pub const DOHPATH: u16 = 7;
    /// Oblivious HTTP gateway (RFC 9540 §4).
    pub const OHTTP: u16 = 8;
    /// Reserved, "invalid key" (§14.3.2).
    pub const INVALID: u16 = 65535;
}

/// Key names (RFC 9460 §14.3.2 registry).
const KEY_NAMES: &[(u16, &str)] = &[
    (SvcParam::MANDATORY, "mandatory"),
    (SvcParam::ALPN, "alpn"),
    (SvcParam::NO_DEFAULT_ALPN, "no-default-alpn"),
    (SvcParam::PORT, "port"),
    (SvcParam::IPV4HINT, "ipv4hint"),
    (SvcParam::ECH, "ech"),
    (SvcParam::IPV6HINT, "ipv6hint"),
    (SvcParam::DOHPATH, "dohpath"),
    (SvcParam::OHTTP, "ohttp"),
];

/// Writes a key's presentation name.
fn write_key(key: u16, out: &mut String) {
    match KEY_NAMES.iter().find(|(k, _)| *k == key) {
        Some((_, name)) => out.push_str(name),
        None => push_fmt(out, format_args!("key{key}")),
    }
}

/// Parses a key name; the second value is true for the generic `keyNNNNN` spelling.
fn parse_key(text: &[u8]) -> Option<(u16, bool)> {
    if let Some(&(key, _)) = KEY_NAMES.iter().find(|(_, name)| name.as_bytes() == text) {
        return Some((key, false));
    }
    let digits = text.strip_prefix(b"key")?;
    let leading_zero = digits.len() > 1 && digits.first() == Some(&b'0');
    if digits.is_empty()
        || digits.len() > 5
        || leading_zero
        || !digits.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let value = digits.iter().fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0'));
    u16::try_from(value).ok().filter(|&k| k != SvcParam::INVALID).map(|k| (k, true))
}

// ---------------------------------------------------------------------------------------
// Wire rules

/// Iterates over raw params `(offset, key, value)`, checking the framing and that keys
/// strictly increase.
struct RawParams<'a> {
    rd: RdataReader<'a>,
    base: usize,
    last: Option<u16>,
}

impl<'a> RawParams<'a> {
    fn new(data: &'a [u8], base: usize) -> Self {
        RawParams { rd: RdataReader::new(data), base, last: None }
    }

    fn next_param(&mut self) -> Result<Option<(usize, u16, &'a [u8])>> {
        if self.rd.is_empty() {
            return Ok(None);
        }
        let at = self.base + self.rd.pos();
        let key = self.rd.u16().map_err(|e| e.shifted(self.base))?;
        if self.last.is_some_and(|last| key <= last) {
            return Err(bad(at, "SvcParam keys not in strictly increasing order"));
        }
        if key == SvcParam::INVALID {
            return Err(bad(at, "SvcParam key 65535 is reserved"));
        }
        self.last = Some(key);
        let len = self.rd.u16().map_err(|e| e.shifted(self.base))?;
        let value = self.rd.bytes(usize::from(len)).map_err(|e| e.shifted(self.base))?;
        Ok(Some((at, key, value)))
    }
}

/// Checks one param's value against its key's format.
fn check_value(at: usize, key: u16, value: &[u8]) -> Result<()> {
    let ok = match key {
        SvcParam::MANDATORY => check_mandatory_list(value),
        SvcParam::ALPN => !value.is_empty() && check_alpn_ids(value),
        SvcParam::NO_DEFAULT_ALPN | SvcParam::OHTTP => value.is_empty(),
        SvcParam::PORT => value.len() == 2,
        SvcParam::IPV4HINT => !value.is_empty() && value.len() % 4 == 0,
        SvcParam::IPV6HINT => !value.is_empty() && value.len() % 16 == 0,
        SvcParam::ECH => !value.is_empty(),
        _ => true,
    };
    if !ok {
        return Err(bad(at, "SvcParam value does not follow its key's format"));
    }
    Ok(())
}

/// mandatory: non-empty, even length, strictly increasing keys, not listing itself.
fn check_mandatory_list(value: &[u8]) -> bool {
    if value.is_empty() || value.len() % 2 != 0 {
        return false;
    }
    let mut last: Option<u16> = None;
    for pair in value.chunks_exact(2) {
        let key = u16::from_be_bytes([
            pair.first().copied().unwrap_or(0),
            pair.get(1).copied().unwrap_or(0),
        ]);
        if key == SvcParam::MANDATORY || last.is_some_and(|l| key <= l) {
            return false;
        }
        last = Some(key);
    }
    true
}

/// alpn: a sequence of non-empty length-prefixed ids filling the value exactly.
fn check_alpn_ids(value: &[u8]) -> bool {
    let mut rd = RdataReader::new(value);
    while !rd.is_empty() {
        match rd.char_string() {
            Ok(id) if !id.is_empty() => {}
            _ => return false,
        }
    }
    true
}

/// Checks the params region of an SVCB RDATA (starting at offset `base`).
fn check_params(data: &[u8], base: usize) -> Result<()> {
    let mut params = RawParams::new(data, base);
    let mut mandatory: &[u8] = &[];
    let (mut has_alpn, mut no_default_alpn) = (false, None);
    while let Some((at, key, value)) = params.next_param()? {
        check_value(at, key, value)?;
        match key {
            SvcParam::MANDATORY => mandatory = value,
            SvcParam::ALPN => has_alpn = true,
            SvcParam::NO_DEFAULT_ALPN => no_default_alpn = Some(at),
            _ => {}
        }
    }
    if let Some(at) = no_default_alpn.filter(|_| !has_alpn) {
        return Err(bad(at, "no-default-alpn without alpn"));
    }
    for pair in mandatory.chunks_exact(2) {
        let wanted = u16::from_be_bytes([
            pair.first().copied().unwrap_or(0),
            pair.get(1).copied().unwrap_or(0),
        ]);
        if !has_key(data, wanted) {
            return Err(bad(base, "a key listed in mandatory is missing"));
        }
    }
    Ok(())
}

/// True if the (already checked) params region has `key`.
fn has_key(data: &[u8], key: u16) -> bool {
    let mut params = RawParams::new(data, 0);
    while let Ok(Some((_, k, _))) = params.next_param() {
        if k == key {
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------------------
// Printing

/// Writes a value list item with `,` and `\` escaped (Appendix A.1).
fn escape_list_item(item: &[u8], out: &mut Vec<u8>) {
    for &b in item {
        if b == b',' || b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
}

/// Prints one checked param.
fn print_param(key: u16, value: &[u8], out: &mut String) {
    write_key(key, out);
    if value.is_empty() {
        return;
    }
    out.push('=');
    match key {
        SvcParam::MANDATORY => {
            for (i, pair) in value.chunks_exact(2).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let k = u16::from_be_bytes([
                    pair.first().copied().unwrap_or(0),
                    pair.get(1).copied().unwrap_or(0),
                ]);
                write_key(k, out);
            }
        }
        SvcParam::ALPN => {
            let mut list = Vec::with_capacity(value.len() + 8);
            let mut rd = RdataReader::new(value);
            while let Ok(id) = rd.char_string() {
                if !list.is_empty() {
                    list.push(b',');
                }
                escape_list_item(id, &mut list);
            }
            let _ = fields::write_char_string(&list, out);
        }
        SvcParam::PORT => push_fmt(
            out,
            format_args!(
                "{}",
                u16::from_be_bytes([
                    value.first().copied().unwrap_or(0),
                    value.get(1).copied().unwrap_or(0)
                ])
            ),
        ),
        SvcParam::IPV4HINT => write_addresses::<4>(value, out),
        SvcParam::IPV6HINT => write_addresses::<16>(value, out),
        SvcParam::ECH => encoding::write_base64(value, out),
        _ => {
            let _ = fields::write_char_string(value, out);
        }
    }
}

/// Writes a comma-separated list of addresses of `N` bytes.
fn write_addresses<const N: usize>(value: &[u8], out: &mut String) {
    for (i, chunk) in value.chunks_exact(N).enumerate() {
        if i > 0 {
            out.push(',');
        }
        match N {
            4 => push_fmt(
                out,
                format_args!("{}", Ipv4Addr::from(<[u8; 4]>::try_from(chunk).unwrap_or([0; 4]))),
            ),
            _ => push_fmt(
                out,
                format_args!("{}", Ipv6Addr::from(<[u8; 16]>::try_from(chunk).unwrap_or([0; 16]))),
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Splits an unescaped value list at commas, undoing `\,` and `\\`, and calls `each`
/// with every item.
fn split_list(
    value: &[u8],
    mut each: impl FnMut(&[u8]) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    let mut item = Vec::new();
    let mut rest = value;
    loop {
        match rest.split_first() {
            None => return each(&item),
            Some((b',', tail)) => {
                each(&item)?;
                item.clear();
                rest = tail;
            }
            Some((b'\\', tail)) => match tail.split_first() {
                Some((&c @ (b',' | b'\\'), tail)) => {
                    item.push(c);
                    rest = tail;
                }
                _ => return Err("only \\, and \\\\ may be escaped in a value list"),
            },
            Some((&c, tail)) => {
                item.push(c);
                rest = tail;
            }
        }
    }
}

/// Parses an address list into wire form.
fn parse_addresses<A: std::str::FromStr>(
    value: &[u8],
    octets: impl Fn(A) -> Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), &'static str> {
    split_list(value, |item| {
        let addr = std::str::from_utf8(item)
            .ok()
            .and_then(|s| s.parse::<A>().ok())
            .ok_or("bad address in the hint list")?;
        out.extend_from_slice(&octets(addr));
        Ok(())
    })
}

/// Converts an unescaped presentation value of a named key to wire form.
fn parse_named_value(key: u16, value: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    match key {
        SvcParam::MANDATORY => {
            let mut keys = Vec::new();
            split_list(value, |item| {
                let (k, _) = parse_key(item).ok_or("unknown key in the mandatory list")?;
                keys.push(k);
                Ok(())
            })?;
            keys.sort_unstable();
            if keys.windows(2).any(|w| w.first() == w.get(1)) {
                return Err("a key appears twice in the mandatory list");
            }
            keys.iter().for_each(|k| out.extend_from_slice(&k.to_be_bytes()));
        }
        SvcParam::ALPN => split_list(value, |id| {
            let len = u8::try_from(id.len())
                .ok()
                .filter(|&l| l > 0)
                .ok_or("alpn ids must be 1 to 255 bytes")?;
            out.push(len);
            out.extend_from_slice(id);
            Ok(())
        })?,
        SvcParam::NO_DEFAULT_ALPN | SvcParam::OHTTP if !value.is_empty() => {
            return Err("this key takes no value")
        }
        SvcParam::PORT => {
            let port = crate::types::parse_decimal(value)
                .and_then(|v| u16::try_from(v).ok())
                .ok_or("port must be a number 0..65535")?;
            out.extend_from_slice(&port.to_be_bytes());
        }
        SvcParam::IPV4HINT => parse_addresses::<Ipv4Addr>(value, |a| a.octets().to_vec(), out)?,
        SvcParam::IPV6HINT => parse_addresses::<Ipv6Addr>(value, |a| a.octets().to_vec(), out)?,
        SvcParam::ECH => encoding::decode_base64(value, out)?,
        _ => out.extend_from_slice(value),
    }
    Ok(())
}

/// Keys whose value may not be empty in text (§7 and D.3).
fn needs_value(key: u16) -> bool {
    matches!(
        key,
        SvcParam::MANDATORY
            | SvcParam::ALPN
            | SvcParam::PORT
            | SvcParam::IPV4HINT
            | SvcParam::IPV6HINT
            | SvcParam::ECH
    )
}

/// One param read from text: its key and where its wire value sits in the scratch buffer.
struct Pending<'a> {
    key: u16,
    start: usize,
    end: usize,
    token: Token<'a>,
}

/// Reads `key[=value]` (the value possibly an adjacent quoted token) and appends the wire
/// value to `scratch`.
fn parse_param<'a>(
    lx: &mut Lexer<'a>,
    token: Token<'a>,
    scratch: &mut Vec<u8>,
) -> Result<Pending<'a>> {
    if token.quoted() {
        return Err(token.error("expected a SvcParam (key=value), found a quoted string"));
    }
    let (key_text, value_token) = match token.text.iter().position(|&c| c == b'=') {
        None => (token.text, None),
        Some(i) => {
            let key = token.text.get(..i).unwrap_or(&[]);
            let rest = token.text.get(i + 1..).unwrap_or(&[]);
            if rest.is_empty() {
                (key, Some(quoted_value(lx, &token)?))
            } else {
                let column = token.column() + u32::try_from(i + 1).unwrap_or(0);
                (key, Some(Token::new(rest, false, token.line(), column)))
            }
        }
    };
    let (key, generic) = parse_key(key_text)
        .ok_or_else(|| token.error(format!("unknown SvcParam key '{}'", excerpt(key_text))))?;
    let mut value = Vec::new();
    if let Some(v) = &value_token {
        fields::unescape_into(v, &mut value)?;
    }
    if !generic && needs_value(key) && value.is_empty() {
        return Err(token.error(format!("SvcParam '{}' needs a value", excerpt(key_text))));
    }
    let start = scratch.len();
    if generic {
        scratch.extend_from_slice(&value);
    } else {
        parse_named_value(key, &value, scratch)
            .map_err(|m| value_token.unwrap_or(token).error(m))?;
    }
    Ok(Pending { key, start, end: scratch.len(), token })
}

/// The quoted token that must follow `key=` without a blank.
fn quoted_value<'a>(lx: &mut Lexer<'a>, key_token: &Token<'a>) -> Result<Token<'a>> {
    let next = lx.peek_token()?;
    let len = u32::try_from(key_token.text.len()).unwrap_or(u32::MAX);
    match next {
        Some(v)
            if v.quoted()
                && v.line() == key_token.line()
                && v.column() == key_token.column() + len =>
        {
            lx.next_token()?;
            Ok(v)
        }
        _ => Err(key_token.error("expected a quoted value right after '='")),
    }
}

/// The SvcParams field kind: everything after the target name.
pub(crate) struct SvcParams;

impl FieldKind for SvcParams {
    type Value = Vec<SvcParam>;

    fn parse(lx: &mut Lexer<'_>, _: Option<&Dname>, out: &mut Vec<u8>) -> Result<()> {
        let mut scratch = Vec::new();
        let mut params = Vec::new();
        while let Some(token) = lx.next_token()? {
            params.push(parse_param(lx, token, &mut scratch)?);
        }
        params.sort_by_key(|p| p.key);
        if let Some(dup) =
            params.windows(2).find(|w| w.first().map(|p| p.key) == w.get(1).map(|p| p.key))
        {
            let token = dup.get(1).map_or_else(
                || lx.error_here("duplicate SvcParam key"),
                |p| p.token.error("duplicate SvcParam key"),
            );
            return Err(token);
        }
        let start = out.len();
        for p in &params {
            let value = scratch.get(p.start..p.end).unwrap_or(&[]);
            let len = u16::try_from(value.len())
                .map_err(|_| p.token.error("SvcParam value longer than 65535 bytes"))?;
            out.extend_from_slice(&p.key.to_be_bytes());
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(value);
        }
        check_params(out.get(start..).unwrap_or(&[]), 0)
            .map_err(|e| syntax_from(e, params.first().map(|p| p.token), lx))
    }

    fn print(rd: &mut RdataReader<'_>, out: &mut String) -> Result<()> {
        let base = rd.pos();
        let data = rd.rest();
        check_params(data, base)?;
        let mut params = RawParams::new(data, base);
        let mut first = true;
        while let Some((_, key, value)) = params.next_param()? {
            if !first {
                out.push(' ');
            }
            first = false;
            print_param(key, value, out);
        }
        Ok(())
    }

    fn check(rd: &mut RdataReader<'_>) -> Result<()> {
        let base = rd.pos();
        check_params(rd.rest(), base)
    }

    fn decode(rd: &mut RdataReader<'_>) -> Result<Vec<SvcParam>> {
        let base = rd.pos();
        let data = rd.rest();
        check_params(data, base)?;
        let mut params = RawParams::new(data, base);
        let mut out = Vec::new();
        while let Some((_, key, value)) = params.next_param()? {
            out.push(SvcParam { key, value: value.to_vec() });
        }
        Ok(out)
    }

    fn encode(value: &Vec<SvcParam>, out: &mut Vec<u8>) {
        let mut sorted: Vec<&SvcParam> = value.iter().collect();
        sorted.sort_by_key(|p| p.key);
        for p in sorted {
            let len = p.value.len().min(usize::from(u16::MAX));
            out.extend_from_slice(&p.key.to_be_bytes());
            out.extend_from_slice(&(len as u16).to_be_bytes());
            out.extend_from_slice(p.value.get(..len).unwrap_or(&[]));
        }
    }
}

/// Turns a wire-rule error on freshly parsed text into a syntax error at the first param.
fn syntax_from(e: Error, first: Option<Token<'_>>, lx: &Lexer<'_>) -> Error {
    let message = match &e {
        Error::BadRdata { reason, .. } => format!("bad SvcParams: {reason}"),
        other => format!("bad SvcParams: {other}"),
    };
    match first {
        Some(t) => t.error(message),
        None => lx.error_here(message),
    }
}

rdata_format! {
    /// SVCB and HTTPS (RFC 9460 §2.2).
    Svcb {
        /// 0 for AliasMode, otherwise the ServiceMode priority (lower first).
        priority: u16 as U16,
        /// The target name; `.` means the owner (ServiceMode) or "no service" (AliasMode).
        target: Name as NameKind,
        /// The parameters, sorted by key on the wire.
        params: Vec<SvcParam> as SvcParams,
    }
}

#[cfg(test)]
mod tests;
