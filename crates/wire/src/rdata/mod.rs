//! Resource record data (RDATA).
//!
//! RDATA is held in uncompressed wire form everywhere in Tern (zones, changesets,
//! journals); this module converts it from and to presentation format, one codec per
//! type, and knows each type's name layout ([`shape`]).
//!
//! * [`parse_text`] reads one record's RDATA fields from a [`Lexer`] entry into wire form.
//!   The RFC 3597 §5 generic form `\# <length> <hex>` is accepted for every type, and
//!   checked against the type's format when the type is known.
//! * [`write_text`] prints wire RDATA in presentation format, falling back to the generic
//!   form for unknown types and for data that does not follow its type's format.

pub mod fields;
pub mod shape;

mod basic;
mod generic;

use std::fmt::Write;

use crate::error::{Error, Result};
use crate::name::Dname;
use crate::text::Lexer;
use crate::types::Rtype;

pub use fields::RdataReader;
pub use shape::{Field, Shape};

/// Reads presentation-format fields of one type into wire form.
type ParseFn = fn(&mut Lexer<'_>, Option<&Dname>, &mut Vec<u8>) -> Result<()>;
/// Prints wire-form RDATA of one type; fails if the data breaks the type's format.
type PrintFn = fn(&mut RdataReader<'_>, &mut String) -> Result<()>;

/// The presentation codec of one type.
pub(crate) struct Codec {
    parse: ParseFn,
    print: PrintFn,
}

impl Codec {
    pub(crate) const fn new(parse: ParseFn, print: PrintFn) -> Codec {
        Codec { parse, print }
    }
}

/// The codec for a type, if Tern knows its presentation format.
fn codec(rtype: Rtype) -> Option<&'static Codec> {
    basic::codec(rtype)
}

/// Reads one record's RDATA from the rest of the lexer's entry and appends its
/// uncompressed wire form to `out`. Relative names get `origin` appended. On error `out`
/// is left as it was.
pub fn parse_text(
    rtype: Rtype,
    lx: &mut Lexer<'_>,
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    let result = parse_text_inner(rtype, lx, origin, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn parse_text_inner(
    rtype: Rtype,
    lx: &mut Lexer<'_>,
    origin: Option<&Dname>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    if lx.peek_token()?.is_some_and(|t| t.text == b"\\#" && !t.quoted) {
        let token = lx.expect("\\#")?;
        generic::parse(lx, out)?;
        if codec(rtype).is_some() {
            validate(rtype, out.get(start..).unwrap_or(&[])).map_err(|e| {
                token.error(format!("generic RDATA is not valid {rtype} data: {e}"))
            })?;
        }
        return lx.expect_end();
    }
    let Some(codec) = codec(rtype) else {
        return Err(lx.error_here(format!(
            "type {rtype} has no known presentation format: use the generic form \\# <length> <hex>"
        )));
    };
    (codec.parse)(lx, origin, out)?;
    if out.len() - start > usize::from(u16::MAX) {
        return Err(lx.error_here("RDATA longer than 65535 bytes"));
    }
    lx.expect_end()
}

/// Parses RDATA given as one string (for tests, tools and the control interface).
pub fn parse_str(rtype: Rtype, text: &str, origin: Option<&Dname>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    parse_text(rtype, &mut Lexer::for_fields(text.as_bytes()), origin, &mut out)?;
    Ok(out)
}

/// Checks that wire RDATA follows its type's format (known types only; any bytes are
/// valid for an unknown type).
pub fn validate(rtype: Rtype, rdata: &[u8]) -> Result<()> {
    let Some(codec) = codec(rtype) else {
        return Ok(());
    };
    let mut reader = RdataReader::new(rdata);
    (codec.print)(&mut reader, &mut String::new())?;
    reader.finish()
}

/// Appends the presentation form of wire RDATA to `out`.
pub fn write_text(rtype: Rtype, rdata: &[u8], out: &mut String) {
    let start = out.len();
    if let Some(codec) = codec(rtype) {
        let mut reader = RdataReader::new(rdata);
        if (codec.print)(&mut reader, out).and_then(|()| reader.finish()).is_ok() {
            return;
        }
        out.truncate(start);
    }
    generic::write(rdata, out);
}

/// The presentation form of wire RDATA as a new string.
pub fn to_text(rtype: Rtype, rdata: &[u8]) -> String {
    let mut out = String::new();
    write_text(rtype, rdata, &mut out);
    out
}

/// Writes `fmt::Write` output into a String, where it cannot fail.
pub(crate) fn push_fmt(out: &mut String, args: std::fmt::Arguments<'_>) {
    // Writing into a String never fails.
    let _ = out.write_fmt(args);
}

/// Error for a field that cannot be printed because the wire data is malformed.
pub(crate) fn bad(offset: usize, reason: &'static str) -> Error {
    Error::BadRdata { offset, reason }
}

#[cfg(test)]
mod tests;
